#!/usr/bin/env python3
"""Damaged result files are refused by `ulpscope explain`, naming the object.

usage: damage_cli.py ULPSCOPE CASE_DIR KIND

Writes a result file with the real writer (`ulpscope check CASE_DIR --out`),
checks that `explain` reads the intact file (exit 0), damages a copy in one
way (KIND, the table below) with h5py or by truncating it, and checks that
`explain` then exits non-zero with a message naming the file and the damaged
object and saying what was expected.  Exit status 77 (a skip) when h5py or
numpy is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError:
    print("h5py or numpy is not installed: skipped")
    sys.exit(77)


def out0(f, k):
    return f[f"kernels/{k}/outputs/0"]


def replace(group, name, data, **kw):
    """Recreates dataset name of group with data, keeping its attributes."""
    attrs = dict(group[name].attrs)
    del group[name]
    d = group.create_dataset(name, data=data, **kw)
    for a, v in attrs.items():
        d.attrs[a] = v
    return d


def shape_huge(f, k):
    out0(f, k).attrs["shape"] = np.bytes_(b"bf16[1099511627776]")
    return "outputs/0/shape: bf16[1099511627776] (rank 1), expected bf16[8,128]"


def shape_rank0(f, k):
    out0(f, k).attrs["shape"] = np.bytes_(b"bf16[]")
    return "outputs/0/shape: bf16[] (rank 0), expected bf16[8,128]"


def device_huge(f, k):
    g = out0(f, k)
    attrs = dict(g["device"].attrs)
    del g["device"]
    # Declared, never written: HDF5 stores no chunk of it.
    d = g.create_dataset("device", shape=(1 << 40,), dtype="<u2",
                         chunks=(1 << 16,))
    for a, v in attrs.items():
        d.attrs[a] = v
    return ("outputs/0/device: shape [1099511627776] declares "
            "1099511627776 elements, but the file holds data for only "
            "part of them")


def device_rank0(f, k):
    replace(out0(f, k), "device", np.uint16(0x3f80))
    return ("outputs/0/device: shape [] (rank 0), expected [8,128] (rank 2), "
            "the shape of the kernel's output 0")


def ops_cut(f, k):
    g = f[f"kernels/{k}"]
    rows = g["ops"][()]
    n = len(rows)
    replace(g, "ops", rows[:1])
    return f"/ops: 1 row, but the kernel's HLO has {n} instructions"


def oracle_mid_nan(f, k):
    g = out0(f, k)
    replace(g, "oracle_mid", np.full(g["oracle_mid"].shape, np.nan))
    return "outputs/0/oracle_mid: element 0 is NaN, but ulp_error_oracle there is"


def envelope_lo_above_hi(f, k):
    g = out0(f, k)
    lo = g["envelope_lo"][()]
    hi = g["envelope_hi"][()]
    # Widen element 5's envelope the wrong way round.
    hi.flat[5] = lo.flat[5] - 1.0
    replace(g, "envelope_hi", hi)
    return "outputs/0/envelope_lo: element 5 is"


def class_out_of_range(f, k):
    g = out0(f, k)
    names = {"exact": 0, "rounding": 1, "envelope": 2, "suspicious": 3,
             "defect": 4, "nan-mismatch": 5, "inf-mismatch": 6,
             "sign-mismatch": 7, "undecided": 8, "bogus": 12}
    cls = g["class"][()]
    cls.flat[3] = 12
    replace(g, "class", cls, dtype=h5py.enum_dtype(names, basetype="u1"))
    return "outputs/0/class: element 3 holds 12, not a class"


def truncated(f, k):
    return None  # done on the file itself, below


def missing_dataset(f, k):
    del out0(f, k)["oracle_rad"]
    return "outputs/0/oracle_rad: no such dataset (/kernels/"


def wrong_dtype(f, k):
    g = out0(f, k)
    replace(g, "oracle_mid", g["oracle_mid"][()].astype(np.float32))
    return ("outputs/0/oracle_mid: stored as HDF5 32-bit float (8 exponent "
            "bits, 23 mantissa bits), expected little-endian IEEE binary64")


def schema_version(f, k):
    f.attrs["schema_version"] = np.int64(2)
    return "result schema version 2 is not supported"


def undecided_count(f, k):
    g = out0(f, k)
    g.attrs["undecided_count"] = np.uint64(int(g.attrs["undecided_count"]) + 1)
    return "outputs/0: attribute 'undecided_count' is"


def max_abs_ulp(f, k):
    out0(f, k).attrs["max_abs_ulp_oracle"] = np.float64(1e9)
    return "outputs/0: attribute 'max_abs_ulp_oracle' is 1000000000, but ulp_error_oracle gives"


def verdict(f, k):
    f[f"kernels/{k}"].attrs["verdict"] = np.bytes_(b"quantum")
    return "attribute 'verdict' is 'quantum', expected legit"


def output_count(f, k):
    f[f"kernels/{k}"].attrs["output_count"] = np.uint64(2)
    return "/outputs: holds 1 output group, but attribute 'output_count'"


def hlo_text(f, k):
    g = f[f"kernels/{k}"]
    del g["hlo_text"]
    g.create_dataset("hlo_text", data=np.bytes_(b"HloModule m\n\nENTRY e {\n  ROOT x = f32[ add(\n}\n"))
    return "/hlo_text:4:"


def undecided_flag(f, k):
    g = out0(f, k)
    u = g["undecided"][()]
    u.flat[7] = 3
    replace(g, "undecided", u)
    return "outputs/0/undecided: element 7 is 3, expected 0 or 1"


KINDS = {fn.__name__: fn for fn in [
    shape_huge, shape_rank0, device_huge, device_rank0, ops_cut,
    oracle_mid_nan, envelope_lo_above_hi, class_out_of_range, truncated,
    missing_dataset, wrong_dtype, schema_version, undecided_count,
    max_abs_ulp, verdict, output_count, hlo_text, undecided_flag]}


def explain(cli, path, kernel, case):
    inputs = sorted(n for n in os.listdir(case) if n.startswith("input_"))
    cmd = [cli, "explain", path, "--kernel", kernel]
    for n in inputs:
        cmd += ["--input", os.path.join(case, n)]
    cmd += ["--element", "0,0"]
    return subprocess.run(cmd, capture_output=True, text=True)


def main():
    cli, case, kind = sys.argv[1:4]
    damage = KINDS[kind]
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.h5")
        r = subprocess.run([cli, "check", case, "--out", good],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"check failed ({r.returncode}): {r.stderr}")
        with h5py.File(good, "r") as f:
            kernel = list(f["kernels"])[0]
        r = explain(cli, good, kernel, case)
        if r.returncode != 0:
            sys.exit(f"the intact file: exit {r.returncode}: {r.stderr}")
        bad = os.path.join(tmp, "R.h5")
        shutil.copy(good, bad)
        if kind == "truncated":
            os.truncate(bad, os.path.getsize(bad) // 2)
            want = f"{bad}: not a readable HDF5 file: the file is damaged or truncated"
        else:
            with h5py.File(bad, "r+") as f:
                want = damage(f, kernel)
        r = explain(cli, bad, kernel, case)
        msg = r.stdout + r.stderr
        if r.returncode == 0:
            sys.exit(f"{kind}: exit 0 on a damaged file:\n{msg}")
        if bad not in msg or want not in msg:
            sys.exit(f"{kind}: exit {r.returncode}, message\n  {msg.strip()}\n"
                     f"lacks the file name or\n  {want}")
        # HDF5's own descriptions speak of addresses, eof and flags.
        if re.search(r"H5[A-Z]|\beof\b|addr|0x[0-9a-f]{6,}|flags = ", msg):
            sys.exit(f"{kind}: library internals in\n  {msg.strip()}")
        print(f"{kind}: exit {r.returncode}: {msg.strip()}")


if __name__ == "__main__":
    main()
