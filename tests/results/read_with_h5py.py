#!/usr/bin/python3
"""Reads a result file written by results_write_fixture with h5py and numpy.

The expected values are the formulas of tests/results/results_fixture.h,
written out again here: nothing is taken from ulpscope's own reader.
Usage: read_with_h5py.py PATH/TO/results_write_fixture
Exit status 77 (a skip for ctest) when h5py or numpy is missing.
"""
import math
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def attr_str(obj, name):
    v = obj.attrs[name]
    return v.decode() if isinstance(v, bytes) else str(v)


def expect_output(g, o, dtype, shape, container):
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    i = np.arange(n, dtype=np.uint64)
    if o == 0:
        dev = 0x3F80 + i
        ref = np.where(i % 4 == 0, 0x3F80 + i, 0x3F80 + i + 1)
        eo = np.where(i % 7 == 3, np.nan, (i % 5).astype(np.float64) - 2.0 + 0.25)
        er = -i.astype(np.float64)
    elif o == 1:
        dev = np.full(n, 0x7F, np.uint64)
        ref = dev
        eo = np.full(n, np.nan)
        er = np.zeros(n)
    else:
        dev = 0x3F800000 + i * 3
        ref = np.where(i % 10 == 0, 0x3F800000 + i * 3, 0x3F800000 + i * 3 - 1)
        eo = np.ldexp((i % 11).astype(np.float64) - 5.0, -1)
        er = (i % 3).astype(np.float64)
    mid = np.full(n, np.nan) if o == 1 else 1.0 + np.ldexp(i.astype(np.float64), -7)
    rad = np.ldexp(i.astype(np.float64), -60)
    und = (i % 6 == 0).astype(np.uint8)

    check(attr_str(g, "dtype") == dtype, f"{g.name} dtype")
    check(attr_str(g, "shape") == f"{dtype}[{','.join(map(str, shape))}]",
          f"{g.name} shape attribute {attr_str(g, 'shape')}")
    check(int(g.attrs["count"]) == n, f"{g.name} count")
    for name, want in (("device", dev), ("reference", ref)):
        d = g[name]
        check(d.dtype == np.dtype(f"<u{container}"), f"{d.name} dtype {d.dtype}")
        check(d.shape == tuple(shape), f"{d.name} shape {d.shape}")
        check(attr_str(d, "dtype") == dtype, f"{d.name} dtype attribute")
        check(np.array_equal(np.asarray(d[()]).reshape(-1), want.astype(d.dtype)),
              f"{d.name} values")
    for name, want in (("oracle_mid", mid), ("oracle_rad", rad),
                       ("ulp_error_oracle", eo), ("ulp_error_reference", er)):
        d = g[name]
        check(d.dtype == np.dtype("<f8") and d.shape == tuple(shape), f"{d.name} type")
        got = np.asarray(d[()], dtype=np.float64).reshape(-1)
        # Bit for bit: NaN where NaN is expected, the same doubles elsewhere.
        check(np.array_equal(got.view(np.uint64)[~np.isnan(want)],
                             want.view(np.uint64)[~np.isnan(want)]), f"{d.name} values")
        check(np.array_equal(np.isnan(got), np.isnan(want)), f"{d.name} NaN")
    d = g["undecided"]
    check(d.dtype == np.uint8 and np.array_equal(np.asarray(d[()]).reshape(-1), und),
          f"{d.name}")
    # The statistics, recomputed with numpy: nearest rank of the sorted |x|.
    for against, err in (("oracle", eo), ("reference", er)):
        v = np.sort(np.abs(err[~np.isnan(err)]))
        check(int(g.attrs[f"nan_count_ulp_{against}"]) == int(np.isnan(err).sum()),
              f"{g.name} nan count")
        got = [float(g.attrs[f"{s}_abs_ulp_{against}"]) for s in ("max", "median", "p99")]
        if len(v) == 0:
            check(all(math.isnan(x) for x in got), f"{g.name} empty stats")
            continue
        rank = lambda p: -(-p * len(v) // 100)  # ceil(p * n / 100)
        want = [v[-1], v[rank(50) - 1], v[rank(99) - 1]]
        check(got == [float(x) for x in want], f"{g.name} {against} stats {got} {want}")
    check(int(g.attrs["bit_exact_count"]) == int((dev == ref).sum()), f"{g.name} bit exact")
    check(int(g.attrs["undecided_count"]) == int(und.sum()), f"{g.name} undecided")
    # Output 0 is classified: an HDF5 enum whose names are the classes of
    # docs/method.md, the envelope, and a count attribute per class.
    classes = ["exact", "rounding", "envelope", "suspicious", "defect",
               "nan-mismatch", "inf-mismatch", "sign-mismatch", "undecided"]
    if o != 0:
        check("class" not in g and "envelope_lo" not in g, f"{g.name} unclassified")
        return
    d = g["class"]
    mapping = h5py.check_enum_dtype(d.dtype)
    check(mapping == {name: v for v, name in enumerate(classes)},
          f"{d.name} enum {mapping}")
    cls = np.asarray(d[()]).reshape(-1)
    check(np.array_equal(cls, (i % 9).astype(cls.dtype)), f"{d.name} values")
    for v, name in enumerate(classes):
        check(int(g.attrs[f"class_count_{name}"]) == int((i % 9 == v).sum()),
              f"{g.name} class_count_{name}")
    lo = np.asarray(g["envelope_lo"][()]).reshape(-1)
    hi = np.asarray(g["envelope_hi"][()]).reshape(-1)
    fl = np.asarray(g["envelope_flags"][()]).reshape(-1)
    want_lo = 1.0 + np.ldexp(i.astype(np.float64), -7)
    check(np.array_equal(np.isnan(lo), i % 5 == 0) and
          np.array_equal(lo[i % 5 != 0], want_lo[i % 5 != 0]),
          f"{g.name} envelope_lo")
    check(np.array_equal(np.isnan(hi), i % 5 == 0) and
          np.array_equal(hi[i % 5 != 0], want_lo[i % 5 != 0] + 0.5),
          f"{g.name} envelope_hi")
    check(np.array_equal(fl, np.where(i % 5 == 0, 2, 1).astype(fl.dtype)),
          f"{g.name} envelope_flags")


def main():
    writer = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fixture.h5")
        subprocess.run([writer, path], check=True)
        with h5py.File(path, "r") as f:
            check(int(f.attrs["schema_version"]) == 1, "schema_version")
            check(int(f.attrs["complete"]) == 1, "complete")
            check(len(attr_str(f, "created")) == 20, "created")
            check(attr_str(f, "ulpscope_version").count(".") == 2, "version")
            check(sorted(f["kernels"].keys()) == ["fusion.1", "k2"], "kernels")
            k = f["kernels/fusion.1"]
            check(attr_str(k, "hlo_file") == "dumps/module_0001.fusion.1.txt", "hlo_file")
            check(attr_str(k, "fusion") == "fusion.1", "fusion")
            check(attr_str(k, "verdict") == "", "verdict")
            check(int(k.attrs["oracle_precision_max"]) == 320, "precision")
            check(int(k.attrs["element_count"]) == 25, "element_count")
            check(int(k.attrs["output_count"]) == 2, "output_count")
            text = k["hlo_text"][()]
            text = text.decode() if isinstance(text, bytes) else text
            check(text.startswith("HloModule fixture\n") and "source_line=42" in text,
                  "hlo_text")
            ops = k["ops"][()]
            check(list(ops.dtype.names) == ["index", "name", "opcode", "element_type",
                                            "shape", "op_name", "source_file",
                                            "source_line"], "ops columns")
            dec = lambda b: b.decode() if isinstance(b, bytes) else b
            check([dec(x) for x in ops["name"]] == ["p0", "p1", "add.1", "c", "t"], "ops names")
            check([dec(x) for x in ops["opcode"]] ==
                  ["parameter", "parameter", "add", "constant", "tuple"], "ops opcodes")
            row = ops[2]
            check(int(row["index"]) == 2 and dec(row["op_name"]) == "jit(f)/add" and
                  dec(row["source_file"]) == "model.py" and int(row["source_line"]) == 42,
                  "ops row 2")
            check(int(ops[0]["source_line"]) == -1, "ops row 0")
            expect_output(k["outputs/0"], 0, "bf16", [2, 3, 4], 2)
            expect_output(k["outputs/1"], 1, "f8e4m3fn", [], 1)
            k2 = f["kernels/k2"]
            check(attr_str(k2, "verdict") == "legit", "k2 verdict")
            check(k2["ops"].shape == (0,), "k2 ops")
            out = k2["outputs/0"]
            # Large datasets are chunked and compressed; small ones are not.
            check(out["ulp_error_reference"].chunks is not None and
                  out["ulp_error_reference"].compression == "gzip", "chunked")
            check(k["outputs/0/device"].chunks is None, "contiguous")
            # The filters docs/results.md ("Compression") chooses for speed:
            # deflate level 1 after the byte shuffle for the arrays of a few
            # repeated values, none for those deflate hardly shrinks; every
            # chunk checksummed.
            for name in ("oracle_rad", "ulp_error_reference"):
                d = out[name]
                check(d.compression == "gzip" and d.compression_opts == 1 and
                      d.shuffle and d.fletcher32,
                      f"{d.name} filters {d.compression} {d.compression_opts} "
                      f"{d.shuffle} {d.fletcher32}")
            for name in ("device", "reference", "oracle_mid", "ulp_error_oracle"):
                d = out[name]
                check(d.chunks is not None and d.compression is None and
                      not d.shuffle and d.fletcher32,
                      f"{d.name} filters {d.compression} {d.shuffle} {d.fletcher32}")
            expect_output(out, 2, "f32", [8, 16, 10], 4)
    print("h5py read the result file as expected")


if __name__ == "__main__":
    main()
