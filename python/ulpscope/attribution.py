"""Which op caused the error: the attribution of a checked kernel.

``ulpscope.check(..., attribute=True)`` attributes each element's
reference error among the kernel's ops (docs/attribution.md) through
usc_check_report_attribute, as ``ulpscope check --attribute`` does; this
module turns the library's usc_attribution into a budget DataFrame and
numpy arrays per output.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._ffi import ffi, lib, new_error, raise_for, string


@dataclass
class AttributedOutput:
    """One output's attribution, arrays in the output's shape.

    ``contrib`` has one more axis (every attributed op, in budget-table
    order); ``top_ops`` / ``top_contrib`` / ``top_share`` one more of
    ``top_k`` (rows of the budget table, -1 in empty slots).
    """

    total: np.ndarray
    residual: np.ndarray
    contrib: np.ndarray
    top_ops: np.ndarray
    top_contrib: np.ndarray
    top_share: np.ndarray
    attributed: int


class Attribution:
    """The op error budget of a kernel and its per-element figures.

    Attributes:
        precision: the oracle's working precision in bits.
        top_k: contributors kept per element.
        attributed: elements with finite figures, all outputs.
        budget: a DataFrame, one row per op that rounds (``name``,
            ``opcode``, ``op_name``, ``source_file``, ``source_line``,
            ``mean_abs``, ``max_abs``, ``sum_abs``, ``share``) and a last
            row ``"(residual)"``, in the library's op order.
        outputs: one :class:`AttributedOutput` per output.
    """

    def __init__(self, handle: Any, shapes: list[tuple[int, ...]]) -> None:
        self._handle = handle
        a = handle
        self.precision = int(a.precision)
        self.top_k = int(a.top_k)
        self.attributed = int(a.attributed)
        rows = []
        for i in range(a.op_count):
            op = a.ops[i]
            rows.append({
                "name": string(op.name), "opcode": string(op.opcode),
                "op_name": string(op.op_name) or "",
                "source_file": string(op.source_file) or "",
                "source_line": int(op.source_line),
                "mean_abs": float(op.mean_abs), "max_abs": float(op.max_abs),
                "sum_abs": float(op.sum_abs), "share": float(op.share)})
        rows.append({"name": "(residual)", "opcode": "", "op_name": "",
                     "source_file": "", "source_line": -1,
                     "mean_abs": float(a.residual_mean_abs),
                     "max_abs": float(a.residual_max_abs),
                     "sum_abs": float(a.residual_sum_abs),
                     "share": float(a.residual_share)})
        self.budget = pd.DataFrame(rows)
        n_ops = int(a.op_count)
        k = self.top_k
        self.outputs: list[AttributedOutput] = []
        for i in range(a.output_count):
            o = a.outputs[i]
            n = int(o.count)
            shape = shapes[i]

            def f64(p: Any, m: int) -> np.ndarray:
                if p == ffi.NULL or m == 0:
                    return np.full(m, np.nan)
                return np.frombuffer(ffi.buffer(p, 8 * m), np.float64).copy()

            top = (np.frombuffer(ffi.buffer(o.top_ops, 4 * n * k), np.uint32)
                   .astype(np.int64) if n * k else np.zeros(0, np.int64))
            top[top == 0xFFFFFFFF] = -1
            self.outputs.append(AttributedOutput(
                total=f64(o.total, n).reshape(shape),
                residual=f64(o.residual, n).reshape(shape),
                contrib=f64(o.contrib, n * n_ops).reshape(shape + (n_ops,)),
                top_ops=top.reshape(shape + (k,)),
                top_contrib=f64(o.top_contrib, n * k).reshape(shape + (k,)),
                top_share=f64(o.top_share, n * k).reshape(shape + (k,)),
                attributed=int(o.attributed)))


def attribute(report_handle: Any, shapes: list[tuple[int, ...]],
              top_k: int | None, max_ops: int | None, pairwise: bool) -> Attribution:
    """Attributes a check report's kernel and lends the result to it."""
    opt = ffi.new("usc_attr_options *", lib.usc_attr_options_default())
    if top_k is not None:
        opt.top_k = top_k
    if max_ops is not None:
        opt.max_ops = max_ops
    opt.reduce_order = 1 if pairwise else 0
    out = ffi.new("usc_attribution **")
    err = new_error()
    raise_for(lib.usc_check_report_attribute(report_handle, opt, out, err), err)
    return Attribution(ffi.gc(out[0], lib.usc_attribution_destroy), shapes)
