#!/usr/bin/python3
"""Defect signatures: equivalent mutations and folded constants
(docs/signatures.md, "Equivalent mutations"), through the CLI (USC_CLI,
USC_SOURCE_DIR as in ctest).

1. Two mutations that write the same program are one candidate listing
   both forms: EQ->NE of a compare whose only use is a select's predicate
   is the select's branches swapped; GT->GE of an s32 iota against a
   threshold is the iota plus one.  The device output is computed here
   with numpy (np.where of the negated or shifted mask), not by ulpscope.
   A constant set to zero is the fusion that only broadcasts it replaced
   by zeros.  A subtract reading, through a fusion parameter, a square
   dot that another fusion computes, transposed, is that dot's output
   transposed (the device: numpy's (x @ y).T - z on small integers,
   exact).  A stale tile of rows is one program whether written by a
   negating fusion, the dot fusion that reads it (a free dimension) or
   the fusion that scales and broadcasts the dot (the device: numpy's
   rows copied); not when the negated value is read elsewhere too.  A
   compare with a second use is not folded (its flip also changes that
   use), and two directed roundings that agree on positive sums stay two
   candidates, tied (an observational tie, not an identity).

2. A splat array constant (the folded broadcast of a scalar XLA writes
   into a fused kernel) takes the constant mutations: constant-ulps moves
   every element by the same codes (numpy's nextafter), and the search
   names the constant when the device multiplied by the moved value.  An
   array constant of different values is not mutated.  An f32 constant
   that is a bf16 (f16) value also moves by bf16 (f16) ulps (the bits
   computed here by hand and by numpy's float16 nextafter); one that is
   not such a value does not.

4. Four cases of the injected-defect campaign (tests/signature/campaign:
   a generated kernel, its inputs, and the outputs XLA:CPU computed from a
   mutant of it; expected.json names the kernel op of the injected
   mutation, read from XLA's op_name metadata): the injected mutation is
   the first candidate (or one of its equivalent forms) under xla-cpu.
   They cover a convert rounded toward zero that a vacuously wide
   explanation used to outrank, a bf16 constant moved by a bf16 ulp, a
   zeroed constant, and an EQ->NE compare feeding a select.

3. output-zero, built from the device, ranks after a mutation of the
   program that scores as well (a constant zeroed), whatever its bitwise
   count: the zeros there carry no evidence of their own.

Exit 0 on success, 1 on failure, 77 without numpy.
"""
import json
import os
import sys
from fractions import Fraction

try:
    import numpy as np
except ImportError:
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sigtest import CLI, fail, run, run_tests  # noqa: E402

N = 16

SELECT_KERNEL = """HloModule equiv_select

ENTRY main {
  x = f32[16]{0} parameter(0)
  y = f32[16]{0} parameter(1)
  z = f32[16]{0} parameter(2)
  eq.0 = pred[16]{0} compare(x, y), direction=EQ
  sel.0 = f32[16]{0} select(eq.0, x, z)
  ROOT add.0 = f32[16]{0} add(sel.0, y)
}
"""

# The same compare, also an output: flipping it is no longer the swap.
SHARED_KERNEL = """HloModule equiv_shared

ENTRY main {
  x = f32[16]{0} parameter(0)
  y = f32[16]{0} parameter(1)
  z = f32[16]{0} parameter(2)
  eq.0 = pred[16]{0} compare(x, y), direction=EQ
  sel.0 = f32[16]{0} select(eq.0, x, z)
  add.0 = f32[16]{0} add(sel.0, y)
  ROOT t = (f32[16]{0}, pred[16]{0}) tuple(add.0, eq.0)
}
"""

IOTA_KERNEL = """HloModule equiv_iota

ENTRY main {
  x = f32[16]{0} parameter(0)
  y = f32[16]{0} parameter(1)
  n = s32[16]{0} parameter(2)
  io.0 = s32[16]{0} iota(), iota_dimension=0
  gt.0 = pred[16]{0} compare(io.0, n), direction=GT
  sel.0 = f32[16]{0} select(gt.0, x, y)
  ROOT mul.0 = f32[16]{0} multiply(sel.0, x)
}
"""

ROUND_KERNEL = """HloModule equiv_round

ENTRY main {
  x = f32[16]{0} parameter(0)
  y = f32[16]{0} parameter(1)
  ROOT add.0 = f32[16]{0} add(x, y)
}
"""

SPLAT_KERNEL = """HloModule splat

ENTRY main {
  x = f32[16]{0} parameter(0)
  k.0 = f32[16]{0} constant({0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1})
  v.0 = f32[16]{0} constant({0.1, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1})
  mk.0 = f32[16]{0} multiply(x, k.0)
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(mk.0, v.0)
}
"""


def write(tmp, name, text):
    p = os.path.join(tmp, name)
    with open(p, "w") as fh:
        fh.write(text)
    return p


def save(tmp, name, a):
    p = os.path.join(tmp, name)
    np.save(p, a)
    return p


def search(kernel, inputs, devices):
    p = run([CLI, "signature", kernel, "--json", "--top", "10",
             "--max-seconds", "100000", "--no-profile"] +
            sum((["--input", x] for x in inputs), []) +
            sum((["--device", d] for d in devices), []), ok=(0, 3))
    return json.loads(p.stdout)


def forms(c):
    """Every (op, mutation, variant) a candidate names."""
    return {(c["op"], c["mutation"], c["variant"])} | \
        {(e["op"], e["mutation"], e["variant"]) for e in c.get("equivalent", [])}


def best_is(label, r, want):
    """Whether the search r explained the device by one candidate whose
    forms are exactly want (printed), else a failure under label."""
    best = r["candidates"][0] if r["candidates"] else None
    if r["verdict"] != "explained" or not best or forms(best) != want:
        fail("%s: best %s, expected one candidate of the forms %s" %
             (label, best and sorted(forms(best)), sorted(want)))
        return False
    print("%s: one candidate, %s" % (label, sorted(forms(best))))
    return True


def inputs(tmp):
    rng = np.random.default_rng(19)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    y[::3] = x[::3]  # equal pairs: EQ is true there
    z = rng.standard_normal(N).astype(np.float32)
    return x, y, z, [save(tmp, "x.npy", x), save(tmp, "y.npy", y),
                     save(tmp, "z.npy", z)]


def test_select(tmp):
    """EQ->NE of the select's only predicate is its branches swapped."""
    x, y, z, ins = inputs(tmp)
    k = write(tmp, "select.hlo", SELECT_KERNEL)
    # The negated predicate: where x == y take z, elsewhere x.
    dev = (np.where(x == y, z, x) + y).astype(np.float32)
    r = search(k, ins, [save(tmp, "dev.npy", dev)])
    want = {("eq.0", "flip-compare", 1), ("sel.0", "swap-operands", 0)}
    if not best_is("select", r, want):
        return
    if any(forms(c) & want for c in r["candidates"][1:]):
        fail("select: a form of the best is ranked again")

    # A second use of the compare: the flip changes the pred output
    # too, so it is not the swap and neither is folded into the other.
    k = write(tmp, "shared.hlo", SHARED_KERNEL)
    dev1 = (x != y)
    r = search(k, ins, [save(tmp, "dev0.npy", dev),
                        save(tmp, "dev1.npy", dev1)])
    best = r["candidates"][0] if r["candidates"] else None
    if not best or forms(best) != {("eq.0", "flip-compare", 1)} or \
            any(c.get("equivalent") for c in r["candidates"]):
        fail("shared compare: best %s, forms folded %s" %
             (best and sorted(forms(best)),
              [c["op"] for c in r["candidates"] if c.get("equivalent")]))
        return
    print("shared compare: the flip alone, nothing folded")


def test_iota(tmp):
    """GT->GE of iota against n is the iota plus one (integers)."""
    x, y, _, ins = inputs(tmp)
    n = np.array([3, 7, 8, 2, 4, 9, 6, 7, 8, 9, 10, 0, 12, 13, 5, 15],
                 dtype=np.int32)
    ins = ins[:2] + [save(tmp, "n.npy", n)]
    i = np.arange(N, dtype=np.int32)
    if not np.any(i == n):
        fail("iota: no element where GE differs from GT")
    dev = (np.where(i >= n, x, y) * x).astype(np.float32)
    k = write(tmp, "iota.hlo", IOTA_KERNEL)
    r = search(k, ins, [save(tmp, "dev.npy", dev)])
    want = {("gt.0", "flip-compare", 0), ("io.0", "off-by-one", 0)}
    best_is("iota", r, want)


FUSED_ZERO_KERNEL = """HloModule equiv_zero

wrapped_bc {
  p = f32[] parameter(0)
  ROOT b = f32[16]{0} broadcast(p), dimensions={}
}

ENTRY main {
  x = f32[16]{0} parameter(0)
  k.0 = f32[] constant(0.25)
  wb.0 = f32[16]{0} fusion(k.0), kind=kLoop, calls=wrapped_bc
  ROOT mk.0 = f32[16]{0} multiply(x, wb.0)
}
"""


def test_zero_chain(tmp):
    """0 for the constant is the broadcasting fusion's result zeroed."""
    x, _, _, ins = inputs(tmp)
    k = write(tmp, "zero.hlo", FUSED_ZERO_KERNEL)
    # x * 0: signed zeros, which the root's zeroing (+0) does not give.
    dev = (x * np.float32(0)).astype(np.float32)
    r = search(k, ins[:1], [save(tmp, "dev.npy", dev)])
    want = {("k.0", "wrong-constant", 1), ("wb.0", "zero", 0)}
    best_is("zero chain", r, want)


FUSED_DOT_KERNEL = """HloModule equiv_dot

fdot {
  a = f32[4,4]{1,0} parameter(0)
  b = f32[4,4]{1,0} parameter(1)
  ROOT d.0 = f32[4,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

fsub {
  p = f32[4,4]{1,0} parameter(0)
  q = f32[4,4]{1,0} parameter(1)
  ROOT s.0 = f32[4,4]{1,0} subtract(p, q)
}

ENTRY main {
  x = f32[4,4]{1,0} parameter(0)
  y = f32[4,4]{1,0} parameter(1)
  z = f32[4,4]{1,0} parameter(2)
  fd.0 = f32[4,4]{1,0} fusion(x, y), kind=kLoop, calls=fdot
  ROOT fs.0 = f32[4,4]{1,0} fusion(fd.0, z), kind=kLoop, calls=fsub
}
"""


def test_fused_transpose(tmp):
    """transposed of a fusion parameter = the other fusion's dot
    transposed."""
    rng = np.random.default_rng(23)
    x, y, z = (rng.integers(-8, 8, (4, 4)).astype(np.float32)
               for _ in range(3))
    ins = [save(tmp, "fx.npy", x), save(tmp, "fy.npy", y),
           save(tmp, "fz.npy", z)]
    dev = ((x @ y).T - z).astype(np.float32)
    k = write(tmp, "dot.hlo", FUSED_DOT_KERNEL)
    r = search(k, ins, [save(tmp, "dev.npy", dev)])
    want = {("s.0", "transposed", 0), ("d.0", "dot-transpose-output", 0)}
    best = r["candidates"][0] if r["candidates"] else None
    if r["verdict"] != "explained" or not best or not want <= forms(best):
        fail("fused transpose: best %s, expected the forms %s" %
             (best and sorted(forms(best)), sorted(want)))
        return
    print("fused transpose: one candidate, %s" % sorted(forms(best)))


STALE_KERNEL = """HloModule equiv_stale

fneg {
  p = f32[8,4]{1,0} parameter(0)
  ROOT n = f32[8,4]{1,0} negate(p)
}

fdot {
  a = f32[8,4]{1,0} parameter(0)
  w = f32[4,4]{1,0} parameter(1)
  ROOT d = f32[8,4]{1,0} dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

fbc {
  q = f32[8,4]{1,0} parameter(0)
  c = f32[] constant(2)
  cb = f32[8,4]{1,0} broadcast(c), dimensions={}
  m = f32[8,4]{1,0} multiply(q, cb)
  ROOT b = f32[8,4,2]{2,1,0} broadcast(m), dimensions={0,1}
}

ENTRY main {
  x = f32[8,4]{1,0} parameter(0)
  w = f32[4,4]{1,0} parameter(1)
  neg.0 = f32[8,4]{1,0} fusion(x), kind=kLoop, calls=fneg
  fd.0 = f32[8,4]{1,0} fusion(neg.0, w), kind=kLoop, calls=fdot
  ROOT fb.0 = f32[8,4,2]{2,1,0} fusion(fd.0), kind=kLoop, calls=fbc
}
"""


def test_stale_chain(tmp):
    """A stale tile of rows moves unchanged through a negate, a dot's
    free dimension, a multiply by a broadcast constant and a broadcast:
    stale/0 of each of the three fusions is one program.  The device:
    numpy's 2 (-x @ w) on small integers (exact), broadcast, rows 4-7
    overwritten by rows 0-3."""
    rng = np.random.default_rng(29)
    x = rng.integers(-8, 8, (8, 4)).astype(np.float32)
    w = rng.integers(-8, 8, (4, 4)).astype(np.float32)
    ins = [save(tmp, "sx.npy", x), save(tmp, "sw.npy", w)]
    r = (2 * (-x @ w)).astype(np.float32)
    dev = np.repeat(r[:, :, None], 2, axis=2)
    dev[4:] = dev[:4]
    k = write(tmp, "stale.hlo", STALE_KERNEL)
    got = search(k, ins, [save(tmp, "dev.npy", dev)])
    want = {("neg.0", "stale", 0), ("fd.0", "stale", 0), ("fb.0", "stale", 0)}
    best = got["candidates"][0] if got["candidates"] else None
    if got["verdict"] != "explained" or not best or forms(best) != want:
        fail("stale chain: best %s, expected one candidate of the forms %s" %
             (best and sorted(forms(best)), sorted(want)))
        return
    print("stale chain: one candidate, %s" % sorted(forms(best)))

    # The negated value also an output: its stale tile shows there too,
    # so it is no longer the dot's; the two downstream still are one.
    k = write(tmp, "stale2.hlo", STALE_KERNEL.replace(
        "  ROOT fb.0 = f32[8,4,2]{2,1,0} fusion(fd.0), kind=kLoop, calls=fbc",
        "  fb.0 = f32[8,4,2]{2,1,0} fusion(fd.0), kind=kLoop, calls=fbc\n"
        "  ROOT t = (f32[8,4,2]{2,1,0}, f32[8,4]{1,0}) tuple(fb.0, neg.0)"))
    got = search(k, ins, [save(tmp, "dev2.npy", dev),
                          save(tmp, "dev3.npy", (-x).astype(np.float32))])
    best = got["candidates"][0] if got["candidates"] else None
    want = {("fd.0", "stale", 0), ("fb.0", "stale", 0)}
    if not best or forms(best) != want or \
            any(("neg.0", "stale", 0) in forms(c) and len(forms(c)) > 1
                for c in got["candidates"]):
        fail("stale, shared: best %s, expected the forms %s and neg.0 alone" %
             (best and sorted(forms(best)), sorted(want)))
        return
    print("stale, shared: %s; neg.0 apart" % sorted(forms(best)))


def test_round_ties(tmp):
    """Rounded down or toward zero: the same bits on positive sums, yet
    two programs (they differ on negative ones): two tied candidates."""
    rng = np.random.default_rng(5)
    x = rng.uniform(1, 2, N).astype(np.float32)
    y = rng.uniform(1e-3, 1e-2, N).astype(np.float32)
    ins = [save(tmp, "x.npy", x), save(tmp, "y.npy", y)]
    dev = np.empty(N, np.float32)
    inexact = 0
    for j in range(N):
        exact = Fraction(float(x[j])) + Fraction(float(y[j]))
        v = np.float32(x[j] + y[j])
        if Fraction(float(v)) > exact:
            v = np.nextafter(v, np.float32(0))
        inexact += Fraction(float(v)) != exact
        dev[j] = v
    if not inexact:
        fail("round ties: every sum exact")
    k = write(tmp, "round.hlo", ROUND_KERNEL)
    r = search(k, ins, [save(tmp, "dev.npy", dev)])
    tied = [forms(c) for c in r["candidates"] if c["tied_best"]]
    need = [{("add.0", "round-toward-zero", 0)}, {("add.0", "round-down", 0)}]
    if r["verdict"] != "explained" or any(f not in tied for f in need):
        fail("round ties: tied best %s, expected both %s" % (tied, need))
        return
    print("round ties: %d tied candidates, each one form" % len(tied))


def test_splat(tmp):
    """constant-ulps of a splat array constant, and the search."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(N).astype(np.float32)
    px = save(tmp, "x.npy", x)
    k = write(tmp, "splat.hlo", SPLAT_KERNEL)
    c = np.float32(0.1)
    for v, moved in ((0, np.nextafter(c, np.float32(np.inf))),
                     (3, np.nextafter(np.nextafter(c, np.float32(0)),
                                      np.float32(0)))):
        m = os.path.join(tmp, "m.hlo")
        run([CLI, "signature", k, "--mutant", "k.0", "constant-ulps/%d" % v,
             "-o", m])
        pre = os.path.join(tmp, "o")
        run([CLI, "eval", m, "-o", pre, "--input", px])
        out = np.load(pre + "_0.npy")
        want = (x * moved).astype(np.float32)
        if out.tobytes() != want.tobytes():
            fail("splat: constant-ulps/%d is not x * %r" % (v, moved))
    p = run([CLI, "signature", k, "--mutant", "v.0", "constant-ulps/0", "-o",
             os.path.join(tmp, "m.hlo")], ok=(0, 1, 2, 3))
    if p.returncode == 0:
        fail("splat: an array constant of two values was mutated")
    up = np.nextafter(c, np.float32(np.inf))
    dev0 = save(tmp, "dev0.npy", (x * up).astype(np.float32))
    dev1 = save(tmp, "dev1.npy", np.array(
        [0.1, 0.2] + [0.1] * (N - 2), dtype=np.float32))
    r = search(k, [px], [dev0, dev1])
    best = r["candidates"][0] if r["candidates"] else {}
    if r["verdict"] != "explained" or \
            (best.get("op"), best.get("mutation")) != ("k.0", "constant-ulps"):
        fail("splat: search verdict %s, best %s %s" %
             (r["verdict"], best.get("op"), best.get("mutation")))
        return
    print("splat: constant-ulps of the folded constant, named first")


ZERO_KERNEL = """HloModule oz

ENTRY main {
  x = f32[16]{0} parameter(0)
  k.0 = f32[] constant(0.25)
  kb.0 = f32[16]{0} broadcast(k.0), dimensions={}
  ROOT mk.0 = f32[16]{0} multiply(x, kb.0)
}
"""

NARROW_KERNEL = """HloModule narrowk

ENTRY main {
  x = f32[16]{0} parameter(0)
  k.0 = f32[] constant(2)
  kb.0 = f32[16]{0} broadcast(k.0), dimensions={}
  mk.0 = f32[16]{0} multiply(x, kb.0)
  j.0 = f32[] constant(0.1)
  jb.0 = f32[16]{0} broadcast(j.0), dimensions={}
  mj.0 = f32[16]{0} multiply(x, jb.0)
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(mk.0, mj.0)
}
"""


def test_narrow_ulps(tmp):
    """constant-ulps/4 (+1 bf16 ulp) and /8 (+1 f16 ulp) of 2.0."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(N).astype(np.float32)
    px = save(tmp, "x.npy", x)
    k = write(tmp, "narrow.hlo", NARROW_KERNEL)
    # bf16 is the top half of f32: 2.0 is 0x4000, one code up 0x4001.
    bf = np.array([0x40010000], dtype=np.uint32).view(np.float32)[0]
    hf = np.float32(np.nextafter(np.float16(2), np.float16(np.inf)))
    for v, moved in ((4, bf), (8, hf)):
        m = os.path.join(tmp, "m.hlo")
        run([CLI, "signature", k, "--mutant", "k.0", "constant-ulps/%d" % v,
             "-o", m])
        pre = os.path.join(tmp, "o")
        run([CLI, "eval", m, "-o", pre, "--input", px])
        out = np.load(pre + "_0.npy")
        if out.tobytes() != (x * moved).astype(np.float32).tobytes():
            fail("narrow ulps: constant-ulps/%d of 2 is not x * %r" %
                 (v, moved))
    p = run([CLI, "signature", k, "--mutant", "j.0", "constant-ulps/4", "-o",
             os.path.join(tmp, "m.hlo")], ok=(0, 1, 2, 3))
    if p.returncode == 0:
        fail("narrow ulps: 0.1 (no bf16 value) moved by a bf16 ulp")
    print("narrow ulps: 2 moved by one bf16 and one f16 code")


def test_output_zero_last(tmp):
    """A zeroed constant before output-zero (which copies the device)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(N).astype(np.float32)
    k = write(tmp, "oz.hlo", ZERO_KERNEL)
    p = run([CLI, "signature", k, "--json", "--top", "10", "--max-seconds",
             "100000", "--profile", "xla-cpu", "--input",
             save(tmp, "x.npy", x), "--device",
             save(tmp, "dev.npy", np.zeros(N, np.float32))], ok=(0, 3))
    cands = json.loads(p.stdout)["candidates"]
    at = {(c["op"], c["mutation"]): i for i, c in enumerate(cands)}
    wc, oz = at.get(("k.0", "wrong-constant")), at.get(("mk.0", "output-zero"))
    if wc is None or oz is None or wc > oz:
        fail("output-zero: ranked %s, wrong-constant %s" % (oz, wc))
        return
    print("output-zero: after the zeroed constant (%d < %d)" % (wc, oz))


CAMPAIGN = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "campaign")


def test_campaign(tmp):
    """The injected mutation first, on real XLA:CPU mutant outputs."""
    for name in sorted(os.listdir(CAMPAIGN)):
        d = os.path.join(CAMPAIGN, name)
        with open(os.path.join(d, "expected.json")) as fh:
            e = json.load(fh)
        p = run([CLI, "signature", d, "--profile", "xla-cpu", "--json",
                 "--top", "5", "--max-seconds", "100000"], ok=(0, 3))
        cands = json.loads(p.stdout)["candidates"]
        names = {(f[0], f[1]) for f in forms(cands[0])} if cands else set()
        if (e["op"], e["mutation"]) not in names:
            fail("campaign %s: first %s, expected %s %s" %
                 (name, sorted(names), e["op"], e["mutation"]))
            continue
        print("campaign %s: %s %s first" % (name, e["op"], e["mutation"]))


def main():
    return run_tests("usc_sigeq_", (
        test_select, test_iota, test_zero_chain, test_fused_transpose,
        test_stale_chain, test_round_ties, test_splat, test_narrow_ulps,
        test_output_zero_last, test_campaign))


if __name__ == "__main__":
    sys.exit(main())
