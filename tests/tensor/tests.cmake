# Tensors: readers and writers of .npy, raw and HDF5 files.
usc_add_test(test_tensor_npy tensor/test_npy.c)
usc_add_test(test_tensor_malformed tensor/test_malformed.c)
usc_add_test(test_tensor_h5 tensor/test_h5.c)
usc_add_test(test_tensor_oom tensor/test_oom.c)
# Limits on what is read: non-regular files, file sizes, element counts.
usc_add_test(test_tensor_limits tensor/test_limits.c)
set_tests_properties(test_tensor_limits PROPERTIES TIMEOUT 60)
