base = xla-cpu-fast-math
# Finding F1 of docs/findings.md on the fast-math profile (see
# F1-xla-cpu.profile).
name = xla-cpu-fast-math-f1
description = xla-cpu-fast-math with accuracy.log1p = 3 (finding F1)
accuracy.log1p = 3
