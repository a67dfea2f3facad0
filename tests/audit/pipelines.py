"""ulpscope audit --pipeline on XLA:CPU's real per-pass dumps (data/pipelines/).

For every recorded pipeline, the audit's stages and the passes it names are
checked against facts read from the dump files themselves, not from the
audit:

  - the stages are XLA's files in XLA's order: before_optimizations first,
    the numbered per-pass dumps by number, cpu_after_optimizations last;
  - a stage whose HLO text is the previous stage's, bar the header line,
    is recognized as such (not evaluated again) and cannot have moved;
  - softmax_f32 and log_softmax_f32: the biggest move is the first module
    whose text holds a reduce-window (XLA:CPU's tree_reduction_rewriter
    splits each row's sum into a reduce-window and a reduce), named by that
    pass, and the descent into it shows the sum split with a smaller error;
    softmax_f32 moves once before, at the first module whose text
    multiplies by the reciprocal where it divided (algsimp);
  - the bf16 kernels gain their f32 round trips (the text's count of
    converts rises; XLA:CPU computes bf16 arithmetic in f32) without any
    reference element moving: the double rounding of one elementwise op
    through f32 is innocuous (f32 has more than 2 * 8 + 2 bits);
  - no stage changes the function.
"""

import json
import os
import re
import subprocess
import sys

SRC = os.environ["USC_SOURCE_DIR"]
CLI = os.environ["USC_CLI"]
ROOT = os.path.join(SRC, "data", "pipelines")


def body(path):
    with open(path) as f:
        lines = f.read().splitlines()
    return "\n".join(l for l in lines if not l.startswith("HloModule "))


def order_key(name):
    rest = name.split(".", 2)[2]
    if rest == "before_optimizations.txt":
        return (0, 0)
    if rest.endswith("after_optimizations.txt"):
        return (2, 0)
    return (1, int(rest.split(".")[0]))


def audit(d):
    out = subprocess.run([CLI, "audit", "--pipeline", d, "--draw", "normal",
                          "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{d}: exit status {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def first_stage(stages, pred):
    for k, s in enumerate(stages):
        with open(s["path"]) as f:
            if pred(f.read()):
                return k
    return None


def converts(text):
    return len(re.findall(r"\bconvert\(", text))


def main():
    names = sorted(os.listdir(ROOT))
    assert len(names) >= 8, names
    for name in names:
        d = os.path.join(ROOT, name)
        files = sorted((f for f in os.listdir(d) if f.endswith(".txt")),
                       key=order_key)
        r = audit(d)
        stages = r["stages"]
        assert [os.path.basename(s["path"]) for s in stages] == files, name
        assert stages[0]["label"] == "before_optimizations"
        assert stages[-1]["label"] == "cpu_after_optimizations"
        prev = None
        for s in stages:
            assert s["evaluated"], (name, s["label"], s["note"])
            assert not s["function_changed"], (name, s["label"])
            text = body(s["path"])
            repeat = prev is not None and text == prev
            assert (s["same_as"] is not None) == repeat, (name, s["label"])
            if repeat:
                assert not s["moved"], (name, s["label"])
            prev = text
        moved = [k for k, s in enumerate(stages) if s["moved"]]
        if name in ("softmax_f32", "log_softmax_f32"):
            rw = first_stage(stages, lambda t: "reduce-window(" in t)
            assert rw is not None and rw in moved, (name, rw, moved)
            assert r["biggest"] == stages[rw]["label"], (name, r["biggest"])
            assert stages[rw]["pass"] == "tree_reduction_rewriter"
            ops = r["descent"]["ops"]
            split = [o for o in ops if o["kind"] == "split"
                     and "reduce_sum" in o["before"]]
            assert split and split[0]["change"] < 0, ops
        if name == "softmax_f32":
            rcp = first_stage(stages, lambda t: re.search(
                r"multiply\(.*op_name=\"jit\(softmax_f32\)/div\"", t))
            assert rcp is not None and rcp in moved and rcp < rw, (rcp, moved)
            assert stages[rcp]["pass"] == "algsimp"
            assert sorted(moved) == sorted({rw, rcp}), moved
        if name.endswith("_bf16"):
            with open(stages[0]["path"]) as f0, open(stages[-1]["path"]) as f1:
                assert converts(f1.read()) > converts(f0.read()), name
            assert not moved, (name, moved)
        print(f"{name}: {len(stages)} stages, moved {moved}, biggest "
              f"{r['biggest']}")


if __name__ == "__main__":
    main()
