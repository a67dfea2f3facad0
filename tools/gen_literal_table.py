"""Generates the LiteralProto table of tests/proto/ (docs/dumps.md).

    $USC_PYTHON tools/gen_literal_table.py OUT_DIR

writes into OUT_DIR:

* <type>.snapshot.pb: an HloSnapshot that XLA:CPU itself wrote
  (--xla_dump_hlo_snapshots) for jit(lambda a: a[::-1]) of an array of
  every ml_dtypes/numpy type XLA has: its argument literal holds the array,
  its result the array reversed along the first axis.  The 8-bit and
  narrower types hold every encoding once; the wider ones their special
  values (zeros, infinities, NaNs, extremes, subnormals) and random bits.
  tuple.snapshot.pb returns a tuple (f32, bf16) and scalar.snapshot.pb
  a rank-0 f64.
* layout_*.pb: LiteralProto messages written here, by hand, with layouts
  other than row-major (minor_to_major), since XLA:CPU only hands literals
  over in the default one.
* expected_*.npy: the expected bytes of each tensor in C order, from
  numpy/ml_dtypes (x.view(uint8)), never from ulpscope.
* bad_*.pb: malformed, truncated and lying messages.
* table.txt: FILE WHAT TYPE DIMS EXPECTED.npy, one literal a line (WHAT:
  arg0, result, result.0, result.1, literal).
* errors.txt: FILE KIND TEXT: reading FILE as KIND (literal, snapshot or
  module) must fail with a message containing TEXT.
"""

import glob
import os
import shutil
import struct
import sys
import tempfile

out = os.path.abspath(sys.argv[1])
os.makedirs(out, exist_ok=True)
dump = tempfile.mkdtemp(prefix="ulpscope_literal_table_")
os.environ["XLA_FLAGS"] = f"--xla_dump_to={dump} --xla_dump_hlo_snapshots"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

# numpy / ml_dtypes name -> ulpscope's (HLO's) name.
TYPES = [
    ("bool", "pred"), ("int8", "s8"), ("int16", "s16"), ("int32", "s32"),
    ("int64", "s64"), ("uint8", "u8"), ("uint16", "u16"), ("uint32", "u32"),
    ("uint64", "u64"), ("float16", "f16"), ("bfloat16", "bf16"),
    ("float32", "f32"), ("float64", "f64"), ("complex64", "c64"),
    ("complex128", "c128"), ("float8_e5m2", "f8e5m2"),
    ("float8_e4m3fn", "f8e4m3fn"), ("float8_e4m3", "f8e4m3"),
    ("float8_e4m3fnuz", "f8e4m3fnuz"), ("float8_e4m3b11fnuz", "f8e4m3b11fnuz"),
    ("float8_e5m2fnuz", "f8e5m2fnuz"), ("float8_e3m4", "f8e3m4"),
    ("float8_e8m0fnu", "f8e8m0fnu"), ("float4_e2m1fn", "f4e2m1fn"),
    ("int4", "s4"), ("uint4", "u4"), ("int2", "s2"), ("uint2", "u2"),
]

rng = np.random.default_rng(16)


def np_type(name):
    return np.dtype(getattr(ml_dtypes, name)) if hasattr(ml_dtypes, name) else np.dtype(name)


def values(name, dt):
    """Every encoding of a narrow type; specials and random bits of a wide one."""
    if name == "bool":
        return np.array([[True, False, True], [False, False, True]])
    if name in ("int4", "uint4", "int2", "uint2"):
        info = ml_dtypes.iinfo(dt)
        v = np.arange(info.min, info.max + 1)
        return v.astype(dt).reshape(4, -1) if v.size == 16 else v.astype(dt).reshape(2, 2)
    if name == "float4_e2m1fn":
        return np.arange(16, dtype=np.uint8).view(dt).reshape(4, 4)
    if dt.itemsize == 1 and dt.kind not in "iub":
        return np.arange(256, dtype=np.uint8).view(dt).reshape(16, 16)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = [info.min, info.max, 0, 1]
        if dt.kind == "i":
            v.append(-1)
        v += list(rng.integers(info.min, info.max, size=32 - len(v), dtype=dt,
                               endpoint=True))
        return np.array(v, dtype=dt).reshape(4, 8)
    bits = np.dtype(f"u{dt.itemsize}") if dt.itemsize <= 8 else np.dtype("u8")
    n = 32 * (2 if dt.itemsize == 16 else 1)
    raw = rng.integers(0, np.iinfo(bits).max, size=n, dtype=bits, endpoint=True)
    x = raw.view(dt)[:32].copy()
    if dt.kind == "f":
        fi = ml_dtypes.finfo(dt) if hasattr(ml_dtypes, name) else np.finfo(dt)
        special = [0.0, -0.0, np.inf, -np.inf, np.nan, fi.max, -fi.max,
                   fi.smallest_subnormal, fi.tiny, 1.0, -1.0, 0.1]
        x[:len(special)] = np.array(special, dtype=np.float64).astype(dt)
    return x.reshape(4, 8)


def newest_snapshot():
    files = glob.glob(os.path.join(dump, "*.snapshot.*.pb"))
    return max(files, key=os.path.getmtime)


table, errors = [], []


def expect(x, stem):
    name = f"expected_{stem}.npy"
    np.save(os.path.join(out, name), np.ascontiguousarray(x).reshape(-1).view(np.uint8))
    return name


def dims(x):
    return ",".join(str(d) for d in x.shape) or "-"


for npname, hlo in TYPES:
    dt = np_type(npname)
    x = values(npname, dt)
    y = jax.jit(lambda a: a[::-1])(x)
    jax.block_until_ready(y)
    f = f"{hlo}.snapshot.pb"
    shutil.copy(newest_snapshot(), os.path.join(out, f))
    table.append((f, "arg0", hlo, dims(x), expect(x, hlo + "_arg")))
    table.append((f, "result", hlo, dims(x), expect(x[::-1], hlo + "_result")))

a = values("float32", np.dtype("float32"))
b = values("bfloat16", np_type("bfloat16"))
jax.block_until_ready(jax.jit(lambda p, q: (q[::-1], p[::-1]))(a, b))
shutil.copy(newest_snapshot(), os.path.join(out, "tuple.snapshot.pb"))
table.append(("tuple.snapshot.pb", "result.0", "bf16", dims(b), expect(b[::-1], "tuple_0")))
table.append(("tuple.snapshot.pb", "result.1", "f32", dims(a), expect(a[::-1], "tuple_1")))
s = np.float64(-2.5)
jax.block_until_ready(jax.jit(lambda v: v * 2)(s))
shutil.copy(newest_snapshot(), os.path.join(out, "scalar.snapshot.pb"))
table.append(("scalar.snapshot.pb", "arg0", "f64", "-", expect(np.array(s), "scalar")))
shutil.rmtree(dump, ignore_errors=True)


# ---------------------------------------------------------------------------
# Hand-written messages (the wire format of protocol buffers).

def varint(v):
    v &= (1 << 64) - 1
    b = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            b.append(c | 0x80)
        else:
            b.append(c)
            return bytes(b)


def key(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def packed(field, nums):
    return ld(field, b"".join(varint(n) for n in nums))


# XLA's PrimitiveType numbers (xla_data.proto).
PT = {"pred": 1, "s32": 4, "f32": 11, "bf16": 16, "s4": 21, "tuple": 13}


def shape(pt, dims_, mtm=None):
    s = key(2, 0) + varint(pt) + packed(3, dims_)
    if mtm is not None:
        s += ld(5, packed(1, mtm))
    return s


def literal(pt, dims_, mtm, body):
    return ld(1, shape(pt, dims_, mtm)) + body


def write(name, data):
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(data)


def physical(x, mtm):
    """x's elements in the order of layout mtm (minor_to_major)."""
    return np.transpose(x, list(reversed(mtm))).reshape(-1)


x = np.arange(6, dtype=np.float32).reshape(2, 3) / 7
write("layout_f32_colmajor.pb",
      literal(PT["f32"], [2, 3], [0, 1], ld(8, physical(x, [0, 1]).tobytes())))
table.append(("layout_f32_colmajor.pb", "literal", "f32", "2,3", expect(x, "layout_f32")))
xi = np.arange(24, dtype=np.int32).reshape(2, 3, 4) - 12
write("layout_s32_rank3.pb",
      literal(PT["s32"], [2, 3, 4], [1, 0, 2],
              packed(4, [int(v) for v in physical(xi, [1, 0, 2])])))
table.append(("layout_s32_rank3.pb", "literal", "s32", "2,3,4", expect(xi, "layout_s32")))
xb = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5).astype(ml_dtypes.bfloat16)
write("layout_bf16_colmajor.pb",
      literal(PT["bf16"], [3, 4], [0, 1], ld(13, physical(xb, [0, 1]).tobytes())))
table.append(("layout_bf16_colmajor.pb", "literal", "bf16", "3,4", expect(xb, "layout_bf16")))
# A signed 4-bit value as a C int8 holds it (sign-extended): -2 is 0xfe.
x4 = np.array([-8, -2, 0, 7], dtype=ml_dtypes.int4)
write("layout_s4_signext.pb",
      literal(PT["s4"], [4], [0], ld(21, np.array([-8, -2, 0, 7], np.int8).tobytes())))
table.append(("layout_s4_signext.pb", "literal", "s4", "4", expect(x4, "s4_signext")))

# Errors: malformed, truncated, lying.
f32 = open(os.path.join(out, "f32.snapshot.pb"), "rb").read()
write("bad_truncated.snapshot.pb", f32[: len(f32) // 2])
errors.append(("bad_truncated.snapshot.pb", "snapshot", "(truncated file, or a length that lies)"))
write("bad_empty.pb", b"")
errors.append(("bad_empty.pb", "literal", "empty file: expected an XLA LiteralProto message"))
write("bad_count.pb", literal(PT["f32"], [2, 3], [1, 0], ld(8, np.zeros(5, np.float32).tobytes())))
errors.append(("bad_count.pb", "literal", "LiteralProto.f32s: 5 values for f32[2,3], which needs 6"))
write("bad_field.pb", literal(PT["f32"], [2, 3], [1, 0], ld(13, bytes(12))))
errors.append(("bad_field.pb", "literal", "LiteralProto.bf16s holds values, but the shape says f32[2,3]"))
write("bad_layout.pb", literal(PT["f32"], [2, 3], [0, 0], ld(8, bytes(24))))
errors.append(("bad_layout.pb", "literal", "minor_to_major: entry 1 is 0; expected a permutation of 0..1"))
write("bad_s4.pb", literal(PT["s4"], [2], [0], ld(21, bytes([0x3E, 0x01]))))
errors.append(("bad_s4.pb", "literal", "LiteralProto.s4s: byte 0 is 0x3e, which is not a s4 encoding"))
write("bad_wire.pb", ld(1, shape(PT["f32"], [1])) + key(8, 0) + varint(5))
errors.append(("bad_wire.pb", "literal", "field LiteralProto.f32s[0]: varint data where the field holds 32-bit"))
deep = literal(PT["f32"], [], None, key(8, 5) + struct.pack("<f", 1.0))
for _ in range(80):
    deep = ld(1, key(2, 0) + varint(PT["tuple"])) + ld(10, deep)
write("bad_deep.pb", deep)
errors.append(("bad_deep.pb", "literal", "nested deeper than 64 levels"))
write("bad_tuple.pb", ld(1, key(2, 0) + varint(PT["tuple"]) + ld(4, shape(PT["f32"], [1])))
      + ld(10, literal(PT["s32"], [1], [0], packed(4, [3]))))
errors.append(("bad_tuple.pb", "literal", "LiteralProto.tuple_literals[0].shape: differs from LiteralProto.shape.tuple_shapes[0]"))


def instr(name, opcode, iid, shp, operands=(), extra=b""):
    b = ld(1, name.encode()) + ld(2, opcode.encode()) + ld(3, shp) + key(35, 0) + varint(iid)
    if operands:
        b += packed(36, list(operands))
    return b + extra


def module(instrs, root):
    comp = ld(1, b"main") + b"".join(ld(2, i) for i in instrs) + key(5, 0) + varint(1) \
        + key(6, 0) + varint(root)
    return ld(1, ld(1, b"m") + ld(2, b"main") + ld(3, comp) + key(6, 0) + varint(1))


sf = shape(PT["f32"], [4], [0])
p0 = instr("p0", "parameter", 1, sf)
write("bad_opcode.hlo.pb",
      module([p0, instr("ar", "all-reduce", 2, sf, [1])], 2))
errors.append(("bad_opcode.hlo.pb", "module", "instruction 'ar' (all-reduce): opcode 'all-reduce' is not converted"))
write("bad_unknown_field.hlo.pb",
      module([p0, instr("e", "exponential", 2, sf, [1], ld(91, key(1, 0) + varint(1)))], 2))
errors.append(("bad_unknown_field.hlo.pb", "module", "instruction 'e' (exponential): field 91 of HloInstructionProto is not converted"))
write("bad_unread_field.hlo.pb",
      module([p0, instr("n", "negate", 2, sf, [1], key(60, 0) + varint(1))], 2))
errors.append(("bad_unread_field.hlo.pb", "module", "instruction 'n' (negate): field is_stable is not converted for this opcode"))
write("bad_operand.hlo.pb", module([p0, instr("n", "negate", 2, sf, [7])], 2))
errors.append(("bad_operand.hlo.pb", "module", "operand_ids[0]: no instruction of the computation has id 7"))

with open(os.path.join(out, "table.txt"), "w") as fh:
    for row in table:
        fh.write(" ".join(row) + "\n")
with open(os.path.join(out, "errors.txt"), "w") as fh:
    for f, kind, text in errors:
        fh.write(f"{f} {kind} {text}\n")
print(f"{out}: {len(table)} literals, {len(errors)} errors")
