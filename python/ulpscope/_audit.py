"""``ulpscope.audit``: what a compiler pass did to a kernel's accuracy.

The library's usc_audit_run compares two HLO modules of one program
(BEFORE and AFTER a pass) on the same inputs, read or drawn, with the GIL
released (docs/audit.md); this module turns its report into Python
objects, numpy arrays and DataFrames.  Every figure is the library's, as
``ulpscope audit --json`` prints it.
"""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ._ffi import ffi, lib, new_error, raise_for, string
from ._check import ArrayOrSource, Stats, _is_hlo_text, _Request, _sources, _stats


@dataclass(frozen=True)
class AuditFigures:
    """One output's figures over one sample, or pooled over all of them.

    ULPs are of the output type at the BEFORE oracle's value.  The
    *function* part counts elements whose exact values changed (the two
    oracle enclosures are disjoint); the *precision* part compares the
    error of AFTER's reference with BEFORE's, element by element; the
    envelope part (``enveloped``, under a profile) compares the widths of
    the two modules' envelopes.
    """

    count: int
    fn_changed: int
    fn_special: int
    fn_max_ulps: float
    fn_worst: int | None
    """Flat index of the largest change (None when nothing changed)."""
    fn_worst_before: float | None
    fn_worst_after: float | None
    better: int
    worse: int
    unchanged: int
    identical: int
    undecided: int
    before: Stats
    """|ulp| of BEFORE's reference against the BEFORE oracle."""
    after: Stats
    """|ulp| of AFTER's reference against the BEFORE oracle."""
    enveloped: bool
    env_known: int
    width_before: Stats | None
    width_after: Stats | None
    wider: int
    narrower: int
    after_outside_before: int
    verdict: str
    """``"neutral"``, ``"improved"`` or ``"regressed"``."""
    reason: str


@dataclass
class AuditElements:
    """Per-element figures of one output over one sample, in its shape.

    ``ulp_before`` / ``ulp_after``: signed errors of both references
    against the BEFORE oracle; ``fn_ulps``: the function's change (0 where
    the enclosures overlap); ``width_before`` / ``width_after``: envelope
    widths (NaN without a profile); ``flags``: 1 undecided, 2 AFTER
    outside BEFORE's envelope, 4 a NaN or infinity changed, 8 the function
    changed.
    """

    ulp_before: np.ndarray
    ulp_after: np.ndarray
    fn_ulps: np.ndarray
    width_before: np.ndarray
    width_after: np.ndarray
    flags: np.ndarray


@dataclass
class AuditOutput:
    """One output of the audited program."""

    index: int
    dtype: str
    shape: tuple[int, ...]
    pooled: AuditFigures
    samples: dict[str, AuditFigures]
    """Figures per sample, by label (``"inputs"``, ``"normal/0"``, ...)."""
    elements: dict[str, AuditElements]
    """Per-element figures per sample, by label."""


class AuditReport:
    """What ``ulpscope audit`` reports.

    Attributes:
        before, after: the two modules' paths (a temporary file's path
            when HLO text was given).
        before_module, after_module: their module names.
        profile: the profile whose envelopes were compared, or None.
        threshold: the verdict's threshold in ULPs.
        samples: the sample labels, in order.
        function_changed: whether any output's function changed.
        function_max_ulps: the largest change of the function in ULPs.
        verdict: the precision verdict over every output, pooled:
            ``"neutral"``, ``"improved"`` or ``"regressed"``.
        reason: the figure and threshold that decided it.
        outputs: one :class:`AuditOutput` per output.
        ops: the op-by-op view (``ops=True``) as a DataFrame, biggest
            change first, else None; ``ops_note`` says why it is empty.
    """

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        r = handle
        self.before: str = string(r.before_path) or ""
        self.after: str = string(r.after_path) or ""
        self.before_module: str = string(r.before_name) or ""
        self.after_module: str = string(r.after_name) or ""
        self.profile: str | None = (string(r.profile.name)
                                    if r.profiled else None)
        self.threshold: float = float(r.threshold)
        self.samples: list[str] = [string(r.samples[s].label) or ""
                                   for s in range(r.sample_count)]
        self.function_changed: bool = bool(r.function_changed)
        self.function_max_ulps: float = float(r.function_max_ulps)
        self.verdict: str = string(lib.usc_audit_verdict_name(r.verdict)) or ""
        self.reason: str = string(r.reason) or ""
        self.ops_note: str = string(r.ops_note) or ""
        self.ops: pd.DataFrame | None = None
        if r.ops != ffi.NULL:
            self.ops = pd.DataFrame([{
                "kind": string(lib.usc_audit_op_kind_name(o.kind)),
                "before": string(o.before), "after": string(o.after),
                "source": string(o.source),
                "before_mean_abs": float(o.before_mean_abs),
                "after_mean_abs": float(o.after_mean_abs),
                "change": float(o.change), "share": float(o.share)}
                for o in (r.ops[k] for k in range(r.op_count))],
                columns=["kind", "before", "after", "source",
                         "before_mean_abs", "after_mean_abs", "change",
                         "share"])
        self.outputs: list[AuditOutput] = []
        for i in range(r.output_count):
            o = r.outputs[i]
            shape = tuple(int(o.dims[d]) for d in range(o.rank))
            self.outputs.append(AuditOutput(
                index=i, dtype=string(lib.usc_dtype_name(o.dtype)) or "",
                shape=shape, pooled=_figures(r.pooled[i]),
                samples={self.samples[s]: _figures(r.samples[s].outputs[i])
                         for s in range(r.sample_count)},
                elements={self.samples[s]:
                          _elements(r.samples[s].elements[i], shape)
                          for s in range(r.sample_count)
                          if r.samples[s].elements != ffi.NULL}))

    def figures(self) -> pd.DataFrame:
        """Every output's figures as one table: a row per output and
        sample, the pooled row labelled ``"(pooled)"``."""
        rows = []
        for o in self.outputs:
            for label, f in [("(pooled)", o.pooled)] + list(o.samples.items()):
                row: dict[str, Any] = {"output": o.index, "sample": label}
                for k, v in f.__dict__.items():
                    if isinstance(v, Stats):
                        for s in ("max_abs", "median_abs", "p99_abs",
                                  "nan_count"):
                            row[f"{k}_{s}"] = getattr(v, s)
                    elif v is None and k.startswith("width_"):
                        for s in ("max_abs", "median_abs", "p99_abs",
                                  "nan_count"):
                            row[f"{k}_{s}"] = math.nan
                    else:
                        row[k] = v
                rows.append(row)
        return pd.DataFrame(rows)

    def gate(self, threshold: float) -> int:
        """The exit status ``--fail-on-regression threshold`` gives:
        4 the function changed by more than threshold ULPs, else 3 the
        precision regressed by more, else 0."""
        return int(lib.usc_audit_gate(self._handle, threshold))

    def write(self, path: str | os.PathLike[str], name: str | None = None,
              append: bool = False, force: bool = False) -> None:
        """Stores the audit as ``/audits/NAME`` of a result file, as
        ``audit --out`` does (NAME: ``BEFORE->AFTER`` of the file stems)."""
        if name is None:
            name = f"{Path(self.before).stem}->{Path(self.after).stem}"
        flags = 0
        if append:
            flags |= lib.usc_bind_constant(b"USC_AUDIT_APPEND")
        if force:
            flags |= lib.usc_bind_constant(b"USC_RESULTS_FORCE")
        err = new_error()
        raise_for(lib.usc_audit_write(self._handle, os.fsencode(path),
                                      name.encode(), flags, err), err)

    def __repr__(self) -> str:
        return (f"<AuditReport {self.before_module} -> {self.after_module}: "
                f"{self.verdict}, function "
                f"{'changed' if self.function_changed else 'kept'}>")


def _figures(f: Any) -> AuditFigures:
    changed = int(f.fn_changed)
    env = bool(f.enveloped)
    return AuditFigures(
        count=int(f.count), fn_changed=changed, fn_special=int(f.fn_special),
        fn_max_ulps=float(f.fn_max_ulps),
        fn_worst=int(f.fn_worst) if changed else None,
        fn_worst_before=float(f.fn_worst_before) if changed else None,
        fn_worst_after=float(f.fn_worst_after) if changed else None,
        better=int(f.better), worse=int(f.worse),
        unchanged=int(f.unchanged), identical=int(f.identical),
        undecided=int(f.undecided),
        before=_stats(f.before), after=_stats(f.after),
        enveloped=env, env_known=int(f.env_known),
        width_before=_stats(f.width_before) if env else None,
        width_after=_stats(f.width_after) if env else None,
        wider=int(f.wider), narrower=int(f.narrower),
        after_outside_before=int(f.after_outside_before),
        verdict=string(lib.usc_audit_verdict_name(f.verdict)) or "",
        reason=string(f.reason) or "")


def _elements(e: Any, shape: tuple[int, ...]) -> AuditElements:
    n = int(e.count)

    def arr(p: Any, dtype: Any) -> np.ndarray:
        size = np.dtype(dtype).itemsize
        if p == ffi.NULL or n == 0:
            return np.full(n, np.nan if dtype == np.float64 else 0,
                           dtype).reshape(shape)
        return (np.frombuffer(ffi.buffer(p, size * n), dtype).copy()
                .reshape(shape))

    return AuditElements(
        ulp_before=arr(e.ulp_before, np.float64),
        ulp_after=arr(e.ulp_after, np.float64),
        fn_ulps=arr(e.fn_ulps, np.float64),
        width_before=arr(e.width_before, np.float64),
        width_after=arr(e.width_after, np.float64),
        flags=arr(e.flags, np.uint8))


def distributions() -> dict[str, str]:
    """The input distributions ``draws`` takes, with what each draws."""
    out = {}
    for d in range(lib.USC_AUDIT_DIST_COUNT):
        out[string(lib.usc_audit_dist_name(d)) or ""] = (
            string(lib.usc_audit_dist_description(d)) or "")
    return out


def audit(before: str | os.PathLike[str], after: str | os.PathLike[str],
          inputs: Sequence[ArrayOrSource] | None = None, *,
          draws: Sequence[str] | str | None = None,
          samples: int = 1, seed: int = 0,
          profile: str | os.PathLike[str] | None = None,
          threshold: float | None = None, ops: bool = False,
          ops_max: int | None = None, pairwise: bool = False,
          strict_oracle: bool = False,
          precision_max: int | None = None,
          out: str | os.PathLike[str] | None = None,
          name: str | None = None, append: bool = False,
          force: bool = False) -> AuditReport:
    """Audits a pass: BEFORE and AFTER on the same inputs (docs/audit.md).

    Args:
        before, after: the two HLO modules (text or file paths) of one
            program, before and after the pass.
        inputs: one numpy array or tensor source per parameter: one
            sample; or None with ``draws``.
        draws: distribution names (``"normal"``, ``"cancel"``, ...:
            :func:`distributions`), ``samples`` drawn from each, the k-th
            from ``seed + k``; as ``--draw``.
        profile: compare the envelopes under this profile.
        threshold: the verdict's threshold in ULPs (default 1).
        ops: also the op-by-op view (``report.ops``); ``ops_max`` caps the
            rounding ops attributed per module.
        pairwise, strict_oracle, precision_max: as for :func:`check`.
        out: also store the audit in this result file (``/audits/NAME``),
            with ``name``, ``append`` and ``force`` as ``--out`` takes them.

    Returns:
        The :class:`AuditReport`.

    Raises:
        UlpscopeError: with the library's message (a module that does not
            parse, AFTER's parameters differing from BEFORE's, ...).
        ValueError: neither or both of inputs and draws.
    """
    if (inputs is None) == (draws is None):
        raise ValueError("give either inputs or draws (not both)")
    req = _Request(0, profile, strict_oracle, pairwise, False, None, None)
    a = ffi.new("usc_audit_request *", lib.usc_audit_request_default())
    a.profile = req.req.profile
    a.reduce_order = req.req.reduce_order
    a.strict_oracle = strict_oracle
    a.samples = samples
    a.seed = seed
    a.ops = ops
    if ops_max is not None:
        a.ops_max = ops_max
    if threshold is not None:
        a.threshold = threshold
    if precision_max is not None:
        a.oracle_precision_max = precision_max
    with tempfile.TemporaryDirectory(prefix="ulpscope-") as tmpdir:
        tmp = Path(tmpdir)
        paths = []
        for label, module in (("before", before), ("after", after)):
            if isinstance(module, str) and _is_hlo_text(module):
                path = tmp / f"{label}.hlo"
                path.write_text(module)
                module = str(path)
            paths.append(os.fspath(module))
        a.before_path = req.cstr(paths[0])
        a.after_path = req.cstr(paths[1])
        if inputs is not None:
            ins = _sources(inputs, "input", tmp)
            a.input_count = len(ins)
            a.inputs = req.cstrs(ins)
        else:
            names = [draws] if isinstance(draws, str) else list(draws or [])
            dists = ffi.new("usc_audit_dist[]", max(len(names), 1))
            for k, n in enumerate(names):
                err = new_error()
                raw = n.encode()
                raise_for(lib.usc_audit_dist_from_name(raw, len(raw),
                                                       dists + k, err), err)
            req.keep.append(dists)
            a.dist_count = len(names)
            a.dists = dists
        p = ffi.new("usc_audit_report **")
        err = new_error()
        raise_for(lib.usc_audit_run(a, p, err), err)
        report = AuditReport(ffi.gc(p[0], lib.usc_audit_report_destroy))
        if out is not None:
            report.write(out, name, append, force)
        return report
