# ulpscope device profile: xla-cpu-fast-math.
#
# XLA:CPU run with --xla_cpu_enable_fast_math=true.  The flag lets LLVM use
# its fast-math flags on the kernels' floating-point code (DebugOptions in
# xla/debug_options_flags.cc; the xla_cpu_fast_math_honor_* flags refine
# it), so the code generator may approximate, reassociate and assume that
# no infinity or NaN occurs.  Everything of xla-cpu holds, plus what the
# captured fast-math cases (data/acceptance/fastmath-on/) show XLA:CPU
# doing that xla-cpu excludes.

base = xla-cpu
name = xla-cpu-fast-math
description = XLA:CPU with --xla_cpu_enable_fast_math=true

# f16 swiglu with fast math differs from every f32-computed result by up to
# 2 ulps of f16 (data/acceptance/fastmath-on/swiglu_f16): the code keeps
# f16 arithmetic in f16 or approximates around it.  Ops are computed in
# their declared type, with the accuracy bounds in its ulps.
compute_type = declared

# With fast math the FTZ / DAZ behaviour is no longer that of each op
# (silu_f32 large: a product that the default mode flushes survives), so
# flushing is allowed rather than fixed.
flush_mode = may

# LLVM's nnan / ninf: code may assume no infinity or NaN occurs, and does
# (swiglu_f16 large: NaN where the exact value is a tiny number, after
# exp overflows f16).  What depends on a nonfinite value is undefined.
nonfinite = undefined
# Division is approximate with fast math: silu_f32 and swiglu_f32 / f16
# (x / (1 + exp(-x)), data/acceptance/fastmath-on/) land up to 2 ulps from
# both the correctly rounded quotient and x * RN(1 / y), as a reciprocal
# estimate refined by one Newton step does.  xla-cpu's IEEE divide does not
# hold here; the 2-ulp window of the former xla-cpu bound does.
accuracy.divide = 2
