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

import datetime
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ._dtypes import save_npy
from .check import CheckReport
from .check import check as _check

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


def _entry_fusions(hlo: str) -> list[str]:
    """The names of the entry computation's fusion instructions."""
    names: list[str] = []
    in_entry = False
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            in_entry = True
            continue
        if in_entry and line.startswith("}"):
            break
        m = re.match(r"\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*?\sfusion\(", line)
        if in_entry and m:
            names.append(m.group(1))
    return names


def capture(fn: Callable[..., Any], *args: Any, out: str | os.PathLike[str],
            device_outputs: Any = None, name: str | None = None,
            notes: str = "") -> Path:
    """Writes a case directory (docs/cases.md) of ``fn`` at ``args``.

    ``kernel.hlo`` (the optimized module), ``input_<i>.npy``,
    ``device_<i>.npy`` (the outputs computed here, or ``device_outputs``)
    and ``case.json``.  ``ulpscope check OUT`` then checks it under the
    platform's profile.  Returns the directory.
    """
    import jax
    import jaxlib
    comp = Compiled(fn, args)
    outputs = comp.run() if device_outputs is None else _leaves(device_outputs)
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("*.npy"):
        old.unlink()
    (d / "kernel.hlo").write_text(comp.hlo)
    in_rec = []
    for k, x in enumerate(comp.inputs):
        save_npy(d / f"input_{k}.npy", x)
        in_rec.append({"file": f"input_{k}.npy", "entry_parameter": k,
                       "numpy_dtype": str(x.dtype), "shape": list(x.shape)})
    out_rec = []
    for k, y in enumerate(outputs):
        save_npy(d / f"device_{k}.npy", y)
        out_rec.append({"file": f"device_{k}.npy", "tuple_index": k,
                        "numpy_dtype": str(y.dtype), "shape": list(y.shape)})
    fusions = _entry_fusions(comp.hlo)
    fname = name or getattr(fn, "__name__", "kernel")
    case = {
        "fusion": fusions[0] if len(fusions) == 1 else None,
        "fusions": fusions,
        "platform": comp.platform,
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "function": f"{getattr(fn, '__module__', '?')}."
                    f"{getattr(fn, '__qualname__', fname)}",
        "kernel": fname,
        "dtype": ",".join(sorted({str(x.dtype) for x in comp.inputs})),
        "seed": None,
        "distribution": "given",
        "notes": notes,
        "hlo_source": "compiled.as_text()",
        "hlo_sha256": hashlib.sha256(comp.hlo.encode()).hexdigest(),
        "inputs": in_rec,
        "outputs": out_rec,
        "captured": datetime.date.today().isoformat(),
    }
    if comp.platform == "cpu":
        case["xla_cpu_enable_fast_math"] = (
            comp.default_profile() == "xla-cpu-fast-math")
    with open(d / "case.json", "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")
    return d
