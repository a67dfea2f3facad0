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
check(all(f in ("F1", "F2", "F3", "F4", "F5", "U1", "U2", "U3", "U4") for f in t.values()) and len(t) >= 1,
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
