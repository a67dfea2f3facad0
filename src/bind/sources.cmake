# The flat view of the library for language bindings (docs/python.md).
list(APPEND USC_LIB_SOURCES
  src/bind/bind.c)
