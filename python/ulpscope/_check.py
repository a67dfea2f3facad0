"""``ulpscope.check``: one kernel's device output judged by the library.

The arrays go to the library as .npy files in a temporary folder (the
library's readers then check their type and shape against the kernel, with
the messages of docs/tensors.md); usc_check_run does all the work, with the
GIL released; the report's figures are copied into numpy arrays.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, Union

import numpy as np

from . import _dtypes
from ._ffi import ffi, lib, new_error, raise_for, string

ArrayOrSource = Union[np.ndarray, str, "os.PathLike[str]"]

# The class names in the order of their codes (include/ulpscope/classify.h).
CLASS_NAMES: tuple[str, ...] = tuple(
    string(lib.usc_class_name(i))
    for i in range(lib.usc_bind_sizeof(b"usc_classify_counts") // 8))

# Per-element figures of an output, and the numpy type of each.
_COLUMNS = {
    "oracle_mid": np.float64, "oracle_rad": np.float64,
    "ulp_oracle": np.float64, "ulp_reference": np.float64,
    "undecided": np.uint8,
}
_CLASSIFIED_COLUMNS = {
    "envelope_lo": np.float64, "envelope_hi": np.float64,
    "envelope_flags": np.uint32, "envelope_roundings": np.float64,
    "expected_ulps": np.float64, "class": np.uint8,
}


@dataclass(frozen=True)
class Stats:
    """Statistics of |ULP error| over an output, NaN left out and counted."""

    count: int
    nan_count: int
    max_abs: float
    median_abs: float
    p99_abs: float


@dataclass(frozen=True)
class Element:
    """One of the worst elements of an output, as the library ranks them."""

    index: int
    """Flat, row-major index."""
    multi_index: tuple[int, ...]
    device_bits: int
    reference_bits: int
    device: float
    reference: float
    oracle_mid: float
    oracle_rad: float
    ulp_oracle: float
    ulp_reference: float
    undecided: bool
    cls: str | None
    """The class name; None without a profile."""
    envelope_lo: float | None
    envelope_hi: float | None
    envelope_flags: int | None
    outside_ulps: float | None


@dataclass
class Output:
    """One output of a checked kernel: figures per element and summaries.

    Per-element arrays have the output's shape; they are None when the
    check streamed (``stream=True``), and the envelope and class arrays
    are None without a profile.
    """

    index: int
    dtype: str
    """HLO element type name: ``"bf16"``, ``"f32"``, ..."""
    shape: tuple[int, ...]
    count: int
    device: np.ndarray
    reference: np.ndarray | None
    oracle_mid: np.ndarray | None
    oracle_rad: np.ndarray | None
    ulp_oracle: np.ndarray | None
    ulp_reference: np.ndarray | None
    undecided: np.ndarray | None
    envelope_lo: np.ndarray | None
    envelope_hi: np.ndarray | None
    envelope_flags: np.ndarray | None
    expected_ulps: np.ndarray | None
    classes: np.ndarray | None
    """Class codes per element (uint8; names in ``CLASS_NAMES``)."""
    class_counts: dict[str, int]
    oracle: Stats
    reference_stats: Stats
    bit_exact: int
    undecided_count: int
    tier_decided: int
    oracle_elements: int
    worst: list[Element] = field(default_factory=list)

    def class_names(self) -> np.ndarray | None:
        """The class of every element as a name, or None without a profile."""
        if self.classes is None:
            return None
        return np.asarray(CLASS_NAMES, dtype=object)[self.classes]


class CheckReport:
    """What ``ulpscope check`` reports for one kernel.

    Attributes:
        kernel: the kernel's name (module name, or module_fusion).
        verdict: ``"legit"``, ``"suspicious"``, ``"defect"`` or
            ``"undecided"``; None when checked without a profile.
        reason: the verdict's one-line reason ("" without a profile).
        profile: the profile's name, or None.
        oracle_precision: the most bits the MPFR oracle used (0: the f64
            tier decided every element).
        streamed: the check streamed and kept no per-element figures.
        outputs: one :class:`Output` per kernel output.
        attribution: the :class:`ulpscope.attribution.Attribution` with
            ``attribute=True``, else None.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        r = handle
        self.kernel: str = string(lib.usc_check_report_kernel_name(r)) or ""
        v = lib.usc_check_report_verdict(r)
        self.verdict: str | None = (string(lib.usc_verdict_name(v))
                                    if v >= 0 else None)
        self.reason: str = string(lib.usc_check_report_reason(r)) or ""
        self.profile: str | None = string(lib.usc_check_report_profile_name(r))
        self.oracle_precision: int = int(
            lib.usc_check_report_oracle_precision(r))
        self.streamed: bool = bool(lib.usc_check_report_streamed(r))
        self.outputs: list[Output] = [
            _output(lib.usc_check_report_output(r, i), i, self.profile is not None)
            for i in range(lib.usc_check_report_output_count(r))]
        self.attribution: Any = None

    @property
    def defect(self) -> bool:
        """True when the verdict is ``"defect"`` (the CLI's exit status 4)."""
        return self.verdict == "defect"

    def write(self, path: str | os.PathLike[str], append: bool = False) -> None:
        """Writes the result file (docs/results.md), or appends the kernel."""
        err = new_error()
        raise_for(lib.usc_check_write(self._handle, os.fsencode(path),
                                      append, err), err)

    def __repr__(self) -> str:
        return (f"<CheckReport {self.kernel}: verdict={self.verdict} "
                f"outputs={len(self.outputs)}>")


def _stats(s: Any) -> Stats:
    return Stats(int(s.count), int(s.nan_count), float(s.max_abs),
                 float(s.median_abs), float(s.p99_abs))


def _column(o: Any, name: str, dtype: Any, count: int,
            shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(count, dtype=dtype)
    err = new_error()
    raise_for(lib.usc_check_output_column(
        o, name.encode(), ffi.from_buffer(out), count, err), err)
    return out.reshape(shape)


def _value(bits: int, dtype: np.dtype) -> float:
    """The value of one encoding of dtype, as a float."""
    word = np.array([bits], dtype=f"<u{dtype.itemsize}")
    return float(word.view(dtype)[0].astype(np.float64))


def _output(o: Any, index: int, classified: bool) -> Output:
    device = _dtypes.tensor_to_numpy(lib.usc_check_output_device(o))
    ref_t = lib.usc_check_output_reference(o)
    reference = None if ref_t == ffi.NULL else _dtypes.tensor_to_numpy(ref_t)
    name = string(lib.usc_dtype_name(lib.usc_tensor_dtype(
        lib.usc_check_output_device(o))))
    shape = tuple(device.shape)
    count = int(device.size)
    cols: dict[str, np.ndarray | None] = {}
    wanted = dict(_COLUMNS)
    if classified:
        wanted.update(_CLASSIFIED_COLUMNS)
    for col in list(_COLUMNS) + list(_CLASSIFIED_COLUMNS):
        cols[col] = (_column(o, col, wanted[col], count, shape)
                     if col in wanted and reference is not None else None)
    counts = lib.usc_check_output_counts(o)
    class_counts = ({CLASS_NAMES[i]: int(counts.n[i])
                     for i in range(len(CLASS_NAMES))} if classified else {})
    s = lib.usc_check_output_summary(o)
    worst_p = ffi.new("const usc_check_element **")
    n_worst = lib.usc_check_output_worst(o, worst_p)
    worst = []
    for k in range(n_worst):
        e = worst_p[0][k]
        worst.append(Element(
            index=int(e.index),
            multi_index=tuple(int(i) for i in np.unravel_index(int(e.index), shape))
            if shape else (),
            device_bits=int(e.device_bits),
            reference_bits=int(e.reference_bits),
            device=_value(int(e.device_bits), device.dtype),
            reference=_value(int(e.reference_bits), device.dtype),
            oracle_mid=float(e.oracle_mid), oracle_rad=float(e.oracle_rad),
            ulp_oracle=float(e.ulp_oracle),
            ulp_reference=float(e.ulp_reference),
            undecided=bool(e.undecided),
            cls=CLASS_NAMES[e.cls] if classified else None,
            envelope_lo=float(e.envelope.lo) if classified else None,
            envelope_hi=float(e.envelope.hi) if classified else None,
            envelope_flags=int(e.envelope.flags) if classified else None,
            outside_ulps=float(e.outside_ulps) if classified else None))
    undecided = cols["undecided"]
    return Output(
        index=index, dtype=name or "", shape=shape, count=count,
        device=device, reference=reference,
        oracle_mid=cols["oracle_mid"], oracle_rad=cols["oracle_rad"],
        ulp_oracle=cols["ulp_oracle"], ulp_reference=cols["ulp_reference"],
        undecided=None if undecided is None else undecided.astype(bool),
        envelope_lo=cols["envelope_lo"], envelope_hi=cols["envelope_hi"],
        envelope_flags=cols["envelope_flags"],
        expected_ulps=cols["expected_ulps"], classes=cols["class"],
        class_counts=class_counts,
        oracle=_stats(s.oracle), reference_stats=_stats(s.reference),
        bit_exact=int(s.bit_exact_count), undecided_count=int(s.undecided_count),
        tier_decided=int(lib.usc_check_output_tier_decided(o)),
        oracle_elements=int(lib.usc_check_output_oracle_elements(o)),
        worst=worst)


def _is_hlo_text(hlo: str) -> bool:
    return "\n" in hlo or "HloModule" in hlo or "ENTRY" in hlo


class _Request:
    """A usc_check_request and every C object it points at, kept alive."""

    def __init__(self, worst: int, profile: str | os.PathLike[str] | None,
                 strict_oracle: bool, pairwise: bool, stream: bool,
                 lambda_: float | None, precision_max: int | None) -> None:
        self.keep: list[Any] = []
        self.results_path: str | None = None
        self.req = ffi.new("usc_check_request *", lib.usc_check_request_default())
        self.req.worst = worst
        self.req.strict_oracle = strict_oracle
        self.req.reduce_order = 1 if pairwise else 0
        self.req.stream = stream
        if lambda_ is not None:
            setattr(self.req, "lambda", lambda_)
        if precision_max is not None:
            self.req.oracle_precision_max = precision_max
        if profile is not None:
            pp = ffi.new("usc_profile **")
            err = new_error()
            raise_for(lib.usc_profile_new(os.fsencode(profile), pp, err), err)
            prof = ffi.gc(pp[0], lib.usc_profile_free)
            self.keep.append(prof)
            self.req.profile = prof

    def set_results(self, out: str | os.PathLike[str] | None,
                    attribute: bool) -> None:
        """Where the result file goes: written by the check itself, or,
        with an attribution (which comes after the check), by _run."""
        self.results_path = None if out is None else os.fspath(out)
        if not attribute:
            self.req.results_path = self.cstr(self.results_path)

    def cstr(self, s: str | bytes | None) -> Any:
        if s is None:
            return ffi.NULL
        p = ffi.new("char[]", os.fsencode(s) if isinstance(s, str) else s)
        self.keep.append(p)
        return p

    def cstrs(self, items: Sequence[str]) -> Any:
        ps = [self.cstr(s) for s in items]
        arr = ffi.new("const char *[]", ps) if ps else ffi.NULL
        self.keep.append(arr)
        return arr


def _sources(items: Sequence[ArrayOrSource] | ArrayOrSource, prefix: str,
             tmp: Path) -> list[str]:
    """Sources the library reads: paths as given, arrays saved as .npy."""
    # One array (numpy, jax, a scalar) or one source stands for a list of one.
    if (isinstance(items, (str, os.PathLike)) or hasattr(items, "__array__")
            or np.isscalar(items)):
        items = [items]  # type: ignore[list-item]
    out = []
    for i, a in enumerate(items):  # type: ignore[arg-type]
        if isinstance(a, (str, os.PathLike)):
            out.append(os.fspath(a))
        else:
            path = tmp / f"{prefix}_{i}.npy"
            _dtypes.save_npy(path, np.asarray(a))
            out.append(str(path))
    return out


def _run(req: _Request, case_dir: str | None, attribute: bool = False,
         top_k: int | None = None, attr_max_ops: int | None = None,
         pairwise: bool = False) -> CheckReport:
    out = ffi.new("usc_check_report **")
    err = new_error()
    if case_dir is None:
        st = lib.usc_check_run(req.req, out, err)
    else:
        st = lib.usc_check_case(req.cstr(case_dir), req.req, out, err)
    raise_for(st, err)
    report = CheckReport(ffi.gc(out[0], lib.usc_check_report_destroy))
    if attribute:
        from .attribution import attribute as _attribute
        # The report borrows the attribution (for write), and this object
        # keeps it alive as long as the report.
        report.attribution = _attribute(
            report._handle, [o.shape for o in report.outputs], top_k,
            attr_max_ops, pairwise)
        if req.results_path is not None:
            report.write(req.results_path)
    return report


def check(hlo: str | os.PathLike[str],
          inputs: Sequence[ArrayOrSource],
          device: Sequence[ArrayOrSource] | ArrayOrSource,
          profile: str | os.PathLike[str] | None = None,
          fusion: str | None = None, *,
          worst: int = 5,
          strict_oracle: bool = False,
          pairwise: bool = False,
          stream: bool = False,
          lambda_: float | None = None,
          precision_max: int | None = None,
          attribute: bool = False,
          top_k: int | None = None,
          attr_max_ops: int | None = None,
          out: str | os.PathLike[str] | None = None) -> CheckReport:
    """Checks a kernel's device outputs against the oracle and the reference.

    Args:
        hlo: HLO text, or the path of an HLO file (a ``--xla_dump_to``
            dump, the long form, ...: docs/hlo.md).
        inputs: one numpy array (ml_dtypes bf16/fp8 arrays as they are) or
            tensor source (``x.npy``, ``f.h5:/ds``) per entry parameter.
        device: the device's outputs, the same way (one array for a kernel
            with one output).
        profile: a built-in device profile name (``"xla-tpu"``, ...) or a
            profile file; None checks without one (no envelope, classes or
            verdict).
        fusion: a fusion of the module to isolate as the kernel
            (docs/kernels.md); None checks the entry computation.
        worst: how many worst elements to keep per output.
        strict_oracle: skip the f64 tier (every element to MPFR).
        pairwise: pairwise reductions instead of sequential ones.
        stream: check a piece at a time, keeping no per-element figures.
        lambda_: the expected-error lambda (docs/method.md).
        precision_max: the MPFR oracle's cap in bits.
        attribute: also attribute each element's error among the ops
            (docs/attribution.md): ``report.attribution``.
        top_k: contributors kept per element (attribution; default 3).
        attr_max_ops: the most ops attributed (default 64).
        out: also write the result file (docs/results.md) there.

    Returns:
        The :class:`CheckReport`.

    Raises:
        UlpscopeError: with the library's message (a parse error's
            ``FILE:LINE:COL``, an input of the wrong type or shape, ...).
    """
    req = _Request(worst, profile, strict_oracle, pairwise, stream, lambda_,
                   precision_max)
    with tempfile.TemporaryDirectory(prefix="ulpscope-") as tmpdir:
        tmp = Path(tmpdir)
        if isinstance(hlo, str) and _is_hlo_text(hlo):
            hlo_path = tmp / "kernel.hlo"
            hlo_path.write_text(hlo)
            hlo = str(hlo_path)
        ins = _sources(inputs, "input", tmp)
        devs = _sources(device, "device", tmp)
        req.req.hlo_path = req.cstr(os.fspath(hlo))
        req.req.fusion = req.cstr(fusion)
        req.req.input_count = len(ins)
        req.req.inputs = req.cstrs(ins)
        req.req.device_count = len(devs)
        req.req.devices = req.cstrs(devs)
        req.set_results(out, attribute)
        return _run(req, None, attribute, top_k, attr_max_ops, pairwise)


def check_case(case_dir: str | os.PathLike[str],
               profile: str | os.PathLike[str] | None = None, *,
               no_profile: bool = False, worst: int = 5,
               strict_oracle: bool = False, pairwise: bool = False,
               stream: bool = False, attribute: bool = False,
               top_k: int | None = None, attr_max_ops: int | None = None,
               out: str | os.PathLike[str] | None = None) -> CheckReport:
    """Checks a case directory (docs/cases.md), as ``ulpscope check DIR``.

    Without ``profile`` the case's own (case.json's ``profile`` or
    ``platform``) is taken, unless ``no_profile``.  The other keywords
    are :func:`check`'s.
    """
    req = _Request(worst, profile, strict_oracle, pairwise, stream, None, None)
    req.req.no_profile = no_profile
    req.set_results(out, attribute)
    return _run(req, os.fspath(case_dir), attribute, top_k, attr_max_ops,
                pairwise)
