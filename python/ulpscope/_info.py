"""The library's version and its built-in profiles."""
from __future__ import annotations

from ._ffi import ffi, lib, string


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
