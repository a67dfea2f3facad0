# HLO front end tests.
usc_add_test(test_hlo_lexer hlo/test_hlo_lexer.c)
usc_add_test(test_hlo_parser hlo/test_hlo_parser.c)
usc_add_test(test_hlo_malformed hlo/test_hlo_malformed.c)
usc_add_test(test_hlo_corpus hlo/test_hlo_corpus.c)
