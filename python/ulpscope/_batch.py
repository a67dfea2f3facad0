"""``ulpscope.batch``: every case of a corpus checked, one table out.

The library's usc_batch_run finds the case directories, checks each in a
child process of its own, ``jobs`` at a time, and writes the index
(docs/batch.md); the GIL is released while it runs.  This module returns
its rows as a DataFrame, with the verdict and status counts and the
rankings ``ulpscope batch`` prints.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any, Sequence

import pandas as pd

from ._ffi import ffi, lib, new_error, raise_for, string
from ._check import CLASS_NAMES

# The verdicts a row can carry, in the order the counts list them.
VERDICTS: tuple[str, ...] = ("legit", "suspicious", "defect", "undecided")


@dataclass
class BatchResult:
    """A batch's outcome.

    Attributes:
        index: the index file written (``out``).
        table: one row per case in discovery order (``index``, ``path``,
            ``kernel``, ``hlo_hash``, ``status``, ``verdict``,
            ``profile``, ``elements``, one count column per class name,
            ``max_ulp_reference``, ``max_ulp_oracle``, ``culprit``,
            ``culprit_share``, ``seconds``, ``message``, ``result``,
            ``link``), as ``ulpscope.open(index).batch()`` reads it.
        verdict_counts: cases per verdict (``""`` for a case checked
            without a profile, or that did not run to the end).
        status_counts: cases per status (``"ok"``, ``"failed"``, ...).
        kernels: the worst kernels first, runs grouped by HLO text, as
            ``ulpscope batch`` ranks them.
        ops: the ops that were the top culprit of some case (attributed
            batches), most cases first.
        cases, case_total, resumed, seconds, shard: as ``--json`` says.
    """

    index: str
    table: pd.DataFrame
    verdict_counts: dict[str, int]
    status_counts: dict[str, int]
    kernels: pd.DataFrame
    ops: pd.DataFrame
    cases: int
    case_total: int
    resumed: int
    seconds: float
    shard: tuple[int, int] = field(default=(1, 1))

    def __repr__(self) -> str:
        counts = ", ".join(f"{v} {k}" for k, v in self.verdict_counts.items()
                           if v)
        return f"<BatchResult {self.index}: {self.cases} cases, {counts}>"


def _rows(b: Any) -> pd.DataFrame:
    rows = []
    for i in range(b.row_count):
        r = b.rows[i]
        row: dict[str, Any] = {
            "index": int(r.index), "path": string(r.path) or "",
            "kernel": string(r.kernel) or "",
            "hlo_hash": string(r.hlo_hash) or "",
            "status": string(lib.usc_batch_status_name(r.status)) or "",
            "verdict": string(r.verdict) or "",
            "profile": string(r.profile) or "",
            "elements": int(r.elements)}
        for k, name in enumerate(CLASS_NAMES):
            row[name] = int(r.counts[k])
        row.update({
            "max_ulp_reference": float(r.max_ulp_reference),
            "max_ulp_oracle": float(r.max_ulp_oracle),
            "culprit": string(r.culprit) or "",
            "culprit_share": float(r.culprit_share),
            "seconds": float(r.seconds), "message": string(r.message) or "",
            "result": string(r.result) or "", "link": string(r.link) or ""})
        rows.append(row)
    return pd.DataFrame(rows)


def _rankings(b: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    kp = ffi.new("usc_batch_kernel_rank **")
    op = ffi.new("usc_batch_op_rank **")
    nk = ffi.new("size_t *")
    no = ffi.new("size_t *")
    err = new_error()
    raise_for(lib.usc_batch_rank(b, kp, nk, op, no, err), err)
    try:
        kernels = pd.DataFrame([{
            "kernel": string(k.kernel) or "", "hlo_hash": string(k.hlo_hash),
            "runs": int(k.runs), "defect": int(k.defects),
            "suspicious": int(k.suspicious), "undecided": int(k.undecided),
            "failed": int(k.failed),
            "max_ulp_reference": float(k.max_ulp_reference),
            "max_ulp_oracle": float(k.max_ulp_oracle),
            "seconds": float(k.seconds),
            "worst_path": string(b.rows[k.worst_row].path)}
            for k in (kp[0][i] for i in range(nk[0]))],
            columns=["kernel", "hlo_hash", "runs", "defect", "suspicious",
                     "undecided", "failed", "max_ulp_reference",
                     "max_ulp_oracle", "seconds", "worst_path"])
        ops = pd.DataFrame([{
            "kernel": string(o.kernel), "op": string(o.op),
            "cases": int(o.cases),
            "mean_share": (float(o.share_sum) / o.cases if o.cases
                           else math.nan)}
            for o in (op[0][i] for i in range(no[0]))],
            columns=["kernel", "op", "cases", "mean_share"])
    finally:
        # The rankings are arrays for the C runtime's free.
        lib.usc_bind_free(kp[0])
        lib.usc_bind_free(op[0])
    return kernels, ops


def _result(index: str, b: Any) -> BatchResult:
    table = _rows(b)
    kernels, ops = _rankings(b)
    verdicts = {v: 0 for v in VERDICTS}
    statuses = {string(lib.usc_batch_status_name(s)) or "": 0
                for s in range(lib.USC_BATCH_STATUS_COUNT)}
    for v in table["verdict"] if len(table) else []:
        verdicts[v] = verdicts.get(v, 0) + 1
    for s in table["status"] if len(table) else []:
        statuses[s] += 1
    return BatchResult(
        index=index, table=table, verdict_counts=verdicts,
        status_counts=statuses, kernels=kernels, ops=ops,
        cases=int(b.row_count), case_total=int(b.case_total),
        resumed=int(b.resumed), seconds=float(b.seconds),
        shard=(int(b.shard_index) + 1, int(b.shard_count)))


def batch(cases: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
          out: str | os.PathLike[str], *, jobs: int = 0,
          profile: str | os.PathLike[str] | None = None,
          no_profile: bool = False, attribute: bool = False,
          case_timeout: float | None = None,
          case_memory_mb: int | None = None,
          shard: tuple[int, int] | None = None, restart: bool = False,
          retry_failed: bool = False, force: bool = False) -> BatchResult:
    """Checks every case under ``cases`` and writes the index ``out``.

    As ``ulpscope batch CASES... -o OUT`` (docs/batch.md): each case in a
    child process of its own, so a crash or a timeout is a row, not the
    end of the run; a second call with the same ``out`` resumes.

    Args:
        cases: a directory searched for case directories, a case
            directory, a list file (one case path a line), or a list of
            them.
        out: the index to write (RESULTS.h5).
        jobs: cases checked at a time (0: the online cores).
        profile: a profile for every case (default: each case's own);
            ``no_profile`` checks without one.
        attribute: also attribute each case (the ``culprit`` column).
        case_timeout: seconds per case (None: no limit);
            ``case_memory_mb``: its address-space limit.
        shard: ``(K, N)``: this run checks the K-th of N shards (from 1).
        restart, retry_failed, force: as ``--restart``,
            ``--retry-failed``, ``--force``.

    Returns:
        The :class:`BatchResult`.

    Raises:
        UlpscopeError: with the library's message (no case found, an
            unwritable ``out``, ...); a case that fails is a row.
    """
    roots = ([cases] if isinstance(cases, (str, os.PathLike))
             else list(cases))
    keep = [ffi.new("char[]", os.fsencode(r)) for r in roots]
    arr = ffi.new("const char *[]", keep)
    out_c = ffi.new("char[]", os.fsencode(out))
    o = ffi.new("usc_batch_options *", lib.usc_batch_options_default())
    o.root_count = len(roots)
    o.roots = arr
    o.out = out_c
    o.jobs = jobs
    prof_c = None
    if profile is not None:
        prof_c = ffi.new("char[]", os.fsencode(profile))
        o.profile = prof_c
    o.no_profile = no_profile
    o.attribute = attribute
    if case_timeout is not None:
        o.case_timeout = case_timeout
    if case_memory_mb is not None:
        o.case_memory_mb = case_memory_mb
    if shard is not None:
        if not 1 <= shard[0] <= shard[1]:
            raise ValueError(f"shard {shard[0]}/{shard[1]}: K runs from 1 to N")
        o.shard_index, o.shard_count = shard[0] - 1, shard[1]
    o.restart = restart
    o.retry_failed = retry_failed
    o.force = force
    p = ffi.new("usc_batch_result **")
    err = new_error()
    raise_for(lib.usc_batch_run(o, p, err), err)
    b = ffi.gc(p[0], lib.usc_batch_result_destroy)
    return _result(os.fspath(out), b)


def read_batch(index: str | os.PathLike[str]) -> BatchResult:
    """The :class:`BatchResult` of an index written before (``batch`` or
    ``merge``), without checking anything."""
    p = ffi.new("usc_batch_result **")
    err = new_error()
    raise_for(lib.usc_batch_read(os.fsencode(index), p, err), err)
    return _result(os.fspath(index),
                   ffi.gc(p[0], lib.usc_batch_result_destroy))
