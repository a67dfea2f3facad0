"""The door to libulpscope.so: cffi in ABI mode.

The package holds no C declarations of its own.  The library carries its
public API as text, usc_bind_cdef(): the headers of include/ulpscope/ run
through the preprocessor of the build that made it (src/bind/gen_cdef.c).
Loading is two steps: a bootstrap FFI that knows that one function opens
the library and reads the text, and the real FFI is declared from it, so
the structs cffi lays out are exactly those of the library loaded, whatever
changed in the headers.  cffi's ABI mode needs no C compiler at install
time; it releases the GIL around every call into the library, so a long
check does not stop the Python threads around it.

As a guard against cffi laying a struct out differently from the C
compiler, every struct the library names (usc_bind_struct_name) has its
size compared at load time; a difference refuses the import with a clear
message.
"""
from __future__ import annotations

import ctypes.util
import os
from pathlib import Path
from typing import Any

import cffi

from .errors import UlpscopeError

def library_candidates() -> list[str]:
    """The places the package looks for libulpscope.so, in order.

    ULPSCOPE_LIB (a file), then the copy bundled into the installed package
    by ``pip install ./python``, then a build folder of the checkout the
    package sits in (``build/``), then the system's library path.
    """
    here = Path(__file__).resolve().parent
    found: list[str] = []
    env = os.environ.get("ULPSCOPE_LIB")
    if env:
        return [env]
    bundled = here / "_lib" / "libulpscope.so"
    if bundled.exists():
        found.append(str(bundled))
    checkout = here.parent.parent / "build" / "libulpscope.so"
    if checkout.exists():
        found.append(str(checkout))
    system = ctypes.util.find_library("ulpscope")
    if system:
        found.append(system)
    return found


def declarations(path: str) -> str:
    """The C declarations libulpscope.so at path carries (usc_bind_cdef)."""
    boot = cffi.FFI()
    boot.cdef("const char *usc_bind_cdef(void);")
    lib = boot.dlopen(path)
    try:
        text = boot.string(lib.usc_bind_cdef()).decode()
    except AttributeError as e:
        raise ImportError(
            f"ulpscope: {path} carries no C declarations (usc_bind_cdef): "
            "it is older than this package; rebuild the library") from e
    finally:
        boot.dlclose(lib)
    return text


def check_layout(ffi: Any, lib: Any, path: str) -> None:
    """Refuses a library whose structs cffi lays out at other sizes."""
    i = 0
    while True:
        p = lib.usc_bind_struct_name(i)
        if p == ffi.NULL:
            break
        name = ffi.string(p).decode()
        theirs = lib.usc_bind_sizeof(p)
        ours = ffi.sizeof(name)
        if theirs != ours:
            raise ImportError(
                f"ulpscope: {path}: struct {name} is {theirs} bytes in the "
                f"library but {ours} as cffi lays out its declarations")
        i += 1


def _load() -> Any:
    candidates = library_candidates()
    if not candidates:
        raise ImportError(
            "ulpscope: libulpscope.so not found: set ULPSCOPE_LIB to the "
            "library built by CMake (build/libulpscope.so), or install the "
            "package with pip install ./python from a checkout "
            "(docs/python.md)")
    errors = []
    for path in candidates:
        try:
            text = declarations(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        ffi = cffi.FFI()
        ffi.cdef(text)
        lib = ffi.dlopen(path)
        check_layout(ffi, lib, path)
        return ffi, lib, path
    raise ImportError("ulpscope: cannot load libulpscope.so: "
                      + "; ".join(errors))


ffi, lib, LIBRARY_PATH = _load()


def new_error() -> Any:
    """A zeroed usc_error for one call."""
    return ffi.new("usc_error *")


def raise_for(status: int, err: Any) -> None:
    """Raises UlpscopeError for a failed status, with the library's message."""
    if status != 0:
        name = ffi.string(lib.usc_status_name(status)).decode()
        message = ffi.string(err.message).decode("utf-8", "replace")
        raise UlpscopeError(status, name, message)


def string(p: Any) -> str | None:
    """A C string as str; None for NULL."""
    if p == ffi.NULL:
        return None
    return ffi.string(p).decode("utf-8", "replace")
