#!/usr/bin/env python3
"""tools/fuzz_xla without jax: the seed lists, the triage file, the DAZ
twin's inputs and its test, on files this test writes; and the finding
profiles through the built ulpscope (USC_CLI).  numpy from Debian;
exit 77 without it."""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("skipped: numpy is not installed")
    sys.exit(77)

SRC = os.environ.get("USC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tools", "fuzz_xla"))
sys.path.insert(0, os.path.join(SRC, "tools", "capture"))
import run  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


# Seed lists.
check(run.parse_seeds("0-3,7,5") == [0, 1, 2, 3, 5, 7], "parse_seeds 0-3,7,5")
check(run.parse_seeds("0x10") == [16], "parse_seeds hex")
try:
    run.parse_seeds("5-2")
    check(False, "parse_seeds accepted 5-2")
except Exception:
    pass
check([run.distribution_of(s, ["a", "b", "c"]) for s in range(4)] == ["a", "b", "c", "a"],
      "distributions taken in turn")

# The triage file of the repository names only findings it defines, and
# a case naming an unknown finding is refused.
t = run.load_triage(os.path.join(SRC, "tools", "fuzz_xla", "triage.json"))
check(all(f in ("F1", "F2", "F3", "F4", "F5", "U1", "U2", "U3", "U4", "U5", "U6") for f in t.values()) and len(t) >= 1,
      "triage.json entries")
with tempfile.TemporaryDirectory() as d:
    bad = os.path.join(d, "t.json")
    with open(bad, "w") as f:
        json.dump({"findings": {"F1": "x"}, "cases": [
            {"setting": "fastmath-off", "seed": 1, "generated_sha256": "ab", "finding": "F9"}]}, f)
    try:
        run.load_triage(bad)
        check(False, "load_triage accepted an unknown finding")
    except ValueError:
        pass

# The DAZ twin's inputs: f32 and bf16 subnormals become zeros of their sign,
# f16 subnormals (normal numbers in f32, which DAZ leaves) stay.  bf16
# needs ml_dtypes (the test's venv has it; Debian's python may not).
try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None
    print("note: no ml_dtypes, the bf16 part of the DAZ inputs is not tested")
with tempfile.TemporaryDirectory() as d:
    x32 = np.array([1e-39, -2e-39, 1.5, 0.0], np.float32)
    x16 = np.array([1e-7, -3e-8, 2.0], np.float16)
    np.save(os.path.join(d, "input_0.npy"), x32)
    np.save(os.path.join(d, "input_1.npy"), x16)
    case = {"inputs": [{"file": "input_0.npy", "type": "f32[4]"},
                       {"file": "input_1.npy", "type": "f16[3]"}]}
    if ml_dtypes:
        np.save(os.path.join(d, "input_2.npy"), np.array([1e-39, 2.0], ml_dtypes.bfloat16))
        case["inputs"].append({"file": "input_2.npy", "type": "bf16[2]"})
    z = run.daz_inputs(d, case)
    check(z is not None, "daz_inputs found the subnormals")
    check(z[0].tobytes() == np.array([0.0, -0.0, 1.5, 0.0], np.float32).tobytes(),
          "f32 subnormals zeroed with their signs")
    check(z[1].tobytes() == x16.tobytes(), "f16 subnormals kept")
    if ml_dtypes:
        check(z[2].astype(np.float32).tolist() == [0.0, 2.0], "bf16 subnormals zeroed")
    np.save(os.path.join(d, "input_0.npy"), np.array([1.5], np.float32))
    check(run.daz_inputs(d, {"inputs": [{"file": "input_0.npy", "type": "f32[1]"}]}) is None,
          "no twin without subnormals")

# The DAZ twin's test: legit and bit-identical outputs, else no finding.
with tempfile.TemporaryDirectory() as d:
    case, twin = os.path.join(d, "seed_1"), os.path.join(d, "seed_1.daz")
    os.makedirs(case)
    os.makedirs(twin)
    np.save(os.path.join(case, "device_0.npy"), np.array([0.0, 1.0], np.float32))
    np.save(os.path.join(twin, "device_0.npy"), np.array([0.0, 1.0], np.float32))
    row = {"path": case, "status": "ok", "verdict": "defect"}
    legit = {"path": twin, "status": "ok", "verdict": "legit"}
    check(run.triage_daz(row, {twin: legit}) == "U1", "identical legit twin explains")
    check(run.triage_daz(row, {twin: dict(legit, verdict="defect")}) is None,
          "a twin that is not legit explains nothing")
    check(run.triage_daz(row, {}) is None, "no twin, no finding")
    np.save(os.path.join(twin, "device_0.npy"), np.array([-0.0, 1.0], np.float32))
    check(run.triage_daz(row, {twin: legit}) is None, "outputs differing in a sign bit")

# minimise.py without jax: parameter names in number order, the inputs a
# halved dimension tries (the first and the second half), and the
# candidates of the built ulpscope reduce parsed back.
import minimise  # noqa: E402
text = ("HloModule m\n\n%c (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n"
        "  %b = f32[] parameter(1)\n  ROOT %r = f32[] add(f32[] %a, f32[] %b)\n}\n\n"
        "ENTRY %main (y: f32[4], x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(1)\n"
        "  %y = f32[4] parameter(0)\n  ROOT %s = f32[4] add(f32[4] %x, f32[4] %y)\n}\n")
check(minimise.params_of(text) == ["y", "x"], f"params_of: {minimise.params_of(text)}")
ins = {"x": np.arange(8, dtype=np.float32).reshape(2, 4), "y": np.ones((2, 4), np.float32)}
got = minimise.input_choices("shrink 1 4 2", ["x", "y"], ins)
check(len(got) == 2 and got[0][0].tolist() == [[0, 1], [4, 5]] and
      got[1][0].tolist() == [[2, 3], [6, 7]] and got[1][1].shape == (2, 2),
      "input_choices of a halved dimension")
check(len(minimise.input_choices("drop-output 0", ["y"], ins)) == 1, "input_choices, no shrink")
if os.environ.get("USC_CLI"):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.hlo")
        with open(path, "w") as f:
            f.write(text)
        got = minimise.candidates(os.environ["USC_CLI"], path)
        # add(x, y) by x or by y (to-operand 0 and 1; y is also the
        # parameter of its shape that is not an operand: none), and the
        # halved dimension: 3 candidates, the sizes as printed.
        whats = sorted(w for w, _, _ in got)
        check(whats == ["shrink 0 4 2", "to-operand s 0 x", "to-operand s 1 y"],
              f"candidates: {whats}")
        check(all(b.startswith("HloModule m") for _, _, b in got), "candidate texts")
        check(dict((w, z) for w, z, _ in got)["to-operand s 0 x"] == (1, 4, 4, 0),
              "candidate size: one parameter of 4 elements")

# inject.py without jax: XLA's op_name metadata maps an optimized op to the
# generated one, a convert XLA added belongs to the op it converts, and a
# scalar constant is matched by value.
import inject  # noqa: E402
kernel = ("%fc (p: f32[4]) -> bf16[4] {\n  %p = f32[4]{0} parameter(0)\n"
          "  %constant.0 = f32[] constant(0.5)\n"
          "  %add.1 = f32[4]{0} add(%p, %p), metadata={op_name=\"subtract.7\"}\n"
          "  ROOT %convert.52 = bf16[4]{0} convert(%add.1)\n}\n")
check(inject.op_names(kernel) == {"add.1": "subtract.7", "convert.52": "subtract.7"},
      f"op_names: {inject.op_names(kernel)}")
check(inject.constants(kernel) == {"constant.0": 0.5}, "constants")
gen = ("ENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4] parameter(0)\n"
       "  %exponential.2 = f32[4] exponential(f32[4] %p)\n"
       "  %exponential.3 = f32[4] exponential(f32[4] %exponential.2)\n"
       "  ROOT %reduce-window.9 = f32[4] reduce-window(f32[4] %exponential.3)\n}\n")
u = inject.unique_opcodes(gen)
check(inject.same_unique_opcode("reduce-window.1", "reduce-window.9", u) and
      not inject.same_unique_opcode("exponential.0", "exponential.2", u),
      f"same_unique_opcode: {u}")
with tempfile.TemporaryDirectory() as d:
    rows = [{"seed": 1, "op": "a", "kind": "drop", "outcome": "no effect", "seconds": 1},
            {"seed": 1, "op": "b", "kind": "drop", "outcome": "changed", "verdict": "defect",
             "outside": 3, "top1": True, "top3": True, "top1_tied": True, "top3_tied": True,
             "seconds": 2},
            {"seed": 2, "op": "c", "kind": "round-up", "outcome": "changed",
             "verdict": "legit", "outside": 0, "seconds": 1},
            {"seed": 3, "op": "c", "kind": "flip-compare", "outcome": "changed",
             "verdict": "defect", "outside": 1, "top1": False, "top3": True,
             "top1_tied": True, "top3_tied": True, "seconds": 2},
            {"seed": 4, "skipped": "original is defect"}]
    with open(os.path.join(d, "m.jsonl"), "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    s = inject.summarise(os.path.join(d, "m.jsonl"))
    check(s["mutants"] == 4 and s["leaving_envelope"] == 2 and s["caught"] == 2 and
          s["recall"] == 1.0 and s["top1"] == 1 and s["top3"] == 2 and s["top1_tied"] == 2 and
          s["kernels_skipped"] == 1 and s["misses_by_kind"]["flip-compare"]["top1_miss"] == 1,
          f"summarise: {s}")

# The finding profiles: each findings/F<n>.keys over both campaign
# profiles gives a valid profile with the finding's keys.
cli = os.environ.get("USC_CLI")
if cli:
    with tempfile.TemporaryDirectory() as d:
        class A:
            ulpscope = cli
            out = d
        for profile in ("xla-cpu", "xla-cpu-fast-math"):
            got = run.finding_profiles(A, profile)
            check([f for f, _ in got] == ["F1"], f"finding profiles of {profile}: {got}")
            for f, path in got:
                r = subprocess.run([cli, "profiles", path], capture_output=True, text=True)
                check(r.returncode == 0 and "accuracy.log1p = 3" in r.stdout,
                      f"{path}: {r.stderr.strip()}")
                base = subprocess.run([cli, "profiles", profile], capture_output=True,
                                      text=True).stdout
                # Every other key as the built-in profile has it.
                diff = set(base.splitlines()) ^ set(r.stdout.splitlines())
                check({x.split(" =")[0] for x in diff} == {"name", "description",
                                                            "accuracy.log1p"},
                      f"{path} differs from {profile} in {sorted(diff)}")

if failures:
    sys.exit(1)
print("ok")
