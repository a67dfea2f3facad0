#!/usr/bin/env python3
"""ulpscope bisect on intermediates captured from XLA:CPU.

data/examples/layer_norm_bf16/uniform_s0 holds, besides the case, the values
XLA:CPU computed for 29 instructions of its kernel (tools/capture/capture.py
--intermediates all-fused: the outputs of the entry fusions and the
instructions inside them).  They are real values of a correct compiler, so:

1. `ulpscope bisect CASE` finds every captured tensor inside its xla-cpu
   envelope (exit status 0), one step per intermediate file plus the output.
2. Each intermediate in turn, damaged by a small defect (one element moved by
   2^10 codes of its type, 1.2e-4 relative for f32) while every other file
   keeps XLA:CPU's values, is named as the first op outside (exit status 4),
   and no step before it is outside.
3. Two damaged instructions where the HLO makes one depend on the other: the
   upstream one is named.
4. tools/capture/check_cases.py accepts the case and rejects a copy with a
   wrong-shaped or unknown intermediate, naming the file.

The expected names come from the damage itself (the file this test
changed) and from kernel.hlo's data flow, not from bisect.  Debian's
python3-numpy is enough (no jax, no ml_dtypes).  Run by ctest
(tests/bisect/tests.cmake) with USC_CLI and USC_SOURCE_DIR.  Exit status 0
on success, 1 on failure, 77 when numpy is missing.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("SKIP numpy is not installed")
    sys.exit(77)

SRC = os.environ.get("USC_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(
                         os.path.abspath(__file__)))))
CLI = os.environ.get("USC_CLI", "ulpscope")
CASE = os.path.join(SRC, "data", "examples", "layer_norm_bf16", "uniform_s0")
CHECK_CASES = os.path.join(SRC, "tools", "capture", "check_cases.py")
PRE, SUF = "intermediate_", ".npy"
DEFECT_CODES = 1 << 10

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def bisect(d):
    r = subprocess.run([CLI, "bisect", d, "--json"], capture_output=True, text=True)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        rep = None
    return r.returncode, rep, r.stderr


def names_in(d):
    return sorted(f[len(PRE):-len(SUF)] for f in os.listdir(d)
                  if f.startswith(PRE) and f.endswith(SUF))


def damage(path, codes):
    """Moves element n // 3 of the array in path by `codes` encodings (its
    bits as an unsigned integer), keeping the file's dtype and header."""
    x = np.load(path, allow_pickle=False)
    u = x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize]).copy()
    k = u.size // 3
    u.flat[k] = u.flat[k] + u.dtype.type(codes)
    np.save(path, u.view(x.dtype), allow_pickle=False)
    return k


def check_clean(names):
    rc, rep, err = bisect(CASE)
    if rc != 0 or rep is None:
        fail("clean case: exit %d, %s" % (rc, err.strip()))
        return None
    if rep["found"] or rep["first_bad"] is not None:
        fail("clean case: first bad %r, but XLA:CPU's values are legitimate"
             % rep["first_bad"])
    steps = rep["steps"]
    got = sorted(s["instruction"] for s in steps if s["output"] is None)
    if got != names:
        fail("clean case: steps %s, files %s" % (got, names))
    if len(steps) != len(names) + 1:
        fail("clean case: %d steps, want %d intermediates + 1 output"
             % (len(steps), len(names)))
    for s in steps:
        if s["outside"] != 0:
            fail("clean case: %s has %d elements outside its envelope"
                 % (s["instruction"], s["outside"]))
        if s["unknown"] != 0:
            fail("clean case: %s has %d elements of unknown envelope"
                 % (s["instruction"], s["unknown"]))
    print("clean: %d captured tensors inside their xla-cpu envelopes"
          % len(steps))
    return [s["instruction"] for s in steps]


def check_one_defect(tmp, names):
    for n in names:
        d = os.path.join(tmp, "one")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(CASE, d)
        path = os.path.join(d, PRE + n + SUF)
        k = damage(path, DEFECT_CODES)
        where = [int(i) for i in np.unravel_index(k, np.load(path).shape)]
        rc, rep, err = bisect(d)
        if rc != 4 or rep is None:
            fail("defect at %s: exit %d (want 4) %s" % (n, rc, err.strip()))
            continue
        if rep["first_bad"] != n:
            fail("defect at %s[%d]: first bad %r" % (n, k, rep["first_bad"]))
            continue
        for s in rep["steps"]:
            if s["instruction"] == n:
                # One element moved, by DEFECT_CODES: at most that far out.
                w = s["worst"]
                if s["outside"] != 1 or w is None or w["index"] != where or \
                        not 0 < w["outside_ulps"] <= DEFECT_CODES:
                    fail("defect at %s%s: step %s" % (n, where, s))
                break
            if s["outside"]:
                fail("defect at %s: %s before it is outside" %
                     (n, s["instruction"]))
    print("one defect: %d instructions, each named" % len(names))


# Pairs (upstream, downstream) by kernel.hlo's data flow: wrapped_reduce
# (sum of x) feeds multiply.4 -> sub.1 -> sub.0 -> mul.2 in add_convert_fusion;
# sub.2 feeds subtract_multiply_fusion -> wrapped_reduce-window.1 ->
# add_rsqrt_fusion -> mul.3 -> mul.2 -> mul.0 -> add.1.
PAIRS = (("wrapped_reduce", "mul.2"), ("sub.2", "add.1"),
         ("wrapped_reduce-window.1", "add_rsqrt_fusion"))


def check_pairs(tmp, names):
    for up, down in PAIRS:
        if up not in names or down not in names:
            fail("pair %s, %s: not captured" % (up, down))
            continue
        d = os.path.join(tmp, "pair")
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(CASE, d)
        damage(os.path.join(d, PRE + down + SUF), DEFECT_CODES)
        damage(os.path.join(d, PRE + up + SUF), DEFECT_CODES)
        rc, rep, err = bisect(d)
        if rc != 4 or rep is None or rep["first_bad"] != up:
            fail("defects at %s and %s: exit %d, first bad %r (want %s)" %
                 (up, down, rc, rep and rep["first_bad"], up))
    print("pairs: the upstream defect named in %d pairs" % len(PAIRS))


def check_record(names):
    with open(os.path.join(CASE, "case.json")) as f:
        rec = json.load(f).get("intermediates")
    if rec is None:
        fail("case.json has no intermediates record")
        return
    files = sorted(r["instruction"] for r in rec["files"])
    if files != names:
        fail("case.json intermediates: %s, files %s" % (files, names))
    if not rec["outputs_match"]:
        fail("case.json intermediates: outputs did not match device_0.npy")


def check_cases_py(tmp):
    r = subprocess.run([sys.executable, CHECK_CASES, CASE], capture_output=True, text=True)
    if r.returncode != 0 or "1/1 cases ok" not in r.stdout:
        fail("check_cases.py on the case: exit %d\n%s%s" %
             (r.returncode, r.stdout, r.stderr))
    d = os.path.join(tmp, "bad")
    shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(CASE, d)
    x = np.load(os.path.join(d, PRE + "mul.2" + SUF))
    np.save(os.path.join(d, PRE + "mul.2" + SUF), x[:4])
    np.save(os.path.join(d, PRE + "nosuch.7" + SUF), x[:4])
    r = subprocess.run([sys.executable, CHECK_CASES, d], capture_output=True, text=True)
    want = ("intermediate_mul.2.npy: shape [4, 128] != instruction mul.2 f32[8,128]",
            "intermediate_nosuch.7.npy: no instruction 'nosuch.7'",
            "intermediate_nosuch.7.npy: not in case.json's intermediates record")
    if r.returncode != 1 or any(w not in r.stdout for w in want):
        fail("check_cases.py on a broken copy: exit %d\n%s" % (r.returncode, r.stdout))
    print("check_cases.py: accepts the case, names the broken files of a copy")


def main():
    names = names_in(CASE)
    if len(names) != 29:
        fail("%s: %d intermediate files, want 29" % (CASE, len(names)))
    tmp = tempfile.mkdtemp(prefix="usc_bisect_captured_")
    try:
        if check_clean(names) is not None:
            check_one_defect(tmp, names)
            check_pairs(tmp, names)
        check_record(names)
        check_cases_py(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
