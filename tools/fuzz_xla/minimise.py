#!/usr/bin/env python3
"""Minimise a flagged case of a campaign (docs/fuzzing.md, "Minimising a
finding"): the smallest module, reached one `ulpscope reduce` step at a
time, whose run through XLA:CPU still gets the case's verdict.

    minimise.py CASE_DIR OUT --ulpscope build/ulpscope [--verdict defect]

CASE_DIR is a case the runner wrote (generated.hlo, input_*.npy,
case.json; the fast-math setting and profile come from case.json unless
given).  Each round asks `ulpscope reduce MODULE --candidates` for the
modules one step smaller (dead code dropped, an output dropped, an op
replaced by an operand or a parameter of its shape, a constant set to
0/1/2, a dimension halved), tries them smallest first, compiling and
running each on XLA:CPU with the case's inputs (by parameter name; a
halved dimension keeps the first or the second half of each input) and
judging it with `ulpscope check`, and keeps the first whose verdict is the
wanted one.  It stops when no candidate keeps it.  In OUT:

    minimal.hlo     the smallest module
    minimal/        its case directory (inputs, XLA's output)
    signature.txt   `ulpscope signature minimal/`
    explain.txt     `ulpscope explain minimal/` of its worst element
    steps.json      each kept step: what changed, the size, the seconds

Exit status: 0 minimised (or nothing smaller keeps the verdict), 1 the
case's own verdict is not the wanted one or a tool failed, 2 usage.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", "capture"))

import numpy as np  # noqa: E402

PARAM = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\s+parameter\((\d+)\)", re.M)
CAND = re.compile(r"^// candidate \d+: (.*) \(instrs (\d+) outputs (\d+) elements (\d+) "
                  r"constants (\d+)\)$")


def params_of(text):
    """[name] of the entry's parameters in number order (the last
    computation with parameters is the entry in the printer's output)."""
    entry = text[text.rfind("ENTRY"):] if "ENTRY" in text else text
    found = sorted(((int(n), name) for name, n in PARAM.findall(entry)))
    return [name for _, name in found]


def candidates(ulpscope, path):
    """[(what, size tuple, text)] of `ulpscope reduce PATH --candidates`."""
    r = subprocess.run([ulpscope, "reduce", path, "--candidates"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"ulpscope reduce {path}: {r.stderr.strip()}")
    out = []
    for chunk in r.stdout.split("// -----\n"):
        if not chunk.strip():
            continue
        head, _, body = chunk.partition("\n")
        m = CAND.match(head)
        if not m:
            raise RuntimeError(f"ulpscope reduce: unexpected line {head!r}")
        out.append((m.group(1), tuple(int(m.group(k)) for k in range(2, 6)), body))
    return out


def verdict_of(ulpscope, case_dir, profile):
    r = subprocess.run([ulpscope, "check", case_dir, "--profile", profile, "--json"],
                       capture_output=True, text=True)
    try:
        return json.loads(r.stdout)["verdict"]
    except (ValueError, KeyError):
        return f"error: {r.stderr.strip()}"


def input_choices(what, names, inputs):
    """The input lists to try for a candidate: one, or for a halved
    dimension the first and the second half of every input."""
    words = what.split()
    if words[0] != "shrink":
        return [[inputs[n] for n in names]]
    dim, frm, to = (int(w) for w in words[1:4])
    out = []
    for start in (0, frm - to):
        arrays = []
        for n in names:
            x = inputs[n]
            if x.ndim > dim and x.shape[dim] == frm:
                x = np.take(x, range(start, start + to), axis=dim)
            arrays.append(x)
        out.append(arrays)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case")
    ap.add_argument("out")
    ap.add_argument("--ulpscope", required=True)
    ap.add_argument("--verdict", help="the verdict to keep (default: the case's own)")
    ap.add_argument("--profile", help="default: xla-cpu or xla-cpu-fast-math, by case.json")
    ap.add_argument("--fast-math", choices=("off", "on"), help="default: case.json's")
    ap.add_argument("--module", help="the module XLA was given (default: CASE/generated.hlo, "
                    "for a DAZ twin CASE.daz the one of CASE)")
    ap.add_argument("--max-tries", type=int, default=2000,
                    help="compilations at most (2000)")
    args = ap.parse_args(argv)
    with open(os.path.join(args.case, "case.json")) as f:
        case = json.load(f)
    fast = args.fast_math or ("on" if case.get("xla_cpu_enable_fast_math") else "off")
    profile = args.profile or ("xla-cpu-fast-math" if fast == "on" else "xla-cpu")
    module = args.module or os.path.join(args.case, "generated.hlo")
    if not args.module and not os.path.exists(module) and args.case.rstrip("/").endswith(".daz"):
        module = os.path.join(args.case.rstrip("/")[:-len(".daz")], "generated.hlo")
    with open(module) as f:
        text = f.read()
    import capture
    import run
    capture.setup(fast_math=fast == "on", extra_flags=run.DUMP_FLAGS)

    names = params_of(text)
    inputs = {}
    for rec in case["inputs"]:
        k = int(rec["entry_parameter"])
        x = np.load(os.path.join(args.case, rec["file"]), allow_pickle=False)
        inputs[names[k]] = x.view(capture._np_dtype(rec["type"].split("[")[0]))  # noqa: SLF001
    target = args.verdict or verdict_of(args.ulpscope, args.case, profile)
    if target in ("legit",) or target.startswith("error"):
        print(f"minimise: {args.case} is {target} under {profile}; nothing to keep",
              file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    work = os.path.join(args.out, "work")
    cur = os.path.join(args.out, "current.hlo")
    with open(cur, "w") as f:
        f.write(text)
    t0 = time.time()
    steps, tries = [], 0

    def attempt(body, arrays):
        nonlocal tries
        tries += 1
        shutil.rmtree(work, ignore_errors=True)
        try:
            run.capture_text(body, work, inputs=arrays, notes="minimise.py candidate")
        except Exception as e:  # XLA refusing a candidate is not fatal
            print(f"minimise: XLA: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
            return False
        return verdict_of(args.ulpscope, work, profile) == target

    while tries < args.max_tries:
        kept = False
        for what, size, body in sorted(candidates(args.ulpscope, cur), key=lambda c: c[1]):
            cnames = params_of(body)
            for arrays in input_choices(what, cnames, inputs):
                if attempt(body, arrays):
                    kept = True
                    break
            if kept:
                inputs = {n: a for n, a in zip(cnames, arrays)}
                with open(cur, "w") as f:
                    f.write(body)
                with open(os.path.join(work, "generated.hlo"), "w") as f:
                    f.write(body)
                final = os.path.join(args.out, "minimal")
                shutil.rmtree(final, ignore_errors=True)
                shutil.copytree(work, final)
                steps.append({"what": what, "size": dict(zip(
                    ("instrs", "outputs", "elements", "constants"), size)),
                    "tries": tries, "seconds": round(time.time() - t0, 1)})
                print(f"minimise: kept {what}: {size[0]} instructions, "
                      f"{size[2]} elements ({tries} tries)", flush=True)
                break
            if tries >= args.max_tries:
                break
        if not kept:
            break
    shutil.rmtree(work, ignore_errors=True)
    final = os.path.join(args.out, "minimal")
    if not steps:
        print(f"minimise: no smaller module keeps {target}", file=sys.stderr)
        shutil.rmtree(final, ignore_errors=True)
        shutil.copytree(args.case, final)
    shutil.copyfile(cur, os.path.join(args.out, "minimal.hlo"))
    os.remove(cur)
    with open(os.path.join(args.out, "steps.json"), "w") as f:
        json.dump({"case": args.case, "profile": profile, "verdict": target,
                   "tries": tries, "seconds": round(time.time() - t0, 1), "steps": steps},
                  f, indent=1)
        f.write("\n")
    sig = subprocess.run([args.ulpscope, "signature", final, "--profile", profile],
                         capture_output=True, text=True)
    with open(os.path.join(args.out, "signature.txt"), "w") as f:
        f.write(sig.stdout + sig.stderr)
    worst = subprocess.run([args.ulpscope, "check", final, "--profile", profile, "--json",
                            "--worst", "1"], capture_output=True, text=True)
    explain = ""
    try:
        doc = json.loads(worst.stdout)
        el = worst_element(doc)
        if el is not None:
            out_k, idx = el
            e = subprocess.run([args.ulpscope, "explain", final, "--profile", profile,
                                "--output", str(out_k), "--element",
                                ",".join(str(i) for i in idx)],
                               capture_output=True, text=True)
            explain = e.stdout + e.stderr
    except ValueError:
        explain = worst.stderr
    with open(os.path.join(args.out, "explain.txt"), "w") as f:
        f.write(explain)
    print(f"minimise: {target} kept in {os.path.join(args.out, 'minimal.hlo')} after "
          f"{len(steps)} steps, {tries} compilations, {time.time() - t0:.1f} s")
    with open(os.path.join(args.out, "minimal.hlo")) as f:
        print(f.read(), end="")
    print(sig.stdout, end="")
    return 0


def worst_element(doc):
    """(output number, index) of the worst flagged element of check --json."""
    for k, out in enumerate(doc.get("outputs", [])):
        for w in out.get("worst", []):
            idx = w.get("index")
            if idx is not None:
                return k, idx if isinstance(idx, list) else [idx]
    return None


if __name__ == "__main__":
    sys.exit(main())
