"""HloSnapshot messages written from Python (capture.py --snapshots).

When the backend writes no snapshot itself (--xla_dump_hlo_snapshots),
capture.py writes the same message from what it has: the compiled module
(jax's HloModule.as_serialized_hlo_module_proto()), the arguments it passed
and the buffers the run returned.  The wire format is that of XLA's
xla/service/hlo.proto and xla/xla_data.proto (HloSnapshot: hlo=1,
arguments=2, result=3, execution_platform=4; HloProto: hlo_module=1;
LiteralProto: shape=1 and one value field per element type); docs/dumps.md
says what ulpscope reads.  numpy only, no protobuf package.
"""

from __future__ import annotations

import numpy as np

# numpy/ml_dtypes name -> (PrimitiveType, LiteralProto field, how stored)
# "bytes": little-endian bytes, one container per element; "packed": the
# repeated numeric field as one packed run of its wire form.
TYPES = {
    "bool": (1, 2, "varint"), "int8": (2, 15, "bytes"), "int16": (3, 17, "bytes"),
    "int32": (4, 4, "varint"), "int64": (5, 5, "varint"), "uint8": (6, 3, "bytes"),
    "uint16": (7, 16, "bytes"), "uint32": (8, 6, "varint"), "uint64": (9, 7, "varint"),
    "float16": (10, 11, "bytes"), "float32": (11, 8, "fixed"), "float64": (12, 9, "fixed"),
    "complex64": (15, 12, "fixed"), "bfloat16": (16, 13, "bytes"),
    "complex128": (18, 18, "fixed"), "float8_e5m2": (19, 19, "bytes"),
    "float8_e4m3fn": (20, 20, "bytes"), "int4": (21, 21, "bytes"), "uint4": (22, 22, "bytes"),
    "float8_e4m3b11fnuz": (23, 23, "bytes"), "float8_e5m2fnuz": (24, 24, "bytes"),
    "float8_e4m3fnuz": (25, 25, "bytes"), "int2": (26, 26, "bytes"), "uint2": (27, 27, "bytes"),
    "float8_e4m3": (28, 28, "bytes"), "float8_e3m4": (29, 29, "bytes"),
    "float4_e2m1fn": (32, 32, "bytes"), "float8_e8m0fnu": (33, 33, "bytes"),
}
TUPLE = 13


def _varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def _ld(field, payload):
    return _key(field, 2) + _varint(len(payload)) + payload


def _shape(x):
    pt = TYPES[x.dtype.name][0]
    dims = b"".join(_varint(d) for d in x.shape)
    s = _key(2, 0) + _varint(pt)
    if x.ndim:
        s += _ld(3, dims)
        # The default layout: the last dimension varies fastest.
        s += _ld(5, _ld(1, b"".join(_varint(d) for d in reversed(range(x.ndim)))))
    return s


def literal(x):
    """A LiteralProto of one array, in row-major layout."""
    # (np.ascontiguousarray would make a scalar an array of one.)
    x = np.array(x, order="C", copy=True)
    if x.dtype.name not in TYPES:
        raise ValueError(f"no LiteralProto field for {x.dtype}")
    _, field, how = TYPES[x.dtype.name]
    flat = x.reshape(-1)
    if how == "bytes":
        body = _ld(field, flat.tobytes())
    elif how == "fixed":
        body = _ld(field, flat.tobytes()) if flat.size else b""
    else:
        vals = flat.astype(np.int64 if x.dtype.kind in "ib" else np.uint64)
        body = _ld(field, b"".join(_varint(int(v)) for v in vals)) if flat.size else b""
    return _ld(1, _shape(x)) + body


def tuple_literal(xs):
    shape = _key(2, 0) + _varint(TUPLE) + b"".join(_ld(4, _shape(np.asarray(x))) for x in xs)
    return _ld(1, shape) + b"".join(_ld(10, literal(x)) for x in xs)


def snapshot(module_proto, arguments, results, result_is_tuple, platform=""):
    """The bytes of an HloSnapshot."""
    out = _ld(1, _ld(1, module_proto))
    for a in arguments:
        out += _ld(2, literal(np.asarray(a)))
    res = tuple_literal(results) if result_is_tuple else literal(np.asarray(results[0]))
    out += _ld(3, res)
    if platform:
        out += _ld(4, platform.encode())
    return out


