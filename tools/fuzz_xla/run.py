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
summarised in OUT/summary.json and on stdout.  Exit status: 0 when no case
is a defect or suspicious and nothing failed; 4 when a case is a defect; 3
when one is suspicious; 6 when a kernel could not be generated, compiled,
run or checked; 1/2 for the runner's own errors and usage.

    run.py --ulpscope build/ulpscope --out /tmp/fz --seeds 0-49
    run.py --ulpscope build/ulpscope --out /tmp/fz --seeds 7 --fast-math on
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools", "capture"))

import numpy as np  # noqa: E402

SETTINGS = {"off": ("fastmath-off", "xla-cpu"), "on": ("fastmath-on", "xla-cpu-fast-math")}


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


def run_part(args):
    """One fast-math setting, in this process: generate, compile, run, write."""
    import capture
    fast = args.part == "on"
    capture.setup(fast_math=fast)
    sub, _ = SETTINGS[args.part]
    root = os.path.join(args.out, sub)
    os.makedirs(root, exist_ok=True)
    failures = []
    for seed in args.seeds:
        case_dir = os.path.join(root, f"seed_{seed}")
        dist = distribution_of(seed, args.distribution)
        try:
            text, cmd = gen_text(args.ulpscope, seed, args.ops, args.types)
            exe = capture.compile_hlo_text(text)
            after, debug = capture._newest_dump(f"gen_{seed}")  # noqa: SLF001
            if not after:
                raise RuntimeError("XLA wrote no after_optimizations dump")
            with open(after) as f:
                comp = GenModule(f.read(), capture._debug_options(debug))  # noqa: SLF001
            inputs = draw(comp.module, dist, seed)
            outputs = capture._run_executable(exe, inputs)  # noqa: SLF001
            extra = {"generator": {"command": " ".join(["ulpscope"] + cmd[1:]),
                                   "seed": seed, "ops": args.ops, "types": args.types,
                                   "generated_sha256": hashlib.sha256(text.encode()).hexdigest()}}
            capture.write_case(case_dir, comp, inputs, outputs, function="ulpscope gen",
                               kernel_name=f"gen_{seed}", dtype="random", seed=seed,
                               distribution=dist, notes="random kernel (tools/fuzz_xla)",
                               extra=extra)
            with open(os.path.join(case_dir, "generated.hlo"), "w") as f:
                f.write(text)
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
    cmd = [args.ulpscope, "batch", root, "--out", index, "--profile", profile,
           "-j", str(args.jobs), "--quiet", "--top", "0", "--restart"]
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
    for p in parts:
        cmd = [sys.executable, os.path.abspath(__file__), "--part", p,
               "--ulpscope", args.ulpscope, "--out", args.out, "--seeds", seeds,
               "--ops", str(args.ops), "--types", args.types,
               "--distribution", ",".join(args.distribution)]
        r = subprocess.run(cmd)
        if r.returncode != 0:
            print(f"fuzz_xla: the {p} capture process failed (exit {r.returncode})",
                  file=sys.stderr)
            return 1
    t_capture = time.time() - t0
    summary = {"seeds": len(args.seeds), "ops": args.ops, "types": args.types or "all",
               "distributions": args.distribution, "capture_seconds": round(t_capture, 1),
               "settings": {}}
    status = 0
    for p in parts:
        sub, profile = SETTINGS[p]
        with open(os.path.join(args.out, sub, "capture_failures.json")) as f:
            cap_fail = json.load(f)
        rows = [] if args.no_judge else judge(args, p)
        verdicts = {}
        for r in rows:
            key = r["verdict"] if r["status"] == "ok" else r["status"]
            verdicts[key] = verdicts.get(key, 0) + 1
        flagged = [r for r in rows if r["status"] != "ok" or
                   r["verdict"] in ("defect", "suspicious", "undecided")]
        summary["settings"][sub] = {
            "profile": profile, "captured": len(args.seeds) - len(cap_fail),
            "capture_failures": cap_fail, "verdicts": verdicts,
            "flagged": [{k: r[k] for k in ("path", "status", "verdict", "message",
                                           "n_defect", "n_suspicious", "max_ulp_oracle")}
                        for r in flagged]}
        print(f"{sub} ({profile}): {len(args.seeds)} seeds, {len(cap_fail)} not captured, "
              + ", ".join(f"{n} {k}" for k, n in sorted(verdicts.items())))
        for r in flagged:
            print(f"  {r['verdict'] or r['status']}: {r['path']}: {r['message']}")
        for c in cap_fail:
            print(f"  not captured: seed {c['seed']}: {c['error']}")
        if verdicts.get("defect"):
            status = 4
        elif status != 4 and any(r["status"] != "ok" for r in rows) or cap_fail:
            status = max(status, 6) if status != 4 else 4
        elif status == 0 and verdicts.get("suspicious"):
            status = 3
        elif status == 0 and verdicts.get("undecided"):
            status = 5
    summary["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    print(f"fuzz_xla: {summary['seconds']} s (capture {t_capture:.1f} s); "
          f"summary: {os.path.join(args.out, 'summary.json')}")
    return status


if __name__ == "__main__":
    sys.exit(main())
