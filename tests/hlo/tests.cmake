# HLO front end tests.
usc_add_test(test_hlo_lexer hlo/test_hlo_lexer.c)
usc_add_test(test_hlo_parser hlo/test_hlo_parser.c)
usc_add_test(test_hlo_malformed hlo/test_hlo_malformed.c)
# The project's own HLO files (tests/hlo/corpus, kernels/) round-trip.
usc_add_test(test_hlo_corpus hlo/test_hlo_corpus.c)
# The same walk over XLA's corpus in ../shared: skipped when it is absent.
usc_add_xla_corpus_test(test_hlo_corpus_xla test_hlo_corpus)
