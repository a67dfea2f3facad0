#!/usr/bin/env python3
"""Writes the tensor reader fixtures in tests/tensor/fixtures/.

Every fixture is written by numpy, ml_dtypes or h5py, never by ulpscope, and
expect.txt beside them records, for each fixture, the HLO type and shape to
read it as and the bits of every element in C order as numpy itself reports
them (arr.view(uintN)).  The C tests compare what the readers return with
those bits, so the expectations never come from the code under test.

The fixtures are committed: CI needs no Python package.  To regenerate them:

    pip install -r tools/requirements.txt h5py
    python3 tools/gen_tensor_fixtures.py

Developer check of the C writer (needs no rebuild of the fixtures):

    USC_TENSOR_WRITE_DIR=/tmp/w build/tests/test_tensor_npy
    python3 tools/gen_tensor_fixtures.py --check-written /tmp/w

The test writes every .npy fixture back with usc_tensor_write_npy under the
same name; --check-written loads each with np.load, views it as the
ml_dtypes type of its HLO type and compares its bits with expect.txt.
"""

import argparse
import io
import os
import sys

import numpy as np
import ml_dtypes as mld

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "tests", "tensor", "fixtures")

# HLO spelling -> numpy or ml_dtypes type.
TYPES = {
    "pred": np.bool_,
    "s1": mld.int1, "s2": mld.int2, "s4": mld.int4,
    "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u1": mld.uint1, "u2": mld.uint2, "u4": mld.uint4,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "bf16": mld.bfloat16, "f32": np.float32,
    "f64": np.float64,
    "f8e5m2": mld.float8_e5m2, "f8e4m3": mld.float8_e4m3,
    "f8e4m3fn": mld.float8_e4m3fn, "f8e4m3fnuz": mld.float8_e4m3fnuz,
    "f8e4m3b11fnuz": mld.float8_e4m3b11fnuz,
    "f8e5m2fnuz": mld.float8_e5m2fnuz, "f8e3m4": mld.float8_e3m4,
    "f8e8m0fnu": mld.float8_e8m0fnu, "f6e2m3fn": mld.float6_e2m3fn,
    "f6e3m2fn": mld.float6_e3m2fn, "f4e2m1fn": mld.float4_e2m1fn,
    "c64": np.complex64, "c128": np.complex128,
}

# What usc_tensor_write_npy must write for each HLO type.
WRITER_DESCR = {
    "pred": "|b1", "s8": "|i1", "u8": "|u1", "s16": "<i2", "s32": "<i4",
    "s64": "<i8", "u16": "<u2", "u32": "<u4", "u64": "<u8", "f16": "<f2",
    "f32": "<f4", "f64": "<f8", "c64": "<c8", "c128": "<c16", "bf16": "<V2",
}


def bits_of(arr, hlo):
    """The bits of each element in C order, as hex strings."""
    a = np.ascontiguousarray(arr)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    if hlo in ("c64", "c128"):
        u = np.uint32 if hlo == "c64" else np.uint64
        w = 8 if hlo == "c64" else 16
        v = a.reshape(-1).view(u).reshape(-1, 2)
        return ["%0*x:%0*x" % (w, int(r), w, int(i)) for r, i in v]
    n = a.dtype.itemsize
    v = a.reshape(-1).view({1: np.uint8, 2: np.uint16, 4: np.uint32,
                            8: np.uint64}[n])
    if hlo in ("s1", "s2", "s4") and a.dtype.kind == "i":
        # A plain int8 file read as a sub-byte type: the reader keeps the
        # low bits of the sign-extended byte.
        w = int(hlo[1:])
        v = v & ((1 << w) - 1)
    return ["%0*x" % (2 * n, int(x)) for x in v]


class Expect:
    def __init__(self):
        self.blocks = []

    def add(self, source, hlo, shape, arr):
        dims = ",".join(str(d) for d in shape) if shape else "-"
        self.blocks.append((source, hlo, dims, bits_of(arr, hlo)))

    def write(self, path):
        with open(path, "w") as f:
            f.write("# Written by tools/gen_tensor_fixtures.py: for each "
                    "fixture, the HLO type\n# and shape to read it as, "
                    "then each element's bits in C order (numpy's).\n")
            for source, hlo, dims, bits in self.blocks:
                f.write("= %s %s %s\n" % (source, hlo, dims))
                for i in range(0, len(bits), 8):
                    f.write(" ".join(bits[i:i + 8]) + "\n")


def save(name, arr, version=None):
    path = os.path.join(FIXTURES, name)
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr)
        else:
            np.lib.format.write_array(f, arr, version=version)


def float_values(hlo):
    """A few values of every kind the format has, rounded by ml_dtypes."""
    t = TYPES[hlo]
    fi = mld.finfo(t)
    vals = [1.0, -1.5, 0.5, float(fi.max), -float(fi.max),
            float(fi.smallest_normal), float(fi.smallest_subnormal), 0.0]
    if hlo == "f8e8m0fnu":
        vals = [1.0, 2.0, 0.5, float(fi.max), float(fi.smallest_normal),
                2.0 ** -100, 4.0, 8.0]
    arr = np.array(vals, dtype=np.float32).astype(t)
    if not np.isnan(np.array(np.nan, dtype=np.float32).astype(t)):
        return arr
    return np.concatenate([arr, np.array([np.nan], np.float32).astype(t)])


def gen_npy(ex):
    f32 = np.array([[1.0, -2.5, 0.1], [np.inf, np.nan, -0.0]], np.float32)
    for ver in (None, (2, 0), (3, 0)):
        name = "f32_v%d.npy" % (ver[0] if ver else 1)
        save(name, f32, ver)
        ex.add(name, "f32", f32.shape, f32)

    f64 = np.array(np.pi, np.float64)
    save("f64_scalar.npy", f64)
    ex.add("f64_scalar.npy", "f64", (), f64)

    f16 = np.array([1.0, 65504, 6e-8, -np.inf, np.nan], np.float16)
    save("f16.npy", f16)
    ex.add("f16.npy", "f16", f16.shape, f16)

    bf = np.array([[1.0, -3.140625], [1e38, 2 ** -133]], np.float32)
    bf = bf.astype(mld.bfloat16)
    save("bf16.npy", bf)
    ex.add("bf16.npy", "bf16", bf.shape, bf)
    u2 = bf.view(np.uint16)
    save("bf16_as_u2.npy", u2)
    ex.add("bf16_as_u2.npy", "bf16", u2.shape, u2)
    save("bf16_as_u2_be.npy", u2.astype(">u2"))
    ex.add("bf16_as_u2_be.npy", "bf16", u2.shape, u2)

    for hlo in ("f8e4m3fn", "f8e4m3fnuz", "f8e4m3b11fnuz", "f8e5m2",
                "f8e5m2fnuz", "f8e4m3", "f8e3m4", "f8e8m0fnu", "f6e2m3fn",
                "f6e3m2fn", "f4e2m1fn"):
        a = float_values(hlo)
        save(hlo + ".npy", a)
        ex.add(hlo + ".npy", hlo, a.shape, a)

    for hlo, lo, hi in (("s4", -8, 8), ("u4", 0, 16), ("s2", -2, 2),
                        ("u2", 0, 4), ("s1", -1, 1), ("u1", 0, 2)):
        a = np.arange(lo, hi, dtype=np.int32).astype(TYPES[hlo])
        save(hlo + ".npy", a)
        ex.add(hlo + ".npy", hlo, a.shape, a)
    s8 = np.arange(-8, 8, dtype=np.int8)
    save("s4_as_i1.npy", s8)
    ex.add("s4_as_i1.npy", "s4", s8.shape, s8)

    b = np.array([[True, False, True], [False, False, True]])
    save("pred.npy", b)
    ex.add("pred.npy", "pred", b.shape, b)

    for hlo in ("s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"):
        t = TYPES[hlo]
        info = np.iinfo(t)
        a = np.array([info.min, info.max, 0, 1, info.max // 3], dtype=t)
        save(hlo + ".npy", a)
        ex.add(hlo + ".npy", hlo, a.shape, a)

    c = np.array([1 + 2j, -0.5 - np.inf * 1j, np.nan + 0j], np.complex64)
    save("c64.npy", c)
    ex.add("c64.npy", "c64", c.shape, c)
    c2 = np.array([[1e300 - 1e-300j], [3j]], np.complex128)
    save("c128.npy", c2)
    ex.add("c128.npy", "c128", c2.shape, c2)

    # Fortran order: the file holds the transpose of the C layout.
    fo = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    save("f32_fortran.npy", fo)
    ex.add("f32_fortran.npy", "f32", fo.shape, fo)
    fo3 = np.asfortranarray(np.arange(24, dtype=np.int16).reshape(2, 3, 4))
    save("s16_fortran_3d.npy", fo3)
    ex.add("s16_fortran_3d.npy", "s16", fo3.shape, fo3)

    # Big-endian files.
    for name, hlo, a in (
            ("f32_be.npy", "f32", np.array([[1.0, -2.0], [0.25, 3e38]], ">f4")),
            ("s64_be.npy", "s64", np.array([-2, 2 ** 40 + 5], ">i8")),
            ("f64_be.npy", "f64", np.array([np.e], ">f8")),
            ("c64_be.npy", "c64", np.array([1.5 - 2j], ">c8"))):
        save(name, a)
        ex.add(name, hlo, a.shape, a)

    r4 = np.arange(12, dtype=np.int8).reshape(2, 1, 3, 2) - 6
    save("s8_rank4.npy", r4)
    ex.add("s8_rank4.npy", "s8", r4.shape, r4)

    for name, hlo, a in (("f32_empty_0x3.npy", "f32", np.zeros((0, 3), np.float32)),
                         ("s32_empty_0.npy", "s32", np.zeros((0,), np.int32)),
                         ("bf16_empty_2x0x3.npy", "bf16",
                          np.zeros((2, 0, 3), mld.bfloat16))):
        save(name, a)
        ex.add(name, hlo, a.shape, a)

    one = np.array([7], np.int32)
    save("s32_shape1.npy", one)
    ex.add("s32_shape1.npy", "s32", one.shape, one)


def gen_h5(ex):
    import h5py

    path = os.path.join(FIXTURES, "tensors.h5")
    src = "tensors.h5:"
    with h5py.File(path, "w", libver="earliest") as f:
        def put(ds, hlo, arr, stored=None, **kw):
            f.create_dataset(ds, data=arr if stored is None else stored, **kw)
            ex.add(src + "/" + ds, hlo, arr.shape, arr)

        put("f32", "f32", np.array([[1.0, -2.5, 0.1], [np.inf, np.nan, -0.0]],
                                   np.float32))
        put("f64", "f64", np.array(np.pi))
        put("f16", "f16", np.array([1.0, 65504, 6e-8, -np.inf], np.float16))
        bf = np.array([1.0, -3.140625, 1e38], np.float32).astype(mld.bfloat16)
        put("bf16", "bf16", bf)  # h5py writes it as a 2-byte opaque
        e4 = float_values("f8e4m3fn")
        put("f8e4m3fn", "f8e4m3fn", e4)
        e5 = float_values("f8e5m2")
        # h5py refuses float8_e5m2 itself; dumps store its bytes as uint8.
        put("f8e5m2_as_u8", "f8e5m2", e5, stored=e5.view(np.uint8))
        s4 = np.arange(-8, 8, dtype=np.int32).astype(mld.int4)
        put("s4", "s4", s4)
        put("pred", "pred", np.array([True, False, True]))
        put("s32_be", "s32", np.array([-7, 1 << 30], ">i4"))
        put("f64_be", "f64", np.array([[np.e, -1.0]], ">f8"))
        put("c64", "c64", np.array([1 + 2j, -0.5j], np.complex64))
        put("s64", "s64", np.array([-(1 << 62), 5], np.int64))
        put("u16", "u16", np.array([65535, 0, 256], np.uint16))
        put("group/nested/f64", "f64", np.array([1.0, 2.0]))
        put("empty", "f32", np.zeros((0, 3), np.float32))
        put("chunked", "f32", np.arange(100, dtype=np.float32) / 7,
            chunks=(16,), compression="gzip")
        put("s8_rank4", "s8",
            np.arange(12, dtype=np.int8).reshape(2, 1, 3, 2) - 6)
        # Datasets for the error tests: a bf16 stored as float16, a string.
        f.create_dataset("bf16_as_f16", data=np.zeros(3, np.float16))
        f.create_dataset("text", data=np.array([b"abc", b"de"]))
        f.create_group("just_a_group")

    with open(path, "rb") as f:
        whole = f.read()
    with open(os.path.join(FIXTURES, "truncated.h5"), "wb") as f:
        f.write(whole[:1024])
    with open(os.path.join(FIXTURES, "not_hdf5.h5"), "wb") as f:
        f.write(b"this is not an HDF5 file\n" * 40)


def read_expect():
    blocks = []
    with open(os.path.join(FIXTURES, "expect.txt")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            if line.startswith("= "):
                source, hlo, dims = line[2:].split()
                blocks.append([source, hlo, dims, []])
            else:
                blocks[-1][3].extend(line.split())
    return blocks


def check_written(folder):
    """Loads what the C writer wrote and compares with expect.txt."""
    checked = failed = 0
    for source, hlo, dims, bits in read_expect():
        if ":" in source:
            continue
        path = os.path.join(folder, source)
        if not os.path.exists(path):
            print("missing: %s" % path)
            failed += 1
            continue
        arr = np.load(path)
        want_descr = WRITER_DESCR.get(hlo, "|V1")
        # numpy reports a void descr read back as "|Vn" whatever was written.
        if want_descr in ("<V2", "<V1"):
            want_descr = "|" + want_descr[1:]
        shape = () if dims == "-" else tuple(int(d) for d in dims.split(","))
        ok = arr.dtype.str == want_descr and arr.shape == shape
        if ok:
            arr = arr.view(TYPES[hlo])
            ok = bits_of(arr, hlo) == bits
        checked += 1
        if not ok:
            failed += 1
            print("MISMATCH: %s (%s %s)" % (source, arr.dtype.str, arr.shape))
    print("%d passed, %d failed" % (checked - failed, failed))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check-written", metavar="DIR",
                    help="check the .npy files the C writer put in DIR")
    args = ap.parse_args()
    if args.check_written:
        return check_written(args.check_written)
    os.makedirs(FIXTURES, exist_ok=True)
    ex = Expect()
    gen_npy(ex)
    gen_h5(ex)
    ex.write(os.path.join(FIXTURES, "expect.txt"))
    print("wrote %d fixtures" % len(ex.blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
