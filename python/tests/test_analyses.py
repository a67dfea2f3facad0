"""explain, signature, bisect and the attribution from Python, against the
CLI's JSON on the same cases and against defects planted by hand."""
from __future__ import annotations

import json
import shutil
import subprocess

import ml_dtypes
import numpy as np

import ulpscope

from test_bindings import FMA_HLO


def _cli_json(cli, *args):
    run = subprocess.run([str(cli), *map(str, args), "--json"],
                         capture_output=True, text=True)
    assert run.returncode in (0, 4), run.stderr
    return json.loads(run.stdout)


def test_explain_matches_cli(root, cli):
    case = root / "data" / "examples" / "layer_norm_bf16" / "normal_s0"
    want = _cli_json(cli, "explain", case, "--element", "1,72")
    e = ulpscope.explain(case=case, element=(1, 72))
    assert e.flat_index == want["flat_index"] == 1 * 128 + 72
    assert e.exact_lo == want["exact"]["lo"] and e.exact_hi == want["exact"]["hi"]
    assert e.reference_ulps == want["reference"]["error_ulps"]
    assert e.check.verdict == "legit"
    # The tree's root is the entry root; its first element node is the
    # op the attribution blames most.
    assert e.nodes["instr"][0] == want["tree"]["name"]
    top = want["attribution"]["top"][0]
    row = e.nodes[e.nodes["instr"] == top["name"]].iloc[0]
    assert row["contrib"] == top["contribution"]
    text = subprocess.run([str(cli), "explain", str(case), "--element", "1,72"],
                          capture_output=True, text=True, check=True).stdout
    assert e.text.strip() in text
    # The flat index names the same element.
    assert ulpscope.explain(case=case, element=200).nodes.equals(e.nodes)


def test_signature_names_the_dropped_add():
    """The device computed x*y and forgot "+ 1": dropping the add (which
    then passes its multiply through) reproduces it."""
    x = np.array([1.5, -2.0, 3.25, 0.5], dtype=np.float32)
    y = np.array([2.0, 0.5, -1.0, 3.0], dtype=np.float32)
    s = ulpscope.signature(FMA_HLO, [x, y], [x * y], profile="strict")
    assert s.verdict == "explained"
    assert s.differing == 4 and s.defects == 4
    best = s.candidates.iloc[0]
    assert best["op"] == "r" and best["mutation"] == "drop"
    assert best["explained"] == 4 and best["broken"] == 0


def test_bisect_matches_cli_and_finds_a_planted_intermediate(root, cli, tmp_path):
    case = root / "data" / "examples" / "layer_norm_bf16" / "uniform_s0"
    want = _cli_json(cli, "bisect", case)
    b = ulpscope.bisect(case=case)
    assert b.first_bad is None and want["first_bad"] is None
    assert b.reason == want["reason"]
    assert b.steps["instr"].tolist() == [s["instruction"] for s in want["steps"]]
    assert b.steps["outside"].tolist() == [s["outside"] for s in want["steps"]]
    # The same case with one intermediate made wrong: a value far from
    # anything a correct compiler may produce at one element.
    bad = tmp_path / "case"
    shutil.copytree(case, bad)
    name = "add.1"
    path = bad / f"intermediate_{name}.npy"
    a = np.load(path)
    a = a.view(ml_dtypes.bfloat16) if a.dtype.kind == "V" else a
    a = a.copy()
    a.reshape(-1)[5] = a.dtype.type(1000.0)
    np.save(path, a)
    b = ulpscope.bisect(case=bad)
    assert b.first_bad == name, b.reason
    row = b.steps[b.steps["instr"] == name].iloc[0]
    assert row["outside"] >= 1 and row["worst_index"] == 5


def test_attribution_matches_cli(root, cli):
    case = root / "data" / "examples" / "layer_norm_bf16" / "normal_s0"
    want = _cli_json(cli, "check", case, "--attribute")
    r = ulpscope.check_case(case, attribute=True)
    a = r.attribution
    ops = {o["name"]: o for o in want["attribution"]["ops"]}
    budget = a.budget.set_index("name")
    for name, o in ops.items():
        assert budget.loc[name, "mean_abs"] == o["mean_abs"]
        assert budget.loc[name, "max_abs"] == o["max_abs"]
    assert a.attributed == want["attribution"]["attributed"]
    # Per element: total = the sum of every op's contribution + residual.
    out = a.outputs[0]
    np.testing.assert_allclose(out.contrib.sum(axis=-1) + out.residual,
                               out.total, rtol=0, atol=1e-12)
