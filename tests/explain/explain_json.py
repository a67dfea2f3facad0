#!/usr/bin/python3
"""ulpscope explain --json, read back with python3's json module.

Usage: explain_json.py ULPSCOPE SOURCE_DIR example|defect

example: the documented kernel (docs/explain.md, "The example"),
  s = (x + 1) - 1 in bf16 at x = [2^-9, 1], the device output equal to the
  strict reference [0, 1].  Every expected figure is derived by hand here
  (the same derivation as tests/explain/test_explain.c), never read from
  ulpscope:
    bf16 has 8 significant bits: ulp(1) = 2^-7, ulp(2^-9) = 2^-16.
    a = x + 1 at element 0: exact 1 + 2^-9; 2^-9 is a quarter of ulp(1),
      so the reference rounds it down to 1: local = ref err
      = (1 - (1 + 2^-9)) / 2^-7 = -0.25.
    s = a - 1: exact 2^-9 = 0.001953125, a bf16 number (local 0); the
      reference computes 1 - 1 = 0: ref err = -2^-9 / 2^-16 = -128.
    The device (0) is the reference bit for bit: error -128 ulp, 0 from
      the reference, class exact, the strict envelope [0] (at a: [1]).
    Attribution (docs/attribution.md): all of -128 is the add's, the
      subtract contributes 0, the residual is 0.
  The tree in pre-order: s (0), a (1), x (2), ones (3), one (4), and ones
  again as s's second operand (5), a reference to node 3.

defect: the layer norm of data/examples/layer_norm_bf16/normal_s0 with
  mul.2 computed in bf16 (tests/explain/explain_defect.sh does the same in
  text): element [5,53] is classified defect, 227 codes outside the
  xla-cpu envelope, the device value 0x3ab0 (the mutant's strict
  reference, evaluated by `ulpscope eval` of the mutant).  Exit 77 without
  numpy (the mutator needs it).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

KERNEL = """HloModule xp1m1, entry_computation_layout={(bf16[2]{0})->bf16[2]{0}}

ENTRY %main (x: bf16[2]) -> bf16[2] {
  %x = bf16[2]{0} parameter(0)
  %one = bf16[] constant(1)
  %ones = bf16[2]{0} broadcast(%one), dimensions={}
  %a = bf16[2]{0} add(%x, %ones), metadata={op_name="jit(f)/add" source_file="/src/model.py" source_line=3}
  ROOT %s = bf16[2]{0} subtract(%a, %ones), metadata={op_name="jit(f)/sub" source_file="/src/model.py" source_line=4}
}
"""

failures = []


def check(what, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (what, got, want))


def write_bf16_npy(path, codes):
    """A .npy of bf16 codes as ml_dtypes writes it (descr '<V2')."""
    header = "{'descr': '<V2', 'fortran_order': False, 'shape': (%d,), }" % len(
        codes)
    # Magic, version 1.0, header length; the header padded with spaces
    # and ended by a newline so that the data starts at a multiple of 64.
    total = 10 + len(header) + 1
    header += " " * ((64 - total % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(b"".join(struct.pack("<H", c) for c in codes))


def run_json(cli, args):
    out = subprocess.run([cli, "explain"] + args + ["--json"], check=True,
                         stdout=subprocess.PIPE).stdout.decode()
    if out.count("\n") != 1:
        failures.append("the JSON is not one line")
    return json.loads(out)


def flatten(node, out):
    out.append(node)
    for c in node.get("children", []):
        flatten(c, out)
    return out


def example(cli):
    tmp = tempfile.mkdtemp()
    hlo = os.path.join(tmp, "xp1m1.hlo")
    x = os.path.join(tmp, "x.npy")
    dev = os.path.join(tmp, "device.npy")
    with open(hlo, "w") as f:
        f.write(KERNEL)
    # x = [2^-9, 1]: bf16 0x3b00 (biased exponent 127 - 9 = 118), 0x3f80.
    write_bf16_npy(x, [0x3B00, 0x3F80])
    write_bf16_npy(dev, [0x0000, 0x3F80])
    try:
        r = run_json(cli, [hlo, "--input", x, "--device", dev,
                           "--element", "0"])
    finally:
        for p in (hlo, x, dev):
            os.unlink(p)
        os.rmdir(tmp)

    check("kernel", r["kernel"], "xp1m1")
    check("element", r["element"], [0])
    check("shape", r["shape"], "bf16[2]")
    check("profile", r["profile"], "strict")
    check("device bits", r["device"]["bits"], "0x0000")
    check("device value", r["device"]["value"], 0)
    check("device error", r["device"]["error_ulps"], -128)
    check("device from reference", r["device"]["from_reference_ulps"], 0)
    check("reference bits", r["reference"]["bits"], "0x0000")
    check("reference error", r["reference"]["error_ulps"], -128)
    check("exact lo", r["exact"]["lo"], 2.0 ** -9)
    check("exact hi", r["exact"]["hi"], 2.0 ** -9)
    check("exact", r["exact"]["lo"], 0.001953125)
    check("envelope", (r["envelope"]["lo"], r["envelope"]["hi"]), (0, 0))
    check("class", r["class"], "exact")
    check("outside", r["outside_ulps"], 0)
    at = r["attribution"]
    check("attribution total", at["total"], -128)
    check("attribution residual", at["residual"], 0)
    check("attribution top op", at["top"][0]["name"], "a")
    check("attribution top contribution", at["top"][0]["contribution"],
          -128)
    check("attribution top line", at["top"][0]["source_line"], 3)

    nodes = flatten(r["tree"], [])
    check("node names", [n["name"] for n in nodes],
          ["s", "a", "x", "ones", "one", "ones"])
    check("node ids", [n["id"] for n in nodes], [0, 1, 2, 3, 4, 5])
    s, a, xn, ones, one, again = nodes
    check("s opcode", s["opcode"], "subtract")
    check("s shape", s["shape"], "bf16[2]")
    check("s index", s["index"], [0])
    check("s source", s["source"], "model.py:4")
    check("s op_name", s["op_name"], "jit(f)/sub")
    check("s ref", s["ref"], 0)
    check("s exact", (s["exact_lo"], s["exact_hi"]), (2.0 ** -9, 2.0 ** -9))
    check("s local", s["local"], 0)
    check("s ref err", s["ref_err"], -128)
    check("s contrib", s["contrib"], 0)
    check("s env", (s["env"]["lo"], s["env"]["hi"]), (0, 0))
    check("a ref", a["ref"], 1)
    check("a ref bits", a["ref_bits"], "0x3f80")
    check("a exact", (a["exact_lo"], a["exact_hi"]), (1 + 2.0 ** -9,) * 2)
    check("a local", a["local"], -0.25)
    check("a ref err", a["ref_err"], -0.25)
    check("a contrib", a["contrib"], -128)
    check("a env", (a["env"]["lo"], a["env"]["hi"]), (1, 1))
    check("a source", a["source"], "model.py:3")
    check("x parameter", xn["parameter"], 0)
    check("x ref", xn["ref"], 2.0 ** -9)
    check("x ref err", xn["ref_err"], 0)
    # x does not round: no local figure, and no contribution.
    check("x local", xn["local"], None)
    check("x contrib", xn["contrib"], None)
    check("one index", one["index"], [])
    check("one ref", one["ref"], 1)
    check("repeat", again["same_as"], 3)
    check("repeat has no children", "children" in again, False)
    check("ones index", ones["index"], [0])
    check("truncated", s["truncated"], False)


def defect(cli, src):
    try:
        import numpy  # noqa: F401  (the mutator needs it)
    except ImportError:
        sys.exit(77)
    case = os.path.join(src, "data/examples/layer_norm_bf16/normal_s0")
    with tempfile.TemporaryDirectory() as tmp:
        mutant = os.path.join(tmp, "mutant.hlo")
        subprocess.run([sys.executable,
                        os.path.join(src, "tests/classify/inject_defects.py"),
                        "--mutant", os.path.join(case, "kernel.hlo"),
                        "narrow", "mul.2", mutant], check=True,
                       stdout=subprocess.DEVNULL)
        inputs = [os.path.join(case, "input_%d.npy" % i) for i in range(3)]
        ev = [cli, "eval", mutant, "-o", os.path.join(tmp, "device")]
        for i in inputs:
            ev += ["--input", i]
        subprocess.run(ev, check=True, stdout=subprocess.DEVNULL)
        r = run_json(cli, [os.path.join(case, "kernel.hlo"), "--input"] +
                     inputs + ["--device", os.path.join(tmp, "device_0.npy"),
                               "--profile", "xla-cpu", "--element", "5,53",
                               "--depth", "4"])
    check("kernel", r["kernel"], "jit_layer_norm_bf16")
    check("element", r["element"], [5, 53])
    check("class", r["class"], "defect")
    check("outside", r["outside_ulps"], 227)
    check("device bits", r["device"]["bits"], "0x3ab0")
    nodes = flatten(r["tree"], [])
    names = [n["name"] for n in nodes]
    check("add.1 in the tree", "add.1" in names, True)
    cut = [n for n in nodes if n.get("truncated")]
    check("a cut subtree is marked", len(cut) > 0, True)


def main():
    cli, src, what = sys.argv[1], sys.argv[2], sys.argv[3]
    if what == "example":
        example(cli)
    else:
        defect(cli, src)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("ok: %s" % what)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
