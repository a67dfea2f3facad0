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
  - no stage changes the function, but where a pass folds a division by a
    constant into a multiplication by its rounded reciprocal.

And for every pipeline, the passes that change the arithmetic are found
from the texts alone (facts.py, with no part of ulpscope), and the audit
must agree with them (docs/audit.md, "Pipelines": which fact each pipeline
is checked against):

  - EXACT pipelines: the stages the audit says moved are exactly those
    after which the module's rounding signature changed, and the biggest
    move is the fact's stage (the first reduce-window where a reduction was
    split; the first f32 dot where a bf16 one was computed in f32; the
    multiplication by the reciprocal where a division by a constant was
    folded); none moved, and none is named, where the signature never
    changes (neutral everywhere);
  - every pipeline: no stage moves that the fact says left the arithmetic
    alone (in the bf16 norms and softmax the f32 intermediates change below
    what the bf16 result can show, so a move there is possible, not
    required);
  - the function moves exactly at the stages that fold a constant's
    inexact reciprocal (x / 3 -> x * 0.333333343).
"""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import facts  # noqa: E402

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


# The pipelines whose every signature change shows in the strict reference
# of a 1-sample normal draw: a split f32 sum, a bf16 sum kept rounding to
# bf16 at each step but split, a dot moved from bf16 to f32, a constant's
# reciprocal folded.  For the others (f32 statistics of a bf16 result,
# divisions by 128 = multiplications by 2^-7) the fact allows a move but
# does not require one.
EXACT = {"softmax_f32", "log_softmax_f32", "mean_f32", "divconst_f32",
         "dot_bf16", "sum_bf16", "attention_logits_f32", "gelu_erf_f32",
         "gelu_tanh_bf16", "silu_bf16", "swiglu_bf16"}


def check_facts(name, stages, r):
    texts = []
    for s in stages:
        with open(s["path"]) as f:
            texts.append(f.read())
    math = facts.signature_changes(texts)
    folded = facts.reciprocal_folds(texts)
    moved = {k for k, s in enumerate(stages) if s["moved"]}
    fn = {k for k, s in enumerate(stages) if s["function_moved"]}
    biggest = next((k for k, s in enumerate(stages)
                    if s["label"] == r["biggest"]), None)
    assert moved <= math, (name, "moved where the arithmetic did not change",
                           sorted(moved - math), sorted(math))
    assert fn == folded, (name, "function moved", sorted(fn), sorted(folded))
    if name in EXACT:
        assert moved == math, (name, sorted(moved), sorted(math))
        if not math:
            assert r["biggest"] is None and r["descent"] is None, name
        else:
            want = facts.first_stage(texts, facts.split_reduction)
            if want is None:
                want = facts.first_stage(texts, facts.f32_dot)
            if want is None:
                want = min(folded)
            assert biggest == want, (name, biggest, want)
    return sorted(math), sorted(folded)


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
        changed = False
        for s in stages:
            assert s["evaluated"], (name, s["label"], s["note"])
            # The function, once changed, stays so (no pass undoes it).
            changed = changed or s["function_moved"]
            assert s["function_changed"] == changed, (name, s["label"])
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
        if name.endswith("_bf16") and name not in ("sum_bf16", "dot_bf16"):
            with open(stages[0]["path"]) as f0, open(stages[-1]["path"]) as f1:
                assert converts(f1.read()) > converts(f0.read()), name
            assert not moved, (name, moved)
        math, folded = check_facts(name, stages, r)
        print(f"{name}: {len(stages)} stages, moved {moved}, biggest "
              f"{r['biggest']}; arithmetic changed at {math}, function at "
              f"{folded}")


if __name__ == "__main__":
    main()
