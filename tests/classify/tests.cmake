usc_add_test(test_classify classify/test_classify.c)
