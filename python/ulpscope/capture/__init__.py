"""Capturing XLA kernels from JAX as case directories (docs/python.md).

:mod:`ulpscope.capture.core` is the capture itself (``ulpscope.jax.capture``
and ``tools/capture/capture.py`` both run it); :mod:`.hlo_text` reads HLO
text, :mod:`.intermediates` rewrites a module so chosen instructions
become outputs, :mod:`.snapshot` writes an HloSnapshot, and
:mod:`.platform_info` records the platform.  None of them needs the C
library; only ``core.setup`` imports jax.
"""
