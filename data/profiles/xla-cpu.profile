# ulpscope device profile: xla-cpu.
#
# What XLA:CPU (JAX's CPU backend) may legitimately do with its default
# flags.  Flag defaults are those of DefaultDebugOptionsIgnoringFlags() in
# xla/debug_options_flags.cc; accuracy bounds are XLA's own per-intrinsic
# test budgets in xla/codegen/intrinsic/accuracy/accuracy_budget.h (CPU,
# "regular" inputs), where a budget of N ulps between the returned and the
# correctly rounded value is a bound of N + 0.5 ulps on the error against
# the exact value, the convention of this file.

name = xla-cpu
description = XLA:CPU with default flags (FTZ/DAZ, FMA, own f32 approximations)

# xla_allow_excess_precision defaults to true (xla/debug_options_flags.cc);
# XLA:CPU normalizes bf16 arithmetic to f32 and, under that flag, removes
# the f32 -> bf16 -> f32 converts it leaves (SimplifyFPConversions in
# xla/service/cpu/cpu_compiler.cc).
excess_precision = yes
excess_type = f32

# xla/service/cpu/cpu_compiler.cc CompilerTargetOptions: LLVM's
# AllowFPOpFusion is always Fast, so any a*b+c may become one fma.
fma = yes

# XLA:CPU emits vectorized reductions and reduce-window loops whose
# combination order is not the sequential one (xla/service/cpu/ir_emitter.cc
# vectorized reduce); any order is legitimate.
reassociate = yes

# Dots are run by library kernels (Eigen contractions, oneDNN, XNNPACK /
# YNNPACK under xla/backends/cpu) whose blocked, vectorized accumulation is
# not the sequential order.
reassociate_dot = yes

# bf16 / f16 dots are computed in f32 after normalization; a dot with a wider
# declared result accumulates in it.  fp8 operands are upcast first.
dot_accumulation = declared
fp8_dot_accumulation = declared

# XLA:CPU's float normalization (xla/service/float_normalization.cc, run by
# cpu_compiler.cc) upcasts bf16 and f16 elementwise arithmetic to f32 and
# rounds the result back: functions are computed in f32, so their accuracy
# bounds below are in ULPs of f32, followed by one rounding to the type.
compute_type = f32

# DEFAULT precision does not lower f32 dots on CPU (JAX "Matmul precision"
# docs: reduced precision is bf16 on TPU and TF32 on GPU only).
dot_f32 = full

# accuracy_budget.h, CPU regular budgets (+ 0.5): exp 6, log 1, log1p 1,
# tanh 3, erf 2, sqrt 1, rsqrt 1, sin 1, cos 1, atan 3.
accuracy.exp = 6.5
accuracy.log = 1.5
accuracy.log1p = 1.5
accuracy.tanh = 3.5
accuracy.erf = 2.5
accuracy.sqrt = 1.5
accuracy.rsqrt = 1.5
accuracy.sin = 1.5
accuracy.cos = 1.5
# atan2 is built on XLA's atan approximation (xla/codegen/intrinsic/atan2.cc);
# its budget is atan's (3).
accuracy.atan2 = 3.5
# No published budget for expm1 (xla/codegen/intrinsic/expm1.cc): exp's,
# to be calibrated against captured XLA:CPU outputs.
accuracy.expm1 = 6.5
# logistic is expanded to 1 / (1 + exp(-x)) (xla/service/logistic_expander):
# exp's 6.5 ulps of relative error shrink through 1 + e, plus the add's and
# the divide's roundings; 8 is a permissive bound, to be calibrated.
accuracy.logistic = 8
# tan, cbrt and power have no XLA budget; XLA:CPU lowers them to LLVM
# intrinsics / libm (glibc manual, "Errors in Math Functions": tanf 1,
# cbrtf 1, powf 1 on x86_64).  Permissive values, to be calibrated.
accuracy.tan = 3.5
accuracy.cbrt = 1.5
accuracy.power = 1.5
# x86's divps / divss are IEEE divisions, and fast math is off by default
# (xla_cpu_enable_fast_math; even with it, xla_cpu_fast_math_honor_division
# defaults to true): a divide is correctly rounded.  XLA:CPU has been
# observed to compute x / y as x * (1 / y) (XLA's algebraic simplifier turns
# a division by a constant into a multiplication by its reciprocal); that
# rewrite is modelled as what it is, the reciprocal rounded to a type and a
# rounded product, not as a blanket 2-ulp allowance, which would let 1 / 1
# return 1.0000001 (issue 13).  Any divisor, to stay wide where the source
# of the observation is not pinned down.
accuracy.divide = 0.5
divide_reciprocal = any

# JAX runs XLA:CPU with the MXCSR FTZ and DAZ bits set: subnormal f32 / f64
# inputs read as 0 and subnormal results are written as 0 (jax-ml/jax issues
# 4042, 16200 "working as intended", 26658 for f64, 37762 for f32 and bf16;
# observed in ulpscope's captured cases).  bf16 is computed in f32, so its
# subnormals (f32 subnormals) are flushed too; f16 and fp8 subnormals are
# normal f32 values and are kept (issue 37762: f16 unaffected).
flush.all = none
flush.f32 = both
flush.f64 = both
flush.bf16 = both
# The MXCSR bits are a fixed mode of the thread, not a choice per op: every
# op flushes.  (Checked against the acceptance corpus: data/acceptance/,
# denormal inputs, fast math off and on.)
flush_mode = always

# XLA:CPU's fp8 converts (xla/codegen/intrinsic/fptrunc.cc) are its own bit
# manipulations; whether an overflow saturates is not documented, and the
# OCP OFP8 specification allows both modes: either is accepted.
fp8_overflow = either

# xla_cpu_enable_fast_min_max defaults to true: "fast floating point
# min/max lowering that might not propagate NaNs" (xla/debug_options_flags.cc).
minmax_nan = either
