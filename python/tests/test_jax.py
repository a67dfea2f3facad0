"""ulpscope.jax: compile with XLA:CPU, check, capture a case directory."""
from __future__ import annotations

import json
import subprocess

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import ulpscope
import ulpscope.jax


def rms_norm(x, w):
    x32 = x.astype(jnp.float32)
    y = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + 1e-6)
    return (y * w.astype(jnp.float32)).astype(jnp.bfloat16)


def _args():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 64)).astype(ml_dtypes.bfloat16)
    w = rng.standard_normal(64).astype(ml_dtypes.bfloat16)
    return x, w


def test_check_runs_xla_output_and_is_legit():
    x, w = _args()
    r = ulpscope.jax.check(rms_norm, x, w)
    assert r.profile == "xla-cpu"
    assert r.verdict == "legit", r.reason
    o = r.outputs[0]
    assert o.dtype == "bf16" and o.shape == (4, 64)
    # The device output is what jax computes for the same call.
    np.testing.assert_array_equal(o.device.view(np.uint16),
                                  np.asarray(rms_norm(x, w)).view(np.uint16))


def test_check_given_outputs_finds_the_planted_defect():
    x, w = _args()
    y = np.asarray(rms_norm(x, w)).copy()
    y[2, 17] = -y[2, 17] * 2 if y[2, 17] != 0 else 1.0
    r = ulpscope.jax.check(rms_norm, x, w, device_outputs=y)
    assert r.verdict == "defect"
    assert r.outputs[0].worst[0].multi_index == (2, 17)
    assert r.outputs[0].class_counts["exact"] + r.outputs[0].class_counts[
        "rounding"] + r.outputs[0].class_counts["envelope"] == 4 * 64 - 1


def test_capture_writes_a_case_the_cli_reads(tmp_path, cli):
    x, w = _args()
    d = ulpscope.jax.capture(rms_norm, x, w, out=tmp_path / "case")
    meta = json.loads((d / "case.json").read_text())
    assert meta["platform"] == "cpu" and meta["jax_version"] == jax.__version__
    assert sorted(p.name for p in d.glob("*.npy")) == [
        "device_0.npy", "input_0.npy", "input_1.npy"]
    np.testing.assert_array_equal(np.load(d / "input_0.npy").view(np.uint16),
                                  x.view(np.uint16))
    assert "ENTRY" in (d / "kernel.hlo").read_text()
    run = subprocess.run([str(cli), "check", str(d), "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["verdict"] == "legit"
    assert ulpscope.check_case(d).verdict == "legit"


def test_capture_is_the_capture_tool(tmp_path, root):
    """ulpscope.jax.capture and tools/capture/capture.py run one
    implementation (ulpscope.capture.core): the tool's names are the
    package's objects, and the case.json written holds what only the
    tool's writer records (the module, the main fusion, fusion details,
    the host)."""
    import sys
    sys.path.insert(0, str(root / "tools" / "capture"))
    try:
        import capture as tool
        import hlo_text as tool_hlo_text
    finally:
        sys.path.remove(str(root / "tools" / "capture"))
    from ulpscope.capture import core, hlo_text
    assert tool.write_case is core.write_case
    assert tool.capture_function is core.capture_function
    assert tool._dumps_of is core._dumps_of
    assert tool_hlo_text is hlo_text
    x, w = _args()
    d = ulpscope.jax.capture(rms_norm, x, w, out=tmp_path / "case")
    meta = json.loads((d / "case.json").read_text())
    assert meta["kernel"] == "rms_norm"
    assert meta["module"] == "jit_rms_norm"
    assert [f["name"] for f in meta["fusion_details"]] == meta["fusions"]
    assert meta["main_fusion"] in meta["fusions"]
    assert [i["type"] for i in meta["inputs"]] == ["bf16[4,64]", "bf16[64]"]
    assert "host" in meta and meta["xla_cpu_enable_fast_math"] is False


def test_capture_pytree_and_given_outputs(tmp_path, cli):
    """A pytree argument becomes its leaves, in jax's order; outputs given
    are recorded as they are (a planted defect the CLI then finds)."""
    x, w = _args()

    def norm_dict(p):
        return rms_norm(p["x"], p["w"])

    y = np.asarray(rms_norm(x, w)).copy()
    y[1, 3] = 1000.0
    d = ulpscope.jax.capture(norm_dict, {"w": w, "x": x},
                             out=tmp_path / "tree", device_outputs=y)
    # jax orders a dict's leaves by key: w, then x.
    np.testing.assert_array_equal(np.load(d / "input_0.npy").view(np.uint16),
                                  w.view(np.uint16))
    np.testing.assert_array_equal(np.load(d / "input_1.npy").view(np.uint16),
                                  x.view(np.uint16))
    run = subprocess.run([str(cli), "check", str(d), "--json"],
                         capture_output=True, text=True)
    assert json.loads(run.stdout)["verdict"] == "defect", run.stderr
