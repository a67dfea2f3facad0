#!/usr/bin/python3
"""The acceptance corpus: `ulpscope check` on every case of data/acceptance/.

  run_acceptance.py ULPSCOPE_CLI ACCEPTANCE_DIR [TREE...]

data/acceptance/ holds real XLA:CPU captures of every catalogue kernel, in
several input distributions, with fast math off and on (its README.md), and
may hold XLA:GPU captures (xla-gpu/<setting>/..., written by
tools/capture/gpu_run.sh).  TREE names the subdirectories of ACCEPTANCE_DIR
to walk (fastmath-off fastmath-on, or xla-gpu); without any, all of it.  A
TREE that does not exist makes the test skip (exit 77): the GPU tree is
committed only once a GPU has made it.  The layout below ACCEPTANCE_DIR is
SETTING/KERNEL/DIST_sSEED, where SETTING is one directory
(fastmath-off) or more (xla-gpu/default); settings that are siblings must
hold the same cases (the same draws under each setting).  For every case
the built command line is run as

  ULPSCOPE_CLI check CASE_DIR --json --worst 0 EXTRA_ARGS...

and the test asserts, per case: the exit status is one of EXPECT_STATUS
(legit, suspicious or undecided, docs/check.md: never defect); the case
is classified under the profile its case.json calls for (expected_profile:
its `profile`, else by `platform`: xla-cpu or, with fast math,
xla-cpu-fast-math; xla-gpu; xla-tpu), and a fastmath-off / fastmath-on
case under that setting's profile; stdout is exactly one JSON object
that Python's own json module parses (no NaN or Infinity literals, which
docs/check.md says are written as null); the object describes the case (the
module jit_<kernel>, one output per device_<i>.npy, element counts that are
the products of the shapes); and every OUTPUT_CHECKS predicate holds for
every output: that no element is undecided, and that none is classified
defect (or a NaN, infinity or sign mismatch) under the profile that the
case's case.json implies -- the "no false alarms" rule of the profiles.

The json module is the parser on purpose: the JSON is judged by a reader
that shares no code with the writer under test (as tests/results reads the
HDF5 file with h5py).

Environment:
  USC_ACCEPTANCE_SUBSET  all (default): every case.  normal: only
                         normal_s0 of each kernel and fast-math setting
                         (68 cases; every kernel, both settings), for a
                         quick run.  Any other value is a glob matched
                         against "fastmath-X/KERNEL/DIST_sSEED".
  USC_ACCEPTANCE_ARGS    extra arguments for every check, split on spaces
                         (added after EXTRA_ARGS).
  USC_ACCEPTANCE_JOBS    cases checked at once (1).

Exit status 0 when every case passes, 1 otherwise (each failure named).
"""

import concurrent.futures
import fnmatch
import json
import os
import subprocess
import sys
import time

# Arguments given to every `ulpscope check`.  None: each case is
# classified under the profile its case.json implies (platform "cpu":
# xla-cpu, or xla-cpu-fast-math when xla_cpu_enable_fast_math is true).
EXTRA_ARGS = []

# The exit statuses that mean "checked, no defect" (docs/check.md): legit
# (0), suspicious (3: inside the envelope, beyond the expected error) and
# undecided (5: no envelope for some element).  4 is a defect: a false
# alarm on real output, which is what this test exists to rule out.
EXPECT_STATUS = (0, 3, 5)

# The profile each fast-math setting must be classified under.
EXPECT_PROFILE = {"fastmath-off": "xla-cpu",
                  "fastmath-on": "xla-cpu-fast-math"}

# The profile a case's platform calls for (docs/cases.md).
PLATFORM_PROFILE = {"cpu": "xla-cpu", "gpu": "xla-gpu", "tpu": "xla-tpu"}

FLAGGED = ("defect", "nan-mismatch", "inf-mismatch", "sign-mismatch")

# (what, predicate on one element of the JSON "outputs" array).
OUTPUT_CHECKS = [
    ("no undecided element", lambda o: o["undecided"] == 0),
    ("no element classified defect or mismatch",
     lambda o: all(o["classes"][c] == 0 for c in FLAGGED)),
]

SETTINGS = ("fastmath-off", "fastmath-on")

# Verdicts seen, for the summary line.
VERDICTS = {}


def reject_constant(name):
    raise ValueError(f"non-JSON number {name}")


def find_cases(root):
    """Every case directory (holding case.json) below root, sorted, as paths
    relative to root."""
    cases = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if "case.json" in filenames:
            cases.append(os.path.relpath(dirpath, root))
    return sorted(cases)


def expected_profile(rel, case):
    """The profile `ulpscope check` must pick for the case, worked out here
    from case.json and the case's place in the tree, not by the CLI."""
    if case.get("profile"):
        return case["profile"]
    want = PLATFORM_PROFILE.get(case.get("platform", "cpu"), "?")
    if want == "xla-cpu" and case.get("xla_cpu_enable_fast_math"):
        want = "xla-cpu-fast-math"
    setting = rel.split(os.sep)[0]
    if setting in EXPECT_PROFILE and EXPECT_PROFILE[setting] != want:
        return f"{EXPECT_PROFILE[setting]} (the {setting} tree) but case.json says {want}"
    return want


def setting_of(rel):
    """SETTING of SETTING/KERNEL/DIST_sSEED (one directory or more)."""
    return os.path.dirname(os.path.dirname(rel))


def layout_errors(cases):
    """Sibling settings must hold the same KERNEL/DIST cases; fastmath-off
    and fastmath-on go together."""
    by_setting = {}
    for c in cases:
        s = setting_of(c)
        if not s:
            return [f"{c}: not SETTING/KERNEL/DIST_sSEED"]
        by_setting.setdefault(s, set()).add(os.path.relpath(c, s))
    errors = []
    groups = {}
    for s in by_setting:
        groups.setdefault(os.path.dirname(s), []).append(s)
    for parent, settings in sorted(groups.items()):
        settings.sort()
        first = by_setting[settings[0]]
        for s in settings[1:]:
            if by_setting[s] != first:
                errors.append(f"{settings[0]} ({len(first)} cases) and {s} "
                              f"({len(by_setting[s])}) do not hold the same cases")
    have = [s for s in SETTINGS if s in by_setting]
    if len(have) == 1:
        errors.append(f"{have[0]} without {[s for s in SETTINGS if s not in have][0]}")
    return errors


def select(cases, subset):
    if subset in ("", "all"):
        return cases
    if subset == "normal":
        return [c for c in cases if c.endswith(os.sep + "normal_s0")]
    return [c for c in cases if fnmatch.fnmatchcase(c, subset)]


def npy_shape(path):
    """The shape in a .npy header (format 1.0 to 3.0), read here rather than
    with numpy so that the test needs nothing beyond the standard library."""
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic[:6] != b"\x93NUMPY":
            raise ValueError(f"{path}: not a .npy file")
        hlen_bytes = 2 if magic[6] == 1 else 4
        hlen = int.from_bytes(f.read(hlen_bytes), "little")
        header = f.read(hlen).decode("latin1")
    start = header.index("'shape':")
    tup = header[header.index("(", start) + 1:header.index(")", start)]
    return [int(x) for x in tup.split(",") if x.strip()]


def check_case(cli, root, rel, args):
    """Runs one check; returns (list of failures, seconds)."""
    d = os.path.join(root, rel)
    t0 = time.monotonic()
    p = subprocess.run([cli, "check", d, "--json", "--worst", "0", *args],
               capture_output=True, text=True)
    dt = time.monotonic() - t0
    fails = []
    if p.returncode not in EXPECT_STATUS:
        fails.append(f"exit status {p.returncode}, expected one of "
                     f"{EXPECT_STATUS}: {p.stderr.strip()[:500]} "
                     f"{p.stdout[:300]}")
        return fails, dt
    try:
        doc = json.loads(p.stdout, parse_constant=reject_constant)
    except ValueError as e:
        fails.append(f"--json output does not parse: {e}: {p.stdout[:200]!r}")
        return fails, dt
    with open(os.path.join(d, "case.json")) as f:
        case = json.load(f)
    want = expected_profile(rel, case)
    if doc.get("profile") != want:
        fails.append(f"classified under {doc.get('profile')!r}, expected "
                     f"{want!r}")
    VERDICTS[doc.get("verdict")] = VERDICTS.get(doc.get("verdict"), 0) + 1
    if doc.get("kernel") != case["module"]:
        fails.append(f"kernel {doc.get('kernel')!r}, expected {case['module']!r}")
    devices = sorted(x for x in os.listdir(d) if x.startswith("device_"))
    outs = doc.get("outputs")
    if not isinstance(outs, list) or len(outs) != len(devices):
        fails.append(f"{len(outs) if isinstance(outs, list) else outs!r} outputs "
                 f"in the JSON, {len(devices)} device files")
        return fails, dt
    for k, o in enumerate(outs):
        shape = npy_shape(os.path.join(d, f"device_{k}.npy"))
        n = 1
        for s in shape:
            n *= s
        if o["index"] != k or o["shape"] != shape or o["count"] != n:
            fails.append(f"output {k}: index {o['index']}, shape {o['shape']}, "
                     f"count {o['count']}; device_{k}.npy has shape {shape}")
        for what, pred in OUTPUT_CHECKS:
            if not pred(o):
                fails.append(f"output {k}: not {what}: "
                         f"{json.dumps({x: o[x] for x in o if x != 'worst'})}")
    return fails, dt


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    cli, root, trees = argv[1], argv[2], argv[3:]
    subset = os.environ.get("USC_ACCEPTANCE_SUBSET") or "all"
    args = EXTRA_ARGS + os.environ.get("USC_ACCEPTANCE_ARGS", "").split()
    jobs = max(1, int(os.environ.get("USC_ACCEPTANCE_JOBS", "1")))

    missing = [t for t in trees if not os.path.isdir(os.path.join(root, t))]
    if missing:
        print(f"{root}: no {', '.join(missing)} tree: nothing to check (skipped)")
        return 77
    if trees:
        cases = [os.path.join(t, c) for t in trees
                 for c in find_cases(os.path.join(root, t))]
    else:
        cases = find_cases(root)
    # The corpus itself: sibling settings with the same cases, so that a
    # half-committed recapture cannot pass unnoticed.
    errors = layout_errors(cases) if cases else [f"no case under {root}"]
    if errors:
        for e in errors:
            print(f"{root}: {e}")
        return 1
    chosen = select(cases, subset)
    if not chosen:
        print(f"USC_ACCEPTANCE_SUBSET={subset!r} selects no case")
        return 1

    t0 = time.monotonic()
    failed = 0
    slowest = (0.0, "")
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        futs = {c: ex.submit(check_case, cli, root, c, args) for c in chosen}
        for c in chosen:
            fails, dt = futs[c].result()
            slowest = max(slowest, (dt, c))
            if fails:
                failed += 1
                for f in fails:
                    print(f"FAIL {c}: {f}")
    print(f"{len(chosen) - failed} of {len(chosen)} cases pass "
          f"(subset {subset}, {len(cases)} in the corpus, extra arguments "
          f"{' '.join(args) or 'none'}); {time.monotonic() - t0:.1f} s, "
          f"slowest {slowest[1]} {slowest[0]:.2f} s")
    print("verdicts: " + ", ".join(f"{v} {n}" for v, n in
                                   sorted(VERDICTS.items(), key=str)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
