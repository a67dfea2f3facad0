# XLA:CPU as the xla-cpu profile, with the three freedoms that a flag or a
# format pins down taken away:
#   excess_precision = no         --xla_allow_excess_precision=false: a
#                                 round trip written in the kernel
#                                 (f32 -> bf16 -> f32) must round
#   minmax_nan = propagate        --xla_cpu_enable_fast_min_max=false:
#                                 maximum / minimum / clamp of a NaN is NaN
#                                 (HLO semantics)
#   fp8_overflow = nonsaturating  an fp8 convert overflows to Inf (e5m2)
#                                 or NaN (e4m3fn), as ml_dtypes converts
# The defect corpus (data/defects/) judges its skip-rounding, nan-dropping
# and convert-saturate defects under this profile; the same device
# outputs under xla-cpu, which grants those freedoms, are its legit cases.
base = xla-cpu
name = xla-cpu-pinned
description = XLA:CPU without excess precision, with NaN-propagating min/max, IEEE fp8 overflow
excess_precision = no
minmax_nan = propagate
fp8_overflow = nonsaturating
