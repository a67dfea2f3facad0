# ulpscope check: the comparison on a kernel with known answers, and the
# captured XLA:CPU examples end to end.
usc_add_test(test_check check/test_check.c)
usc_add_test(test_check_examples check/test_check_examples.c)
