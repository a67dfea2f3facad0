#!/usr/bin/env python3
"""Random fused kernels through XLA:CPU, judged by ulpscope (docs/fuzzing.md).

For each seed: `ulpscope gen --seed S` writes a module, XLA:CPU compiles it
(fast math off and/or on, one process per setting since XLA reads
XLA_FLAGS once), inputs are drawn from the capture distributions, the
executable runs, and the result is written as a case directory
(docs/cases.md) by tools/capture's own writer:

    OUT/fastmath-off/seed_<S>/   kernel.hlo (optimized), generated.hlo,
    OUT/fastmath-on/seed_<S>/    input_*.npy, device_*.npy, case.json

Then `ulpscope batch` judges each setting under its profile (xla-cpu,
xla-cpu-fast-math) into OUT/fastmath-<off|on>.h5, and the verdicts are
summarised in OUT/summary.json and on stdout.  A flagged case (defect,
suspicious, undecided, not checked) that triage.json lists is reported
with its finding (docs/findings.md) and does not count against the run.
Exit status, over the untriaged cases, as ulpscope batch's: 0 when none is
flagged; 4 a defect; 6 a kernel not generated, compiled, run or checked; 3
suspicious; 5 undecided; 1/2 for the runner's own errors and usage.

    run.py --ulpscope build/ulpscope --out /tmp/fz --seeds 0-49
    run.py --ulpscope build/ulpscope --out /tmp/fz --seeds 7 --fast-math on
"""
import argparse
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "capture"))

import numpy as np  # noqa: E402

SETTINGS = {"off": ("fastmath-off", "xla-cpu"), "on": ("fastmath-on", "xla-cpu-fast-math")}
SETTINGS_BY_SUB = {sub: (p, prof) for p, (sub, prof) in SETTINGS.items()}


def parse_seeds(text):
    """'0-49', '3,7,10-12' -> sorted list of ints."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            lo, hi = int(lo, 0), int(hi, 0)
            if hi < lo:
                raise argparse.ArgumentTypeError(f"empty seed range {part!r}")
            out.update(range(lo, hi + 1))
        else:
            out.add(int(part, 0))
    if not out:
        raise argparse.ArgumentTypeError("no seeds")
    return sorted(out)


def distribution_of(seed, dists):
    """The input distribution of a seed: the list taken in turn."""
    return dists[seed % len(dists)]


class GenModule:
    """What tools/capture's write_case needs of a compiled module."""

    def __init__(self, hlo, debug_options):
        import hlo_text
        self.hlo = hlo
        self.hlo_source = "xla_dump_to"
        self.module = hlo_text.parse_module(hlo)
        self.debug_options = debug_options


def gen_text(ulpscope, seed, ops, types):
    cmd = [ulpscope, "gen", "--seed", str(seed), "--ops", str(ops)]
    if types:
        cmd += ["--types", types]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout, cmd


def draw(module, dist, seed):
    """Inputs for every entry parameter: the capture distribution dist,
    rounded to the parameter's type (ties of the parameter's own type)."""
    import capture
    rng = np.random.default_rng([seed, capture.DISTRIBUTIONS.index(dist)])
    out = []
    for p in module.entry.parameters():
        leaf = p.leaves[0]
        out.append(capture.draw_float(rng, dist, leaf.dims, leaf.dtype, leaf.dtype))
    return out


def module_name(text):
    """The HloModule name of HLO text (XLA names its dump after it)."""
    m = re.search(r"^\s*HloModule\s+([^\s,]+)", text, re.M)
    if not m:
        raise ValueError("the HLO text has no HloModule line")
    return m.group(1)


def capture_text(text, case_dir, inputs=None, dist=None, seed=None, extra=None,
                 kernel_name=None, notes=""):
    """Compile HLO text on XLA:CPU (this process's settings), run it on
    inputs (arrays in parameter order) or on inputs drawn from dist with
    seed, and write the case directory.  Returns the case record."""
    import capture
    name = module_name(text)
    exe = capture.compile_hlo_text(text)
    after, debug = capture._newest_dump(name)  # noqa: SLF001
    if not after:
        raise RuntimeError("XLA wrote no after_optimizations dump")
    with open(after) as f:
        comp = GenModule(f.read(), capture._debug_options(debug))  # noqa: SLF001
    if inputs is None:
        inputs = draw(comp.module, dist, seed)
    outputs = capture._run_executable(exe, inputs)  # noqa: SLF001
    return capture.write_case(case_dir, comp, inputs, outputs, function="ulpscope gen",
                              kernel_name=kernel_name or name, dtype="random", seed=seed,
                              distribution=dist or "given", notes=notes, extra=extra)


DUMP_FLAGS = ("--xla_dump_large_constants=true",)

# The types whose subnormal operands xla-cpu lets an op read as zero
# (flush.f32/f64/bf16 = both in data/profiles/xla-cpu.profile): x86's DAZ.
DAZ_TYPES = ("f32", "f64", "bf16")
DAZ_SUFFIX = ".daz"


def daz_inputs(case_dir, case):
    """The case's inputs with every subnormal of a DAZ type replaced by a
    zero of its sign, or None when there is none (see triage_daz)."""
    import capture
    out, changed = [], False
    for rec in case["inputs"]:
        dt = rec["type"].split("[")[0]
        # As its type: bf16 and fp8 arrays come back from .npy as raw '<V2'/'|V1'.
        x = np.load(os.path.join(case_dir, rec["file"]), allow_pickle=False)
        x = x.view(capture._np_dtype(dt))  # noqa: SLF001
        if dt in DAZ_TYPES:
            v = x.astype(np.float64)
            tiny = 2.0 ** -1022 if dt == "f64" else 2.0 ** -126  # bf16 has f32's range
            sub = (v != 0) & (np.abs(v) < tiny)
            if sub.any():
                x = np.where(sub, np.copysign(np.zeros_like(x), x), x).astype(x.dtype)
                changed = True
        out.append(x)
    return out if changed else None


def run_part(args):
    """One fast-math setting, in this process: generate, compile, run, write."""
    import capture
    # XLA folds iota masks into constants; without this flag its dump
    # writes a large one as {...}, which no checker can evaluate.
    capture.setup(fast_math=args.part == "on", extra_flags=DUMP_FLAGS)
    sub, _ = SETTINGS[args.part]
    root = os.path.join(args.out, sub)
    os.makedirs(root, exist_ok=True)
    failures = []
    for seed in args.seeds:
        case_dir = os.path.join(root, f"seed_{seed}")
        dist = distribution_of(seed, args.distribution)
        try:
            text, cmd = gen_text(args.ulpscope, seed, args.ops, args.types)
            extra = {"generator": {"command": " ".join(["ulpscope"] + cmd[1:]),
                                   "seed": seed, "ops": args.ops, "types": args.types,
                                   "generated_sha256": hashlib.sha256(text.encode()).hexdigest()}}
            case = capture_text(text, case_dir, dist=dist, seed=seed, extra=extra,
                                notes="random kernel (tools/fuzz_xla)")
            with open(os.path.join(case_dir, "generated.hlo"), "w") as f:
                f.write(text)
            daz = daz_inputs(case_dir, case)
            if daz is not None:
                extra["daz_twin_of"] = f"seed_{seed}"
                capture_text(text, case_dir + DAZ_SUFFIX, inputs=daz, dist=dist, seed=seed,
                             extra=extra, notes="the DAZ twin: subnormal inputs of the "
                             "flushed types as signed zeros (tools/fuzz_xla)")
        except Exception as e:  # one bad seed must not end the campaign
            failures.append({"seed": seed, "stage": "capture",
                             "error": f"{type(e).__name__}: {e}"})
            print(f"fuzz_xla: seed {seed} ({sub}): {type(e).__name__}: {e}",
                  file=sys.stderr, flush=True)
    with open(os.path.join(root, "capture_failures.json"), "w") as f:
        json.dump(failures, f, indent=1)
    return 0


def judge(args, part):
    """ulpscope batch over one setting's cases, under its profile; the rows."""
    import h5py
    sub, profile = SETTINGS[part]
    root = os.path.join(args.out, sub)
    index = os.path.join(args.out, f"{sub}.h5")
    # A fresh capture replaced the cases: the old rows are stale.  Judging
    # again only (--judge-only) resumes the batch, so the rows stand.
    cmd = [args.ulpscope, "batch", root, "--out", index, "--profile", profile,
           "-j", str(args.jobs), "--quiet", "--top", "0"]
    if not args.judge_only:
        cmd.append("--restart")
    if args.case_timeout:
        cmd += ["--case-timeout", str(args.case_timeout)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode in (1, 2):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    rows = []
    with h5py.File(index, "r") as f:
        for row in f["/batch"][:]:
            d = {}
            for k in ("path", "status", "verdict", "message", "profile"):
                v = row[k]
                d[k] = v.decode() if isinstance(v, bytes) else str(v)
            for k in ("elements", "n_defect", "n_suspicious", "n_nan_mismatch",
                      "n_inf_mismatch", "n_undecided"):
                d[k] = int(row[k])
            for k in ("max_ulp_reference", "max_ulp_oracle", "seconds"):
                d[k] = float(row[k])
            rows.append(d)
    return rows


def load_triage(path):
    """The triaged cases: {(setting, case, generated_sha256[:16]): finding},
    case being the directory's name (seed_<S>, or seed_<S>.daz for a twin:
    an entry's "case", by default seed_<seed>).
    A generator change alters the module's hash, so an entry never vouches
    for a module nobody looked at."""
    if not path:
        return {}
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for c in doc.get("cases", []):
        if c["finding"] not in doc.get("findings", {}):
            raise ValueError(f"{path}: case {c} names an unknown finding")
        name = c.get("case", f"seed_{int(c['seed'])}")
        out[(c["setting"], name, c["generated_sha256"][:16])] = c["finding"]
    return out


def triaged(args, triage, sub, row, rows_by_path):
    """The finding that explains a flagged batch row, or None.  In order:
    an entry of triage.json (a case looked at by hand); a finding profile
    (findings/F<n>.keys applied to the case's profile: the case is legit
    with the freedom the finding documents); the DAZ twin (U1)."""
    try:
        with open(os.path.join(row["path"], "case.json")) as f:
            gen = json.load(f)["generator"]
    except (OSError, KeyError, ValueError):
        return None
    name = os.path.basename(row["path"].rstrip("/"))
    hit = triage.get((sub, name, gen["generated_sha256"][:16]))
    if hit or row["status"] != "ok":
        return hit
    _, profile = SETTINGS_BY_SUB[sub]
    for finding, path in finding_profiles(args, profile):
        r = subprocess.run([args.ulpscope, "check", row["path"], "--profile", path, "--json"],
                           capture_output=True, text=True)
        try:
            if json.loads(r.stdout)["verdict"] == "legit":
                return finding
        except (ValueError, KeyError):
            raise RuntimeError(f"ulpscope check {row['path']} --profile {path}: "
                               f"{r.stderr.strip()}") from None
    return triage_daz(row, rows_by_path)


def finding_profiles(args, profile):
    """[(finding, profile file)]: for each findings/F<n>.keys, the built-in
    profile with those keys replaced (every key of `ulpscope profiles
    NAME`, flat: a file based on a profile that has a base of its own is
    refused as nested too deeply), written once under OUT/findings/."""
    out = []
    for keys in sorted(glob.glob(os.path.join(HERE, "findings", "F*.keys"))):
        finding = os.path.basename(keys)[:-len(".keys")]
        path = os.path.join(args.out, "findings", f"{finding}-{profile}.profile")
        if not os.path.exists(path):
            base = subprocess.run([args.ulpscope, "profiles", profile], capture_output=True,
                                  text=True, check=True).stdout.splitlines()
            over = {}
            with open(keys) as f:
                for line in f:
                    line = line.split("#", 1)[0].strip()
                    if line:
                        k, v = (x.strip() for x in line.split("=", 1))
                        over[k] = v
            lines = []
            for line in base:
                k = line.split("=", 1)[0].strip()
                if k == "name":
                    line = f"name = {profile}-{finding.lower()}"
                elif k == "description":
                    line = (f"description = {profile} with finding {finding} of "
                            "docs/findings.md")
                elif k in over:
                    line = f"{k} = {over.pop(k)}"
                lines.append(line)
            lines += [f"{k} = {v}" for k, v in over.items()]
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
        out.append((finding, path))
    return out


def triage_daz(row, rows_by_path):
    """'DAZ-inputs' when the case's DAZ twin (its subnormal inputs of the
    flushed types as zeros, compiled and run the same way) gave bit-identical
    outputs and is legit: the device read those inputs as zeros, a freedom
    the profile grants every operand (flush.TYPE = both), so the verdict
    comes from ulpscope's envelope not granting it (finding U1)."""
    twin = row["path"].rstrip("/") + DAZ_SUFFIX
    trow = rows_by_path.get(twin)
    if not trow or trow["status"] != "ok" or trow["verdict"] != "legit":
        return None
    k = 0
    while os.path.exists(os.path.join(row["path"], f"device_{k}.npy")):
        a = os.path.join(row["path"], f"device_{k}.npy")
        b = os.path.join(twin, f"device_{k}.npy")
        if not os.path.exists(b):
            return None
        with open(a, "rb") as fa, open(b, "rb") as fb:
            if fa.read() != fb.read():
                return None
        k += 1
    return "U1" if k else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ulpscope", required=True, help="the ulpscope program")
    ap.add_argument("--out", required=True, help="the campaign directory")
    ap.add_argument("--seeds", type=parse_seeds, required=True, help="e.g. 0-49 or 3,7,10-12")
    ap.add_argument("--ops", type=int, default=12, help="ulpscope gen --ops (12)")
    ap.add_argument("--types", default="", help="ulpscope gen --types (all)")
    ap.add_argument("--fast-math", default="off,on", help="off, on or off,on (both)")
    ap.add_argument("--distribution", default="normal,uniform,large,ties,denormal",
                    help="input distributions, taken in turn by seed")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--case-timeout", type=float, default=0,
                    help="batch --case-timeout (0: none)")
    ap.add_argument("--no-judge", action="store_true", help="capture only")
    ap.add_argument("--judge-only", action="store_true",
                    help="judge and triage the cases already under --out again "
                         "(new triage entries; the batch resumes, so after a ulpscope "
                         "change remove OUT/fastmath-*.h5* first)")
    ap.add_argument("--triage", default=os.path.join(HERE, "triage.json"),
                    help="known findings: flagged cases it lists do not fail the run "
                         "(tools/fuzz_xla/triage.json; '' for none)")
    ap.add_argument("--part", choices=sorted(SETTINGS), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.distribution = [d for d in args.distribution.split(",") if d]
    import capture
    for d in args.distribution:
        if d not in capture.DISTRIBUTIONS:
            ap.error(f"--distribution: unknown {d!r}; use {', '.join(capture.DISTRIBUTIONS)}")
    parts = [p for p in args.fast_math.split(",") if p]
    for p in parts:
        if p not in SETTINGS:
            ap.error(f"--fast-math: {p!r}; use off, on or off,on")
    if not os.access(args.ulpscope, os.X_OK):
        ap.error(f"--ulpscope: {args.ulpscope} is not an executable program")
    if args.part:
        return run_part(args)

    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    seeds = ",".join(str(s) for s in args.seeds)
    # One process per setting (XLA reads XLA_FLAGS once), both at once.
    procs = []
    for p in ([] if args.judge_only else parts):
        cmd = [sys.executable, os.path.abspath(__file__), "--part", p,
               "--ulpscope", args.ulpscope, "--out", args.out, "--seeds", seeds,
               "--ops", str(args.ops), "--types", args.types,
               "--distribution", ",".join(args.distribution)]
        procs.append((p, subprocess.Popen(cmd)))
    bad = [(p, pr.wait()) for p, pr in procs]
    for p, rc in bad:
        if rc != 0:
            print(f"fuzz_xla: the {p} capture process failed (exit {rc})", file=sys.stderr)
            return 1
    t_capture = time.time() - t0
    summary = {"seeds": len(args.seeds), "ops": args.ops, "types": args.types or "all",
               "distributions": args.distribution, "capture_seconds": round(t_capture, 1),
               "settings": {}}
    triage = load_triage(args.triage)
    worst = []
    for p in parts:
        sub, profile = SETTINGS[p]
        with open(os.path.join(args.out, sub, "capture_failures.json")) as f:
            cap_fail = json.load(f)
        all_rows = [] if args.no_judge else judge(args, p)
        rows_by_path = {r["path"].rstrip("/"): r for r in all_rows}
        # DAZ twins are evidence for triage, not campaign cases; a flagged
        # twin is flagged like any case.
        rows = [r for r in all_rows if not r["path"].rstrip("/").endswith(DAZ_SUFFIX)
                or not (r["status"] == "ok" and r["verdict"] == "legit")]
        twins = len(all_rows) - len([r for r in all_rows
                                     if not r["path"].rstrip("/").endswith(DAZ_SUFFIX)])
        verdicts = {}
        for r in rows:
            if r["path"].rstrip("/").endswith(DAZ_SUFFIX):
                continue
            key = r["verdict"] if r["status"] == "ok" else r["status"]
            verdicts[key] = verdicts.get(key, 0) + 1
        flagged = []
        for r in rows:
            if r["status"] == "ok" and r["verdict"] not in ("defect", "suspicious", "undecided"):
                continue
            finding = triaged(args, triage, sub, r, rows_by_path)
            flagged.append({**{k: r[k] for k in ("path", "status", "verdict", "message",
                                                 "n_defect", "n_suspicious", "max_ulp_oracle")},
                            "finding": finding})
            if not finding:
                worst.append(r["verdict"] if r["status"] == "ok" else "failed")
        worst += ["failed"] * len(cap_fail)
        summary["settings"][sub] = {
            "profile": profile, "captured": len(args.seeds) - len(cap_fail),
            "capture_failures": cap_fail, "verdicts": verdicts, "daz_twins": twins,
            "flagged": flagged,
            "untriaged": sum(1 for x in flagged if not x["finding"])}
        print(f"{sub} ({profile}): {len(args.seeds)} seeds, {len(cap_fail)} not captured, "
              + ", ".join(f"{n} {k}" for k, n in sorted(verdicts.items())))
        for x in flagged:
            if x["finding"]:
                tag = f"triaged {x['finding']}"
            elif x["status"] == "ok" and x["verdict"] == "undecided":
                tag = "no finding; undecided is allowed"
            else:
                tag = "UNTRIAGED"
            print(f"  {x['verdict'] or x['status']} ({tag}): {x['path']}: {x['message']}")
        for c in cap_fail:
            print(f"  not captured: seed {c['seed']}: {c['error']}")
    # The exit status of ulpscope batch, over untriaged cases only.
    status = 0
    for verdict, code in (("defect", 4), ("failed", 6), ("suspicious", 3), ("undecided", 5)):
        if verdict in worst:
            status = code
            break
    summary["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    print(f"fuzz_xla: {summary['seconds']} s (capture {t_capture:.1f} s); "
          f"summary: {os.path.join(args.out, 'summary.json')}")
    return status


if __name__ == "__main__":
    sys.exit(main())
