#!/usr/bin/python3
"""Defect signatures: the search names the mutation that made the output.

Two parts, both driving the CLI (USC_CLI, USC_SOURCE_DIR as in ctest):

1. The mutants' arithmetic, against expectations computed here without
   ulpscope: a hand-written f32 kernel mutated by `ulpscope signature
   --mutant` (directed roundings of an add, a truncating convert to bf16
   of normal and subnormal values, flushed subnormals, a saturating
   convert to f16, a convert to f16 giving NaN on overflow, a NaN-dropping
   maximum; a row sum reduced over the wrong dimension, searched too) and
   evaluated by `ulpscope eval`; the expected bits come from
   exact rational arithmetic (fractions), numpy's nextafter and bit masks.
   One C mutant is also compared with the Python harness's mutant of the
   same defect (tests/classify/inject_defects.py: truncate).

2. The search on real captured cases of data/examples: the "device"
   output is the strict reference of a mutant written by the Python
   harness (tests/classify/inject_defects.py --mutant, independent of the
   C mutator), and the top-ranked explanation must name that op and that
   mutation (or, when several mutations give the same bits, be among the
   tied best: reported as ambiguous).  The real device output of a legit
   kernel must give "no defect to explain", and a defect outside the
   catalogue (a multiply turned into an add) "no single-op mutation
   explains".

Exit 0 on success, 1 on failure, 77 without numpy.
"""
import json
import os
import subprocess
import sys
from fractions import Fraction

try:
    import numpy as np
except ImportError:
    sys.exit(77)

from sigtest import (  # noqa: E402
    CLI, EX, HARNESS, SRC, cli_eval, fail, inputs_of, run, run_tests)


def evaluate(hlo, inputs, prefix):
    cli_eval(hlo, inputs, prefix)
    return np.load(prefix + "_0.npy")


def bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32,
                   8: np.uint64}[a.dtype.itemsize]).reshape(-1)


# ------------------------------------------------- 1. the mutants' bits

KERNEL = """HloModule hand

ENTRY main {
  x = f32[%(n)d]{0} parameter(0)
  y = f32[%(n)d]{0} parameter(1)
  add.0 = f32[%(n)d]{0} add(x, y)
  mul.0 = f32[%(n)d]{0} multiply(x, y)
  max.0 = f32[%(n)d]{0} maximum(x, y)
  cvb.0 = bf16[%(n)d]{0} convert(x)
  cvh.0 = f16[%(n)d]{0} convert(y)
  ROOT t = (f32[%(n)d]{0}, f32[%(n)d]{0}, f32[%(n)d]{0}, bf16[%(n)d]{0}, f16[%(n)d]{0}) tuple(add.0, mul.0, max.0, cvb.0, cvh.0)
}
"""


def directed(exact, nearest, mode):
    """The f32 value of exact rounded toward zero/up/down, from nearest."""
    r = np.float32(nearest)
    if not np.isfinite(r):
        return r
    e = Fraction(exact)
    v = Fraction(float(r))
    if mode == "up" and v < e:
        return np.nextafter(r, np.float32(np.inf))
    if mode == "down" and v > e:
        return np.nextafter(r, np.float32(-np.inf))
    if mode == "zero" and abs(v) > abs(e):
        return np.nextafter(r, np.float32(0))
    return r


def mutant_outputs(tmp, kernel, x, y, op, kind):
    m = os.path.join(tmp, "m.hlo")
    run([CLI, "signature", kernel, "--mutant", op, kind, "-o", m])
    px, py = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(px, x)
    np.save(py, y)
    pre = os.path.join(tmp, "o")
    run([CLI, "eval", m, "-o", pre, "--input", px, "--input", py])
    return [np.load("%s_%d.npy" % (pre, i)) for i in range(5)]


def test_mutant_bits(tmp):
    rng = np.random.default_rng(6)
    n = 512
    x = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(
        np.float32)
    y = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(
        np.float32)
    # Ties, exact sums, signed zeros, cancellation, overflow, NaN.
    x[:8] = [1, -1, 1, 0.0, -0.0, 3e38, np.nan, 1.5]
    y[:8] = [2.0 ** -24, -2.0 ** -24, 2.0 ** -23, -0.0, -0.0, 3e38, 2,
             -1.5]
    y[8:16] = 70000 * np.array([1, -1, 0.5, 2, 0.93, -0.936, 1e-9, 3],
                               np.float32)
    # Products below f32's smallest normal (subnormal results).
    x[16:24] = np.float32(2.0 ** -70)
    y[16:24] = np.float32(2.0 ** -60) * np.arange(1, 9, dtype=np.float32)
    kernel = os.path.join(tmp, "hand.hlo")
    with open(kernel, "w") as fh:
        fh.write(KERNEL % {"n": n})
    exact = [Fraction(float(a)) + Fraction(float(b))
             if np.isfinite(a) and np.isfinite(b) else None
             for a, b in zip(x, y)]
    with np.errstate(all="ignore"):
        nearest = x + y
    checked = 0
    for kind, mode in (("round-up", "up"), ("round-down", "down"),
                       ("round-toward-zero", "zero")):
        out = mutant_outputs(tmp, kernel, x, y, "add.0", kind)[0]
        want = np.array([directed(e, r, mode) if e is not None else r
                         for e, r in zip(exact, nearest)], np.float32)
        # An overflow rounds to the largest finite value toward zero and
        # toward the infinity of the other sign.
        big = Fraction(float(np.finfo(np.float32).max))
        for i, e in enumerate(exact):
            if e is not None and abs(e) > big and not (
                    (mode == "up" and e > 0) or (mode == "down" and e < 0)):
                want[i] = np.copysign(np.finfo(np.float32).max, float(e))
        bad = np.nonzero(bits(out) != bits(want))[0]
        if bad.size:
            fail("add %s: %d elements differ, first %d: %r + %r -> %r, "
                 "expected %r" % (kind, bad.size, bad[0], x[bad[0]],
                                  y[bad[0]], out[bad[0]], want[bad[0]]))
        checked += n
    # Truncating f32 -> bf16: the top 16 bits (NaN stays NaN).
    out = mutant_outputs(tmp, kernel, x, y, "cvb.0", "round-toward-zero")[3]
    want = (bits(x) >> 16).astype(np.uint16)
    fin = np.isfinite(x)
    ob = bits(out)
    if np.any(ob[fin] != want[fin]) or not np.all(
            ((ob[~fin] & 0x7F80) == 0x7F80) & ((ob[~fin] & 0x7F) != 0)):
        fail("convert bf16 toward zero: not the top 16 bits")
    checked += n
    # The same at the bottom of the range: f32 subnormals and tiny normals
    # truncated to bf16 (a regression: the direction test multiplied
    # r1 - x by r1, which underflows to 0 there, so nothing was truncated).
    x2 = (rng.integers(1, 2 ** 23, n) * 2.0 ** -149 *
          2.0 ** rng.integers(0, 12, n) *
          rng.choice([-1.0, 1.0], n)).astype(np.float32)
    out = mutant_outputs(tmp, kernel, x2, y, "cvb.0",
                         "round-toward-zero")[3]
    want = (bits(x2) >> 16).astype(np.uint16)
    if np.any(bits(out) != want):
        i = np.nonzero(bits(out) != want)[0]
        fail("convert bf16 toward zero on subnormals: %d of %d not the "
             "top 16 bits, first %r -> 0x%04x, expected 0x%04x" %
             (i.size, n, x2[i[0]], bits(out)[i[0]], want[i[0]]))
    u = bits(x2).astype(np.uint64)
    nearest = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    if np.all(want == nearest):
        fail("convert bf16 toward zero on subnormals: a void test")
    checked += n
    # Flushed subnormals: products below 2^-126 become zeros of their sign.
    out = mutant_outputs(tmp, kernel, x, y, "mul.0", "flush-denormals")[1]
    with np.errstate(all="ignore"):
        p = x * y
    want = np.where(np.abs(p) < np.float32(2.0 ** -126), p * 0, p)
    if np.any(bits(out) != bits(want.astype(np.float32))):
        fail("flush-denormals: products below 2^-126 not flushed")
    if not np.any((p != 0) & (np.abs(p) < 2.0 ** -126)):
        fail("flush-denormals: the test has no subnormal product")
    checked += n
    # Saturating f32 -> f16: beyond 65504 (after rounding) the largest.
    out = mutant_outputs(tmp, kernel, x, y, "cvh.0", "convert-saturate")[4]
    want = np.clip(y, -65504, 65504).astype(np.float16)
    if np.any(bits(out) != bits(want)):
        fail("convert-saturate f16: not numpy's clip then convert")
    if not np.any(np.isinf(y.astype(np.float16))):
        fail("convert-saturate: the test has no overflow")
    checked += n
    # NaN instead of Inf: a finite f32 beyond f16's range gives NaN.
    out = mutant_outputs(tmp, kernel, x, y, "cvh.0", "convert-nan")[4]
    with np.errstate(all="ignore"):
        h = y.astype(np.float16)
    over = np.isinf(h) & np.isfinite(y)
    if not np.all(np.isnan(out[over])) or \
            np.any(bits(out)[~over] != bits(h)[~over]) or not over.any():
        fail("convert-nan f16: not NaN exactly where a finite value "
             "overflows")
    checked += n
    # NaN-dropping maximum: a NaN operand gives the other one.
    out = mutant_outputs(tmp, kernel, x, y, "max.0", "nan-dropping")[2]
    nan = np.isnan(x) | np.isnan(y)
    want = np.fmax(x, y)
    if np.any(bits(out)[nan] != bits(want)[nan]) or not nan.any():
        fail("nan-dropping maximum: a NaN operand does not give the other")
    if np.any(out[~nan] != np.maximum(x, y)[~nan]):
        fail("nan-dropping maximum: changed where no operand is NaN")
    checked += n
    print("mutant arithmetic: %d elements against independent values" %
          checked)


REDUCE_KERNEL = """HloModule hand_reduce

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[16,16]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16]{0} reduce(x, z), dimensions={1}, to_apply=add
}
"""


def test_overflow_free_converts(tmp):
    """A convert that cannot overflow has no overflow to mutate.

    f16 -> bf16 and f8e4m3fn -> f8e5m2 narrow the precision only: the
    target's largest finite value (bf16 3.39e38, f8e5m2 57344) is beyond
    the operand's (f16 65504, f8e4m3fn 448), published in the formats'
    definitions.  convert-saturate and convert-nan must not apply there
    (the saturating clamp would need bounds the operand's type cannot hold,
    which XLA's parser refuses); f32 -> f16 keeps both.
    """
    k = os.path.join(tmp, "cv.hlo")
    with open(k, "w") as f:
        f.write("HloModule cv\n\n"
                "ENTRY %main (x: f16[4], w: f8e4m3fn[4], y: f32[4]) -> "
                "(bf16[4], f8e5m2[4], f16[4]) {\n"
                "  %x = f16[4] parameter(0)\n"
                "  %w = f8e4m3fn[4] parameter(1)\n"
                "  %y = f32[4] parameter(2)\n"
                "  %cvb = bf16[4] convert(f16[4] %x)\n"
                "  %cv8 = f8e5m2[4] convert(f8e4m3fn[4] %w)\n"
                "  %cvh = f16[4] convert(f32[4] %y)\n"
                "  ROOT %t = (bf16[4], f8e5m2[4], f16[4]) tuple(bf16[4] %cvb, "
                "f8e5m2[4] %cv8, f16[4] %cvh)\n}\n")
    m = os.path.join(tmp, "cv_m.hlo")
    for kind in ("convert-saturate", "convert-nan"):
        for op in ("cvb", "cv8"):
            r = subprocess.run([CLI, "signature", k, "--mutant", op, kind,
                                "-o", m], capture_output=True, text=True)
            if r.returncode == 0 or "does not apply" not in r.stderr:
                fail("%s of %s (no overflow possible): applied (exit %d, "
                     "%r)" % (kind, op, r.returncode, r.stderr.strip()))
        run([CLI, "signature", k, "--mutant", "cvh", kind, "-o", m])
        run([CLI, "hlo", m, "--verify"])


def test_wrong_reduce_dimension(tmp):
    """A row sum computed over the columns: numpy's sum over axis 0.  No
    catalogue kernel has a reduce with two dimensions of one size (the
    acceptance test cannot inject this one), so it is searched here too:
    the device output is numpy's, the search must name it."""
    k = os.path.join(tmp, "reduce.hlo")
    with open(k, "w") as fh:
        fh.write(REDUCE_KERNEL)
    rng = np.random.default_rng(7)
    # Integers: every sum is exact in f32, whatever the order.
    x = rng.integers(-1000, 1000, (16, 16)).astype(np.float32)
    px = os.path.join(tmp, "rx.npy")
    np.save(px, x)
    m = os.path.join(tmp, "rm.hlo")
    run([CLI, "signature", k, "--mutant", "r", "wrong-reduce-dimension/0",
         "-o", m])
    out = evaluate(m, [px], os.path.join(tmp, "ro"))
    want = x.sum(axis=0, dtype=np.float32)
    if not np.array_equal(bits(out), bits(want)) or \
            np.array_equal(want, x.sum(axis=1, dtype=np.float32)):
        fail("wrong-reduce-dimension: not numpy's sum over axis 0")
    p = run([CLI, "signature", k, "--mutant", "r", "wrong-reduce-dimension/1",
             "-o", m], ok=(1, 2, 3))
    if p.returncode == 0:
        fail("wrong-reduce-dimension/1 of a rank-2 reduce: written")
    dev = os.path.join(tmp, "rdev.npy")
    np.save(dev, want)
    rc, r = signature([k, "--input", px, "--device", dev])
    best = r["candidates"][0] if r["candidates"] else {}
    if rc != 0 or r["verdict"] != "explained" or \
            (best.get("op"), best.get("mutation")) != \
            ("r", "wrong-reduce-dimension") or \
            sum(c["tied_best"] for c in r["candidates"]) != 1:
        fail("wrong-reduce-dimension: search verdict %s, best %s" %
             (r["verdict"], best))
    print("wrong-reduce-dimension: numpy's column sums, named first by "
          "the search")


NEW_KERNEL = """HloModule hand_new

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[8,8]{1,0} parameter(0)
  y = f32[8,8]{1,0} parameter(1)
  v = f32[8]{0} parameter(2)
  dot.0 = f32[8,8]{1,0} dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  xt = f32[8,8]{1,0} transpose(x), dimensions={1,0}
  cmp.0 = pred[8,8]{1,0} compare(x, xt), direction=LT
  lo = f32[] constant(-0.5)
  hi = f32[] constant(0.75)
  clamp.0 = f32[8,8]{1,0} clamp(lo, x, hi)
  c3 = f32[] constant(3)
  sc = f32[8,8]{1,0} broadcast(c3), dimensions={}
  xs = f32[8,8]{1,0} multiply(x, sc)
  rnd = f32[8,8]{1,0} round-nearest-even(xs)
  cvr.0 = s32[8,8]{1,0} convert(rnd)
  cvt.0 = s32[8,8]{1,0} convert(xs)
  k.0 = f32[] constant(0.1)
  kb = f32[8,8]{1,0} broadcast(k.0), dimensions={}
  mk.0 = f32[8,8]{1,0} multiply(x, kb)
  bc.0 = f32[8,8]{1,0} broadcast(v), dimensions={1}
  z = f32[] constant(0)
  rw.0 = f32[8,2]{1,0} reduce-window(x, z), window={size=1x4 stride=1x4}, to_apply=add
  rd.0 = f32[8]{0} reduce(y, z), dimensions={1}, to_apply=add
  ROOT t = (f32[8,8]{1,0}, pred[8,8]{1,0}, f32[8,8]{1,0}, s32[8,8]{1,0}, s32[8,8]{1,0}, f32[8,8]{1,0}, f32[8,8]{1,0}, f32[8,2]{1,0}, f32[8]{0}) tuple(dot.0, cmp.0, clamp.0, cvr.0, cvt.0, mk.0, bc.0, rw.0, rd.0)
}
"""


def bf16_round(a):
    """f32 values rounded to bf16 (nearest even), as f32: the top 16 bits."""
    u = np.asarray(a, np.float32).reshape(-1).view(np.uint32).astype(
        np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return r.astype(np.uint32).view(np.float32).reshape(np.shape(a))


def new_mutation_expectations(x, y, v):
    """(op, mutation/variant, output index, expected array) of the
    mutations of issue 13, each computed here with numpy on values where
    every f32 sum and product is exact (quarters and sixteenths of small
    integers), so the order of a sum does not matter."""
    out = []
    out.append(("dot.0", "dot-transpose-output", 0, (x @ y).T))
    out.append(("dot.0", "dot-transpose-operand/0", 0, x.T @ y))
    out.append(("dot.0", "dot-transpose-operand/1", 0, x @ y.T))
    out.append(("cmp.0", "flip-compare", 1, x <= x.T))
    out.append(("clamp.0", "swap-clamp-bounds", 2,
                np.minimum(np.maximum(x, np.float32(0.75)),
                           np.float32(-0.5))))
    xs = x * np.float32(3)
    out.append(("cvr.0", "convert-int-truncate", 3, np.trunc(xs).astype(
        np.int32)))
    out.append(("cvt.0", "convert-int-round", 4, np.rint(xs).astype(
        np.int32)))
    k = np.float32(0.1)
    for var, step in enumerate((1, -1, 2, -2)):
        kk = k
        for _ in range(abs(step)):
            kk = np.nextafter(kk, np.float32(np.inf if step > 0
                                             else -np.inf))
        out.append(("k.0", "constant-ulps/%d" % var, 5, x * kk))
    out.append(("bc.0", "broadcast-permute", 6,
                np.broadcast_to(v[:, None], (8, 8))))
    acc_b = np.zeros(8, np.float32)
    acc_h = np.zeros(8, np.float16)
    for j in range(8):
        acc_b = bf16_round(acc_b + bf16_round(y[:, j]))
        acc_h = (acc_h + y[:, j].astype(np.float16)).astype(np.float16)
    out.append(("rd.0", "narrow-accumulator/0", 8, acc_b))
    out.append(("rd.0", "narrow-accumulator/1", 8, acc_h.astype(np.float32)))
    win = [(0, 3, 4, 7), (0, 5, 4, 8), (0, 4, 3, 7)]
    for var, (a0, a1, b0, b1) in enumerate(win):
        out.append(("rw.0", "wrong-window/%d" % var, 7, np.stack(
            [x[:, a0:a1].sum(1), x[:, b0:b1].sum(1)], 1)))
    return out


def test_new_mutations(tmp):
    """Every mutation kind added for real XLA defects: the mutant's output
    against numpy, then the search, given that output as the device's,
    must name the mutation first (strict, and under xla-cpu)."""
    k = os.path.join(tmp, "new.hlo")
    with open(k, "w") as fh:
        fh.write(NEW_KERNEL)
    rng = np.random.default_rng(13)
    x = (rng.integers(-8, 9, (8, 8)) / 4).astype(np.float32)
    y = (rng.integers(-1024, 1025, (8, 8)) / 4).astype(np.float32)
    v = rng.permutation(np.arange(-4, 4)).astype(np.float32) * 3
    ins = []
    for name, a in (("nx", x), ("ny", y), ("nv", v)):
        ins.append(os.path.join(tmp, name + ".npy"))
        np.save(ins[-1], a)
    pre = os.path.join(tmp, "nref")
    run([CLI, "eval", k, "-o", pre] + sum((["--input", f] for f in ins),
                                          []))
    ref = [np.load("%s_%d.npy" % (pre, i)) for i in range(9)]
    kinds = set()
    for op, kv, oi, want in new_mutation_expectations(x, y, v):
        kind = kv.split("/")[0]
        kinds.add(kind)
        m = os.path.join(tmp, "nm.hlo")
        run([CLI, "signature", k, "--mutant", op, kv, "-o", m])
        mp = os.path.join(tmp, "nm")
        run([CLI, "eval", m, "-o", mp] + sum((["--input", f] for f in ins),
                                             []))
        outs = ["%s_%d.npy" % (mp, i) for i in range(9)]
        got = np.load(outs[oi])
        want = np.asarray(want).astype(got.dtype)
        if not np.array_equal(got, want):
            fail("%s %s: output %d is not numpy's (%d of %d differ)" %
                 (op, kv, oi, int((got != want).sum()), want.size))
            continue
        if np.array_equal(got, ref[oi]):
            fail("%s %s: no effect on these inputs: a void test" % (op, kv))
            continue
        for prof in ([], ["--profile", "xla-cpu"]):
            rc, r = signature([k] + sum((["--input", f] for f in ins), []) +
                              ["--device"] + outs + prof)
            best = r["candidates"][0] if r["candidates"] else {}
            named = [(c["op"], c["mutation"]) for c in r["candidates"]
                     if c["tied_best"]]
            if r["verdict"] != "explained" or (op, kind) not in named:
                fail("%s %s %s: verdict %s, best %s %s (tied: %s)" %
                     (op, kv, " ".join(prof) or "strict", r["verdict"],
                      best.get("op"), best.get("mutation"), named))
    print("new mutations: %d kinds against numpy, each named first by the "
          "search (strict and xla-cpu)" % len(kinds))


# Two cases of the defect corpus (data/defects, copied here: small): the
# device output of a deliberately wrong JAX function run by real XLA:CPU,
# labelled with the op and mutation in case.json.
REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real")


def test_real_xla(tmp):
    """A real device is not strict: the right mutant's strict evaluation
    matches few of its bits (a bit-for-bit search, --no-profile, leaves the
    output unexplained), but its envelope under the case's profile holds
    them: the search names the labelled op and mutation first."""
    for name in sorted(os.listdir(REAL)):
        d = os.path.join(REAL, name)
        with open(os.path.join(d, "case.json")) as fh:
            label = json.load(fh)["defect"]
        want = (label["op"], label["mutation"])
        rc, r = signature([d])
        tied = [(c["op"], c["mutation"]) for c in r["candidates"]
                if c["tied_best"]]
        if rc != 0 or r["verdict"] != "explained" or want not in tied or \
                r["profile"] != "xla-cpu":
            fail("%s: verdict %s under %s, tied best %s, expected %s" %
                 (name, r["verdict"], r["profile"], tied, want))
            continue
        best = r["candidates"][0]
        rc2, r2 = signature([d, "--no-profile"])
        if r2["verdict"] != "unexplained":
            fail("%s: bit for bit the output is %s: a void test" %
                 (name, r2["verdict"]))
        print("%s: %s %s first, score %.3f, width %.1f; bit for bit %s" % (
            name, best["op"], best["mutation"], best["score"],
            best["width"], r2["verdict"]))


def test_c_vs_python(tmp):
    """The C mutator's truncating convert equals the Python harness's."""
    d = os.path.join(EX, "layer_norm_bf16", "normal_s0")
    k = os.path.join(d, "kernel.hlo")
    py, c = os.path.join(tmp, "py.hlo"), os.path.join(tmp, "c.hlo")
    run(["/usr/bin/python3", HARNESS, "--mutant", k, "truncate",
         "convert_element_type.0", py])
    run([CLI, "signature", k, "--mutant", "convert_element_type.0",
         "round-toward-zero", "-o", c])
    a = evaluate(py, inputs_of(d), os.path.join(tmp, "pyo"))
    b = evaluate(c, inputs_of(d), os.path.join(tmp, "co"))
    if not np.array_equal(bits(a), bits(b)):
        fail("C round-toward-zero and the harness's truncate differ")
    ref = evaluate(k, inputs_of(d), os.path.join(tmp, "ro"))
    if np.array_equal(bits(a), bits(ref)):
        fail("the truncating convert changes nothing: a void test")
    print("C mutator = Python harness on layer_norm_bf16 truncate")


def test_stale(tmp):
    """A stale tile: the second half of a dimension holds the first's."""
    d = os.path.join(EX, "layer_norm_bf16", "normal_s0")
    k = os.path.join(d, "kernel.hlo")
    ref = evaluate(k, inputs_of(d), os.path.join(tmp, "sr")).reshape(8, 128)
    for v, dim in ((0, 0), (1, 1)):
        m = os.path.join(tmp, "stale.hlo")
        run([CLI, "signature", k, "--mutant", "add_convert_fusion",
             "stale/%d" % v, "-o", m])
        out = evaluate(m, inputs_of(d), os.path.join(tmp, "so")).reshape(
            8, 128)
        want = ref.copy()
        h = ref.shape[dim] // 2
        if dim == 0:
            want[h:] = ref[:h]
        else:
            want[:, h:] = ref[:, :h]
        if not np.array_equal(bits(out), bits(want)):
            fail("stale/%d: not the reference with its second half along "
                 "dimension %d replaced by the first" % (v, dim))
        if np.array_equal(bits(out), bits(ref)):
            fail("stale/%d changes nothing: a void test" % v)
    print("stale tiles: the reference's halves, both dimensions")


# ------------------------------------------------ 2. the search itself

# (case, harness kind, harness instruction, expected op, expected mutation)
CASES = [
    ("layer_norm_bf16/normal_s0", "truncate", "convert_element_type.0",
     "convert_element_type.0", "round-toward-zero"),
    ("layer_norm_bf16/normal_s0", "off-by-one", "mul.1", "mul.1",
     "off-by-one"),
    ("layer_norm_bf16/normal_s0", "init", "reduce_sum.9", "reduce_sum.9",
     "wrong-init"),
    ("softmax_f32/normal_s0", "narrow", "exp.0", "exp.0", "narrow"),
    ("softmax_f32/normal_s0", "swap", "sub.0", "sub.0", "swap-operands"),
    ("gelu_erf_f16/normal_s0", "swap", "erfc.3", "erfc.3",
     "swap-operands"),
    ("gelu_erf_f16/normal_s0", "narrow", "erfc.58", "erfc.58", "narrow"),
    ("fp8_quantize_f32/normal_s0", "drop", "multiply.1", "multiply.1",
     "drop"),
]


def signature(args):
    # No wall-time budget: under a loaded sanitizer build the default 60 s
    # could cut the search short and make the outcome depend on the load.
    p = run([CLI, "signature"] + args + ["--json", "--top", "5",
                                         "--max-seconds", "100000"],
            ok=(0, 3))
    return p.returncode, json.loads(p.stdout)


def test_search(tmp):
    top1 = tied = 0
    for case, hkind, hinstr, op, mut in CASES:
        d = os.path.join(EX, case)
        k = os.path.join(d, "kernel.hlo")
        mh = os.path.join(tmp, "h.hlo")
        p = subprocess.run(["/usr/bin/python3", HARNESS, "--mutant", k,
                            hkind, hinstr, mh], capture_output=True,
                           text=True)
        if p.returncode != 0:
            fail("%s: the harness cannot write %s %s: %s" %
                 (case, hkind, hinstr, p.stderr.strip()))
            continue
        evaluate(mh, inputs_of(d), os.path.join(tmp, "dev"))
        # The device output is the mutant's strict evaluation: the bit
        # for bit question (test_real_xla asks the envelope's).
        rc, r = signature([d, "--device", os.path.join(tmp, "dev_0.npy"),
                           "--no-profile"])
        label = "%s: %s %s" % (case, hkind, hinstr)
        if r["verdict"] != "explained" or rc != 0:
            fail("%s: verdict %s (exit %d)" % (label, r["verdict"], rc))
            continue
        best = r["candidates"][0]
        if best["op"] == op and best["mutation"] == mut:
            top1 += 1
            how = "top"
        elif any(c["tied_best"] and c["op"] == op and c["mutation"] == mut
                 for c in r["candidates"]):
            tied += 1
            how = "tied (ambiguous)"
        else:
            fail("%s: best is %s %s (%s), expected %s %s" %
                 (label, best["op"], best["mutation"], best["detail"], op,
                  mut))
            continue
        if best["fraction"] != 1.0:
            fail("%s: the best reproduces %.4f, not all" %
                 (label, best["fraction"]))
        print("%-55s %s: %s %s (%s) %.1f%% of %d differing" %
              (label, how, best["op"], best["mutation"], best["detail"],
               100 * best["differing_fraction"], r["differing"]))
    print("search: %d of %d named first, %d among tied best" %
          (top1, len(CASES), tied))
    if top1 + tied < len(CASES) or top1 < 0.95 * len(CASES) - 1:
        fail("too few cases named")


def test_unexplained(tmp):
    """A multiply turned into an add: not in the catalogue."""
    d = os.path.join(EX, "layer_norm_bf16", "normal_s0")
    k = os.path.join(d, "kernel.hlo")
    with open(k) as fh:
        text = fh.read()
    old = "%mul.0 = f32[8,128]{1,0} multiply(%mul.2, %mul.1)"
    if old not in text:
        fail("layer_norm's mul.0 line not found")
        return
    mh = os.path.join(tmp, "u.hlo")
    with open(mh, "w") as fh:
        fh.write(text.replace(old, old.replace("multiply(", "add(")))
    evaluate(mh, inputs_of(d), os.path.join(tmp, "udev"))
    rc, r = signature([d, "--device", os.path.join(tmp, "udev_0.npy")])
    if r["verdict"] != "unexplained" or rc != 3:
        fail("multiply->add: verdict %s (exit %d), best %s" %
             (r["verdict"], rc, r["candidates"][:1]))
    else:
        print("multiply->add on layer_norm: unexplained (best %.1f%% of "
              "differing)" % (100 * r["candidates"][0]["differing_fraction"]
                              if r["candidates"] else 0))


def test_legit(tmp):
    """Real XLA:CPU outputs: nothing to explain."""
    d = os.path.join(EX, "layer_norm_bf16", "normal_s0")
    rc, r = signature([d])
    if r["verdict"] != "no-difference" or rc != 0:
        fail("layer_norm real output: verdict %s" % r["verdict"])
    # softmax_f32's real output differs from the strict reference (XLA's
    # exp): legit under xla-cpu, so not searched.
    d = os.path.join(EX, "softmax_f32", "normal_s0")
    rc, r = signature([d, "--profile", "xla-cpu"])
    if r["verdict"] != "legit" or rc != 0:
        fail("softmax_f32 real output under xla-cpu: verdict %s" %
             r["verdict"])
    # The case names its platform (cpu): xla-cpu without --profile too.
    rc, r = signature([d])
    if r["verdict"] != "legit" or r["profile"] != "xla-cpu":
        fail("softmax_f32 real output under the case's profile: verdict "
             "%s, profile %s" % (r["verdict"], r["profile"]))
    rc, r = signature([d, "--no-profile"])
    if r["verdict"] == "explained":
        fail("softmax_f32 real output explained by %s" % r["candidates"][0])
    print("real outputs: layer_norm no difference, softmax legit under "
          "xla-cpu, %s without a profile" % r["verdict"])


def test_results_table(tmp):
    """signature --out adds the ranked table to the kernel check wrote."""
    try:
        import h5py
    except ImportError:
        print("h5py missing: the result table is not checked")
        return
    d = os.path.join(EX, "layer_norm_bf16", "normal_s0")
    k = os.path.join(d, "kernel.hlo")
    m = os.path.join(tmp, "t.hlo")
    run([sys.executable, os.path.join(SRC, "tests", "classify",
                                      "inject_defects.py"),
         "--mutant", k, "narrow", "mul.2", m])
    evaluate(m, inputs_of(d), os.path.join(tmp, "tdev"))
    dev = os.path.join(tmp, "tdev_0.npy")
    h5 = os.path.join(tmp, "t.h5")
    ins = sum((["--input", x] for x in inputs_of(d)), [])
    # Without the kernel in the file: a clear error, nothing written.
    p = run([CLI, "signature", k] + ins + ["--device", dev, "--out", h5],
            ok=(1,))
    if "cannot open" not in p.stderr and "No such file" not in p.stderr \
            and h5 not in p.stderr:
        fail("signature --out to a missing file: %s" % p.stderr.strip())
    run([CLI, "check", k, "--profile", "xla-cpu", "--worst", "0", "--out",
         h5] + ins + ["--device", dev], ok=(4,))
    p = run([CLI, "signature", k] + ins + ["--device", dev, "--top", "3",
                                           "--json", "--out", h5,
                                           "--max-seconds", "100000"])
    r = json.loads(p.stdout)
    with h5py.File(h5, "r") as f:
        kg = f["kernels"]["jit_layer_norm_bf16"]
        g = kg["signatures"]
        ops = [x.decode() for x in g["op"][()]]
        muts = [x.decode() for x in g["mutation"][()]]
        want_ops = [c["op"] or "" for c in r["candidates"]]
        want_muts = [c["mutation"] for c in r["candidates"]]
        if ops != want_ops or muts != want_muts:
            fail("signatures table %s %s, JSON %s %s" %
                 (ops, muts, want_ops, want_muts))
        if kg.attrs["culprit_op"].decode() != "mul.2" or \
                not kg.attrs["signature"].decode().startswith("mul.2 narrow"):
            fail("kernel attributes %r %r" % (kg.attrs["culprit_op"],
                                              kg.attrs["signature"]))
        if g.attrs["verdict"].decode() != "explained" or \
                int(g.attrs["differing"]) != r["differing"]:
            fail("signatures attributes %r" % dict(g.attrs))
        if int(g["reproduced"][0]) != r["candidates"][0]["reproduced"] \
                or not bool(g["tied_best"][0]):
            fail("row 0: %s" % r["candidates"][0])
    # A second search of the same kernel: refused, the file unchanged.
    p = run([CLI, "signature", k] + ins + ["--device", dev, "--top", "3",
                                           "--out", h5,
                                           "--max-seconds", "100000"],
            ok=(1,))
    if "already has signatures" not in p.stderr:
        fail("second --out: %s" % p.stderr.strip())
    print("signature --out: table of %d rows, culprit mul.2" % len(ops))


def main():
    return run_tests("usc_sig_", (
        test_new_mutations, test_real_xla, test_mutant_bits,
        test_wrong_reduce_dimension, test_overflow_free_converts,
        test_c_vs_python, test_stale, test_search, test_unexplained,
        test_legit, test_results_table))


if __name__ == "__main__":
    sys.exit(main())
