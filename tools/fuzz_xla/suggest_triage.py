#!/usr/bin/env python3
"""Proposes triage.json entries for the untriaged flagged cases of a run or
a campaign, by the signatures of known findings; a person looks at each
case (docs/fuzzing.md, "Minimising and reporting a finding") before
pasting the entry into tools/fuzz_xla/triage.json.

    suggest_triage.py OUT [OUT...]      # run.py or campaign.sh directories

Signatures (a suggestion, never a verdict):
  F4  the module has cbrt, the inputs hold f32/bf16 subnormals, and a
      flagged output holds -5.5951735e-16 or its bf16/f16 rounding
  F3  the module has an f16 exponential-minus-one and the worst element
      is in an f16 output
Cases that match nothing are listed as such.
"""
import glob
import json
import os
import re
import sys

import numpy as np

F4_VALUE = -5.5951735e-16


def summaries(roots):
    for root in roots:
        for path in sorted(glob.glob(os.path.join(root, "summary.json")) +
                           glob.glob(os.path.join(root, "chunk_*", "summary.json"))):
            with open(path) as f:
                yield json.load(f)


def outputs(case_dir, case):
    """(type, values as float64) of each device output."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))), "tools", "capture"))
    import hlo_text
    for rec in case["outputs"]:
        t = rec["type"].split("[")[0]
        x = np.load(os.path.join(case_dir, rec["file"]), allow_pickle=False)
        try:
            x = x.view(hlo_text.hlo_to_numpy_dtype(t))
            yield t, x.astype(np.float64)
        except (TypeError, ValueError, ImportError):
            yield t, None


def suggest(case_dir, row):
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    base = case_dir[:-len(".daz")] if case_dir.endswith(".daz") else case_dir
    try:
        with open(os.path.join(base, "generated.hlo")) as f:
            text = f.read()
    except OSError:
        return None, "no generated.hlo"
    outs = list(outputs(case_dir, case))
    if "cbrt(" in text and case.get("distribution") == "denormal":
        for t, v in outs:
            if v is not None and np.any(np.abs(v - F4_VALUE) <= 1e-18):
                return "F4", (f"cbrt of a subnormal input: output of type {t} holds "
                              f"{F4_VALUE!r} (or its rounding)")
    if re.search(r"f16\[[0-9,]*\] exponential-minus-one\(", text):
        m = re.search(r"worst: output (\d+)", row["message"])
        if m and outs[int(m.group(1))][0] == "f16":
            return "F3", f"f16 exponential-minus-one; the worst element is in f16 output {m.group(1)}"
    return None, "no known signature"


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    entries, unknown = [], []
    for s in summaries(argv[1:]):
        for sub, st in s["settings"].items():
            for x in st["flagged"]:
                if x["finding"] or x["verdict"] == "undecided" or x["status"] != "ok":
                    continue
                p = x["path"].rstrip("/")
                finding, why = suggest(p, x)
                with open(os.path.join(p, "case.json")) as f:
                    gen = json.load(f)["generator"]
                e = {"setting": sub, "case": os.path.basename(p), "seed": gen["seed"],
                     "generated_sha256": gen["generated_sha256"][:16],
                     "finding": finding, "why": why}
                (entries if finding else unknown).append(e)
    for e in entries:
        print(json.dumps(e))
    for e in unknown:
        print("# no signature:", json.dumps(e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
