"""`ulpscope audit --pipeline` with --fail-on-regression and --out.

Synthetic pipelines are made from the hand-written pairs of
tests/audit/pairs (each pair's effect derived by hand in test_audit.c and
docs/audit.md), laid out under XLA's dump names: the first file is the
input (before_optimizations), each next one the module after a pass, the
last one repeated as cpu_after_optimizations.  So which pass regresses,
changes the function or is neutral is known from the pairs:

  status  the gate's exit status is the worst pass's, and it names that
          pass: a round trip inserted (3), after an elision that made the
          pipeline's end no worse than its input (3 still: the pass is
          judged against the stage before it); x * 0 -> 0 on specials (4);
          x / 3 -> x * RN(1/3), a folded constant and a split sum (0);
  out     the result file's pipeline group, read with h5py (exit status
          77 without h5py): the layout docs/audit.md gives, each stage's
          audit a complete audit group, the stage table's gates; a single
          audit appended beside it keeps its own layout.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ["USC_SOURCE_DIR"]
CLI = os.environ["USC_CLI"]
PAIRS = os.path.join(SRC, "tests", "audit", "pairs")


def pipeline(tmp, name, files):
    """A dump directory: module jit_<name>, one stage per file."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    pre = f"module_0000.jit_{name}"
    shutil.copy(os.path.join(PAIRS, files[0]),
                os.path.join(d, f"{pre}.before_optimizations.txt"))
    for k, f in enumerate(files[1:]):
        stem = f.split(".")[0]
        shutil.copy(os.path.join(PAIRS, f), os.path.join(
            d, f"{pre}.{k:04d}.synthetic.after_{stem}.txt"))
    shutil.copy(os.path.join(PAIRS, files[-1]),
                os.path.join(d, f"{pre}.cpu_after_optimizations.txt"))
    return d


def audit(d, *args):
    return subprocess.run([CLI, "audit", "--pipeline", d] + list(args),
                          capture_output=True, text=True)


def gate(d, dist, t, status, stage):
    p = audit(d, "--draw", dist, "--fail-on-regression", str(t), "--json")
    assert p.returncode == status, (d, p.returncode, p.stderr)
    r = json.loads(p.stdout)
    assert r["exit_status"] == status, r["exit_status"]
    assert r["gate_stage"] == stage, (d, r["gate_stage"], stage)
    # The text form says the same.
    p = audit(d, "--draw", dist, "--fail-on-regression", str(t))
    assert p.returncode == status, (d, p.returncode)
    if status:
        assert f"FAILED (exit status {status}) at stage" in p.stdout
        assert stage in p.stdout
    else:
        assert "passed" in p.stdout, p.stdout[-400:]


def status(tmp):
    regress = pipeline(tmp, "regress", ["roundtrip_after.hlo",
                                        "roundtrip_before.hlo"])
    gate(regress, "normal", 1, 3, "0000.synthetic: roundtrip_before")
    # Elided, then inserted again: the end is the input's text, but the
    # second pass regressed (max 1/2 -> 2^16 ulps).
    back = pipeline(tmp, "back", ["roundtrip_before.hlo",
                                  "roundtrip_after.hlo",
                                  "roundtrip_before.hlo"])
    gate(back, "normal", 1, 3, "0001.synthetic: roundtrip_before")
    fn = pipeline(tmp, "fn", ["mulzero_before.hlo", "mulzero_after.hlo"])
    gate(fn, "specials", 1, 4, "0000.synthetic: mulzero_after")
    # x / 3 -> x * RN(1/3): the function moves by at most 1/2 ulp, the
    # error by at most 1/3 ulp (1/3 -> 2/3): neutral at 1, a changed
    # function at 1/4.
    div = pipeline(tmp, "div", ["divconst_before.hlo", "divconst_after.hlo"])
    gate(div, "normal", 1, 0, None)
    gate(div, "normal", 0.25, 4, "0000.synthetic: divconst_after")
    fold = pipeline(tmp, "fold", ["foldconst_before.hlo",
                                  "foldconst_after.hlo"])
    gate(fold, "normal", 1, 0, None)
    tree = pipeline(tmp, "tree", ["sumtree_before.hlo", "sumtree_after.hlo"])
    gate(tree, "normal", 1, 0, None)
    # A real pipeline in which every pass keeps or improves precision.
    gate(os.path.join(SRC, "data", "pipelines", "softmax_f32"), "normal", 1,
         0, None)
    print("status: ok")


def out(tmp):
    try:
        import h5py
    except ImportError:
        print("h5py is missing: skipped")
        sys.exit(77)
    back = pipeline(tmp, "back", ["roundtrip_before.hlo",
                                  "roundtrip_after.hlo",
                                  "roundtrip_before.hlo"])
    f = os.path.join(tmp, "a.h5")
    p = audit(back, "--draw", "normal", "--samples", "2",
              "--fail-on-regression", "1", "--out", f)
    assert p.returncode == 3, (p.returncode, p.stderr)
    # A single audit beside it, in its own layout.
    s = subprocess.run([CLI, "audit", os.path.join(PAIRS, "sumtree_before.hlo"),
                        os.path.join(PAIRS, "sumtree_after.hlo"), "--draw",
                        "normal", "--out", f, "--append"],
                       capture_output=True, text=True)
    assert s.returncode == 0, s.stderr
    # The same name again is refused.
    p = audit(back, "--draw", "normal", "--out", f, "--append")
    assert p.returncode == 1 and "already in the file" in p.stderr, p.stderr
    with h5py.File(f, "r") as h:
        a = h["audits"]
        assert sorted(a) == ["jit_back", "sumtree_before->sumtree_after"], \
            list(a)
        single = a["sumtree_before->sumtree_after"]
        assert "pipeline" not in single.attrs
        assert single.attrs["verdict"].decode() == "improved"
        g = a["jit_back"]
        assert g.attrs["pipeline"].decode() == back
        assert g.attrs["module"].decode() == "jit_back"
        assert g.attrs["stage_count"] == 4
        assert g.attrs["threshold"] == 1
        assert g.attrs["gate"] == 3 and g.attrs["gate_stage"] == 2
        assert g.attrs["biggest_index"] in (1, 2)
        t = g["stages"][()]
        assert list(t["index"]) == [0, 1, 2, 3]
        assert [x.decode() for x in t["pass"]] == [
            "", "roundtrip_after", "roundtrip_before",
            "cpu_after_optimizations"]
        assert list(t["evaluated"]) == [1, 1, 1, 1]
        # Stage 2 is stage 0's text (bar the header) and is evaluated
        # apart; stage 3 repeats stage 2.
        assert list(t["same_as"]) == [-1, -1, -1, 2], list(t["same_as"])
        assert list(t["gate"]) == [0, 0, 3, 0], list(t["gate"])
        assert list(t["moved"]) == [0, 1, 1, 0]
        # Stages 0 and 2 are one program: the same figures.
        assert t["max"][0] == t["max"][2] and t["max"][1] < 1
        # Every evaluated stage is a complete audit group; a repeat has
        # none; the descent is one.
        assert sorted(k for k in g if k != "stages") == [
            "0", "1", "2", "descent"], list(g)
        for k in ("0", "1", "2", "descent"):
            s = g[k]
            for attr in ("before", "after", "verdict", "reason", "samples",
                         "outputs", "function_changed"):
                assert attr in s.attrs, (k, attr)
            assert s.attrs["samples"] == 2
            assert s["outputs/0/samples"].shape == (3,)
            assert s["outputs/0/ulp_after"].shape == (2, 256), \
                s["outputs/0/ulp_after"].shape
        assert g["1"].attrs["verdict"].decode() == "improved"
        assert g["2"].attrs["verdict"].decode() == "neutral"
        assert g["descent"]["ops"].shape[0] >= 1
    print("out: ok")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        {"status": status, "out": out}[sys.argv[1]](tmp)


if __name__ == "__main__":
    main()
