"""Element types: the library's HLO names and numpy's (with ml_dtypes)."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ._ffi import ffi, lib, string

# The HLO spelling of each type numpy or ml_dtypes has.  Sub-byte types
# take one byte per element in both (include/ulpscope/tensor.h).
_NUMPY: dict[str, Any] = {
    "pred": np.bool_,
    "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "c64": np.complex64, "c128": np.complex128,
    "bf16": ml_dtypes.bfloat16,
    "s2": ml_dtypes.int2, "s4": ml_dtypes.int4,
    "u2": ml_dtypes.uint2, "u4": ml_dtypes.uint4,
    "f8e5m2": ml_dtypes.float8_e5m2,
    "f8e4m3": ml_dtypes.float8_e4m3,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e3m4": ml_dtypes.float8_e3m4,
    "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
    "f6e2m3fn": ml_dtypes.float6_e2m3fn,
    "f6e3m2fn": ml_dtypes.float6_e3m2fn,
    "f4e2m1fn": ml_dtypes.float4_e2m1fn,
}


def numpy_dtype(hlo_name: str) -> np.dtype:
    """The numpy dtype of an HLO element type; ValueError when none."""
    try:
        return np.dtype(_NUMPY[hlo_name])
    except KeyError:
        raise ValueError(f"element type {hlo_name} has no numpy dtype") from None


def tensor_to_numpy(t: Any) -> np.ndarray:
    """A copy of a usc_tensor as a numpy array of its own type and shape."""
    name = string(lib.usc_dtype_name(lib.usc_tensor_dtype(t)))
    rank = lib.usc_tensor_rank(t)
    dims = lib.usc_tensor_dims(t)
    shape = tuple(int(dims[i]) for i in range(rank))
    nbytes = lib.usc_tensor_nbytes(t)
    raw = bytes(ffi.buffer(lib.usc_tensor_cdata(t), nbytes)) if nbytes else b""
    return np.frombuffer(raw, dtype=numpy_dtype(name)).reshape(shape).copy()


def save_npy(path: Any, x: np.ndarray) -> None:
    """np.save, except for a dtype whose .npy descr numpy cannot read back
    (ml_dtypes' float8_e5m2 writes '<f1'): such arrays are saved as raw
    bytes of their width ('|V1'), which the library reads as the kernel's
    type (docs/tensors.md) and np.load gives back for a .view()."""
    try:
        np.dtype(np.lib.format.dtype_to_descr(x.dtype))
    except TypeError:
        x = x.view(np.dtype(f"V{x.dtype.itemsize}"))
    np.save(path, x, allow_pickle=False)


def as_float64(a: np.ndarray) -> np.ndarray:
    """The values of an array as float64 (ml_dtypes types convert exactly)."""
    return np.asarray(a).astype(np.float64)
