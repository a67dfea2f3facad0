# ulpscope device profile: xla-tpu.
#
# What XLA on Google TPUs may legitimately do with its default flags.  The
# TPU compiler is not open source and no public document states the
# accuracy of its transcendental functions; where a value below is not
# documented, it is a permissive one, marked so, to be calibrated against
# captured TPU outputs.

name = xla-tpu
description = XLA on TPUs with default flags (one bf16 pass per f32 dot, FTZ)

# xla_allow_excess_precision defaults to true (xla/debug_options_flags.cc),
# and XLA inserts the f32 <-> bf16 conversions around TPU arithmetic itself
# (Cloud TPU docs, "Improve your model's performance with bfloat16").
excess_precision = yes
excess_type = f32

# Permissive: contraction is allowed on every other XLA backend (LLVM
# FPOpFusion::Fast on CPU and GPU); nothing public says the TPU backend
# does not contract.
fma = yes

# Reductions are combined in vector lanes and trees; no sequential order is
# documented.  Dots run on the MXU systolic arrays.
reassociate = yes
reassociate_dot = yes

# The MXU multiplies bf16 values and accumulates in f32 (Cloud TPU bfloat16
# docs: "matrix multiplication operations with bfloat16 values and
# accumulations with IEEE float32 values").
dot_accumulation = declared
# Permissive: no public statement of fp8 accumulation on TPU; bf16 as on
# GPUs.
fp8_dot_accumulation = bf16

# precision_config DEFAULT on TPU is one bf16 pass for f32 operands (JAX
# "Matmul precision" docs: bfloat16 on TPU; jax-ml/jax issue 1856: f32
# matmuls default to bf16 multiplication with f32 accumulation; HIGH = 3
# passes, HIGHEST = 6).
dot_f32 = bf16x1

# No public TPU accuracy table.  8 ulps is above every bound of xla-cpu and
# xla-gpu (the largest, logistic, is 9 on GPU, and is raised to 10 here);
# permissive, to be calibrated.
accuracy.all = 8
accuracy.logistic = 10

# TPUs do not support subnormals: bf16 subnormals are flushed to zero in
# conversions (Cloud TPU bfloat16 docs) and XLA flushes subnormal values
# during TPU operations (jax-ml/jax issue 19689; the JAX "sharp bits"
# note on flush-to-zero, jax-ml/jax pull 26668).
flush.all = both

# Permissive: TPU fp8 convert overflow behaviour is not documented; both
# OCP OFP8 modes are accepted.
fp8_overflow = either

# Permissive: TPU maximum / minimum NaN behaviour is not documented.
minmax_nan = either
