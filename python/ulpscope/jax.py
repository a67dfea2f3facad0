"""JAX in one call: compile a function with XLA, check what it computed.

``ulpscope.jax.check(fn, *args)`` jits ``fn``, takes the module XLA
optimized (``compiled.as_text()``, the module the fusions ran from; the
same text as the ``--xla_dump_to`` dump's ``*after_optimizations.txt``),
runs it on the arguments (or takes outputs the caller got elsewhere) and
hands all of it to :func:`ulpscope.check`.  ``capture`` writes the same as
a case directory (docs/cases.md) that ``ulpscope check DIR`` reads.

jax is imported when a function here is first called, so ``import
ulpscope`` does not need it.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ._check import CheckReport
from ._check import check as _check

# The built-in profile of each XLA platform (docs/profiles.md).
PLATFORM_PROFILES = {"cpu": "xla-cpu", "gpu": "xla-gpu", "cuda": "xla-gpu",
                     "rocm": "xla-gpu", "tpu": "xla-tpu"}


class Compiled:
    """A function compiled by XLA at concrete arguments.

    Attributes:
        hlo: the optimized HLO module's text.
        platform: ``"cpu"``, ``"gpu"`` or ``"tpu"`` (jax's platform name,
            CUDA and ROCm written ``"gpu"``).
        inputs: the arguments' leaves as numpy arrays, in entry parameter
            order.
        executable: jax's compiled function.
    """

    def __init__(self, fn: Callable[..., Any], args: Sequence[Any]) -> None:
        import jax
        leaves = jax.tree_util.tree_leaves(args)
        self.inputs: list[np.ndarray] = [np.asarray(jax.device_get(a))
                                         for a in leaves]
        # keep_unused: an argument the function ignores is still an entry
        # parameter, so inputs and parameters correspond one to one.
        jitted = jax.jit(fn, keep_unused=True)
        self.executable = jitted.lower(*args).compile()
        self.hlo: str = self.executable.as_text()
        backend = jax.default_backend()
        self.platform: str = "gpu" if backend in ("cuda", "rocm", "gpu") else backend
        self.args = args

    def run(self) -> list[np.ndarray]:
        """Runs the executable; the outputs' leaves as numpy arrays."""
        import jax
        outs = self.executable(*self.args)
        return [np.asarray(jax.device_get(y))
                for y in jax.tree_util.tree_leaves(outs)]

    def default_profile(self) -> str:
        """The built-in profile of the platform this compiled for."""
        if self.platform == "cpu" and re.search(
                r"--xla_cpu_enable_fast_math=(true|1)\b",
                os.environ.get("XLA_FLAGS", "")):
            return "xla-cpu-fast-math"
        return PLATFORM_PROFILES.get(self.platform, "strict")


def compile(fn: Callable[..., Any], *args: Any) -> Compiled:  # noqa: A001
    """Compiles ``fn`` at ``args`` with XLA (see :class:`Compiled`)."""
    return Compiled(fn, args)


def _leaves(outputs: Any) -> list[np.ndarray]:
    if isinstance(outputs, np.ndarray):
        return [outputs]
    try:
        import jax
        return [np.asarray(jax.device_get(y))
                for y in jax.tree_util.tree_leaves(outputs)]
    except ImportError:
        return [np.asarray(y) for y in outputs]


def check(fn: Callable[..., Any], *args: Any,
          device_outputs: Any = None,
          profile: str | os.PathLike[str] | None = None,
          hlo: str | os.PathLike[str] | None = None,
          **options: Any) -> CheckReport:
    """Compiles ``fn`` at ``args``, runs it, and checks the outputs.

    Args:
        fn: a function jax can jit; its arguments are the kernel's inputs.
        args: concrete arguments (numpy or jax arrays, pytrees of them).
        device_outputs: outputs to judge instead of running the compiled
            function here (say, from a TPU): an array or a pytree whose
            leaves are the outputs in order.
        profile: the device profile; None takes the compiling platform's
            (``xla-cpu``, ``xla-gpu``, ``xla-tpu``).  Give the profile of
            the device the outputs came from when they came from elsewhere.
        hlo: the optimized module the device ran, when the outputs came
            from a device whose compiler was not this one (its dump's
            ``*after_optimizations.txt``); None uses the one compiled here.
        options: passed to :func:`ulpscope.check` (``worst``,
            ``strict_oracle``, ``out``, ...).

    Returns:
        The :class:`ulpscope.CheckReport`.
    """
    comp = Compiled(fn, args)
    outputs = comp.run() if device_outputs is None else _leaves(device_outputs)
    return _check(comp.hlo if hlo is None else hlo, comp.inputs, outputs,
                  profile=comp.default_profile() if profile is None else profile,
                  **options)


def capture(fn: Callable[..., Any], *args: Any, out: str | os.PathLike[str],
            device_outputs: Any = None, name: str | None = None,
            notes: str = "", intermediates: str | Sequence[str] | None = None,
            arg_names: Sequence[str] | None = None) -> Path:
    """Writes a case directory (docs/cases.md) of ``fn`` at ``args``.

    ``kernel.hlo`` (the optimized module: XLA's own dump when jax's backend
    had not started yet, else ``compiled.as_text()``, the same text),
    ``input_<i>.npy``, ``device_<i>.npy`` (the outputs computed here, or
    ``device_outputs``) and ``case.json`` with the platform, the versions,
    the fusions and the XLA flags; with ``intermediates`` (``"all"``,
    ``"all-fused"`` or instruction names) also ``intermediate_<name>.npy``
    for ``ulpscope bisect``.  This is the implementation
    ``tools/capture/capture.py`` runs too (:mod:`ulpscope.capture.core`).
    ``ulpscope check OUT`` then checks it under the platform's profile.

    Args:
        fn: a function jax can jit.
        args: concrete arguments (arrays, or pytrees of them).
        out: the case directory (made; its old ``*.npy`` removed).
        device_outputs: outputs to record instead of running ``fn`` here
            (an array or a pytree whose leaves are the outputs in order).
        name: the kernel's name (default: ``fn``'s).
        notes: free text for ``case.json``.
        arg_names: the Python argument names, checked against the entry
            parameters' names in the HLO.

    Returns:
        The directory.
    """
    from .capture import core
    core.setup(platform=None, quiet=True)
    outputs = None if device_outputs is None else _leaves(device_outputs)
    if isinstance(intermediates, (list, tuple)):
        intermediates = ",".join(intermediates)
    core.capture_function(fn, list(args), os.fspath(out), name=name,
                          notes=notes, intermediates=intermediates,
                          arg_names=arg_names, device_outputs=outputs)
    return Path(out)
