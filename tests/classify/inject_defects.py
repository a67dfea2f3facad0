#!/usr/bin/python3
"""Defects injected into real XLA:CPU kernels must be caught and located.

For every captured case under data/examples/ (real XLA:CPU output), this
script makes wrong "device" outputs two ways and runs `ulpscope check
--profile xla-cpu` on each:

* into the reference evaluation: the kernel's HLO text is mutated (one op
  computed in bf16, a truncating convert, a dropped op, swapped operands,
  an operand read off by one, a transposed index mapping, a wrong
  reduction init, a dropped clamp before an fp8 convert) and evaluated by
  `ulpscope eval` (the strict reference of the
  mutated kernel) -- the elements that changed are those where it differs
  from the reference of the original kernel;
* into the captured device output itself: one bit flipped (sign,
  exponent, top and bottom mantissa bits) in one element, a zeroed
  region, a stale region (another run's values).

Expected behaviour (issue 5): the kernel verdict is "defect" in at least
99% of the injected cases in which something changed, and no element that
did not change is classified defect or mismatch.  A changed element may
legitimately stay inside the envelope (a mutation whose effect is below
what the profile allows is not a detectable defect); the script reports
how many changed elements were flagged.

The fp8 convert's overflow policy is tested with two profiles written
here (xla-cpu with fp8_overflow = nonsaturating, and = saturating) on the
quantize kernel with its clamp removed: saturating device values are a
defect under the first and legitimate under the second, NaN the reverse.
A NaN-dropping maximum (the quantize kernel's clamp reading NaN inputs as
its lower bound) is tested the same way under minmax_nan = propagate,
drop, and xla-cpu's either.

Run by ctest (tests/classify/tests.cmake) with USC_CLI and USC_SOURCE_DIR;
USC_INJECT_CASES limits the cases (a comma list of substrings), for the
sanitizer build.  Exit status 0 on success, 1 on failure, 77 when numpy or
h5py is missing.
"""
import json
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
    sys.exit(77)

CLI = os.environ.get("USC_CLI", "ulpscope")
SRC = os.environ.get("USC_SOURCE_DIR",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(SRC, "data", "examples")
VERBOSE = os.environ.get("USC_INJECT_VERBOSE") == "1"

# Instruction lines of HLO text in the short form XLA dumps.
INSTR = re.compile(
    r"^(?P<indent>\s*)(?P<root>ROOT\s+)?(?P<name>%[\w.\-]+)\s*=\s*"
    r"(?P<shape>[a-z0-9]+\[[0-9,]*\](?:\{[0-9,]*\})?)\s+"
    r"(?P<op>[a-z\-]+)\((?P<args>[^()]*)\)(?P<rest>.*)$")
FLOAT_TYPES = ("f32", "bf16", "f16", "f64")
UNARY_FLOAT = {"exponential", "tanh", "log", "rsqrt", "sqrt", "logistic",
               "erf", "negate", "exponential-minus-one", "log-plus-one",
               "sine", "cosine", "abs"}
BINARY_FLOAT = {"add", "subtract", "multiply", "divide", "maximum",
                "minimum", "power"}
NONCOMMUTATIVE = {"subtract", "divide", "power", "atan2"}


def run(args, check=True):
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode not in (0, 3, 4, 5):
        raise RuntimeError("%s failed (%d): %s" %
                           (" ".join(args), p.returncode, p.stderr))
    return p


def bits_of(path):
    """The encodings of an .npy file as unsigned integers."""
    a = np.load(path, allow_pickle=False)
    width = a.dtype.itemsize
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32,
                   8: np.uint64}[width]).reshape(-1).copy(), a


def save_bits(path, bits, like):
    """Writes encodings in the layout and header of the .npy like."""
    out = bits.view(like.dtype).reshape(like.shape)
    np.save(path, out, allow_pickle=False)


def shape_type(shape):
    return shape.split("[", 1)[0]


def shape_dims(shape):
    inner = shape.split("[", 1)[1].split("]", 1)[0]
    return [int(d) for d in inner.split(",") if d]


def with_type(shape, t):
    return t + shape[len(shape_type(shape)):]


class Kernel:
    """HLO text as lines, with the shape of every named instruction."""

    def __init__(self, text):
        self.lines = text.split("\n")
        self.shapes = {}
        for ln in self.lines:
            m = INSTR.match(ln)
            if m:
                self.shapes[m.group("name")] = m.group("shape")

    def instrs(self):
        for i, ln in enumerate(self.lines):
            m = INSTR.match(ln)
            if m:
                yield i, m

    def operands(self, m):
        return [a.strip() for a in m.group("args").split(",") if a.strip()]

    def replace(self, i, new_lines):
        out = list(self.lines)
        out[i:i + 1] = new_lines
        return "\n".join(out)


def line(m, name, shape, op, args, rest="", root=False):
    return "%s%s%s = %s %s(%s)%s" % (m.group("indent"),
                                     "ROOT " if root else "", name, shape,
                                     op, ", ".join(args), rest)


# --------------------------------------------------------- HLO mutations
# Each yields (label, mutated text) for the instructions it applies to.

def mut_narrow(k):
    """One f32 op computed in bf16: operands and result rounded to bf16."""
    for i, m in k.instrs():
        op, shape = m.group("op"), m.group("shape")
        if shape_type(shape) != "f32" or op not in UNARY_FLOAT | BINARY_FLOAT:
            continue
        args = k.operands(m)
        if not all(shape_type(k.shapes.get(a, "x[]")) == "f32" for a in args):
            continue
        nm = m.group("name")
        new, nargs = [], []
        for j, a in enumerate(args):
            na = "%s.nb%d" % (nm, j)
            new.append(line(m, na, with_type(k.shapes[a], "bf16"),
                            "convert", [a]))
            nargs.append(na)
        new.append(line(m, nm + ".nb", with_type(shape, "bf16"), op, nargs,
                        m.group("rest")))
        new.append(line(m, nm, shape, "convert", [nm + ".nb"],
                        root=bool(m.group("root"))))
        yield "narrow-bf16 " + nm, k.replace(i, new)


def mut_truncate(k):
    """A convert f32 -> bf16 that truncates instead of rounding to nearest."""
    for i, m in k.instrs():
        shape = m.group("shape")
        if m.group("op") != "convert" or shape_type(shape) != "bf16":
            continue
        (a,) = k.operands(m)
        if shape_type(k.shapes.get(a, "x[]")) != "f32":
            continue
        nm, src = m.group("name"), k.shapes[a]
        u = with_type(src, "u32")
        new = [line(m, nm + ".tb", u, "bitcast-convert", [a]),
               line(m, nm + ".tk", "u32[]", "constant", ["4294901760"]),
               line(m, nm + ".tkb", u, "broadcast", [nm + ".tk"],
                    ", dimensions={}"),
               line(m, nm + ".tm", u, "and", [nm + ".tb", nm + ".tkb"]),
               line(m, nm + ".tf", src, "bitcast-convert", [nm + ".tm"]),
               line(m, nm, shape, "convert", [nm + ".tf"],
                    m.group("rest"), root=bool(m.group("root")))]
        yield "truncate " + nm, k.replace(i, new)


def mut_drop(k):
    """An op dropped: its first operand passed on unchanged."""
    for i, m in k.instrs():
        op, shape = m.group("op"), m.group("shape")
        if op not in UNARY_FLOAT | BINARY_FLOAT | {"clamp"}:
            continue
        args = k.operands(m)
        keep = args[1] if op == "clamp" else args[0]
        if k.shapes.get(keep) != shape:
            continue
        new = [line(m, m.group("name"), shape, "reshape", [keep],
                    root=bool(m.group("root")))]
        yield "drop " + m.group("name"), k.replace(i, new)


def mut_swap(k):
    """The operands of a non-commutative op swapped."""
    for i, m in k.instrs():
        if m.group("op") not in NONCOMMUTATIVE:
            continue
        a, b = k.operands(m)
        if k.shapes.get(a) != k.shapes.get(b):
            continue
        new = [line(m, m.group("name"), m.group("shape"), m.group("op"),
                    [b, a], m.group("rest"), root=bool(m.group("root")))]
        yield "swap " + m.group("name"), k.replace(i, new)


def mut_off_by_one(k):
    """The rank-1 operand of a broadcast read one index off (rotated)."""
    for i, m in k.instrs():
        if m.group("op") != "broadcast":
            continue
        (a,) = k.operands(m)
        src = k.shapes.get(a, "x[]")
        dims = shape_dims(src)
        if len(dims) != 1 or dims[0] < 2:
            continue
        n, nm, t = dims[0], m.group("name"), shape_type(src)
        new = [line(m, nm + ".o1", "%s[%d]" % (t, n - 1), "slice", [a],
                    ", slice={[1:%d]}" % n),
               line(m, nm + ".o2", "%s[1]" % t, "slice", [a],
                    ", slice={[0:1]}"),
               line(m, nm + ".or", "%s[%d]" % (t, n), "concatenate",
                    [nm + ".o1", nm + ".o2"], ", dimensions={0}"),
               line(m, nm, m.group("shape"), "broadcast", [nm + ".or"],
                    m.group("rest"), root=bool(m.group("root")))]
        yield "off-by-one " + nm, k.replace(i, new)


def mut_transpose(k):
    """A rank-2 elementwise operand read through transposed indices."""
    for i, m in k.instrs():
        op, shape = m.group("op"), m.group("shape")
        if op not in BINARY_FLOAT:
            continue
        a = k.operands(m)[0]
        dims = shape_dims(k.shapes.get(a, "x[]"))
        if len(dims) != 2 or dims[0] < 2 or dims[1] < 2:
            continue
        r, c = dims
        t, nm = shape_type(k.shapes[a]), m.group("name")
        new = [line(m, nm + ".t1", "%s[%d,%d]" % (t, c, r), "reshape", [a]),
               line(m, nm + ".t2", "%s[%d,%d]" % (t, r, c), "transpose",
                    [nm + ".t1"], ", dimensions={1,0}"),
               line(m, nm, shape, op, [nm + ".t2"] + k.operands(m)[1:],
                    m.group("rest"), root=bool(m.group("root")))]
        yield "transpose " + nm, k.replace(i, new)


def mut_init(k):
    """A reduction's init value changed (0 -> 1, -inf -> 0)."""
    for i, m in k.instrs():
        if m.group("op") != "reduce":
            continue
        args = k.operands(m)
        init = args[len(args) // 2]
        for j, ln in enumerate(k.lines):
            c = INSTR.match(ln)
            if not c or c.group("name") != init or c.group("op") != "constant":
                continue
            val = c.group("args").strip()
            newval = {"0": "1", "-inf": "0"}.get(val)
            if newval is None:
                continue
            new = [line(c, init, c.group("shape"), "constant", [newval],
                        c.group("rest"), root=bool(c.group("root")))]
            yield "init %s of %s" % (init, m.group("name")), k.replace(j, new)


def mut_drop_clamp(k):
    """The clamp before an fp8 convert dropped: overflow where it was not."""
    for i, m in k.instrs():
        if m.group("op") != "clamp":
            continue
        args = k.operands(m)
        new = [line(m, m.group("name"), m.group("shape"), "reshape",
                    [args[1]], root=bool(m.group("root")))]
        yield "drop-clamp " + m.group("name"), k.replace(i, new)


HLO_MUTATIONS = (mut_narrow, mut_truncate, mut_drop, mut_swap,
                 mut_off_by_one, mut_transpose, mut_init, mut_drop_clamp)
# At most this many instructions per mutation kind and case.
PER_KIND = 2


# ----------------------------------------------------- device mutations

def float_fields(dtype):
    """(bits, mantissa bits) of an output type; None for integers."""
    return {"f32": (32, 23), "bf16": (16, 7), "f16": (16, 10),
            "f8e4m3fn": (8, 3), "f8e5m2": (8, 2), "f64": (64, 52)}.get(dtype)


def device_mutations(bits, dtype, other):
    """(label, new bits) for one output's encodings."""
    n = len(bits)
    f = float_fields(dtype)
    k = (n * 7) // 13
    if f:
        width, man = f
        # A flip of the sign of a zero changes no value: a nonzero element.
        mag = bits & np.array((1 << (width - 1)) - 1).astype(bits.dtype)
        nz = np.nonzero(mag)[0]
        if nz.size:
            k = int(nz[np.searchsorted(nz, k) % nz.size])
        for label, bit in (("flip-sign", width - 1), ("flip-exp", man),
                           ("flip-man-top", man - 1), ("flip-man-low", 0)):
            b = bits.copy()
            b[k] ^= np.array(1 << bit).astype(b.dtype)
            yield "%s [%d]" % (label, k), b
    span = max(1, n // 8)
    b = bits.copy()
    b[n - span:] = 0
    yield "zero-region [%d:%d]" % (n - span, n), b
    if other is not None and len(other) == n:
        b = bits.copy()
        b[:span] = other[:span]
        yield "stale-region [0:%d]" % span, b


# ------------------------------------------------------------- the check

def decoded(bits, like, dtype):
    """Encodings of dtype as doubles (the formats the cases have)."""
    if dtype in ("f32", "f64", "f16"):
        return bits.view({"f32": np.float32, "f64": np.float64,
                          "f16": np.float16}[dtype]).astype(np.float64)
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32).astype(
            np.float64)
    p, emin = FORMATS.get(dtype, (4, -6))
    e_bits = {"f8e4m3fn": 4, "f8e5m2": 5}.get(dtype, 4)
    m_bits = p - 1
    b = bits.astype(np.int64)
    sign = np.where(b >> (e_bits + m_bits) & 1, -1.0, 1.0)
    e = (b >> m_bits) & ((1 << e_bits) - 1)
    m = b & ((1 << m_bits) - 1)
    bias = 1 - emin
    v = np.where(e == 0, np.ldexp(m.astype(np.float64), emin - m_bits),
                 np.ldexp((m | (1 << m_bits)).astype(np.float64),
                          (e - bias - m_bits).astype(np.int64)))
    v = sign * v
    if dtype == "f8e4m3fn":
        v = np.where((b & 0x7F) == 0x7F, np.nan, v)
    elif dtype == "f8e5m2":
        v = np.where(e == 31, np.where(m == 0, sign * np.inf, np.nan), v)
    return v


class Tally:
    def __init__(self):
        self.cases = self.no_effect = self.caught = 0
        self.inside = self.inside_caught = 0
        self.neutral = 0
        self.low_cases = self.low_caught = 0
        self.changed = self.flagged = 0
        self.failures = []

    def fail(self, msg):
        self.failures.append(msg)
        print("FAIL " + msg)


FLAGGED = {"defect", "nan-mismatch", "inf-mismatch", "sign-mismatch"}


# Precision and least normal exponent of the output types the cases have.
FORMATS = {"f32": (24, -126), "bf16": (8, -126), "f16": (11, -14),
           "f64": (53, -1022), "f8e4m3fn": (4, -6), "f8e5m2": (3, -14)}


def exact_values(kernel_path, inputs, devices, tmp, profile=None):
    """The oracle's midpoints of every output element (the exact values),
    and with a profile the envelope's bounds [(lo, hi) per output]."""
    out = os.path.join(tmp, "x.h5")
    if os.path.exists(out):
        os.unlink(out)
    prof = ["--profile", profile] if profile else ["--no-profile"]
    run([CLI, "check", kernel_path, "--worst", "0", "--out", out] + prof +
        ["--input"] + inputs + ["--device"] + devices)
    with h5py.File(out, "r") as f:
        g = f["kernels"][list(f["kernels"].keys())[0]]["outputs"]
        mids = [np.asarray(g[str(i)]["oracle_mid"][()],
                           dtype=np.float64).reshape(-1)
                for i in range(len(devices))]
        if not profile:
            return mids
        envs = [(np.asarray(g[str(i)]["envelope_lo"][()]).reshape(-1),
                 np.asarray(g[str(i)]["envelope_hi"][()]).reshape(-1))
                for i in range(len(devices))]
        return mids, envs


def ulp_of(x, dtype):
    """The ulp of dtype at the reals x (the subnormal spacing below)."""
    p, emin = FORMATS.get(dtype, (24, -126))
    mag = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.where(mag > 0, mag, 1.0)))
    e = np.maximum(np.nan_to_num(e, nan=emin, posinf=emin), emin)
    return np.ldexp(1.0, (e - (p - 1)).astype(np.int64))


def beyond_freedom(a, b, env, dtype):
    """Whether values a and b differ somewhere by more than the width of
    the envelope there plus one ulp of the type: then at most one of them
    can be legitimate."""
    lo, hi = env
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return True
    ok = ~(np.isnan(a) | np.isnan(b) | np.isnan(lo) | np.isnan(hi))
    a, b, lo, hi = a[ok], b[ok], lo[ok], hi[ok]
    fin = np.isfinite(a) & np.isfinite(b)
    if not np.array_equal(a[~fin], b[~fin]):
        return True
    a, b, lo, hi = a[fin], b[fin], lo[fin], hi[fin]
    slack = ulp_of(np.maximum(np.abs(a), np.abs(b)), dtype)
    with np.errstate(invalid="ignore"):
        return bool(np.any(np.abs(a - b) > (hi - lo) + slack))


def within_one_ulp(a, b, dtype):
    """Whether exact values a and b differ by at most one ulp of dtype."""
    p, emin = FORMATS.get(dtype, (24, -126))
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    ok = ~np.isnan(a)
    a, b = a[ok], b[ok]
    inf = np.isinf(a) | np.isinf(b)
    if not np.array_equal(a[inf], b[inf]):
        return False
    a, b = a[~inf], b[~inf]
    mag = np.maximum(np.abs(a), np.abs(b))
    e = np.maximum(np.floor(np.log2(np.where(mag > 0, mag, 1.0))), emin)
    ulp = np.ldexp(1.0, (e - (p - 1)).astype(np.int64))
    return bool(np.all(np.abs(a - b) <= ulp))


def check(case, kernel_path, inputs, devices, profile, tmp):
    """Runs ulpscope check; returns (exit status, verdict, classes per out)."""
    out = os.path.join(tmp, "r.h5")
    if os.path.exists(out):
        os.unlink(out)
    args = [CLI, "check", kernel_path, "--profile", profile, "--json",
            "--out", out, "--input"] + inputs + ["--device"] + devices
    p = run(args)
    rep = json.loads(p.stdout)
    classes = []
    with h5py.File(out, "r") as f:
        g = f["kernels"][list(f["kernels"].keys())[0]]
        for i in range(len(devices)):
            classes.append(g["outputs"][str(i)]["class"][()].reshape(-1))
        names = h5py.check_enum_dtype(
            g["outputs"]["0"]["class"].dtype)
    inv = {v: k for k, v in names.items()}
    classes = [np.vectorize(inv.get)(c) if c.size else c for c in classes]
    return p.returncode, rep["verdict"], classes


def judge(t, label, changed, classes, verdict, rc, low_bit=False,
          beyond=True, exempt=None):
    """Verdict defect, no untouched element flagged.

    An injection whose effect stays within the width of the target's
    legitimate envelope everywhere (beyond false: a mutant 7 ulps off
    where the profile's exp alone may be 6.5 ulps off) is a value that a
    correct compiler may produce; no sound method can call it a defect.
    Such injections, and flips of the lowest significand bit (one ulp),
    are counted apart: they do not fail the run when the verdict is not
    defect (the untouched-element rule holds for them too).
    """
    ok = verdict == "defect" and rc == 4
    if low_bit:
        t.low_cases += 1
        t.low_caught += ok
    elif not beyond:
        t.inside += 1
        t.inside_caught += ok
        if VERBOSE:
            print("%-60s %s (within the legitimate freedom)" %
                  (label, verdict))
    else:
        t.cases += 1
        if ok:
            t.caught += 1
        else:
            t.fail("%s: verdict %s (exit %d), %d elements changed" %
                   (label, verdict, rc,
                    sum(int(c.sum()) for c in changed)))
    for j, (ch, cl) in enumerate(zip(changed, classes)):
        flagged = np.isin(cl, list(FLAGGED))
        untouched = ~ch
        if exempt is not None:
            untouched &= ~exempt[j]
        bad = np.nonzero(flagged & untouched)[0]
        if bad.size:
            t.fail("%s: untouched elements flagged: %s (classes %s)" %
                   (label, bad[:8].tolist(), cl[bad[:8]].tolist()))
        t.changed += int(ch.sum())
        t.flagged += int((flagged & ch).sum())
    if VERBOSE:
        print("%-60s %s" % (label, verdict))


def case_dirs():
    only = [s for s in os.environ.get("USC_INJECT_CASES", "").split(",") if s]
    for kern in sorted(os.listdir(EXAMPLES)):
        kd = os.path.join(EXAMPLES, kern)
        if not os.path.isdir(kd):
            continue
        for c in sorted(os.listdir(kd)):
            d = os.path.join(kd, c)
            if os.path.isdir(d) and (not only or
                                     any(s in d for s in only)):
                yield d


def files(d, prefix):
    out, i = [], 0
    while os.path.exists(os.path.join(d, "%s_%d.npy" % (prefix, i))):
        out.append(os.path.join(d, "%s_%d.npy" % (prefix, i)))
        i += 1
    return out


def run_case(d, t, tmp):
    kpath = os.path.join(d, "kernel.hlo")
    inputs, devices = files(d, "input"), files(d, "device")
    with open(kpath) as fh:
        text = fh.read()
    ref_prefix = os.path.join(tmp, "ref")
    run([CLI, "eval", kpath, "-o", ref_prefix] +
        sum((["--input", x] for x in inputs), []))
    refs = [bits_of("%s_%d.npy" % (ref_prefix, i))
            for i in range(len(devices))]
    dtypes = [json.loads(run([CLI, "check", d, "--json", "--worst", "0",
                              "--no-profile"]).stdout)["outputs"][i]["dtype"]
              for i in range(len(devices))]
    orig_exact, envs = exact_values(kpath, inputs, devices, tmp, "xla-cpu")
    # Where the strict reference itself is not what the target produces
    # (XLA:CPU always flushes subnormals), an element the mutation left
    # equal to the reference is flagged rightly: not a false positive.
    _, _, ref_classes = check(d, kpath, inputs,
                              ["%s_%d.npy" % (ref_prefix, i)
                               for i in range(len(devices))], "xla-cpu", tmp)
    ref_flagged = [np.isin(c, list(FLAGGED)) for c in ref_classes]
    k = Kernel(text)
    for mut in HLO_MUTATIONS:
        for n, (label, mtext) in enumerate(mut(k)):
            if n >= PER_KIND:
                break
            label = "%s: %s" % (os.path.relpath(d, EXAMPLES), label)
            mpath = os.path.join(tmp, "mutant.hlo")
            with open(mpath, "w") as fh:
                fh.write(mtext)
            prefix = os.path.join(tmp, "dev")
            p = run([CLI, "eval", mpath, "-o", prefix] +
                    sum((["--input", x] for x in inputs), []), check=False)
            if p.returncode != 0:
                t.fail("%s: the mutant does not evaluate: %s" %
                       (label, p.stderr.strip()))
                continue
            devs = ["%s_%d.npy" % (prefix, i) for i in range(len(devices))]
            changed = [bits_of(x)[0] != r[0] for x, r in zip(devs, refs)]
            if not any(c.any() for c in changed):
                t.no_effect += 1
                continue
            mut_exact = exact_values(mpath, inputs, devs, tmp)
            if all(within_one_ulp(a, b, dt) for a, b, dt in
                   zip(orig_exact, mut_exact, dtypes)):
                # The mutant denotes the same function to within one ulp
                # of the output everywhere (softmax's shift invariance,
                # say): no value can tell them apart beyond rounding.
                t.neutral += 1
                if VERBOSE:
                    print("%-60s neutral" % label)
                continue
            rc, verdict, classes = check(d, kpath, inputs, devs, "xla-cpu",
                                         tmp)
            judge(t, label, changed, classes, verdict, rc,
                  exempt=ref_flagged, beyond=any(beyond_freedom(a, b, e, dt) for a, b, e, dt in
                             zip(orig_exact, mut_exact, envs, dtypes)))
    # Into the captured device output.
    other_case = [c for c in os.listdir(os.path.dirname(d))
                  if os.path.join(os.path.dirname(d), c) != d]
    for i, dev in enumerate(devices):
        bits, like = bits_of(dev)
        other = None
        if other_case:
            od = os.path.join(os.path.dirname(d), other_case[0],
                              "device_%d.npy" % i)
            if os.path.exists(od):
                other = bits_of(od)[0]
        for label, nb in device_mutations(bits, dtypes[i], other):
            changed = [np.zeros(len(bits_of(x)[0]), bool) for x in devices]
            changed[i] = nb != bits
            if not changed[i].any():
                t.no_effect += 1
                continue
            path = os.path.join(tmp, "devmut_%d.npy" % i)
            save_bits(path, nb, like)
            devs = list(devices)
            devs[i] = path
            rc, verdict, classes = check(d, kpath, inputs, devs, "xla-cpu",
                                         tmp)
            old_v = decoded(bits, like, dtypes[i])
            new_v = decoded(nb, like, dtypes[i])
            judge(t, "%s: output %d %s" % (os.path.relpath(d, EXAMPLES), i,
                                          label), changed, classes, verdict,
                  rc, low_bit=label.startswith("flip-man-low"),
                  beyond=beyond_freedom(old_v, new_v, envs[i], dtypes[i]))


def fp8_overflow_policy(t, tmp):
    """Saturating vs NaN-producing fp8 converts under both policies."""
    d = os.path.join(EXAMPLES, "fp8_quantize_f32", "normal_s0")
    if not os.path.isdir(d):
        return
    with open(os.path.join(d, "kernel.hlo")) as fh:
        k = Kernel(fh.read())
    # The kernel as it would be without its clamp: the convert overflows.
    label, bare = next(mut_drop_clamp(k))
    bare_path = os.path.join(tmp, "bare.hlo")
    with open(bare_path, "w") as fh:
        fh.write(bare)
    x = os.path.join(d, "input_0.npy")
    # A stale scale, 8 times too small: the largest values overflow 448.
    scale = np.load(os.path.join(d, "input_1.npy")) / np.float32(8)
    spath = os.path.join(tmp, "scale.npy")
    np.save(spath, scale)
    inputs = [x, spath]
    sat, nan = os.path.join(tmp, "sat"), os.path.join(tmp, "nan")
    run([CLI, "eval", os.path.join(d, "kernel.hlo"), "-o", sat,
         "--input", x, "--input", spath])
    run([CLI, "eval", bare_path, "-o", nan, "--input", x, "--input", spath])
    sb, nb = bits_of(sat + "_0.npy")[0], bits_of(nan + "_0.npy")[0]
    changed = [sb != nb]
    if not changed[0].any():
        t.fail("fp8 overflow: the stale scale overflows nothing")
        return
    profiles = {}
    for pol in ("nonsaturating", "saturating"):
        path = os.path.join(tmp, "fp8_%s.profile" % pol)
        with open(path, "w") as fh:
            fh.write("base = xla-cpu\nname = xla-cpu-fp8-%s\n"
                     "fp8_overflow = %s\n" % (pol, pol))
        profiles[pol] = path
    for pol, dev, bad in (("nonsaturating", sat, True),
                          ("saturating", sat, False),
                          ("saturating", nan, True),
                          ("nonsaturating", nan, False)):
        rc, verdict, classes = check(d, bare_path, inputs, [dev + "_0.npy"],
                                     profiles[pol], tmp)
        label = "fp8 overflow: %s device under %s" % (
            "saturating" if dev == sat else "NaN", pol)
        if bad:
            judge(t, label, changed, classes, verdict, rc)
        elif verdict == "defect":
            t.fail("%s: legitimate, but verdict %s" % (label, verdict))
        elif VERBOSE:
            print("%-60s %s" % (label, verdict))


def nan_dropping_max(t, tmp):
    """A clamp (max then min) that drops NaN, under both NaN policies.

    The quantize kernel's clamp(-448, x, 448) with NaNs among its inputs:
    HLO's maximum and minimum propagate NaN, so the reference gives NaN
    there; the mutant reads a NaN as the lower bound.  Under a profile
    whose max/min propagate NaN the mutant is a defect at exactly those
    elements; under xla-cpu (minmax_nan = either: fast min/max) it is
    legitimate; and the reference's NaN is a defect under "drop".
    """
    d = os.path.join(EXAMPLES, "fp8_quantize_f32", "normal_s0")
    if not os.path.isdir(d):
        return
    kpath = os.path.join(d, "kernel.hlo")
    with open(kpath) as fh:
        k = Kernel(fh.read())
    mutant = None
    for i, m in k.instrs():
        if m.group("op") != "clamp":
            continue
        lo, x, hi = k.operands(m)
        nm, shape = m.group("name"), m.group("shape")
        pshape = "pred" + shape[len(shape_type(shape)):]
        new = [line(m, nm + ".ne", pshape, "compare", [x, x],
                    ", direction=NE"),
               line(m, nm + ".c", shape, "clamp", [lo, x, hi]),
               line(m, nm, shape, "select", [nm + ".ne", lo, nm + ".c"],
                    root=bool(m.group("root")))]
        mutant = k.replace(i, new)
        break
    if mutant is None:
        t.fail("nan-dropping max: no clamp in the quantize kernel")
        return
    mpath = os.path.join(tmp, "nanmax.hlo")
    with open(mpath, "w") as fh:
        fh.write(mutant)
    x = np.load(os.path.join(d, "input_0.npy")).copy()
    x[::37] = np.nan
    xpath = os.path.join(tmp, "x_nan.npy")
    np.save(xpath, x)
    inputs = [xpath, os.path.join(d, "input_1.npy")]
    ref, mut = os.path.join(tmp, "nref"), os.path.join(tmp, "nmut")
    ins = sum((["--input", p] for p in inputs), [])
    run([CLI, "eval", kpath, "-o", ref] + ins)
    run([CLI, "eval", mpath, "-o", mut] + ins)
    rb, mb = bits_of(ref + "_0.npy")[0], bits_of(mut + "_0.npy")[0]
    changed = [rb != mb]
    if not changed[0].any():
        t.fail("nan-dropping max: the mutant changes nothing")
        return
    prof = {}
    for pol in ("propagate", "drop"):
        path = os.path.join(tmp, "minmax_%s.profile" % pol)
        with open(path, "w") as fh:
            fh.write("base = xla-cpu\nname = xla-cpu-%s\n"
                     "minmax_nan = %s\n" % (pol, pol))
        prof[pol] = path
    for pol, dev, bad in ((prof["propagate"], mut, True),
                          ("xla-cpu", mut, False),
                          (prof["drop"], ref, True),
                          ("xla-cpu", ref, False)):
        rc, verdict, classes = check(d, kpath, inputs, [dev + "_0.npy"], pol,
                                     tmp)
        label = "nan-dropping max: %s device under %s" % (
            "NaN-dropping" if dev == mut else "NaN-propagating",
            os.path.basename(pol))
        if bad:
            judge(t, label, changed, classes, verdict, rc)
        elif verdict == "defect":
            t.fail("%s: legitimate, but verdict %s" % (label, verdict))
        elif VERBOSE:
            print("%-60s %s" % (label, verdict))


def main():
    t = Tally()
    tmp = tempfile.mkdtemp(prefix="usc_inject_")
    try:
        for d in case_dirs():
            run_case(d, t, tmp)
        fp8_overflow_policy(t, tmp)
        nan_dropping_max(t, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rate = t.caught / t.cases if t.cases else 0
    everything = t.cases + t.inside + t.low_cases
    caught_all = t.caught + t.inside_caught + t.low_caught
    print("injected %d defects beyond the legitimate freedom: verdict "
          "defect in %d (%.1f%%)" % (t.cases, t.caught, 100 * rate))
    print("  also injected: %d within the freedom (%d caught), %d "
          "lowest-bit flips (%d caught); all together %d of %d (%.1f%%)" %
          (t.inside, t.inside_caught, t.low_cases, t.low_caught, caught_all,
           everything, 100.0 * caught_all / max(everything, 1)))
    print("  skipped: %d mutations without effect, %d that leave the "
          "function within one ulp; %d of %d changed elements flagged" %
          (t.no_effect, t.neutral, t.flagged, t.changed))
    if t.cases == 0:
        print("FAIL no case injected")
        return 1
    # Every failure is listed above; the 99% rule is the bar, the
    # untouched-element rule has no tolerance.
    untouched = [f for f in t.failures if "untouched" in f or
                 "does not evaluate" in f or "legitimate, but" in f]
    if untouched or rate < 0.99:
        return 1
    # A guard on the envelope's tightness: were it to widen, injections
    # would drift from "beyond the freedom" into "within" unnoticed.
    if caught_all < 0.9 * everything:
        print("FAIL fewer than 90% of all injections caught")
        return 1
    return 0


def write_mutant(argv):
    """--mutant KERNEL.hlo KIND INSTRUCTION OUT.hlo: one mutant, for docs."""
    kinds = {f.__name__[4:].replace("_", "-"): f for f in HLO_MUTATIONS}
    if len(argv) != 4 or argv[1] not in kinds:
        print("usage: inject_defects.py --mutant KERNEL.hlo KIND INSTRUCTION "
              "OUT.hlo\nKIND: " + " ".join(sorted(kinds)), file=sys.stderr)
        return 2
    with open(argv[0]) as fh:
        k = Kernel(fh.read())
    for label, text in kinds[argv[1]](k):
        if label.split()[-1] in (argv[2], "%" + argv[2]):
            with open(argv[3], "w") as fh:
                fh.write(text)
            print(label)
            return 0
    print("%s does not apply to %s" % (argv[1], argv[2]), file=sys.stderr)
    return 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--mutant":
        sys.exit(write_mutant(sys.argv[2:]))
    sys.exit(main())
