#!/usr/bin/env python3
"""Long chains and deep nesting through every subcommand that reads HLO.

usage: deep_chain.py ULPSCOPE SCENARIO

Each scenario writes its kernels into a temporary directory (nothing big is
committed), runs the command line on them and checks the exit status and the
output. The chains are a million ops long (USC_DEEP_OPS changes that; it must
be even): a walk that recursed once per op overflowed the stack at about
700,000 ops, 50,000 under ASan.

Every chain computes the identity on x = [1.5, -2.25], so the expected values
need no evaluator: an even number of negates, of f32 -> f64 -> f32 converts,
of alternate x + p and x - p steps (x -> 2x -> x, exact in f32), of
tuple/get-tuple-element pairs. A device output equal to x is right to the
bit; x with the last bit of its first element flipped is one ulp off.

Scenarios: hlo, extract, eval, check, check_profile, check_attribute,
explain, signature, bisect, fusions (a fifth as many fusions, each calling
a computation of its own), nesting, shape_nesting.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

OPS = int(os.environ.get("USC_DEEP_OPS", "1000000"))
if OPS < 4 or OPS % 2:
    sys.exit("USC_DEEP_OPS must be even and at least 4")

X = (1.5, -2.25)
X_BYTES = struct.pack("<2f", *X)
# 0x3fc00000 is 1.5; 0x3fc00001 the next f32 up.
OFF_BYTES = struct.pack("<2I", 0x3FC00001, struct.unpack("<I", struct.pack("<f", X[1]))[0])

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


# ------------------------------------------------------------- kernels


def chain(kind, n, fused=False, reverse=False, tail=None):
    """The text of a chain of n ops of the given kind from parameter c0.

    With fused, the chain is the body of fusion f in the entry; with
    reverse, its lines are written root first (operands may be defined
    after their use in HLO); tail, if given, is one more line computing
    the root from the chain's last value (named last).
    """
    lines = ["  c0 = f32[2] parameter(0)"]
    prev = "c0"
    for i in range(1, n + 1):
        if kind == "negate":
            lines.append("  c%d = f32[2] negate(%s)" % (i, prev))
        elif kind == "convert":
            t = "f64" if i % 2 else "f32"
            lines.append("  c%d = %s[2] convert(%s)" % (i, t, prev))
        elif kind == "addsub":
            op = "add" if i % 2 else "subtract"
            lines.append("  c%d = f32[2] %s(%s, c0)" % (i, op, prev))
        elif kind == "tuple":
            # Two ops per step: n ops are n / 2 steps.
            if i % 2:
                lines.append("  c%d = (f32[2]) tuple(%s)" % (i, prev))
            else:
                lines.append(
                    "  c%d = f32[2] get-tuple-element(%s), index=0" % (i, prev))
        prev = "c%d" % i
    if tail:
        lines.append(tail.replace("last", prev))
    lines[-1] = "  ROOT " + lines[-1][2:]
    if reverse:
        lines.reverse()
    if fused:
        return ("HloModule chain\n\nbody {\n" + "\n".join(lines) + "\n}\n\n"
                "ENTRY main {\n  x = f32[2] parameter(0)\n"
                "  ROOT f = f32[2] fusion(x), kind=kLoop, calls=body\n}\n")
    return "HloModule chain\n\nENTRY main {\n" + "\n".join(lines) + "\n}\n"


def nested(depth):
    """Fusions nested depth deep below the entry, the innermost a negate."""
    out = ["HloModule nest", ""]
    out += ["n%d {" % depth, "  p = f32[2] parameter(0)",
            "  ROOT r = f32[2] negate(p)", "}", ""]
    for i in range(depth - 1, 0, -1):
        out += ["n%d {" % i, "  p = f32[2] parameter(0)",
                "  ROOT r = f32[2] fusion(p), kind=kLoop, calls=n%d" % (i + 1),
                "}", ""]
    out += ["ENTRY main {", "  x = f32[2] parameter(0)",
            "  ROOT f = f32[2] fusion(x), kind=kLoop, calls=n1", "}", ""]
    return "\n".join(out)


def fusions(n):
    """A chain of n fusions in the entry, each calling a negate of its own:
    n computations (the shape of an unfused XLA module)."""
    out = ["HloModule fusions", ""]
    for i in range(1, n + 1):
        out += ["b%d {" % i, "  p = f32[2] parameter(0)",
                "  ROOT r = f32[2] negate(p)", "}", ""]
    out += ["ENTRY main {", "  c0 = f32[2] parameter(0)"]
    for i in range(1, n + 1):
        out.append("  c%d = f32[2] fusion(c%d), kind=kLoop, calls=b%d"
                   % (i, i - 1, i))
    out[-1] = "  ROOT " + out[-1][2:]
    out += ["}", ""]
    return "\n".join(out)


def reductions(n):
    """n reduce/broadcast pairs: the explain tree's costliest levels."""
    out = ["HloModule reductions", "", "mx {", "  a = f32[] parameter(0)",
           "  b = f32[] parameter(1)", "  ROOT m = f32[] maximum(a, b)", "}",
           "", "ENTRY main {", "  c0 = f32[2] parameter(0)",
           "  z = f32[] constant(-inf)"]
    for i in range(1, n + 1):
        out.append("  r%d = f32[] reduce(c%d, z), dimensions={0}, to_apply=mx"
                   % (i, i - 1))
        out.append("  c%d = f32[2] broadcast(r%d), dimensions={}" % (i, i))
    out[-1] = "  ROOT " + out[-1][2:]
    out += ["}", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- runs


class Run:
    def __init__(self, cli, tmp):
        self.cli = cli
        self.tmp = tmp

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, data):
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(self.path(name), mode) as f:
            f.write(data)
        return self.path(name)

    def __call__(self, args, want_rc, *wants):
        """Runs the CLI; checks the exit status and that every string of
        wants is in its output (stdout and stderr together)."""
        p = subprocess.run([self.cli] + args, cwd=self.tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = p.stdout.decode("utf-8", "replace")
        what = "ulpscope " + " ".join(args)
        if p.returncode != want_rc:
            fail("%s: exit status %d, expected %d\n%s"
                 % (what, p.returncode, want_rc, out[-2000:]))
            return out
        for w in wants:
            if w not in out:
                fail("%s: output lacks %r\n%s" % (what, w, out[-2000:]))
        return out

    def inputs(self):
        self.write("in.bin", X_BYTES)
        self.write("same.bin", X_BYTES)
        self.write("off.bin", OFF_BYTES)
        return ["--input", "in.bin", "--input-raw"]


def judged(r, k, device, extra=()):
    return r(["check", k, "--device", device] + r.inputs() + list(extra),
             0, "bit-identical to the reference: 2 of 2")


def scenario_hlo(r):
    r.write("neg.hlo", chain("negate", OPS, fused=True))
    r.write("rev.hlo", chain("negate", OPS, fused=True, reverse=True))
    for k in ("neg.hlo", "rev.hlo"):
        r(["hlo", k], 0,
          "module chain: 2 computations, %d instructions, 1 fusion"
          % (OPS + 3), "ops: %d (negate %d)" % (OPS, OPS))
        r(["hlo", k, "--verify"], 0, "verified")
    for kind in ("convert", "addsub", "tuple"):
        r(["hlo", r.write(kind + ".hlo", chain(kind, OPS)), "--verify"], 0,
          "verified")


def scenario_extract(r):
    r.write("neg.hlo", chain("negate", OPS, fused=True))
    r(["extract", "neg.hlo", "--fusion", "f", "-o", "one.hlo"], 0)
    with open(r.path("one.hlo")) as f:
        n = sum(1 for line in f if " negate(" in line)
    if n != OPS:
        fail("extract wrote %d negates, expected %d" % (n, OPS))
    r(["hlo", "one.hlo", "--verify"], 0, "verified")


def scenario_eval(r):
    kernels = {
        "neg.hlo": chain("negate", OPS, fused=True),
        "rev.hlo": chain("negate", OPS, fused=True, reverse=True),
        "convert.hlo": chain("convert", OPS),
        "addsub.hlo": chain("addsub", OPS),
        "tuple.hlo": chain("tuple", OPS),
    }
    for k, text in kernels.items():
        r.write(k, text)
        r(["eval", k] + r.inputs() + ["-o", "out"], 0,
          "output 0: f32[2]\n  1.5 -2.25")
        with open(r.path("out_0.npy"), "rb") as f:
            data = f.read()
        if data[-8:] != X_BYTES:
            fail("eval %s: out_0.npy ends in %s, expected %s"
                 % (k, data[-8:].hex(), X_BYTES.hex()))


def scenario_check(r):
    r.write("neg.hlo", chain("negate", OPS, fused=True))
    r.write("rev.hlo", chain("negate", OPS, fused=True, reverse=True))
    r.write("convert.hlo", chain("convert", OPS))
    r.write("tuple.hlo", chain("tuple", OPS))
    for k in ("neg.hlo", "rev.hlo", "convert.hlo", "tuple.hlo"):
        judged(r, k, "same.bin")


def scenario_check_profile(r):
    r.write("neg.hlo", chain("negate", OPS, fused=True))
    r.write("addsub.hlo", chain("addsub", OPS))
    prof = ["--profile", "xla-cpu"]
    for k in ("neg.hlo", "addsub.hlo"):
        r(["check", k, "--device", "same.bin"] + r.inputs() + prof, 0,
          "verdict under profile xla-cpu: legit")
    # One ulp off an exact result is outside its (exact) envelope.
    r(["check", "neg.hlo", "--device", "off.bin"] + r.inputs() + prof, 4,
      "verdict under profile xla-cpu: defect")


def scenario_check_attribute(r):
    # A million exact negates, then one op that rounds: x * 0.5.
    r.write("half.hlo", chain(
        "negate", OPS, fused=True,
        tail="  h = f32[2] multiply(last, half)\n"
             "  half = f32[2] constant({0.5, 0.5})"))
    r.write("half.bin", struct.pack("<2f", X[0] / 2, X[1] / 2))
    r(["check", "half.hlo", "--device", "half.bin", "--attribute"]
      + r.inputs(), 0, "bit-identical to the reference: 2 of 2",
      "attribution: 1 ops that round")
    # A million ops that round: more oracle runs than the cap allows.
    r.write("addsub.hlo", chain("addsub", OPS))
    r(["check", "addsub.hlo", "--device", "same.bin", "--attribute"]
      + r.inputs(), 1, "has %d ops that round, more than the cap of 64" % OPS)


def scenario_explain(r):
    sys.setrecursionlimit(20000)
    r.write("neg.hlo", chain("negate", OPS, fused=True))
    r.write("convert.hlo", chain("convert", OPS))
    base = ["--device", "same.bin", "--element", "0"]
    r(["explain", "neg.hlo"] + base + r.inputs(), 0, "class      exact",
      "... (depth limit)")
    # Node k of the tree (the fusion is node 0) is c[OPS + 1 - k]; at
    # --depth D the last is c[OPS + 2 - D].
    out = r(["explain", "neg.hlo", "--depth", "1000"] + base + r.inputs(), 0,
            "  c%d  negate" % (OPS - 998), "... (depth limit)")
    if "  c%d  negate" % (OPS - 999) in out:
        fail("explain --depth 1000 went deeper than 1000 levels")
    out = r(["explain", "neg.hlo", "--depth", "1000", "--json"] + base
            + r.inputs(), 0)
    try:
        node, depth = json.loads(out)["tree"], 1
        while node["children"]:
            node, depth = node["children"][0], depth + 1
        if depth != 1000 or node["name"] != "c%d" % (OPS - 998):
            fail("explain --json: the tree is %d deep, ending at %s"
                 % (depth, node["name"]))
    except (ValueError, KeyError, TypeError) as e:
        fail("explain --json: %s" % e)
    r(["explain", "convert.hlo"] + base + r.inputs(), 0, "class      exact")
    # A thousand levels of reductions, the walk's biggest frames.
    # Its output is max(x) twice.
    r.write("red.hlo", reductions(1000))
    r.write("max.bin", struct.pack("<2f", max(X), max(X)))
    red = ["explain", "red.hlo", "--device", "max.bin", "--element", "0"]
    r(red + ["--depth", "1000"] + r.inputs(), 0, "class      exact")
    r(red + ["--depth", "1001"] + r.inputs(), 2)


def scenario_signature(r):
    r.write("neg.hlo", chain("negate", OPS, fused=True))
    r(["signature", "neg.hlo", "--device", "same.bin"] + r.inputs(), 0,
      "no defect to explain")
    # The search enumerates about ten mutants per op, and each one it
    # evaluates costs a parse and a run of the whole kernel: searched on a
    # chain a tenth as long, with one mutant evaluated.
    n = OPS // 10 if OPS // 10 % 2 == 0 else OPS // 10 + 1
    r.write("short.hlo", chain("negate", n, fused=True))
    r(["signature", "short.hlo", "--device", "off.bin", "--max-candidates",
       "1"] + r.inputs(), 3, "1 evaluated",
      "no single-op mutation explains the output")


def scenario_bisect(r):
    r.write("neg.hlo", chain("negate", OPS, fused=True))
    mid = OPS // 2 if OPS // 2 % 2 == 0 else OPS // 2 + 1
    r(["bisect", "neg.hlo", "--device", "same.bin", "--intermediate",
       "c%d=in.bin" % mid] + r.inputs(), 0,
      "every captured tensor (2) inside its strict envelope")
    # c[mid + 1] is -x: captured as x, it is outside.
    r(["bisect", "neg.hlo", "--device", "same.bin", "--intermediate",
       "c%d=in.bin" % (mid + 1)] + r.inputs(), 4,
      "first op outside its strict envelope: negate c%d" % (mid + 1))


def scenario_nesting(r):
    limit = "computations may nest at most 64 deep"
    r.write("n64.hlo", nested(64))
    r.write("n65.hlo", nested(65))
    r.write("deep.hlo", nested(100000))
    # Nested 64 deep below the entry: one negate in all.
    r(["eval", "n64.hlo", "-o", "out"] + r.inputs(), 0,
      "output 0: f32[2]\n  -1.5 2.25")
    r.write("neg.bin", struct.pack("<2f", -X[0], -X[1]))
    r(["check", "n64.hlo", "--device", "neg.bin", "--profile", "xla-cpu"]
      + r.inputs(), 0, "verdict under profile xla-cpu: legit")
    r(["explain", "n64.hlo", "--device", "neg.bin", "--element", "0",
       "--depth", "1000"] + r.inputs(), 0, "class      exact")
    for k in ("n65.hlo", "deep.hlo"):
        r(["eval", k] + r.inputs(), 1,
          "computation 'n65' is called 65 levels deep; " + limit)
        for cmd in ("check", "explain", "signature", "bisect"):
            args = [cmd, k, "--device", "neg.bin"] + r.inputs()
            if cmd == "explain":
                args += ["--element", "0"]
            r(args, 1, limit)
    # Reading, verifying and cutting out need no such bound.
    r(["hlo", "deep.hlo", "--verify"], 0,
      "module nest: 100001 computations", "verified")
    r(["extract", "deep.hlo", "--fusion", "f", "-o", "one.hlo"], 0)
    r(["hlo", "one.hlo", "--verify"], 0, "100001 computations", "verified")


def scenario_fusions(r):
    # A fifth as many fusions as ops: each brings a computation and three
    # instructions.
    n = OPS // 5 if OPS // 5 % 2 == 0 else OPS // 5 + 1
    r.write("fus.hlo", fusions(n))
    r(["hlo", "fus.hlo", "--verify"], 0,
      "module fusions: %d computations, %d instructions, %d fusions"
      % (n + 1, 3 * n + 1, n), "verified")
    r(["extract", "fus.hlo", "--fusion", "c%d" % n, "-o", "one.hlo"], 0)
    r(["hlo", "one.hlo", "--verify"], 0, "verified")
    r(["eval", "fus.hlo", "-o", "out"] + r.inputs(), 0,
      "output 0: f32[2]\n  1.5 -2.25")
    r(["check", "fus.hlo", "--device", "same.bin", "--attribute",
       "--profile", "xla-cpu"] + r.inputs(), 0,
      "verdict under profile xla-cpu: legit", "attribution: 0 ops that round")
    r(["explain", "fus.hlo", "--device", "same.bin", "--element", "1"]
      + r.inputs(), 0, "class      exact", "... (depth limit)")
    # An even number of negates in: x again.
    r(["bisect", "fus.hlo", "--device", "same.bin", "--intermediate",
       "c%d=in.bin" % (n // 2 - n // 2 % 2)] + r.inputs(), 0,
      "every captured tensor (2) inside its strict envelope")


def scenario_shape_nesting(r):
    def kernel(depth):
        return ("ENTRY e {\n  ROOT p = " + "(" * depth + "f32[]"
                + ")" * depth + " parameter(0)\n}\n")
    r.write("ok.hlo", kernel(200))
    r(["hlo", "ok.hlo", "--verify"], 0, "verified")
    # "  ROOT p = " is 11 columns: the 201st '(' is at column 12 + 200.
    r.write("deep.hlo", kernel(201))
    r(["hlo", "deep.hlo"], 1, "deep.hlo:2:212: error: shape nested too deeply")
    r.write("deeper.hlo", kernel(100000))
    r(["hlo", "deeper.hlo"], 1,
      "deeper.hlo:2:212: error: shape nested too deeply")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    cli, name = sys.argv[1], sys.argv[2]
    fn = globals().get("scenario_" + name)
    if not fn:
        sys.exit("unknown scenario %r" % name)
    with tempfile.TemporaryDirectory(prefix="usc_deep_") as tmp:
        fn(Run(cli, tmp))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
