"""The Python check gives the CLI's figures on every example.

For each case of data/examples/, ``ulpscope check DIR --json --out F`` (the
program, in a process of its own) against ``ulpscope.check`` given the
case's HLO file and its arrays loaded with numpy: the verdict, the reason,
every summary figure and worst element of the JSON, and every per-element
figure of the result file read with h5py.
"""
from __future__ import annotations

import json
import math
import subprocess

import h5py
import ml_dtypes  # noqa: F401  (np.load of the fp8 files needs the types)
import numpy as np
import pytest

import ulpscope

from conftest import EXAMPLES


def _same(json_value, ours: float) -> bool:
    """The CLI prints a non-finite figure as null, the rest with %.17g."""
    if json_value is None:
        return not math.isfinite(ours)
    return float(json_value) == ours


def _load_all(case, prefix):
    return [np.load(p) for p in sorted(case.glob(f"{prefix}_*.npy"),
                                       key=lambda p: int(p.stem.split("_")[-1]))]


@pytest.mark.parametrize("case", EXAMPLES,
                         ids=[f"{c.parent.name}/{c.name}" for c in EXAMPLES])
def test_same_figures_as_cli(case, cli, tmp_path):
    h5 = tmp_path / "cli.h5"
    run = subprocess.run([str(cli), "check", str(case), "--json", "--worst",
                          "5", "--out", str(h5)], capture_output=True, text=True)
    assert run.returncode in (0, 4), run.stderr
    want = json.loads(run.stdout)
    r = ulpscope.check(case / "kernel.hlo", _load_all(case, "input"),
                       _load_all(case, "device"), profile=want["profile"],
                       worst=5)
    assert r.kernel == want["kernel"]
    assert r.verdict == want["verdict"]
    assert r.reason == want["reason"]
    assert r.profile == want["profile"]
    assert r.oracle_precision == want["oracle_precision"]
    assert len(r.outputs) == len(want["outputs"])
    with h5py.File(h5, "r") as f:
        kernel = f["kernels"][want["kernel"]]
        for o, w in zip(r.outputs, want["outputs"]):
            assert o.dtype == w["dtype"]
            assert list(o.shape) == w["shape"]
            assert o.count == w["count"]
            assert o.class_counts == w["classes"]
            for ours, theirs in ((o.oracle, w["oracle"]),
                                 (o.reference_stats, w["reference"])):
                assert _same(theirs["max_abs_ulp"], ours.max_abs)
                assert _same(theirs["median_abs_ulp"], ours.median_abs)
                assert _same(theirs["p99_abs_ulp"], ours.p99_abs)
                assert theirs["nan_count"] == ours.nan_count
            assert o.bit_exact == w["bit_exact"]
            assert o.undecided_count == w["undecided"]
            assert o.tier_decided == w["tier_decided"]
            assert o.oracle_elements == w["oracle_elements"]
            assert len(o.worst) == len(w["worst"])
            for e, we in zip(o.worst, w["worst"]):
                assert list(e.multi_index) == we["index"]
                assert e.device_bits == int(we["device"], 16)
                assert e.reference_bits == int(we["reference"], 16)
                assert e.cls == we["class"]
                for key in ("oracle_mid", "oracle_rad", "ulp_oracle",
                            "ulp_reference", "outside_ulps"):
                    assert _same(we[key], getattr(e, key)), key
                assert e.undecided == we["undecided"]
            # Every element, against the result file the CLI wrote.
            g = kernel["outputs"][str(o.index)]
            np.testing.assert_array_equal(
                o.device.reshape(-1).view(f"<u{o.device.dtype.itemsize}"),
                g["device"][...].reshape(-1))
            np.testing.assert_array_equal(
                o.reference.reshape(-1).view(f"<u{o.device.dtype.itemsize}"),
                g["reference"][...].reshape(-1))
            for ours, name in ((o.oracle_mid, "oracle_mid"),
                               (o.oracle_rad, "oracle_rad"),
                               (o.ulp_oracle, "ulp_error_oracle"),
                               (o.ulp_reference, "ulp_error_reference"),
                               (o.envelope_lo, "envelope_lo"),
                               (o.envelope_hi, "envelope_hi")):
                np.testing.assert_array_equal(
                    ours.reshape(-1), g[name][...].reshape(-1), err_msg=name)
            np.testing.assert_array_equal(o.classes.reshape(-1),
                                          g["class"][...].reshape(-1))
            np.testing.assert_array_equal(
                (o.envelope_flags & 0xFF).reshape(-1),
                g["envelope_flags"][...].reshape(-1))
