"""ulpscope.open: result files as DataFrames, against h5py reading the same
file directly over docs/results.md; the plot helpers draw (Agg)."""
from __future__ import annotations

import subprocess

import h5py
import matplotlib.pyplot as plt
import numpy as np
import pytest

import ulpscope
from ulpscope import plot


@pytest.fixture(scope="module")
def attributed(tmp_path_factory, root):
    """A result file of the CLI with an attribution."""
    from conftest import CLI
    path = tmp_path_factory.mktemp("res") / "r.h5"
    case = root / "data" / "examples" / "layer_norm_bf16" / "normal_s0"
    subprocess.run([str(CLI), "check", str(case), "--attribute", "--out",
                    str(path)], check=True, capture_output=True)
    return path


def test_kernels_and_elements(attributed):
    with ulpscope.open(attributed) as r, h5py.File(attributed, "r") as f:
        (name,) = list(f["kernels"])
        k = f["kernels"][name]
        table = r.kernels()
        assert table["kernel"].tolist() == [name]
        assert table["verdict"][0] == k.attrs["verdict"].decode()
        assert table["reason"][0] == k.attrs["verdict_reason"].decode()
        assert table["element_count"][0] == k.attrs["element_count"]
        assert bool(table["attributed"][0])
        e = r.elements(name, 0)
        g = k["outputs"]["0"]
        n = g["device"].size
        assert len(e) == n
        assert e["index"].tolist() == list(range(n))
        assert e["coord"][n - 1] == tuple(d - 1 for d in g["device"].shape)
        np.testing.assert_array_equal(e["device_bits"], g["device"][...].reshape(-1))
        np.testing.assert_array_equal(e["ulp_oracle"], g["ulp_error_oracle"][...].reshape(-1))
        np.testing.assert_array_equal(e["envelope_hi"], g["envelope_hi"][...].reshape(-1))
        np.testing.assert_array_equal(e["attr_total"], g["attr_total"][...].reshape(-1))
        mapping = h5py.check_enum_dtype(g["class"].dtype)
        names = {v: kname for kname, v in mapping.items()}
        assert e["class"].astype(str).tolist() == [
            names[int(c)] for c in g["class"][...].reshape(-1)]
        # bf16 values: the encodings through ml_dtypes, independently.
        import ml_dtypes
        vals = g["device"][...].reshape(-1).view(ml_dtypes.bfloat16).astype(np.float64)
        np.testing.assert_array_equal(e["device"], vals)
        s = r.output_summary(name, 0)
        assert s["max_abs_ulp_oracle"] == g.attrs["max_abs_ulp_oracle"]
        assert s["bit_exact_count"] == g.attrs["bit_exact_count"]
        assert r.hlo_text(name) == k["hlo_text"][()].decode()
        ops = r.ops(name)
        assert ops["name"].tolist() == [x.decode() for x in k["ops"]["name"]]


def test_budget(attributed):
    with ulpscope.open(attributed) as r, h5py.File(attributed, "r") as f:
        a = next(iter(f["kernels"].values()))["attribution"]
        b = r.budget()
        assert b["name"].iloc[-1] == "(residual)"
        assert b["share"].iloc[-1] == a.attrs["residual_share"]
        shares = b["share"].iloc[:-1].tolist()
        assert shares == sorted(shares, reverse=True)
        # The shares of every op and the residual add up to 1 (results.md).
        assert abs(b["share"].sum() - 1.0) < 1e-9
        assert sorted(b["name"].iloc[:-1]) == sorted(
            x.decode() for x in a["ops"]["name"])


def test_batch_table(tmp_path, root):
    from conftest import CLI
    out = tmp_path / "b" / "R.h5"
    out.parent.mkdir()
    subprocess.run([str(CLI), "batch", str(root / "data" / "examples" / "softmax_f32"),
                    "--out", str(out), "-j", "2"], check=True, capture_output=True)
    with ulpscope.open(out) as r, h5py.File(out, "r") as f:
        t = r.batch()
        assert len(t) == len(f["batch"])
        assert t["path"].tolist() == [p.decode() for p in f["batch"]["path"]]
        assert set(t["status"]) == {"ok"}
        assert len(r.kernels()) == len(t)


def test_refuses_what_is_not_a_result_file(tmp_path):
    bad = tmp_path / "x.h5"
    bad.write_text("not hdf5")
    with pytest.raises(ulpscope.UlpscopeError) as e:
        ulpscope.open(bad)
    assert "x.h5" in e.value.message


def test_plots(attributed, root):
    case = root / "data" / "examples" / "layer_norm_bf16" / "normal_s0"
    report = ulpscope.check_case(case)
    with ulpscope.open(attributed) as r:
        elements = r.elements()
        budget = r.budget()
    for data in (report.outputs[0], elements):
        fig, axes = plt.subplots(1, 3)
        plot.plot_error_histogram(data, ax=axes[0])
        plot.plot_error_map(data, ax=axes[1])
        plot.plot_classes(data, ax=axes[2])
        # The heat map holds |ulp| of every element (8x128, no reduction).
        img = axes[1].images[0].get_array()
        assert img.shape == (8, 128)
        np.testing.assert_array_equal(
            np.asarray(img), np.abs(report.outputs[0].ulp_oracle))
        plt.close(fig)
    ax = plot.plot_budget(budget)
    assert len(ax.patches) == min(12, len(budget))
    plt.close(ax.figure)


def test_error_map_downsamples_by_max():
    """A 1000x3 map at most 100 rows tall: each row the max of 10."""
    v = np.zeros((1000, 3))
    v[517, 1] = 7.0
    grid = plot._grid(v.reshape(-1), (1000, 3), 100)
    assert grid.shape == (100, 3)
    assert grid[51, 1] == 7.0 and grid.sum() == 7.0
