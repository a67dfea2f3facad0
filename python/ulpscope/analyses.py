"""explain, signature and bisect: the library's other analyses of a kernel.

Each takes the kernel as :func:`ulpscope.check` does (HLO text or file,
numpy arrays or tensor sources) or a case directory (``case=``), runs the
library's analysis with the GIL released, and returns its report as
Python objects and DataFrames.  The figures and words are the library's,
as ``ulpscope explain / signature / bisect`` print them.
"""
from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ._ffi import ffi, lib, new_error, raise_for, string
from ._check import (CLASS_NAMES, ArrayOrSource, CheckReport, _is_hlo_text,
                    _Request, _sources)

# usc_explain_kind, in enum order (include/ulpscope/explain.h).
EXPLAIN_KINDS = ("element", "set", "whole", "call", "products", "product")


class _Kernel:
    """HLO, inputs and device outputs as paths the library reads, in a
    temporary folder that lives as long as this object."""

    def __init__(self, req: _Request, hlo: str | os.PathLike[str] | None,
                 inputs: Sequence[ArrayOrSource] | None,
                 device: Sequence[ArrayOrSource] | ArrayOrSource | None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="ulpscope-")
        tmp = Path(self._tmp.name)
        if isinstance(hlo, str) and _is_hlo_text(hlo):
            path = tmp / "kernel.hlo"
            path.write_text(hlo)
            hlo = str(path)
        self.hlo = req.cstr(None if hlo is None else os.fspath(hlo))
        ins = [] if inputs is None else _sources(inputs, "input", tmp)
        devs = [] if device is None else _sources(device, "device", tmp)
        self.input_count, self.inputs = len(ins), req.cstrs(ins)
        self.device_count, self.devices = len(devs), req.cstrs(devs)
        self.tmp = tmp

    def close(self) -> None:
        self._tmp.cleanup()


def _need_kernel_or_case(hlo: Any, case: Any) -> None:
    if (hlo is None) == (case is None):
        raise ValueError("give either hlo (with inputs and device outputs) "
                         "or case=DIR")


# ---------------------------------------------------------------------------
# explain


@dataclass
class ExplainReport:
    """One element's computation as a tree (docs/explain.md).

    Attributes:
        text: the tree as ``ulpscope explain`` prints it.
        nodes: one row per node, depth-first from the output (``depth``,
            ``kind``, ``instr``, ``via``, ``index``, ``count``, ``set``,
            ``reference``, ``exact_lo``, ``exact_hi``, ``exact_mid``,
            ``exact_kind``, ``local_ulps``, ``ref_err_ulps``, ``contrib``,
            ``envelope_lo``, ``envelope_hi``, ``op_name``, ``source``,
            ``same_as``, ``truncated``).
        check: the check of the whole kernel the tree comes from.
        output, flat_index: the element.
        reference_ulps: the reference's error at the element.
        exact_lo, exact_hi: the oracle's enclosure of its exact value.
        attr_note: why the contributions are missing, when they are.
    """

    text: str
    nodes: pd.DataFrame
    check: CheckReport
    output: int
    flat_index: int
    reference_ulps: float
    exact_lo: float
    exact_hi: float
    attr_note: str


def _nan_if(flag: bool, x: float) -> float:
    return float(x) if flag else math.nan


def explain(hlo: str | os.PathLike[str] | None = None,
            inputs: Sequence[ArrayOrSource] | None = None,
            device: Sequence[ArrayOrSource] | ArrayOrSource | None = None, *,
            element: int | Sequence[int],
            output: int = 0,
            case: str | os.PathLike[str] | None = None,
            profile: str | os.PathLike[str] | None = None,
            fusion: str | None = None,
            depth: int | None = None, terms: int | None = None,
            no_attribute: bool = False) -> ExplainReport:
    """Explains one output element, as ``ulpscope explain ... --element``.

    Args:
        hlo, inputs, device: the kernel as :func:`ulpscope.check` takes it;
            or ``case=DIR`` instead.
        element: the element's index in the output's shape (a sequence),
            or its flat row-major index (an int).
        output: which output (a tuple root's leaf).
        profile: the device profile (None: the case's, else strict).
        depth, terms: the tree's depth and the terms shown per reduction
            or dot (docs/explain.md).
        no_attribute: skip the attribution (the ``contrib`` column is NaN).
    """
    _need_kernel_or_case(hlo, case)
    req = _Request(5, profile, False, False, False, None, None)
    kernel = _Kernel(req, hlo, inputs, device)
    try:
        ereq = ffi.new("usc_explain_request *", lib.usc_explain_request_default())
        ereq.check = req.req[0]
        ereq.check.hlo_path = kernel.hlo
        ereq.check.fusion = req.cstr(fusion)
        ereq.check.input_count = kernel.input_count
        ereq.check.inputs = kernel.inputs
        ereq.check.device_count = kernel.device_count
        ereq.check.devices = kernel.devices
        if case is not None:
            ereq.case_dir = req.cstr(os.fspath(case))
        ereq.output = output
        if isinstance(element, (int, np.integer)):
            ereq.flat = True
            ereq.flat_index = int(element)
        else:
            idx = [int(i) for i in element]
            if len(idx) > 64:
                raise ValueError("an element index has at most 64 entries")
            ereq.index_rank = len(idx)
            for i, v in enumerate(idx):
                ereq.index[i] = v
        if depth is not None:
            ereq.max_depth = depth
        if terms is not None:
            ereq.terms = terms
        ereq.no_attribute = no_attribute
        out = ffi.new("usc_explain_report **")
        err = new_error()
        raise_for(lib.usc_explain_run(ereq, out, err), err)
        r = out[0]
        try:
            text_p = ffi.new("char **")
            raise_for(lib.usc_explain_text(r, text_p, err), err)
            try:
                text = ffi.string(text_p[0]).decode("utf-8", "replace")
            finally:
                lib.usc_bind_text_free(text_p[0])
            rows = []
            for i in range(r.node_count):
                n = r.nodes[i]
                rows.append({
                    "depth": int(n.depth), "kind": EXPLAIN_KINDS[n.kind],
                    "instr": string(lib.usc_bind_instr_name(n.instr)),
                    "via": string(lib.usc_bind_instr_name(n.via)),
                    "index": int(n.index), "count": int(n.count),
                    "set": string(n.set) or "",
                    "reference": _nan_if(n.has_values, n.ref),
                    "exact_lo": _nan_if(n.has_values, n.exact_lo),
                    "exact_hi": _nan_if(n.has_values, n.exact_hi),
                    "exact_mid": _nan_if(n.has_values, n.exact_mid),
                    "exact_kind": (string(n.exact_kind) or "")
                    if n.has_values else "",
                    "local_ulps": _nan_if(n.has_values, n.local_ulps),
                    "ref_err_ulps": _nan_if(n.has_values, n.ref_err_ulps),
                    "contrib": _nan_if(n.has_values, n.contrib),
                    "envelope_lo": _nan_if(n.has_envelope, n.envelope.lo),
                    "envelope_hi": _nan_if(n.has_envelope, n.envelope.hi),
                    "op_name": string(n.op_name) or "",
                    "source": string(n.source) or "",
                    "same_as": None if n.same_as == ffi.cast("size_t", -1)
                    else int(n.same_as),
                    "truncated": bool(n.truncated),
                })
            # The check is handed over to Python, which now owns it.
            chk_handle = ffi.gc(r.check, lib.usc_check_report_destroy)
            r.check = ffi.NULL
            return ExplainReport(
                text=text, nodes=pd.DataFrame(rows),
                check=CheckReport(chk_handle), output=int(r.output),
                flat_index=int(r.flat_index),
                reference_ulps=float(r.reference_ulps),
                exact_lo=float(r.exact_lo), exact_hi=float(r.exact_hi),
                attr_note=string(r.attr_note) or "")
        finally:
            lib.usc_explain_report_destroy(r)
    finally:
        kernel.close()


# ---------------------------------------------------------------------------
# signature


@dataclass
class SignatureReport:
    """Which single-op defect explains the device output (docs/signatures.md).

    Attributes:
        kernel, profile: the kernel's name and the profile ("" without).
        verdict: ``"explained"``, ``"unexplained"``, ``"no-difference"``
            or ``"legit"``.
        elements, differing, defects: device elements, those that differ
            from the strict reference, those outside the envelope.
        candidates: the best mutants, best first (``op``, ``mutation``,
            ``detail``, ``explained``, ``broken``, ``width``,
            ``reproduced``, ``differing_reproduced``, ``median_ulps``,
            ``tied_best``).
        identity: the unmutated kernel's row, for comparison.
        note, seconds, budget_exhausted and the search's counts.
    """

    kernel: str
    profile: str
    verdict: str
    elements: int
    differing: int
    defects: int
    candidates: pd.DataFrame
    identity: dict[str, Any]
    note: str
    seconds: float
    budget_exhausted: bool
    counts: dict[str, int]


def _candidate(c: Any) -> dict[str, Any]:
    return {
        "op": string(c.op) or "", "mutation": string(lib.usc_mutation_name(c.kind)),
        "detail": string(c.detail) or "", "explained": int(c.explained),
        "broken": int(c.broken), "width": float(c.width),
        "reproduced": int(c.reproduced),
        "differing_reproduced": int(c.differing_reproduced),
        "median_ulps": float(c.median_ulps), "tied_best": bool(c.tied_best),
    }


def signature(hlo: str | os.PathLike[str] | None = None,
              inputs: Sequence[ArrayOrSource] | None = None,
              device: Sequence[ArrayOrSource] | ArrayOrSource | None = None, *,
              case: str | os.PathLike[str] | None = None,
              profile: str | os.PathLike[str] | None = None,
              no_profile: bool = False, fusion: str | None = None,
              top: int = 10, max_seconds: float = 60.0) -> SignatureReport:
    """Ranks single-op mutations of the kernel by how well they reproduce
    the device output, as ``ulpscope signature``."""
    _need_kernel_or_case(hlo, case)
    req = _Request(5, profile, False, False, False, None, None)
    kernel = _Kernel(req, hlo, inputs, device)
    try:
        sreq = ffi.new("usc_signature_request *",
                       lib.usc_signature_request_default())
        sreq.hlo_path = kernel.hlo
        sreq.fusion = req.cstr(fusion)
        sreq.input_count = kernel.input_count
        sreq.inputs = kernel.inputs
        sreq.device_count = kernel.device_count
        sreq.devices = kernel.devices
        sreq.no_profile = no_profile
        sreq.options.top = top
        sreq.options.max_seconds = max_seconds
        sreq.options.profile = req.req.profile
        out = ffi.new("usc_signature_report **")
        err = new_error()
        if case is None:
            st = lib.usc_signature_run(sreq, out, err)
        else:
            st = lib.usc_signature_case(req.cstr(os.fspath(case)), sreq, out, err)
        raise_for(st, err)
        r = out[0]
        try:
            return SignatureReport(
                kernel=string(r.kernel_name) or "",
                profile=string(r.profile) or "",
                verdict=string(lib.usc_signature_verdict_name(r.verdict)) or "",
                elements=int(r.elements), differing=int(r.differing),
                defects=int(r.defects),
                candidates=pd.DataFrame(
                    [_candidate(r.candidates[i]) for i in range(r.candidate_count)],
                    columns=["op", "mutation", "detail", "explained", "broken",
                             "width", "reproduced", "differing_reproduced",
                             "median_ulps", "tied_best"]),
                identity=_candidate(r.identity), note=string(r.note) or "",
                seconds=float(r.seconds),
                budget_exhausted=bool(r.budget_exhausted),
                counts={k: int(getattr(r, k)) for k in (
                    "enumerated", "evaluated", "no_effect", "failed",
                    "skipped", "envelopes", "pruned")})
        finally:
            lib.usc_signature_report_destroy(r)
    finally:
        kernel.close()


# ---------------------------------------------------------------------------
# bisect


@dataclass
class BisectReport:
    """The first captured intermediate that leaves its envelope
    (docs/bisect.md).

    Attributes:
        kernel, profile: the kernel's name and the profile used.
        first_bad: the instruction to blame, or None when every step lies
            inside its envelope.
        reason: the library's one line.
        steps: one row per compared tensor in topological order
            (``instr``, ``output`` (None for an intermediate), ``source``,
            ``count``, ``outside``, ``unknown``, ``worst_index``,
            ``worst_class``, ``worst_outside_ulps``, ``worst_envelope_lo``,
            ``worst_envelope_hi``, ``op_name``, ``source_loc``).
        unknown: elements whose envelope was unknown, all steps.
    """

    kernel: str
    profile: str
    first_bad: str | None
    reason: str
    steps: pd.DataFrame
    unknown: int


def bisect(hlo: str | os.PathLike[str] | None = None,
           inputs: Sequence[ArrayOrSource] | None = None,
           intermediates: Mapping[str, ArrayOrSource] | None = None,
           device: Sequence[ArrayOrSource] | ArrayOrSource | None = None, *,
           case: str | os.PathLike[str] | None = None,
           profile: str | os.PathLike[str] | None = None,
           fusion: str | None = None) -> BisectReport:
    """Checks captured intermediates in topological order, as ``ulpscope
    bisect``; ``intermediates`` maps instruction names to their values."""
    _need_kernel_or_case(hlo, case)
    req = _Request(5, profile, False, False, False, None, None)
    kernel = _Kernel(req, hlo, inputs, device)
    try:
        breq = ffi.new("usc_bisect_request *", lib.usc_bisect_request_default())
        breq.hlo_path = kernel.hlo
        breq.fusion = req.cstr(fusion)
        breq.input_count = kernel.input_count
        breq.inputs = kernel.inputs
        breq.device_count = kernel.device_count
        breq.devices = kernel.devices
        breq.profile = req.req.profile
        items = list((intermediates or {}).items())
        if items:
            caps = ffi.new("usc_bisect_capture[]", len(items))
            for i, (name, values) in enumerate(items):
                (src,) = _sources([values], f"intermediate_{i}", kernel.tmp)
                caps[i].name = req.cstr(name)
                caps[i].source = req.cstr(src)
            req.keep.append(caps)
            breq.capture_count = len(items)
            breq.captures = caps
        out = ffi.new("usc_bisect_report **")
        err = new_error()
        if case is None:
            st = lib.usc_bisect_run(breq, out, err)
        else:
            st = lib.usc_bisect_case(req.cstr(os.fspath(case)), breq, out, err)
        raise_for(st, err)
        r = out[0]
        try:
            rows = []
            for i in range(lib.usc_bisect_report_step_count(r)):
                s = lib.usc_bisect_report_step(r, i)
                bad = s.outside > 0
                rows.append({
                    "instr": string(lib.usc_bind_instr_name(s.instr)),
                    "output": None if s.output == ffi.cast("size_t", -1)
                    else int(s.output),
                    "source": string(s.source) or "", "count": int(s.count),
                    "outside": int(s.outside), "unknown": int(s.unknown),
                    "worst_index": int(s.worst_index) if bad else None,
                    "worst_class": CLASS_NAMES[s.worst_class] if bad else None,
                    "worst_outside_ulps": float(s.worst_outside_ulps)
                    if bad else math.nan,
                    "worst_envelope_lo": float(s.worst_envelope.lo)
                    if bad else math.nan,
                    "worst_envelope_hi": float(s.worst_envelope.hi)
                    if bad else math.nan,
                    "op_name": string(s.op_name) or "",
                    "source_loc": string(s.source_loc) or "",
                })
            steps = pd.DataFrame(rows)
            if len(steps):
                steps["output"] = pd.array(steps["output"].tolist(), dtype="Int64")
            first = lib.usc_bisect_report_first_bad(r)
            return BisectReport(
                kernel=string(lib.usc_bisect_report_kernel_name(r)) or "",
                profile=string(lib.usc_bisect_report_profile_name(r)) or "",
                first_bad=None if first < 0 else rows[first]["instr"],
                reason=string(lib.usc_bisect_report_reason(r)) or "",
                steps=steps, unknown=int(lib.usc_bisect_report_unknown(r)))
        finally:
            lib.usc_bisect_report_destroy(r)
    finally:
        kernel.close()
