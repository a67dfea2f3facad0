#!/usr/bin/python3
"""The attribution datasets of a result file, read by h5py.

Runs `ulpscope check CASE --attribute --json --out FILE` on a captured case
and checks that what h5py reads is what the JSON report printed: the
budget table (names, source locations, mean/max/share), the residual's
budget, and the top ops, contributions, total and residual of the worst
elements; and the layout docs/attribution.md gives (shapes, dtypes,
empty slots 0xFFFFFFFF).  Exit status 77 when h5py or numpy is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError:
    sys.exit(77)

src = os.environ.get("USC_SOURCE_DIR", ".")
cli = os.environ["USC_CLI"]
case = os.path.join(src, "data/examples/layer_norm_bf16/normal_s0")

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "r.h5")
    p = subprocess.run([cli, "check", case, "--attribute", "--top-k", "4",
                        "--json", "--out", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("check failed: %d\n%s" % (p.returncode, p.stderr))
    rep = json.loads(p.stdout)
    ja = rep["attribution"]
    with h5py.File(out, "r") as f:
        k = f["kernels"][rep["kernel"]]
        g = k["attribution"]
        ops = g["ops"][()]
        n = len(ja["ops"])
        assert ops.shape == (n,), ops.shape
        assert g.attrs["top_k"] == 4 and ja["top_k"] == 4
        assert g.attrs["precision"] == 128
        assert g.attrs["attributed"] == ja["attributed"] == 1024
        for u, jo in enumerate(ja["ops"]):
            row = ops[u]
            assert row["index"] == u
            assert row["name"].decode() == jo["name"], (row, jo)
            assert row["opcode"].decode() == jo["opcode"]
            assert row["source_file"].decode() == (jo["source_file"] or "")
            line = jo["source_line"]
            assert row["source_line"] == (-1 if line is None else line)
            for col in ("mean_abs", "max_abs", "share"):
                assert g[col][u] == jo[col], (col, g[col][u], jo[col])
        assert g.attrs["residual_share"] == ja["residual"]["share"]
        assert abs(sum(g["share"][()]) + g.attrs["residual_share"] - 1) \
            < 1e-12
        # Source provenance resolved through the dump's stack frames.
        names = [r["name"].decode() for r in ops]
        conv = ops[names.index("convert_element_type.0")]
        assert conv["source_file"].decode() == "tools/capture/kernels.py"
        assert conv["source_line"] == 88
        o = k["outputs"]["0"]
        assert o.attrs["top_k"] == 4
        top, tc = o["top_ops"][()], o["top_contrib"][()]
        tot, res = o["attr_total"][()], o["attr_residual"][()]
        assert top.dtype == np.uint32 and top.shape == (1024, 4)
        assert tc.dtype == np.float64 and tc.shape == (1024, 4)
        assert tot.shape == (8, 128) and res.shape == (8, 128)
        empty = top == 0xFFFFFFFF
        assert np.all(tc[empty] == 0)
        assert np.all(top[~empty] < n)
        for e in ja["worst"][0]:
            i = e["index"]
            assert tot.flat[i] == e["total"] and res.flat[i] == e["residual"]
            for j, t in enumerate(e["top"]):
                assert top[i, j] == t["op"] and tc[i, j] == t["contribution"]
            assert all(top[i, len(e["top"]):] == 0xFFFFFFFF)
print("ok")
