# The HLO front end: lexer, parser, IR, printer.
list(APPEND USC_LIB_SOURCES
  src/hlo/lexer.c
  src/hlo/parser.c
  src/hlo/parser_shape.c
  src/hlo/parser_attr.c
  src/hlo/ir.c
  src/hlo/printer.c
  src/hlo/opcodes.c
  src/hlo/source.c)
