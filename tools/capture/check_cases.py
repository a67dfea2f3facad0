#!/usr/bin/env python3
"""Sanity-check ulpscope case directories (docs/cases.md) without jax.

  python3 tools/capture/check_cases.py data/examples/          # every case below
  python3 tools/capture/check_cases.py data/examples/adam_f32/normal_s0

For each directory holding a case.json it checks that
  - kernel.hlo has an ENTRY computation; its parameters, found with a
    regex on `parameter(N)` lines, are numbered 0..n-1;
  - input_<i>.npy exists for each parameter i, no more, and its shape and
    element type match parameter i;
  - device_<i>.npy matches leaf i of the entry's result type (tuples
    flattened in order), no more, no fewer;
  - case.json has the required keys; `fusion` (when not null) and every
    name in `fusions` / `main_fusion` is a fusion instruction of the entry;
  - where case.json names a catalogue file, kernel.hlo is identical to it;
  - every intermediate_<name>.npy names an instruction of kernel.hlo that
    `ulpscope bisect` can take (of the entry, or of the computation of one
    entry fusion; not tuple-shaped), with its shape and element type; when
    case.json has an `intermediates` record (capture.py --intermediates),
    its `files` are exactly those files, with the instructions' types, and
    a run whose outputs were not bit-identical to device_*.npy is reported
    as a warning.
bf16 / fp8 arrays written by np.save carry a raw '<V2' / '|V1' descriptor;
they are accepted when the HLO type has that byte width.

Exit status 0 when every case passes, 1 otherwise.  numpy only
(ml_dtypes optional).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlo_text  # noqa: E402  (numpy only; ml_dtypes optional)
import intermediates  # noqa: E402  (pure Python)

REQUIRED = ("fusion", "platform", "jax_version", "jaxlib_version", "xla_flags",
            "function", "dtype", "seed", "distribution", "notes")

# element type -> (byte width, numpy kind letters accepted)
_HLO_TYPES = {
    "pred": (1, "b"), "s8": (1, "i"), "s16": (2, "i"), "s32": (4, "i"), "s64": (8, "i"),
    "u8": (1, "u"), "u16": (2, "u"), "u32": (4, "u"), "u64": (8, "u"),
    "f16": (2, "f"), "f32": (4, "f"), "f64": (8, "f"),
    "bf16": (2, "V"), "f8e4m3fn": (1, "V"), "f8e5m2": (1, "V"), "f8e4m3fnuz": (1, "V"),
    "f8e5m2fnuz": (1, "V"), "f8e4m3b11fnuz": (1, "V"), "f8e4m3": (1, "V"),
    "f8e3m4": (1, "V"), "f8e8m0fnu": (1, "V"), "f4e2m1fn": (1, "V"),
    "f6e2m3fn": (1, "V"), "f6e3m2fn": (1, "V"), "s4": (1, "V"), "u4": (1, "V"),
}
_ML_NAMES = {"bf16": "bfloat16", "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
             "f8e4m3fnuz": "float8_e4m3fnuz", "f8e5m2fnuz": "float8_e5m2fnuz",
             "f8e4m3b11fnuz": "float8_e4m3b11fnuz", "f8e4m3": "float8_e4m3",
             "f8e3m4": "float8_e3m4", "f8e8m0fnu": "float8_e8m0fnu",
             "f4e2m1fn": "float4_e2m1fn", "f6e2m3fn": "float6_e2m3fn",
             "f6e3m2fn": "float6_e3m2fn", "s4": "int4", "u4": "uint4"}

_ENTRY_RE = re.compile(r"^ENTRY\s+%?\S+\s*\((.*)\)\s*->\s*(.*?)\s*\{\s*$", re.M)
_PARAM_RE = re.compile(r"^\s*(?:ROOT\s+)?%?(\S+)\s*=\s*([a-z][a-z0-9]*)\[([0-9,]*)\]\S*\s+"
                       r"parameter\((\d+)\)", re.M)
_LEAF_RE = re.compile(r"([a-z][a-z0-9]*)\[([0-9,]*)\]")
_FUSION_RE = re.compile(r"^\s*(?:ROOT\s+)?%?(\S+)\s*=\s*.*?\s(?:fusion)\(", re.M)


def _dims(s):
    return tuple(int(d) for d in s.split(",") if d)


def entry_signature(text):
    """(parameters [(number, name, type, dims)], result leaves [(type, dims)],
    entry fusion names) of the ENTRY computation."""
    m = _ENTRY_RE.search(text)
    if not m:
        raise ValueError("kernel.hlo: no ENTRY computation")
    start = m.end()
    end = text.find("\n}", start)
    body = text[start:end if end >= 0 else len(text)]
    params = sorted((int(p.group(4)), p.group(1), p.group(2), _dims(p.group(3)))
                    for p in _PARAM_RE.finditer(body))
    result = [(l.group(1), _dims(l.group(2))) for l in _LEAF_RE.finditer(m.group(2))]
    fusions = [f.group(1).lstrip("%") for f in _FUSION_RE.finditer(body)]
    return params, result, fusions


def _type_ok(arr, hlo_type):
    if hlo_type not in _HLO_TYPES:
        return False, f"unknown HLO type {hlo_type}"
    width, kinds = _HLO_TYPES[hlo_type]
    dt = arr.dtype
    if dt.itemsize != width:
        return False, f"{dt} has {dt.itemsize} bytes, {hlo_type} has {width}"
    if dt.kind in kinds:
        if dt.kind == "f" and np.dtype(f"f{width}") != dt:
            return False, f"{dt} is not {hlo_type}"
        return True, ""
    if dt.kind == "V" and "V" in kinds:
        return True, ""
    # ml_dtypes registered: bfloat16 loads as 'V' unless ml_dtypes made it a real type
    try:
        import ml_dtypes
        want = np.dtype(getattr(ml_dtypes, _ML_NAMES[hlo_type]))
        if dt == want:
            return True, ""
    except (ImportError, KeyError, AttributeError):
        pass
    return False, f"{dt} does not match {hlo_type}"


def check_case(d, repo=None):
    errs = []
    warns = []
    cj = os.path.join(d, "case.json")
    hp = os.path.join(d, "kernel.hlo")
    try:
        case = json.load(open(cj))
    except (OSError, ValueError) as e:
        return [f"case.json: {e}"], warns
    for k in REQUIRED:
        if k not in case:
            errs.append(f"case.json: missing key {k!r}")
    try:
        text = open(hp).read()
        params, result, fusions = entry_signature(text)
    except (OSError, ValueError) as e:
        return errs + [str(e)], warns
    nums = [p[0] for p in params]
    if nums != list(range(len(params))):
        errs.append(f"entry parameters numbered {nums}, not 0..{len(params) - 1}")
    files = set(os.listdir(d))
    for num, name, t, dims in params:
        f = f"input_{num}.npy"
        if f not in files:
            errs.append(f"{f} missing (entry parameter {num} %{name}: {t}{list(dims)})")
            continue
        x = np.load(os.path.join(d, f), allow_pickle=False)
        if tuple(x.shape) != dims:
            errs.append(f"{f}: shape {list(x.shape)} != parameter {num} %{name} {t}{list(dims)}")
        ok, why = _type_ok(x, t)
        if not ok:
            errs.append(f"{f}: {why} (parameter {num} %{name})")
        if x.size > 4096:
            warns.append(f"{f}: {x.size} elements (> 4096)")
    for i, (t, dims) in enumerate(result):
        f = f"device_{i}.npy"
        if f not in files:
            errs.append(f"{f} missing (result leaf {i}: {t}{list(dims)})")
            continue
        y = np.load(os.path.join(d, f), allow_pickle=False)
        if tuple(y.shape) != dims:
            errs.append(f"{f}: shape {list(y.shape)} != result leaf {i} {t}{list(dims)}")
        ok, why = _type_ok(y, t)
        if not ok:
            errs.append(f"{f}: {why} (result leaf {i})")
    extra_in = [f for f in files if re.fullmatch(r"input_(\d+)\.npy", f)
                and int(f[6:-4]) >= len(params)]
    extra_out = [f for f in files if re.fullmatch(r"device_(\d+)\.npy", f)
                 and int(f[7:-4]) >= len(result)]
    for f in sorted(extra_in + extra_out):
        errs.append(f"{f}: no matching entry parameter / result leaf")
    inter = sorted(f for f in files if f.startswith("intermediate_") and f.endswith(".npy"))
    e, w = check_intermediates(d, text, inter, case)
    errs += e
    warns += w
    names = []
    if case.get("fusion") is not None:
        names.append(case["fusion"])
    names += case.get("fusions", []) or []
    if case.get("main_fusion"):
        names.append(case["main_fusion"])
    for n in names:
        if n not in fusions:
            errs.append(f"case.json names fusion {n!r}, not a fusion of the entry {fusions}")
    if case.get("fusion") is None and len(fusions) == 1:
        warns.append(f"fusion is null but the entry has exactly one fusion {fusions[0]}")
    if case.get("fusion") is not None and len(fusions) != 1:
        warns.append(f"fusion is {case['fusion']!r} but the entry has {len(fusions)} fusions")
    cat = case.get("catalogue_file")
    # kernels/ is XLA:CPU's module: a GPU capture's is another compiler's.
    if cat and repo and case.get("platform", "cpu") == "cpu":
        p = os.path.join(repo, cat)
        if os.path.exists(p) and open(p).read() != text:
            warns.append(f"kernel.hlo differs from {cat} (recaptured with other versions?)")
    return errs, warns


def check_intermediates(d, text, files, case):
    """Errors and warnings for the intermediate_<name>.npy files of case d."""
    errs, warns = [], []
    rec = case.get("intermediates")
    if not files and not rec:
        return errs, warns
    try:
        module = hlo_text.parse_module(text)
    except ValueError as e:
        return [f"kernel.hlo: {e}"], warns
    types = {}
    for f in files:
        name = f[len("intermediate_"):-len(".npy")]
        try:
            r = intermediates.resolve(module, [name])[0]
        except intermediates.RewriteError as e:
            errs.append(f"{f}: {e}")
            continue
        leaf = hlo_text.parse_type(r["type"])[0]
        types[f] = str(leaf)
        try:
            x = np.load(os.path.join(d, f), allow_pickle=False)
        except (OSError, ValueError) as e:
            errs.append(f"{f}: {e}")
            continue
        if tuple(x.shape) != leaf.dims:
            errs.append(f"{f}: shape {list(x.shape)} != instruction {name} {leaf}")
        ok, why = _type_ok(x, leaf.dtype)
        if not ok:
            errs.append(f"{f}: {why} (instruction {name}: {leaf})")
    if rec is None:
        return errs, warns
    listed = {r.get("file"): r for r in rec.get("files", [])}
    for f in sorted(set(listed) - set(files)):
        errs.append(f"case.json intermediates lists {f}, which is missing")
    for f in sorted(set(files) - set(listed)):
        errs.append(f"{f}: not in case.json's intermediates record")
    for f, r in listed.items():
        if f in types and r.get("type") != types[f]:
            errs.append(f"case.json intermediates: {f} has type {r.get('type')}, the "
                        f"instruction {types[f]}")
        if f in types and r.get("instruction") != f[len("intermediate_"):-len(".npy")]:
            errs.append(f"case.json intermediates: {f} is recorded as instruction "
                        f"{r.get('instruction')!r}")
    for run in rec.get("runs", []):
        if not run.get("outputs_match", True):
            warns.append(f"intermediates run {run.get('run')}: outputs not bit-identical to "
                         f"device_*.npy ({run.get('output_mismatches')})")
        if not run.get("fusion_operands_match", True):
            warns.append(f"intermediates run {run.get('run')}: operands of "
                         f"{run.get('inside_fusion')} differ from run 0")
    return errs, warns


def find_cases(root):
    if os.path.exists(os.path.join(root, "case.json")):
        return [root]
    out = []
    for dp, dn, fn in os.walk(root):
        dn.sort()
        if "case.json" in fn:
            out.append(dp)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="case directories or folders holding them")
    ap.add_argument("-q", "--quiet", action="store_true", help="only failures")
    a = ap.parse_args(argv)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bad = n = 0
    for root in a.paths:
        cases = find_cases(root)
        if not cases:
            print(f"{root}: no case directories (no case.json)")
            bad += 1
        for d in cases:
            n += 1
            errs, warns = check_case(d, repo)
            if errs:
                bad += 1
                print(f"FAIL {d}")
                for e in errs:
                    print(f"     {e}")
            elif not a.quiet:
                print(f"ok   {d}")
            for w in warns:
                print(f"     warning: {w}")
    print(f"{n - bad if n >= bad else 0}/{n} cases ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
