"""ulpscope: is an XLA kernel's device output legitimate rounding or a defect?

Python bindings over libulpscope (cffi, ABI mode): every figure comes from
the C library; this package only moves arrays in and out.  See
docs/python.md.

    >>> import ulpscope
    >>> r = ulpscope.check("kernel.hlo", [x], [y], profile="xla-tpu")
    >>> r.verdict, r.outputs[0].ulp_oracle.max()

The names below are loaded on first use, so that ``ulpscope.capture`` (the
capture tooling, numpy only) imports without the C library; the first use
of any of them loads libulpscope.so and raises ImportError, saying where
it looked, when it is not found.
"""
from __future__ import annotations

import importlib
from typing import Any

# Each public name and the module that defines it.
_API = {
    "check": "._check", "check_case": "._check", "CheckReport": "._check",
    "CLASS_NAMES": "._check", "Element": "._check", "Output": "._check",
    "Stats": "._check",
    "bisect": ".analyses", "explain": ".analyses", "signature": ".analyses",
    "BisectReport": ".analyses", "ExplainReport": ".analyses",
    "SignatureReport": ".analyses",
    "Attribution": ".attribution", "AttributedOutput": ".attribution",
    "audit": "._audit", "distributions": "._audit", "AuditReport": "._audit",
    "AuditFigures": "._audit", "AuditOutput": "._audit",
    "AuditElements": "._audit",
    "batch": "._batch", "read_batch": "._batch", "BatchResult": "._batch",
    "Results": ".results", "open": ".results",
    "UlpscopeError": ".errors",
    "LIBRARY_PATH": "._ffi", "ffi": "._ffi", "lib": "._ffi",
    "version": "._info", "profiles": "._info", "__version__": "._info",
}

__all__ = sorted(n for n in _API if not n.startswith("_")
                 and n not in ("ffi", "lib"))


def __getattr__(name: str) -> Any:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'ulpscope' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
