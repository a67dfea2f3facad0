base = xla-cpu
# Finding F1 of docs/findings.md, as a profile: xla-cpu with the log1p bound
# XLA:CPU (jaxlib 0.10.2) shows, 2.52 ulps at worst over every f32 in
# [2^-8, 16) and (-1/2, -2^-8], rounded up to 3.  Used by tools/fuzz_xla to
# tell cases F1 explains; the built-in profile is unchanged.
name = xla-cpu-f1
description = xla-cpu with accuracy.log1p = 3 (finding F1)
accuracy.log1p = 3
