#!/usr/bin/python3
"""Observational ties broken by a second run (docs/signatures.md, "Several
runs" and "Separating inputs"), driving the CLI (USC_CLI, USC_SOURCE_DIR
as in ctest).

The kernel selects between two inputs on a compare, `select(x > y, a, b)`.
Swapping the select's branches and swapping the compare's operands give
the same bits wherever x != y (y > x is then not x > y) and differ where
x == y or either is NaN (both compares are false: the compare-swapped
mutant keeps b, the branch-swapped one takes a).  On inputs drawn from a
normal distribution the two are therefore tied.  The device output is
the branch-swapped mutant, written here by hand (not by the signature
code) and evaluated with `ulpscope eval`.

- The first run is tied: both mutations first, marked tied.
- `--separate OUT` writes inputs on which they differ: checked by
  evaluating the two hand-written mutants with `ulpscope eval` on the
  written inputs and comparing bits with numpy, and by numpy itself
  (some element has x == y or a NaN, where a != b).
- `--also OUT`, with OUT's device output the branch-swapped mutant's,
  ranks select.0 swap-operands first and alone: the compare's swap
  below it, not tied.
- A second run of the compare-swapped mutant instead ranks that one
  first: the combination follows the device, not the catalogue order.
- clamp(0, x, 3): its bounds swapped and its bound 3 zeroed both give 0
  for every x; `--separate` must call them likely equivalent (and the
  two hand-written kernels agree on the draw), while zeroing the result,
  tied with them on normal inputs, is split off by a NaN.
- Bad input: `--also` of a case with another kernel, a missing
  directory, `--separate` without a case directory.

Exit 0 on success, 1 on failure, 77 without numpy.
"""
import json
import os
import shutil
import sys

try:
    import numpy as np
except ImportError:
    sys.exit(77)

from sigtest import CLI, cli_eval, fail, inputs_of, run, run_tests  # noqa: E402

N = 64
KERNEL = """HloModule selcase

ENTRY main {
  x = f32[%(n)d]{0} parameter(0)
  y = f32[%(n)d]{0} parameter(1)
  a = f32[%(n)d]{0} parameter(2)
  b = f32[%(n)d]{0} parameter(3)
  compare.0 = pred[%(n)d]{0} compare(%(cx)s, %(cy)s), direction=GT
  ROOT select.0 = f32[%(n)d]{0} select(compare.0, %(sa)s, %(sb)s)
}
"""


def kernel(cx="x", cy="y", sa="a", sb="b"):
    return KERNEL % {"n": N, "cx": cx, "cy": cy, "sa": sa, "sb": sb}


def bits(a):
    return a.view(np.uint32).reshape(-1)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def make_case(tmp, name, device_hlo):
    """A case of the kernel on normal inputs (x != y everywhere), its
    device output device_hlo's evaluation."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    write(os.path.join(d, "kernel.hlo"), kernel())
    rng = np.random.default_rng(7)
    for i in range(4):
        np.save(os.path.join(d, "input_%d.npy" % i),
                rng.standard_normal(N).astype(np.float32))
    x, y = np.load(os.path.join(d, "input_0.npy")), \
        np.load(os.path.join(d, "input_1.npy"))
    assert (x != y).all()
    device(d, device_hlo)
    return d


def device(d, hlo):
    """d's device output: hlo evaluated on d's inputs by `ulpscope eval`."""
    cli_eval(hlo, inputs_of(d), os.path.join(d, "dev"))
    os.replace(os.path.join(d, "dev_0.npy"), os.path.join(d, "device_0.npy"))


def signature(*args, ok=(0,)):
    p = run([CLI, "signature"] + list(args) + ["--json"], ok=ok)
    return json.loads(p.stdout)


def key(c):
    return (c["op"], c["mutation"])


SEL = ("select.0", "swap-operands")
CMP = ("compare.0", "swap-operands")


def mutants(tmp):
    msel = os.path.join(tmp, "msel.hlo")
    mcmp = os.path.join(tmp, "mcmp.hlo")
    write(msel, kernel(sa="b", sb="a"))
    write(mcmp, kernel(cx="y", cy="x"))
    return msel, mcmp


def test_separate_and_also(tmp):
    msel, mcmp = mutants(tmp)
    case = make_case(tmp, "case", msel)
    r = signature(case)
    tied = {key(c) for c in r["candidates"] if c["tied_best"]}
    if tied != {SEL, CMP}:
        fail("one run: tied %s, expected the two swaps" % sorted(tied))
    out = os.path.join(tmp, "sep")
    r = signature(case, "--separate", out, "--seed", "3")
    sep = r.get("separation")
    if not sep or sep["draw"] is None or sep["dir"] != out:
        fail("--separate: no separating draw: %s" % sep)
        return
    with open(os.path.join(out, "separate.json")) as f:
        if json.load(f) != sep:
            fail("separate.json differs from the --json separation")
    cls = {(m["op"], m["mutation"]): m["class"] for m in sep["members"]}
    if cls.get(SEL) is None or cls.get(SEL) == cls.get(CMP):
        fail("--separate: classes %s do not split the two swaps" % cls)
    if os.path.exists(os.path.join(out, "device_0.npy")):
        fail("--separate wrote a device output")
    ins = inputs_of(out)
    if len(ins) != 4:
        fail("--separate wrote %d inputs, expected 4" % len(ins))
        return
    # Independently: the two hand-written mutants differ on those inputs,
    # and where the reason says they must (x == y or a NaN, a != b).
    cli_eval(msel, ins, os.path.join(tmp, "es"))
    cli_eval(mcmp, ins, os.path.join(tmp, "ec"))
    es = np.load(os.path.join(tmp, "es_0.npy"))
    ec = np.load(os.path.join(tmp, "ec_0.npy"))
    if (bits(es) == bits(ec)).all():
        fail("the mutants give the same bits on the separating inputs")
    x, y, a, b = (np.load(p) for p in ins)
    reason = ((x == y) | np.isnan(x) | np.isnan(y)) & \
        (bits(a) != bits(b))
    if not reason.any():
        fail("no element with x == y or a NaN and a != b")
    # The second run: the true mutant's output on the separating inputs.
    device(out, msel)
    r = signature(case, "--also", out)
    c = r["candidates"]
    if key(c[0]) != SEL:
        fail("--also: first %s, expected %s" % (key(c[0]), SEL))
    if sum(x["tied_best"] for x in c) != 1:
        fail("--also: still tied: %s" %
             [key(x) for x in c if x["tied_best"]])
    rank = [key(x) for x in c]
    if CMP not in rank or rank.index(CMP) == 0:
        fail("--also: compare's swap not ranked below: %s" % rank)
    if len(r.get("runs", [])) != 2 or len(c[0].get("runs", [])) != 2:
        fail("--also: per-run figures missing")
    elif c[0]["runs"][1]["explained"] != r["runs"][1]["defects"]:
        fail("--also: the best does not explain run 2 whole: %s" %
             c[0]["runs"])
    # The other truth: the compare-swapped mutant computed the second run
    # (and, on the first run's inputs, the same bits as the select's).
    case2 = make_case(tmp, "case2", mcmp)
    out2 = os.path.join(tmp, "sep2")
    shutil.copytree(out, out2)
    device(out2, mcmp)
    r = signature(case2, "--also", out2)
    if key(r["candidates"][0]) != CMP or \
            sum(x["tied_best"] for x in r["candidates"]) != 1:
        fail("--also, compare truth: %s" %
             [(key(x), x["tied_best"]) for x in r["candidates"][:3]])


CLAMP = """HloModule clampcase

ENTRY main {
  x = f32[%(n)d]{0} parameter(0)
  lo = f32[] constant(0)
  c = f32[] constant(%(c)s)
  ROOT clamp.0 = f32[%(n)d]{0} clamp(%(a)s, x, %(b)s)
}
"""


def test_likely_equivalent(tmp):
    """clamp(0, x, 3) with its bounds swapped is min(max(x, 3), 0) = 0
    for every x, as is the clamp with its bound 3 zeroed: no input splits
    the two, and --separate must say so.  Zeroing the clamp's result is
    tied with them on normal inputs but splits on a NaN (the clamp keeps
    it): the draw written must hold one."""
    d = os.path.join(tmp, "clamp")
    os.makedirs(d)
    write(os.path.join(d, "kernel.hlo"), CLAMP % {"n": N, "c": "3", "a": "lo",
                                                  "b": "c"})
    np.save(os.path.join(d, "input_0.npy"),
            np.random.default_rng(1).standard_normal(N).astype(np.float32))
    np.save(os.path.join(d, "device_0.npy"), np.zeros(N, np.float32))
    out = os.path.join(tmp, "clamp_sep")
    r = signature(d, "--separate", out)
    sep = r["separation"]
    names = [(m["op"], m["mutation"]) for m in sep["members"]]
    want = {("clamp.0", "swap-clamp-bounds"), ("c", "wrong-constant"),
            ("clamp.0", "zero")}
    if not want <= set(names):
        fail("clamp: tied members %s, expected %s" % (names, sorted(want)))
        return
    i, j, z = (names.index(k) for k in (("c", "wrong-constant"),
                                         ("clamp.0", "swap-clamp-bounds"),
                                         ("clamp.0", "zero")))
    m = sep["members"]
    if m[j]["same_as"] != i or sep["inseparable"] != 2:
        fail("clamp: the swapped bounds and the zeroed bound not said "
             "equivalent: %s" % sep)
    if sep["draw"] is None or m[z]["class"] == m[i]["class"]:
        fail("clamp: the zeroed result not separated: %s" % sep)
        return
    p = run([CLI, "signature", d, "--separate", os.path.join(tmp, "c2")])
    if "likely equivalent" not in p.stdout:
        fail("clamp: no 'likely equivalent' line: %r" % p.stdout)
    # Independently: the hand-written swapped-bounds and zeroed-bound
    # kernels agree bit for bit on the written draw, and it has a NaN.
    ins = inputs_of(out)
    for name, c, a, b in (("sw", "3", "c", "lo"), ("wc", "0", "lo", "c")):
        write(os.path.join(tmp, name + ".hlo"),
              CLAMP % {"n": N, "c": c, "a": a, "b": b})
        cli_eval(os.path.join(tmp, name + ".hlo"), ins,
                 os.path.join(tmp, name))
    sw, wc = (np.load(os.path.join(tmp, k + "_0.npy")) for k in ("sw", "wc"))
    if (bits(sw) != bits(wc)).any():
        fail("clamp: the two 'equivalent' kernels differ on the draw")
    if not np.isnan(np.load(ins[0])).any():
        fail("clamp: the separating draw has no NaN")


def test_bad_input(tmp):
    msel, _ = mutants(tmp)
    case = make_case(tmp, "bcase", msel)
    other = os.path.join(tmp, "other")
    shutil.copytree(case, other)
    write(os.path.join(other, "kernel.hlo"),
          kernel().replace("direction=GT", "direction=LT"))
    p = run([CLI, "signature", case, "--also", other], ok=(1,))
    if os.path.join(other, "kernel.hlo") not in p.stderr or \
            "modules differ" not in p.stderr:
        fail("--also of another kernel: %r" % p.stderr)
    missing = os.path.join(tmp, "nowhere")
    p = run([CLI, "signature", case, "--also", missing], ok=(1,))
    if missing not in p.stderr:
        fail("--also of a missing directory: %r" % p.stderr)
    p = run([CLI, "signature", os.path.join(case, "kernel.hlo"),
             "--input"] + inputs_of(case) +
            ["--device", os.path.join(case, "device_0.npy"),
             "--separate", os.path.join(tmp, "x")], ok=(2,))
    if "case directory" not in p.stderr:
        fail("--separate without a case directory: %r" % p.stderr)
    # A directory that holds a case already is not overwritten.
    p = run([CLI, "signature", case, "--separate", other], ok=(1,))
    if "already holds a case" not in p.stderr:
        fail("--separate into a case: %r" % p.stderr)


if __name__ == "__main__":
    sys.exit(run_tests("usc_sep_", [test_separate_and_also,
                                    test_likely_equivalent,
                                    test_bad_input]))
