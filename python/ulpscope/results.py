"""``ulpscope.open``: a result file (docs/results.md) as pandas DataFrames.

The file is opened through the library's result reader, which checks it
(schema version, every dataset's type and shape against the kernel's HLO,
docs/results.md "What the reader checks") and refuses a damaged one with a
message naming the dataset; the kernels table and each output's elements
come from that reader.  The op tables (``ops``, the attribution budget)
and a batch index's ``/batch`` table are compound HDF5 tables the reader
returns as arrays of C structs with strings inside, which h5py hands to
pandas as they are; those are read with h5py over the documented layout,
after the library has vetted the file.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd

from . import _dtypes
from ._ffi import ffi, lib, new_error, raise_for, string
from ._check import CLASS_NAMES


def _decode(df: pd.DataFrame) -> pd.DataFrame:
    """Byte-string columns of an HDF5 compound table as str."""
    for c in df.columns:
        if df[c].dtype == object and len(df) and isinstance(df[c].iloc[0], bytes):
            df[c] = df[c].map(lambda b: b.decode("utf-8", "replace"))
    return df


class Results:
    """An open result file: kernels, elements, op budgets, batch table.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        out = ffi.new("usc_results_reader **")
        err = new_error()
        raise_for(lib.usc_results_open(os.fsencode(self.path), out, err), err)
        self._reader: Any = ffi.gc(out[0], lib.usc_results_reader_close)
        self.kernel_names: list[str] = [
            string(lib.usc_results_kernel_name(self._reader, i)) or ""
            for i in range(lib.usc_results_kernel_count(self._reader))]

    def close(self) -> None:
        """Closes the reader (the object is unusable afterwards)."""
        if self._reader is not None:
            ffi.release(self._reader)
            self._reader = None

    def __enter__(self) -> "Results":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<ulpscope.Results {self.path}: {len(self.kernel_names)} kernels>"

    def _kernel(self, kernel: str | None) -> str:
        if kernel is None:
            if not self.kernel_names:
                raise KeyError(f"{self.path}: the file holds no kernel")
            return self.kernel_names[0]
        if kernel not in self.kernel_names:
            raise KeyError(f"{self.path}: no kernel {kernel!r} "
                           f"(it holds {', '.join(self.kernel_names)})")
        return kernel

    def _info(self, kernel: str) -> dict[str, Any]:
        out = ffi.new("usc_results_kernel_info **")
        err = new_error()
        raise_for(lib.usc_results_read_kernel(self._reader, kernel.encode(),
                                              out, err), err)
        k = out[0]
        try:
            return {
                "kernel": string(k.name), "hlo_file": string(k.hlo_file),
                "fusion": string(k.fusion), "profile": string(k.profile),
                "verdict": string(k.verdict),
                "reason": string(k.verdict_reason),
                "element_count": int(k.element_count),
                "output_count": int(k.output_count),
                "op_count": int(k.op_count),
                "oracle_precision_max": int(k.oracle_precision_max),
                "attributed": k.attribution != ffi.NULL,
                "hlo_text": ffi.string(k.hlo_text, k.hlo_text_len).decode(
                    "utf-8", "replace") if k.hlo_text != ffi.NULL else "",
            }
        finally:
            lib.usc_results_kernel_info_free(k)

    def kernels(self) -> pd.DataFrame:
        """One row per kernel: verdict, reason, profile, counts, HLO file."""
        rows = []
        for name in self.kernel_names:
            info = self._info(name)
            info.pop("hlo_text")
            rows.append(info)
        return pd.DataFrame(rows, columns=[
            "kernel", "verdict", "reason", "profile", "hlo_file", "fusion",
            "element_count", "output_count", "op_count",
            "oracle_precision_max", "attributed"])

    def hlo_text(self, kernel: str | None = None) -> str:
        """The kernel's HLO text as stored."""
        return str(self._info(self._kernel(kernel))["hlo_text"])

    def output_summary(self, kernel: str | None = None,
                       output: int = 0) -> dict[str, Any]:
        """An output's stored statistics (the attributes of its group)."""
        data = self._output(self._kernel(kernel), output)
        try:
            s = data.summary
            return {
                "count": int(s.count),
                "max_abs_ulp_oracle": float(s.oracle.max_abs),
                "median_abs_ulp_oracle": float(s.oracle.median_abs),
                "p99_abs_ulp_oracle": float(s.oracle.p99_abs),
                "nan_count_ulp_oracle": int(s.oracle.nan_count),
                "max_abs_ulp_reference": float(s.reference.max_abs),
                "median_abs_ulp_reference": float(s.reference.median_abs),
                "p99_abs_ulp_reference": float(s.reference.p99_abs),
                "nan_count_ulp_reference": int(s.reference.nan_count),
                "bit_exact_count": int(s.bit_exact_count),
                "undecided_count": int(s.undecided_count),
            }
        finally:
            lib.usc_results_output_data_free(data)

    def _output(self, kernel: str, output: int) -> Any:
        out = ffi.new("usc_results_output_data **")
        err = new_error()
        raise_for(lib.usc_results_read_output(self._reader, kernel.encode(),
                                              output, out, err), err)
        return out[0]

    def elements(self, kernel: str | None = None,
                 output: int = 0) -> pd.DataFrame:
        """One row per element of one output.

        Columns: ``index`` (flat, row-major), ``coord`` (the index in the
        output's shape), ``device`` and ``reference`` (values, float64)
        with their encodings ``device_bits`` and ``reference_bits``,
        ``oracle_mid``, ``oracle_rad``, ``ulp_oracle``, ``ulp_reference``,
        ``undecided``; with a profile ``envelope_lo``, ``envelope_hi``,
        ``envelope_flags`` and ``class`` (a categorical of the class
        names); with an attribution ``attr_total`` and ``attr_residual``.
        """
        name = self._kernel(kernel)
        d = self._output(name, output)
        try:
            n = int(d.count)
            dev = _dtypes.tensor_to_numpy(d.device)
            ref = _dtypes.tensor_to_numpy(d.reference)
            shape = dev.shape

            def f64(p: Any) -> np.ndarray:
                return np.frombuffer(ffi.buffer(p, 8 * n), dtype=np.float64).copy()

            def u8(p: Any) -> np.ndarray:
                return np.frombuffer(ffi.buffer(p, n), dtype=np.uint8).copy()

            bits = f"<u{dev.dtype.itemsize}"
            cols: dict[str, Any] = {
                "index": np.arange(n, dtype=np.int64),
                "coord": [tuple(int(v) for v in c) for c in
                          zip(*np.unravel_index(np.arange(n), shape))]
                if shape else [()] * n,
                "device": _values(dev), "reference": _values(ref),
                "device_bits": dev.reshape(-1).view(bits),
                "reference_bits": ref.reshape(-1).view(bits),
                "oracle_mid": f64(d.oracle_mid), "oracle_rad": f64(d.oracle_rad),
                "ulp_oracle": f64(d.ulp_error_oracle),
                "ulp_reference": f64(d.ulp_error_reference),
                "undecided": u8(d.undecided).astype(bool),
            }
            if d.cls != ffi.NULL:
                cols["envelope_lo"] = f64(d.envelope_lo)
                cols["envelope_hi"] = f64(d.envelope_hi)
                cols["envelope_flags"] = u8(d.envelope_flags)
                cols["class"] = pd.Categorical.from_codes(
                    u8(d.cls).astype(np.int64), categories=list(CLASS_NAMES))
            if d.top_k:
                cols["attr_total"] = f64(d.attr_total)
                cols["attr_residual"] = f64(d.attr_residual)
            df = pd.DataFrame(cols)
            df.attrs.update(kernel=name, output=output, shape=shape,
                            dtype=str(dev.dtype))
            return df
        finally:
            lib.usc_results_output_data_free(d)

    def _h5(self) -> Any:
        import h5py  # Only the table readers need it.
        return h5py.File(self.path, "r")

    def ops(self, kernel: str | None = None) -> pd.DataFrame:
        """The kernel's instructions (the ``ops`` table) with source lines."""
        name = self._kernel(kernel)
        with self._h5() as f:
            return _decode(pd.DataFrame(f["kernels"][name]["ops"][:]))

    def budget(self, kernel: str | None = None) -> pd.DataFrame:
        """The kernel's op error budget (docs/attribution.md).

        One row per attributed op (``name``, ``opcode``, ``source_file``,
        ``source_line``, ``mean_abs``, ``max_abs``, ``sum_abs``,
        ``share``) and a last row ``name == "(residual)"``, largest share
        first.  Empty when the kernel was checked without ``--attribute``.
        """
        name = self._kernel(kernel)
        with self._h5() as f:
            k = f["kernels"][name]
            if "attribution" not in k:
                return pd.DataFrame(columns=["name", "opcode", "source_file",
                                             "source_line", "mean_abs",
                                             "max_abs", "sum_abs", "share"])
            a = k["attribution"]
            df = _decode(pd.DataFrame(a["ops"][:]))
            for col in ("mean_abs", "max_abs", "sum_abs", "share"):
                df[col] = a[col][:]
            res = {"index": -1, "name": "(residual)", "opcode": "", "source_file": "",
                   "source_line": -1}
            for col in ("mean_abs", "max_abs", "sum_abs", "share"):
                res[col] = float(a.attrs[f"residual_{col}"])
            df = pd.concat([df, pd.DataFrame([res])], ignore_index=True)
            body = df.iloc[:-1].sort_values("share", ascending=False,
                                            kind="stable")
            return pd.concat([body, df.iloc[-1:]], ignore_index=True)

    def batch(self) -> pd.DataFrame:
        """A batch index's ``/batch`` table (docs/batch.md), strings decoded."""
        with self._h5() as f:
            if "batch" not in f:
                raise KeyError(f"{self.path}: no /batch table (not a batch index)")
            return _decode(pd.DataFrame(f["batch"][:]))


def _values(a: np.ndarray) -> np.ndarray:
    flat = a.reshape(-1)
    if flat.dtype.kind == "c":
        return flat.astype(np.complex128)
    return flat.astype(np.float64)


def open(path: str | os.PathLike[str]) -> Results:  # noqa: A001
    """Opens a result file of ``check --out``, ``batch`` or ``merge``.

    Raises:
        UlpscopeError: when the library refuses the file (not HDF5, another
            schema, a damaged dataset), with its message.
    """
    return Results(path)

