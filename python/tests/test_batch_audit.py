"""batch and audit bindings: the same figures as the CLI's --json output on
the same inputs (and, for the batch table, as h5py reads the CLI's
index)."""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

import ulpscope
from ulpscope import _dtypes

PAIRS = Path(__file__).resolve().parents[2] / "tests" / "audit" / "pairs"


def _num(x: float) -> float | None:
    """A figure as the CLI's JSON writes it: null for NaN and infinities."""
    return x if math.isfinite(x) else None


def _cli_json(cli: Path, *args: str, status: int = 0) -> dict:
    p = subprocess.run([str(cli), *args, "--json"], capture_output=True,
                       text=True)
    assert p.returncode == status, p.stderr
    return json.loads(p.stdout)


def _assert_stats(ours: ulpscope.Stats, theirs: dict) -> None:
    assert _num(ours.max_abs) == theirs["max_abs_ulp"]
    assert _num(ours.median_abs) == theirs["median_abs_ulp"]
    assert _num(ours.p99_abs) == theirs["p99_abs_ulp"]
    assert ours.nan_count == theirs["nan_count"]


def _assert_figures(f: ulpscope.AuditFigures, j: dict) -> None:
    assert f.count == j["count"]
    fn = j["function"]
    assert (f.fn_changed, f.fn_special) == (fn["changed"], fn["special"])
    assert _num(f.fn_max_ulps) == fn["max_ulps"]
    if f.fn_changed:
        assert f.fn_worst == fn["worst"]
        assert _num(f.fn_worst_before) == fn["before"]
        assert _num(f.fn_worst_after) == fn["after"]
    p = j["precision"]
    assert (f.better, f.worse, f.unchanged, f.identical, f.undecided) == (
        p["better"], p["worse"], p["unchanged"], p["identical"],
        p["undecided"])
    _assert_stats(f.before, p["before"])
    _assert_stats(f.after, p["after"])
    e = j["envelope"]
    assert f.enveloped == (e is not None)
    if e is not None:
        assert (f.env_known, f.wider, f.narrower, f.after_outside_before) == (
            e["known"], e["wider"], e["narrower"], e["after_outside_before"])
        assert _num(f.width_before.max_abs) == e["width_before"]["max"]
        assert _num(f.width_before.median_abs) == e["width_before"]["median"]
        assert _num(f.width_after.max_abs) == e["width_after"]["max"]
        assert _num(f.width_after.median_abs) == e["width_after"]["median"]
    assert f.verdict == j["verdict"]
    assert f.reason == j["reason"]


def _assert_audit(r: ulpscope.AuditReport, j: dict) -> None:
    assert (r.before_module, r.after_module) == (j["before_module"],
                                                 j["after_module"])
    assert r.profile == j["profile"]
    assert r.threshold == j["threshold"]
    assert r.samples == j["samples"]
    assert r.function_changed == j["function_changed"]
    assert _num(r.function_max_ulps) == j["function_max_ulps"]
    assert (r.verdict, r.reason) == (j["verdict"], j["reason"])
    assert r.ops_note == j["ops_note"]
    assert len(r.outputs) == len(j["outputs"])
    for o, jo in zip(r.outputs, j["outputs"]):
        assert f"{o.dtype}[{','.join(map(str, o.shape))}]" == jo["shape"]
        _assert_figures(o.pooled, jo["pooled"])
        assert list(o.samples) == [s["label"] for s in jo["samples"]]
        for s in jo["samples"]:
            _assert_figures(o.samples[s["label"]], s["figures"])
    if j["ops"] is None:
        assert r.ops is None
    else:
        rows = r.ops.to_dict("records")
        assert len(rows) == len(j["ops"])
        for ours, theirs in zip(rows, j["ops"]):
            for k, v in theirs.items():
                assert (_num(ours[k]) if isinstance(ours[k], float)
                        else ours[k]) == v, k


@pytest.mark.parametrize("pair,draws,extra", [
    ("narrowacc", ["uniform", "normal"], {"samples": 2, "profile": "xla-cpu"}),
    ("mulzero", ["specials"], {}),
    ("roundtrip", ["normal"], {"ops": True, "seed": 7}),
])
def test_audit_equals_cli_draws(cli, pair, draws, extra):
    """ulpscope.audit with draws gives every figure of audit --json."""
    before, after = PAIRS / f"{pair}_before.hlo", PAIRS / f"{pair}_after.hlo"
    args = ["audit", str(before), str(after), "--draw", ",".join(draws),
            "--fail-on-regression", "1"]
    if "samples" in extra:
        args += ["--samples", str(extra["samples"])]
    if "profile" in extra:
        args += ["--profile", extra["profile"]]
    if extra.get("ops"):
        args += ["--ops"]
    if "seed" in extra:
        args += ["--seed", str(extra["seed"])]
    p = subprocess.run([str(cli), *args, "--json"], capture_output=True,
                       text=True)
    j = json.loads(p.stdout)
    r = ulpscope.audit(before, after, draws=draws, threshold=1, **extra)
    _assert_audit(r, j)
    # The gate is the CLI's exit status, and what its JSON says.
    assert r.gate(1) == j["exit_status"] == p.returncode


def test_audit_equals_cli_inputs(cli, tmp_path):
    """Numpy arrays as inputs give what audit --input gives on the same
    values saved as .npy files; the report stores the same /audits group
    as audit --out."""
    before = PAIRS / "roundtrip_before.hlo"
    after = PAIRS / "roundtrip_after.hlo"
    # roundtrip takes x and y, both f32[256].
    rng = np.random.default_rng(5)
    arrays = [rng.normal(size=256).astype(np.float32) for _ in range(2)]
    files = []
    for k, a in enumerate(arrays):
        files.append(tmp_path / f"in{k}.npy")
        _dtypes.save_npy(files[-1], a)
    j = _cli_json(cli, "audit", str(before), str(after), "--input",
                  *map(str, files), "--profile", "xla-cpu", "--out",
                  str(tmp_path / "cli.h5"), "--name", "rt")
    r = ulpscope.audit(before, after, arrays, profile="xla-cpu",
                       out=tmp_path / "py.h5", name="rt")
    _assert_audit(r, j)
    assert r.samples == ["inputs"]
    el = r.outputs[0].elements["inputs"]
    assert el.ulp_before.shape == r.outputs[0].shape
    with h5py.File(tmp_path / "cli.h5") as a, h5py.File(tmp_path / "py.h5") as b:
        assert set(a["audits/rt"].keys()) == set(b["audits/rt"].keys())
        for name, ds in a["audits/rt"].items():
            if isinstance(ds, h5py.Dataset):
                np.testing.assert_array_equal(ds[()], b["audits/rt"][name][()])


def test_audit_errors():
    with pytest.raises(ValueError):
        ulpscope.audit(PAIRS / "roundtrip_before.hlo",
                       PAIRS / "roundtrip_after.hlo")
    with pytest.raises(ulpscope.UlpscopeError, match="gauss"):
        ulpscope.audit(PAIRS / "roundtrip_before.hlo",
                       PAIRS / "roundtrip_after.hlo", draws=["gauss"])
    with pytest.raises(ulpscope.UlpscopeError,
                       match="the modules must be the same program"):
        ulpscope.audit(PAIRS / "roundtrip_before.hlo",
                       PAIRS / "divconst_after.hlo", draws="normal")
    assert "specials" in ulpscope.distributions()


def test_batch_equals_cli(cli, root, tmp_path):
    """ulpscope.batch over a corpus: the CLI's counts and ranking, and a
    table equal to the /batch table h5py reads from the CLI's index."""
    cases = root / "data" / "examples" / "adam_f32"
    cli_out = tmp_path / "cli.h5"
    j = _cli_json(cli, "batch", str(cases), "-o", str(cli_out), "-j", "2",
                  "--profile", "xla-cpu")
    b = ulpscope.batch(cases, out=tmp_path / "py.h5", jobs=2,
                       profile="xla-cpu")
    assert b.cases == j["cases"] and b.case_total == j["case_total"]
    assert b.status_counts == j["status"]
    assert list(b.kernels["kernel"]) == [k["kernel"] for k in j["kernels"]]
    for (_, k), jk in zip(b.kernels.iterrows(), j["kernels"]):
        assert (k["runs"], k["defect"], k["suspicious"]) == (
            jk["runs"], jk["defect"], jk["suspicious"])
        assert _num(k["max_ulp_oracle"]) == jk["max_ulp_oracle"]
    with h5py.File(cli_out) as f:
        rows = f["batch"][:]
    verdicts = [v.decode() for v in rows["verdict"]]
    assert b.verdict_counts == {v: verdicts.count(v)
                                for v in ("legit", "suspicious", "defect",
                                          "undecided")}
    assert list(b.table["path"]) == [p.decode() for p in rows["path"]]
    np.testing.assert_array_equal(b.table["max_ulp_oracle"],
                                  rows["max_ulp_oracle"])
    # Reading the index back gives the same table.
    again = ulpscope.read_batch(tmp_path / "py.h5")
    assert again.table.drop(columns="seconds").equals(
        b.table.drop(columns="seconds"))


def test_batch_no_case(tmp_path):
    with pytest.raises(ulpscope.UlpscopeError, match=str(tmp_path)):
        ulpscope.batch(tmp_path, out=tmp_path / "x.h5")
