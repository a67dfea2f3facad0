# A user profile: XLA:GPU, but with IEEE division and no TF32.
base = xla-gpu
name = gpu-ieee-div
description = XLA:GPU with -prec-div and f32 dots
accuracy.divide = 0.5   # div.rn.f32
dot_f32 = full
