# ulpscope device profile: xla-gpu.
#
# What XLA:GPU on NVIDIA GPUs may legitimately do with its default flags.
# Flag defaults are those of DefaultDebugOptionsIgnoringFlags() in
# xla/debug_options_flags.cc.  Each accuracy bound is the larger of the
# CUDA C++ Programming Guide's table of maximum ulp errors of the
# single-precision functions (appendix "Mathematical Functions", libdevice)
# and XLA's own GPU test budget (xla/codegen/intrinsic/accuracy/
# accuracy_budget.h), since XLA:GPU emits some functions itself.  Both state
# N ulps between the returned and the correctly rounded value: a bound of
# N + 0.5 ulps against the exact value, the convention of this file.

name = xla-gpu
description = XLA:GPU on NVIDIA GPUs with default flags (TF32 dots, libdevice)

# xla_allow_excess_precision defaults to true (xla/debug_options_flags.cc):
# bf16 arithmetic normalized to f32 keeps f32 intermediates and convert
# round trips may be removed (SimplifyFPConversions).
excess_precision = yes
excess_type = f32

# The NVPTX target options allow FP-op fusion (LLVM FPOpFusion::Fast in
# XLA's NVPTX backend, xla/service/gpu/llvm_gpu_backend), and ptxas fuses
# mul + add by default (--fmad=true, CUDA floating-point white paper).
fma = yes

# Reductions are tree- and warp-shuffle reductions (xla/service/gpu
# reduction emitters); their combination order is not sequential.
reassociate = yes

# Dots run in cuBLAS / cuBLASLt / Triton GEMMs (xla_gpu_enable_triton_gemm
# true, split-K autotuning on): blocked accumulation in any order.
reassociate_dot = yes

# bf16 / f16 GEMMs accumulate in f32 on tensor cores; a wider declared
# result is the accumulation type.
dot_accumulation = declared
# FP8 tensor-core GEMMs on Hopper accumulate with about 14 bits of
# precision, less than f32 (DeepSeek-V3 Technical Report, arXiv 2412.19437,
# section 3.3 "Increasing Accumulation Precision"); bf16 (8 bits) is the
# nearest type at most as precise: a permissive, sound choice.
fp8_dot_accumulation = bf16

# precision_config DEFAULT runs f32 dots in TF32 on Ampere and later (JAX
# "Matmul precision" docs; jax-ml/jax issue 18934: DEFAULT is TF32 on
# A100/H100).
dot_f32 = tf32

# CUDA guide (single precision, max ulps) / XLA GPU budget -> bound here.
# expf 2 / 7 -> 7.5
accuracy.exp = 7.5
# expm1f 1 / none -> 1.5
accuracy.expm1 = 1.5
# logf 1 / 1 -> 1.5
accuracy.log = 1.5
# log1pf 1 / 1 -> 1.5
accuracy.log1p = 1.5
# logistic is expanded to 1 / (1 + exp(-x)) (xla/service/logistic_expander):
# exp's 7.5 ulps plus the add's and the divide's roundings; a permissive
# bound, to be calibrated.
accuracy.logistic = 9
# tanhf 2 / 3 -> 3.5
accuracy.tanh = 3.5
# erff 2 / 2 -> 2.5
accuracy.erf = 2.5
# sqrtf 0 with -prec-sqrt=true (IEEE), else 1 / 1 -> 1.5
accuracy.sqrt = 1.5
# rsqrtf 2 / 1 -> 2.5
accuracy.rsqrt = 2.5
# cbrtf 1 / none -> 1.5
accuracy.cbrt = 1.5
# sinf 2 / 1 -> 2.5
accuracy.sin = 2.5
# cosf 2 / 1 -> 2.5
accuracy.cos = 2.5
# tanf 4 / none -> 4.5
accuracy.tan = 4.5
# atan2f 3 / none -> 3.5
accuracy.atan2 = 3.5
# powf 4 / none -> 4.5
accuracy.power = 4.5
# x/y: 0 with -prec-div=true, otherwise 2 (CUDA guide).  Whether XLA's
# NVPTX lowering is IEEE division is not documented: the permissive 2 + 0.5.
accuracy.divide = 2.5

# xla_gpu_ftz is false by default ("If true, flush-to-zero semantics are
# enabled in the code generated for GPUs", xla/debug_options_flags.cc), and
# subnormals survive on NVIDIA GPUs (jax-ml/jax issues 4042, 19689).
flush.all = none

# PTX's f32 -> fp8 conversions are the cvt ... .satfinite forms (PTX ISA,
# cvt), which saturate, while XLA's own converts follow ml_dtypes; both
# modes are in the OCP OFP8 specification: either is accepted.
fp8_overflow = either

# xla_gpu_enable_fast_min_max defaults to false (xla/debug_options_flags.cc,
# which calls the fast form's NaN swallowing counter-intuitive): NaN
# propagates.
minmax_nan = propagate
