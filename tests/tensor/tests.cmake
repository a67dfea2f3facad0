# Tensors: readers and writers of .npy, raw and HDF5 files.
usc_add_test(test_tensor_npy tensor/test_npy.c)
usc_add_test(test_tensor_malformed tensor/test_malformed.c)
usc_add_test(test_tensor_h5 tensor/test_h5.c)
usc_add_test(test_tensor_oom tensor/test_oom.c)
