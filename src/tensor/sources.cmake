# Tensors and their readers and writers, and the door to HDF5.
list(APPEND USC_LIB_SOURCES
  src/tensor/tensor.c
  src/tensor/npy.c
  src/tensor/raw.c
  src/tensor/h5.c
  src/store/h5_door.c
  src/store/h5_attr.c
  src/store/h5_write.c
  src/store/h5_table.c
  src/store/h5_vet.c)
