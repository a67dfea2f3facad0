# ulpscope device profile: strict.
#
# The reference semantics: every HLO op rounds its exact result once to its
# declared element type (IEEE 754-2019, round to nearest even), in the order
# the HLO states, with gradual underflow.  Nothing is legitimate but what
# ulpscope's strict reference computes.  Every other profile widens this.
# Sources: IEEE Std 754-2019 (sections 4.3, 5.1: every operation correctly
# rounded; 7.5: subnormal results, no flushing); the XLA operation semantics
# (openxla.org/xla/operation_semantics, StableHLO spec) for op order and NaN.

name = strict
description = IEEE 754: every op correctly rounded, sequential order, subnormals kept

# IEEE 754-2019 5.1: each op delivers its result in its destination format;
# no wider intermediate survives an op.  (excess_type is unused while
# excess_precision = no; f32 is the default other profiles start from.)
excess_precision = no
excess_type = f32

# IEEE 754-2019 5.4.1: a*b+c is two operations, two roundings, unless the
# program says fusedMultiplyAdd (HLO has no fma op).
fma = no

# StableHLO spec, reduce / reduce_window and dot_general: the strict
# reference combines in the order it documents (docs/evaluator.md); no
# reordering is allowed here.
reassociate = no
reassociate_dot = no

# A dot accumulates in its declared result type (StableHLO dot_general:
# result element type), fp8 operands included.
dot_accumulation = declared
fp8_dot_accumulation = declared

# precision_config HIGHEST: full f32 products and sums (JAX "Matmul
# precision" docs, F32_F32_F32).
dot_f32 = full

# IEEE 754-2019 9.2 recommends correctly rounded elementary functions;
# strict requires them (0.5 ulp), as ulpscope's MPFR reference computes.
accuracy.all = 0.5

# IEEE 754-2019 7.5: subnormals are produced and consumed exactly.
flush.all = none

# ml_dtypes float8 casts (recorded in data/formats/, docs/formats.md): an
# fp8 overflow gives Inf where the format has one, else NaN; the OCP 8-bit
# Floating Point Specification (OFP8) calls this the non-saturating mode.
fp8_overflow = nonsaturating

# StableHLO spec, maximum / minimum: a NaN operand gives NaN (IEEE 754-2019
# 9.6 maximum / minimum).
minmax_nan = propagate
