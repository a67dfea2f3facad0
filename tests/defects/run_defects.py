#!/usr/bin/python3
"""The defect corpus (data/defects/): does ulpscope catch and name defects
that real XLA:CPU produced?

  run_defects.py ULPSCOPE_CLI DEFECTS_DIR

Every case of data/defects/ holds the optimized HLO and inputs of a correct
kernel and the device output of a deliberately wrong JAX function compiled
by XLA:CPU (tools/capture/defects.py, mutants.py).  Its case.json labels the
defect: `defect.op` (the instruction of kernel.hlo to blame), `mutation`
(the kind, docs/signatures.md), `legit` (the case's profile allows the
mutation), `expressible` (the signature catalogue can express it as one
op's mutation) and optionally `equivalent` (other (op, mutation) pairs
that give the same bits by construction).  The labels come from how the
mutant was written, not from ulpscope.

For every case, under the case's profile (case.json `profile`, else the
platform's: xla-cpu):

  ULPSCOPE_CLI check CASE --profile P --json --worst 0
      a defect (legit false) must get verdict defect; a legit case must
      not (legit or suspicious);
  ULPSCOPE_CLI signature CASE --profile P --json --top 10
      (defects only) the rank of the labelled op + mutation (or an
      equivalent) among the candidates: rank 1 when it is the best or
      tied with the best; "accepted" when, besides, the verdict is
      explained.  output-zero has no op: its mutation alone is matched.

The goals (issue 13), per corpus:
  check      verdict defect on >= 99% of the defects
  legit      every legit-by-profile case stays legit
  accepted   signature accepts the right op + mutation first on >= 90%
             of the expressible defects
  top3       ... ranks it within the top 3 on >= 97% of them
The figures are printed per mutation kind and in total, whatever happens.
USC_DEFECTS_ENFORCE (comma list of goal names, "all" or "none"; default
"all") says which goals make the test fail; tests/defects/tests.cmake
sets it to the goals the code meets, so that a goal is turned on by
editing that one line.

Environment: USC_DEFECTS_CASES (comma list of KERNEL/CASE) runs those
cases only; USC_DEFECTS_SIGNATURE=0 skips the signature runs (the check
goals only).  Exit status 0 when every enforced goal holds, 1 otherwise,
2 on usage errors.  Python's standard library only.
"""

import json
import os
import subprocess
import sys

GOALS = {"check": 0.99, "legit": 1.0, "accepted": 0.90, "top3": 0.97}
DEFAULT_PROFILE = {"cpu": "xla-cpu", "gpu": "xla-gpu", "tpu": "xla-tpu"}


def find_cases(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if "case.json" in filenames:
            out.append(os.path.relpath(dirpath, root))
    return sorted(out)


def profile_of(d, case):
    """The profile the case is judged under: case.json's `profile` (a
    built-in name, or a file relative to the case), else the platform's."""
    p = case.get("profile")
    if p:
        f = os.path.normpath(os.path.join(d, p))
        return f if os.path.exists(f) else p
    prof = DEFAULT_PROFILE[case.get("platform", "cpu")]
    if prof == "xla-cpu" and case.get("xla_cpu_enable_fast_math"):
        prof = "xla-cpu-fast-math"
    return prof


def run_json(args):
    p = subprocess.run(args, capture_output=True, text=True)
    try:
        return p.returncode, json.loads(p.stdout)
    except ValueError:
        return p.returncode, {"error": (p.stderr or p.stdout).strip()[:300]}


def matches(cand, label):
    want = [(label["op"], label["mutation"])]
    want += [(e["op"], e["mutation"]) for e in label.get("equivalent", [])]
    if cand.get("mutation") == "output-zero" == label["mutation"]:
        return True
    return (cand.get("op"), cand.get("mutation")) in want


def rank_of(doc, label):
    """1 for the best (or tied with it), else the 1-based position; None
    when the labelled mutation is not among the candidates."""
    for k, c in enumerate(doc.get("candidates") or []):
        if matches(c, label):
            return 1 if (k == 0 or c.get("tied_best")) else k + 1
    return None


def pct(n, d):
    return f"{n}/{d} ({100.0 * n / d:.1f}%)" if d else "0/0"


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    cli, root = argv[1], argv[2]
    enforce = os.environ.get("USC_DEFECTS_ENFORCE", "all")
    enforce = set(GOALS) if enforce == "all" else \
        set() if enforce == "none" else {g for g in enforce.split(",") if g}
    bad = enforce - set(GOALS)
    if bad:
        print(f"USC_DEFECTS_ENFORCE: unknown goal(s) {', '.join(sorted(bad))} "
              f"(expected {', '.join(GOALS)}, all or none)", file=sys.stderr)
        return 2
    want = {c for c in os.environ.get("USC_DEFECTS_CASES", "").split(",") if c}
    do_sig = os.environ.get("USC_DEFECTS_SIGNATURE", "1") != "0"
    cases = [c for c in find_cases(root) if not want or c in want]
    if not cases:
        print(f"{root}: no case selected")
        return 1

    kinds = {}
    total = {"defects": 0, "caught": 0, "legit": 0, "legit_kept": 0,
             "expressible": 0, "accepted": 0, "first": 0, "top3": 0}
    for rel in cases:
        d = os.path.join(root, rel)
        with open(os.path.join(d, "case.json")) as f:
            case = json.load(f)
        label = case.get("defect")
        if not label:
            print(f"FAIL {rel}: case.json has no 'defect' label")
            return 1
        prof = profile_of(d, case)
        k = kinds.setdefault(label["mutation"], dict.fromkeys(total, 0))
        rc, doc = run_json([cli, "check", d, "--profile", prof, "--json", "--worst", "0"])
        verdict = doc.get("verdict", "error: " + doc.get("error", ""))
        line = f"{rel}: {label['mutation']} on {label['op']} ({os.path.basename(prof)}): " \
               f"check {verdict}"
        if label.get("legit"):
            for t in (k, total):
                t["legit"] += 1
            ok = verdict in ("legit", "suspicious")
            for t in (k, total):
                t["legit_kept"] += ok
            print(line + ("" if ok else "  <- a legitimate output judged not legit"))
            continue
        for t in (k, total):
            t["defects"] += 1
            t["caught"] += verdict == "defect"
        if not label.get("expressible") or not do_sig:
            print(line + ("" if verdict == "defect" else "  <- missed")
                  + ("" if label.get("expressible") else "; not expressible"))
            continue
        rc, sig = run_json([cli, "signature", d, "--profile", prof, "--json", "--top", "10"])
        r = rank_of(sig, label)
        accepted = r == 1 and sig.get("verdict") == "explained"
        for t in (k, total):
            t["expressible"] += 1
            t["first"] += r == 1
            t["accepted"] += accepted
            t["top3"] += r is not None and r <= 3
        best = (sig.get("candidates") or [{}])[0]
        print(line + ("" if verdict == "defect" else "  <- missed") +
              f"; signature {sig.get('verdict', sig.get('error'))}, labelled rank "
              f"{r if r else '-'}{' (accepted)' if accepted else ''}, best "
              f"{best.get('op')} {best.get('mutation')}")

    print("\nper mutation: defects caught by check | expressible: accepted first, "
          "ranked first, top 3 | legit kept")
    for name in sorted(kinds):
        t = kinds[name]
        print(f"  {name:24s} {pct(t['caught'], t['defects']):>14s} | "
              f"{pct(t['accepted'], t['expressible']):>12s} {pct(t['first'], t['expressible']):>12s} "
              f"{pct(t['top3'], t['expressible']):>12s} | {pct(t['legit_kept'], t['legit'])}")
    figures = {
        "check": (total["caught"], total["defects"]),
        "legit": (total["legit_kept"], total["legit"]),
        "accepted": (total["accepted"], total["expressible"]),
        "top3": (total["top3"], total["expressible"]),
    }
    if not do_sig:
        figures.pop("accepted")
        figures.pop("top3")
    failed = []
    print(f"\nranked first (accepted or not): {pct(total['first'], total['expressible'])}")
    for goal, (n, dn) in figures.items():
        met = dn == 0 or n >= GOALS[goal] * dn
        state = "met" if met else "NOT MET"
        on = "enforced" if goal in enforce else "reported only"
        print(f"goal {goal:8s} >= {100 * GOALS[goal]:.0f}%: {pct(n, dn)} {state} ({on})")
        if not met and goal in enforce:
            failed.append(goal)
    if failed:
        print(f"FAIL: enforced goal(s) not met: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
