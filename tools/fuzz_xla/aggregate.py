#!/usr/bin/env python3
"""Totals of a campaign (tools/fuzz_xla/campaign.sh): every
OUT/chunk_*/summary.json summed into OUT/campaign.json, and printed.

    aggregate.py OUT

Exit status: 0 when no case is a defect, suspicious or not checked
without a triaged finding (undecided cases are counted, allowed), else 1.
"""
import glob
import json
import os
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = argv[1]
    chunks = sorted(glob.glob(os.path.join(out, "chunk_*", "summary.json")))
    if not chunks:
        print(f"aggregate: no chunk_*/summary.json under {out}", file=sys.stderr)
        return 2
    total = {"chunks": len(chunks), "seeds": 0, "seconds": 0.0, "settings": {}}
    for path in chunks:
        with open(path) as f:
            s = json.load(f)
        total["seeds"] += s["seeds"]
        total["seconds"] += s.get("seconds", 0.0)
        for sub, st in s["settings"].items():
            t = total["settings"].setdefault(sub, {
                "profile": st["profile"], "captured": 0, "not_captured": 0,
                "verdicts": {}, "triaged": {}, "untriaged": []})
            t["captured"] += st["captured"]
            t["not_captured"] += len(st["capture_failures"])
            for k, v in st["verdicts"].items():
                t["verdicts"][k] = t["verdicts"].get(k, 0) + v
            for x in st["flagged"]:
                if x["finding"]:
                    t["triaged"][x["finding"]] = t["triaged"].get(x["finding"], 0) + 1
                elif x["status"] == "ok" and x["verdict"] == "undecided":
                    # ulpscope declining to judge: counted, not a false defect.
                    t["undecided_untriaged"] = t.get("undecided_untriaged", 0) + 1
                else:
                    t["untriaged"].append(x)
            for c in st["capture_failures"]:
                t["untriaged"].append({"path": f"seed {c['seed']}", "status": "not captured",
                                       "verdict": "", "message": c["error"]})
    bad = 0
    print(f"campaign {out}: {total['seeds']} seeds in {total['chunks']} chunks, "
          f"{total['seconds'] / 60:.1f} min")
    for sub, t in sorted(total["settings"].items()):
        checked = sum(t["verdicts"].values())
        print(f"  {sub} ({t['profile']}): {t['captured']} captured, {t['not_captured']} not; "
              f"{checked} checked: " +
              ", ".join(f"{v} {k}" for k, v in sorted(t["verdicts"].items())))
        if t["triaged"]:
            print("    triaged: " + ", ".join(f"{k} x{v}" for k, v in sorted(t["triaged"].items())))
        if t.get("undecided_untriaged"):
            print(f"    undecided without a finding (allowed): {t['undecided_untriaged']}")
        for x in t["untriaged"]:
            print(f"    UNTRIAGED {x['verdict'] or x['status']}: {x['path']}: {x['message']}")
        bad += len(t["untriaged"])
    with open(os.path.join(out, "campaign.json"), "w") as f:
        json.dump(total, f, indent=1)
        f.write("\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
