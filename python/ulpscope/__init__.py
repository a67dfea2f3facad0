"""ulpscope: is an XLA kernel's device output legitimate rounding or a defect?

Python bindings over libulpscope (cffi, ABI mode): every figure comes from
the C library; this package only moves arrays in and out.  See
docs/python.md.

    >>> import ulpscope
    >>> r = ulpscope.check("kernel.hlo", [x], [y], profile="xla-tpu")
    >>> r.verdict, r.outputs[0].ulp_oracle.max()
"""
from __future__ import annotations

from ._ffi import LIBRARY_PATH, ffi, lib, string
from .analyses import BisectReport, ExplainReport, SignatureReport, bisect, explain, signature
from .audit import AuditElements, AuditFigures, AuditOutput, AuditReport, audit, distributions
from .batch import BatchResult, batch, read_batch
from .attribution import Attribution, AttributedOutput
from .check import CLASS_NAMES, CheckReport, Element, Output, Stats, check, check_case
from .errors import UlpscopeError
from .results import Results, open

__all__ = [
    "AuditElements", "AuditFigures", "AuditOutput", "AuditReport", "audit",
    "distributions", "BatchResult", "batch", "read_batch",
    "Attribution", "AttributedOutput", "BisectReport", "ExplainReport",
    "SignatureReport", "bisect", "explain", "signature",
    "CLASS_NAMES", "CheckReport", "Element", "LIBRARY_PATH", "Output",
    "Results", "Stats", "UlpscopeError", "check", "check_case", "open",
    "profiles", "version",
]


def version() -> str:
    """The library's version, ``"MAJOR.MINOR.PATCH"``."""
    return string(lib.usc_version()) or ""


def profiles() -> list[str]:
    """The names of the built-in device profiles."""
    names = lib.usc_profile_builtin_names()
    out = []
    i = 0
    while names[i] != ffi.NULL:
        out.append(string(names[i]) or "")
        i += 1
    return out


__version__ = version()
