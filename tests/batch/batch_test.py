#!/usr/bin/env python3
"""End-to-end tests of `ulpscope batch` and `ulpscope merge` (docs/batch.md).

usage: batch_test.py ULPSCOPE TEST [ARGS...]
  same-as-check ROOT    every /batch row equals `ulpscope check CASE --json`
  bad                   bad cases mixed with good ones, each with its status
  resume [KILLS]        kill -9 at random moments; the resumed index equals
                        an uninterrupted run's
  shards                --shard K/N and merge equal one run; bad merges refused
  recycle               a timeout and a crash, each followed by good cases on
                        one worker; --cases-per-worker
  commit                kill -9 between cases' ends and their commit: those
                        cases are checked again, the others are not, and
                        the index equals an uninterrupted run's
  journal               the journal's records (read here, checksums
                        computed here); a torn or damaged last record is
                        dropped and that case alone checked again; a work
                        directory of the earlier layout (a row file per
                        case) resumes
  mpi MPIEXEC           mpirun -np 2 writes the same index as one process

Expected values come from `ulpscope check`, run case by case (the command
batch must agree with), from the test's own construction of each bad case,
and from an uninterrupted run.  Exit 77: numpy/h5py/pandas missing.
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import h5py
    import numpy as np
    import pandas as pd
except ImportError as e:  # tools/setup.sh installs them
    print(f"skipped: {e}")
    sys.exit(77)

ULPSCOPE = sys.argv[1]
SRC = os.environ.get("USC_SOURCE_DIR",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(SRC, "data", "examples")
SANITIZED = os.environ.get("USC_SANITIZED") == "1"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args, **kw):
    return subprocess.run([ULPSCOPE, *args], capture_output=True, text=True,
                          **kw)


def table(path):
    """The /batch table as pandas reads it, strings decoded."""
    with h5py.File(path, "r") as f:
        df = pd.DataFrame(f["/batch"][:])
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = df[c].str.decode("utf-8")
    return df


def without_time(df, out=None):
    """The table without what differs between two runs of one batch: the
    seconds, and the result file's path, which starts with the index's
    name (checked here)."""
    if out is not None:
        base = os.path.basename(out)
        for r, st in zip(df["result"], df["status"]):
            check(r.startswith(base + ".d/cases/") if st == "ok" else r == "",
                  f"result path {r!r} of an index named {base}")
    return df.drop(columns=["seconds", "result"]).reset_index(drop=True)


def same_as_check_row(r):
    """A /batch row of an ok case against `ulpscope check CASE --json` on
    the same case: status, verdict, kernel, element counts, worst |ulp|.
    Returns check's JSON."""
    c = run("check", r["path"], "--json")
    check(c.returncode in (0, 3, 4, 5), f"check {r['path']}: {c.stderr}")
    j = json.loads(c.stdout)
    check(r["status"] == "ok", f"{r['path']}: status {r['status']}")
    check(r["verdict"] == j["verdict"],
          f"{r['path']}: verdict {r['verdict']} vs {j['verdict']}")
    check(r["kernel"] == j["kernel"], f"{r['path']}: kernel name")
    outs = j["outputs"]
    check(r["elements"] == sum(o["count"] for o in outs),
          f"{r['path']}: elements")
    for name in ("exact", "rounding", "envelope", "suspicious", "defect",
                 "nan-mismatch", "inf-mismatch", "sign-mismatch",
                 "undecided"):
        want = sum(o["classes"][name] for o in outs)
        got = r["n_" + name.replace("-", "_")]
        check(got == want, f"{r['path']}: n_{name} {got} vs {want}")
    for col, key in (("max_ulp_reference", "reference"),
                     ("max_ulp_oracle", "oracle")):
        # JSON has no infinity: check prints null for it (and NaN).
        vals = [o[key]["max_abs_ulp"] for o in outs]
        if any(v is None for v in vals):
            check(not np.isfinite(r[col]),
                  f"{r['path']}: {col} {r[col]} vs null")
        else:
            check(r[col] == max(vals),
                  f"{r['path']}: {col} {r[col]} vs {max(vals)}")
    return j


def same_as_check(root):
    tmp = tempfile.mkdtemp(prefix="usc-batch-")
    out = os.path.join(tmp, "r.h5")
    p = run("batch", root, "--out", out, "-j2", "--quiet", "--json")
    summary = json.loads(p.stdout)
    # 0; 3 when a case is suspicious (legitimate, but beyond its expected
    # error); 5 when none is and one is undecided (the acceptance corpus
    # has fast-math cases where a value met an infinity); never a defect.
    check(p.returncode in (0, 3, 5) and summary["exit"] == p.returncode,
          f"batch over {root} exits 0, 3 or 5: {p.returncode} {p.stderr}")
    df = table(out)
    check(len(df) == summary["cases"], "one row per case")
    check(list(df["index"]) == sorted(df["index"]), "rows in discovery order")
    cases = sorted(os.path.relpath(d, root) for d, _, fs in os.walk(root)
                   if "kernel.hlo" in fs)
    check([os.path.relpath(p, root) for p in df["path"]] == cases,
          "discovery finds every case, in byte order")
    for _, r in df.iterrows():
        j = same_as_check_row(r)
        # The index links each case's kernel, with the check's verdict.
        with h5py.File(out, "r") as f:
            v = f["/kernels"][r["link"]].attrs["verdict"]
            v = v.decode() if isinstance(v, bytes) else str(v)
            check(v == j["verdict"], f"{r['path']}: linked verdict {v}")
    # Run again: everything resumes, the index is the same.
    p2 = run("batch", root, "--out", out, "-j2", "--quiet", "--json")
    check(json.loads(p2.stdout)["resumed"] == len(df),
          "a second run resumes every case")
    check(without_time(table(out)).equals(without_time(df)),
          "a resumed run writes the same index")
    shutil.rmtree(tmp)


def fnv1a(data, h=0xcbf29ce484222325):
    """FNV-1a, 64 bits (docs/batch.md: a journal record's checksum)."""
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


JOURNAL_MAGIC = b"ulpscope-batch-journal 1\n"


def journal_records(path):
    """The whole records of one journal as docs/batch.md lays them out:
    [(id, payload bytes, offset of the record, offset past it)], up to
    the first damaged one; and whether anything follows them."""
    with open(path, "rb") as f:
        data = f.read()
    check(data.startswith(JOURNAL_MAGIC) or JOURNAL_MAGIC.startswith(data),
          f"{path}: the journal's first line")
    at, out = len(JOURNAL_MAGIC), []
    while at < len(data):
        nl = data.find(b"\n", at)
        if nl < 0:
            break
        head = data[at:nl].decode("ascii", "replace").split(" ")
        if len(head) != 4 or head[0] != "row":
            break
        cid, n, sum_ = head[1], int(head[2]), int(head[3], 16)
        payload = data[nl + 1:nl + 1 + n]
        if len(payload) != n or fnv1a(cid.encode() + payload) != sum_:
            break
        out.append((cid, payload, at, nl + 1 + n))
        at = nl + 1 + n
    return out, at < len(data)


def committed_ids(rows):
    """The ids of the cases the journals of a rows/ directory hold."""
    ids = set()
    for name in os.listdir(rows) if os.path.isdir(rows) else []:
        if name.endswith(".journal"):
            ids |= {r[0] for r in journal_records(os.path.join(rows, name))[0]}
    return ids


def result_ids(cases):
    """The ids of the cases whose result file is in place."""
    names = os.listdir(cases) if os.path.isdir(cases) else []
    return {n[:-3] for n in names if n.endswith(".h5")}


def make_case(dst, src_case):
    shutil.copytree(src_case, dst)
    return dst


def slow_case(dst, n):
    """A kernel slow by construction: 40 transcendental ops on each of n
    elements (for n = 2^21, seconds of CPU time in a Release build and
    about a minute under the sanitizers), whatever the speed of the
    check's other parts."""
    os.makedirs(dst)
    ops = [f"  x = f32[{n}] parameter(0)", f"  t0 = f32[{n}] tanh(x)"]
    for i in range(1, 40):
        op = "exponential" if i % 2 else "tanh"
        ops.append(f"  t{i} = f32[{n}] {op}(t{i - 1})")
    ops[-1] = "  ROOT" + ops[-1][1:]
    with open(os.path.join(dst, "kernel.hlo"), "w") as f:
        f.write("HloModule slow\nENTRY main {\n" + "\n".join(ops) + "\n}\n")
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    np.save(os.path.join(dst, "input_0.npy"), x)
    np.save(os.path.join(dst, "device_0.npy"), x)
    return dst


def hog_case(dst, n):
    """A kernel with a small output and an n*n intermediate that a
    transpose keeps whole: its check needs far more than --case-memory."""
    os.makedirs(dst)
    with open(os.path.join(dst, "kernel.hlo"), "w") as f:
        f.write(f"""HloModule hog
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[{n}] parameter(0)
  b = f32[{n},{n}] broadcast(x), dimensions={{0}}
  t = f32[{n},{n}] transpose(b), dimensions={{1,0}}
  z = f32[] constant(0)
  ROOT r = f32[{n}] reduce(t, z), dimensions={{1}}, to_apply=add
}}
""")
    x = np.ones(n, dtype=np.float32)
    np.save(os.path.join(dst, "input_0.npy"), x)
    np.save(os.path.join(dst, "device_0.npy"),
            np.full(n, n, dtype=np.float32))
    return dst


def bad():
    tmp = tempfile.mkdtemp(prefix="usc-batch-bad-")
    root = os.path.join(tmp, "cases")
    os.makedirs(root)
    good = [make_case(os.path.join(root, "a_good"),
                      os.path.join(EXAMPLES, "softmax_f32", "normal_s0")),
            make_case(os.path.join(root, "z_good"),
                      os.path.join(EXAMPLES, "rms_norm_bf16", "normal_s0"))]
    src = os.path.join(EXAMPLES, "gelu_erf_f16", "normal_s0")
    missing = make_case(os.path.join(root, "b_missing_device"), src)
    os.remove(os.path.join(missing, "device_0.npy"))
    trunc = make_case(os.path.join(root, "c_truncated_npy"), src)
    p = os.path.join(trunc, "input_0.npy")
    with open(p, "rb") as f:
        data = f.read()
    with open(p, "wb") as f:
        f.write(data[: len(data) // 2])
    unparsed = make_case(os.path.join(root, "d_bad_hlo"), src)
    with open(os.path.join(unparsed, "kernel.hlo"), "w") as f:
        f.write("HloModule m\nENTRY e {\n  ROOT x = f32[2] frobnicate()\n}\n")
    # Slow by construction, not by size: a check of a few big
    # elementwise ops became fast enough to finish within the timeout.
    slow = slow_case(os.path.join(root, "e_slow"), 1 << 21)
    out = os.path.join(tmp, "r.h5")
    p = run("batch", root, "--out", out, "-j2", "--case-timeout", "3",
            "--quiet", "--json")
    check(p.returncode == 6, f"failed cases give exit 6: {p.returncode} "
          f"{p.stderr}")
    df = table(out).set_index("path")
    want = {good[0]: "ok", good[1]: "ok", missing: "error", trunc: "error",
            unparsed: "error", slow: "timeout"}
    for path, status in want.items():
        check(df.loc[path, "status"] == status,
              f"{os.path.basename(path)}: {df.loc[path, 'status']}, "
              f"expected {status} ({df.loc[path, 'message']})")
    check("device_0.npy" in df.loc[missing, "message"] or
          "device" in df.loc[missing, "message"],
          f"missing device named: {df.loc[missing, 'message']}")
    check("input_0.npy" in df.loc[trunc, "message"],
          f"truncated file named: {df.loc[trunc, 'message']}")
    check("kernel.hlo" in df.loc[unparsed, "message"] and
          "frobnicate" in df.loc[unparsed, "message"],
          f"parse error named: {df.loc[unparsed, 'message']}")
    check("timeout" in df.loc[slow, "message"],
          f"timeout said: {df.loc[slow, 'message']}")
    for g in good:
        check(df.loc[g, "verdict"] == "legit", f"{g}: legit")
    # Memory: a case whose check needs far more than 150 MiB.
    out2 = os.path.join(tmp, "m.h5")
    for d in (missing, trunc, unparsed, slow):
        shutil.rmtree(d)
    hog = hog_case(os.path.join(root, "f_hog"), 4096)
    p = run("batch", root, "--out", out2, "-j2", "--case-memory", "150",
            "--case-timeout", "300", "--quiet")
    df = table(out2).set_index("path")
    check(df.loc[hog, "status"] == "out-of-memory",
          f"a case past --case-memory: {df.loc[hog, 'status']} "
          f"({df.loc[hog, 'message']})")
    for g in good:
        check(df.loc[g, "status"] == "ok", f"{g} under the memory limit: "
              f"{df.loc[g, 'status']} {df.loc[g, 'message']}")
    # --retry-failed checks the failed case again (and it fails again).
    p = run("batch", root, "--out", out2, "--case-memory", "150",
            "--retry-failed", "--quiet", "--json")
    check(json.loads(p.stdout)["resumed"] == 2,
          "--retry-failed redoes only the failed case")
    shutil.rmtree(tmp)


def workers_of(pid):
    """The worker processes of the batch whose process id is pid."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(w) for w in f.read().split()]
    except OSError:
        return []


def recycle():
    """One worker (-j1) runs a case that dies (a timeout; a crash), then
    good cases: the dead case is recorded as such, and every good case
    after it has the verdict and figures `ulpscope check` gives it alone.
    The good cases also share a worker with each other (64 cases a worker
    by default), and --cases-per-worker 1 and 2 give the same index."""
    tmp = tempfile.mkdtemp(prefix="usc-batch-recycle-")
    root = os.path.join(tmp, "cases")
    os.makedirs(root)
    goods = [make_case(os.path.join(root, f"g{i}_{k}_{c}"),
                       os.path.join(EXAMPLES, k, c))
             for i, (k, c) in enumerate((
                 ("softmax_f32", "normal_s0"),
                 ("rms_norm_bf16", "normal_s0"),
                 ("gelu_erf_f16", "normal_s0"),
                 ("layer_norm_bf16", "normal_s0")))]
    # The biggest case runs first: every good case runs after it.  It is
    # slow by construction (40 transcendental ops on each of 2^21
    # elements: seconds of CPU time in a Release build, about a minute
    # under the sanitizers), far past the timeout, while the good cases
    # take well under a second of CPU time even under the sanitizers, so
    # the outcome does not hang on the load of the machine.
    slow = slow_case(os.path.join(root, "a_slow"), 1 << 21)
    timeout = "20" if SANITIZED else "4"

    def goods_as_check(df, what):
        for g in goods:
            r = df.loc[g].copy()
            r["path"] = g
            check(r["status"] == "ok", f"{what}: {g} {r['status']} "
                  f"{r['message']}")
            if r["status"] == "ok":
                same_as_check_row(r)

    # A timeout, then good cases on the worker that replaces it.
    out = os.path.join(tmp, "t.h5")
    p = run("batch", root, "--out", out, "-j1", "--case-timeout", timeout,
            "--quiet")
    check(p.returncode == 6, f"a timed-out case gives exit 6: "
          f"{p.returncode} {p.stderr}")
    df = table(out).set_index("path")
    check(df.loc[slow, "status"] == "timeout",
          f"the slow case: {df.loc[slow, 'status']} "
          f"({df.loc[slow, 'message']})")
    goods_as_check(df, "after a timeout")
    # A crash: the worker running the slow case is killed by SIGABRT
    # (a signal AddressSanitizer leaves alone), as by a failed assert.
    out = os.path.join(tmp, "c.h5")
    b = subprocess.Popen([ULPSCOPE, "batch", root, "--out", out, "-j1",
                          "--quiet"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    workers = []
    while not workers and b.poll() is None:
        time.sleep(0.05)
        workers = workers_of(b.pid)
    time.sleep(0.5)
    for w in workers:
        os.kill(w, signal.SIGABRT)
    b.wait()
    check(b.returncode == 6, f"a crashed case gives exit 6: "
          f"{b.returncode} {b.stderr.read()}")
    df = table(out).set_index("path")
    check(df.loc[slow, "status"] == "crashed" and
          "signal 6" in df.loc[slow, "message"],
          f"the crashed case: {df.loc[slow, 'status']} "
          f"({df.loc[slow, 'message']})")
    goods_as_check(df, "after a crash")
    # Without the slow case: one worker for all, a worker per case, and
    # a worker for two cases write the same index.
    shutil.rmtree(slow)
    ref = None
    for per in (None, "1", "2"):
        out = os.path.join(tmp, f"p{per}.h5")
        args = ["batch", root, "--out", out, "-j1", "--quiet"]
        if per:
            args += ["--cases-per-worker", per]
        p = run(*args)
        check(p.returncode == 0, f"--cases-per-worker {per}: "
              f"{p.returncode} {p.stderr}")
        df = without_time(table(out), out)
        if ref is None:
            ref = df
            for _, r in table(out).iterrows():
                same_as_check_row(r)
        else:
            check(df.equals(ref), f"--cases-per-worker {per}: the same "
                  "index as one worker for all")
    p = run("batch", root, "--out", os.path.join(tmp, "x.h5"),
            "--cases-per-worker", "0")
    check(p.returncode == 2 and "--cases-per-worker" in p.stderr,
          f"--cases-per-worker 0 is a usage error: {p.returncode} "
          f"{p.stderr}")
    shutil.rmtree(tmp)


def resume(kills):
    """Rounds of five kill -9 at random moments of one batch's progress,
    then a run to the end; each round's index must equal an uninterrupted
    run's.  Every round starts from nothing."""
    tmp = tempfile.mkdtemp(prefix="usc-batch-resume-")
    ref = os.path.join(tmp, "ref.h5")
    t0 = time.monotonic()
    p = run("batch", EXAMPLES, "--out", ref, "-j2", "--quiet")
    whole = time.monotonic() - t0
    check(p.returncode == 0, f"reference run: {p.stderr}")
    want = without_time(table(ref), ref)
    rng = random.Random(int(os.environ.get("USC_TEST_SEED", "1")))
    out = os.path.join(tmp, "r.h5")
    killed = 0
    for rnd in range((kills + 4) // 5):
        shutil.rmtree(out + ".d", ignore_errors=True)
        if os.path.exists(out):
            os.remove(out)
        for _ in range(5):
            proc = subprocess.Popen([ULPSCOPE, "batch", EXAMPLES, "--out",
                                     out, "-j2", "--quiet"],
                                    stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0, whole / 3))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                killed += 1
            proc.wait()
        p = run("batch", EXAMPLES, "--out", out, "-j2", "--quiet")
        check(p.returncode == 0, f"round {rnd}: the resumed run: {p.stderr}")
        got = without_time(table(out), out)
        check(got.equals(want), f"round {rnd}: the resumed index equals an "
              "uninterrupted run's (seconds aside)")
        left = [f for d in ("rows", "cases")
                for f in os.listdir(f"{out}.d/{d}") if ".tmp." in f]
        check(not left, f"round {rnd}: no temporaries left: {left}")
    print(f"{killed} of {kills} runs killed before they finished")
    check(killed >= kills // 2, "most runs were killed mid-way")
    shutil.rmtree(tmp)


def shards():
    tmp = tempfile.mkdtemp(prefix="usc-batch-shards-")
    ref = os.path.join(tmp, "ref.h5")
    run("batch", EXAMPLES, "--out", ref, "-j2", "--quiet")
    parts = []
    for k in (1, 2, 3):
        p = os.path.join(tmp, f"s{k}.h5")
        r = run("batch", EXAMPLES, "--out", p, "--shard", f"{k}/3",
                "--quiet", "--json")
        check(r.returncode == 0, f"shard {k}/3: {r.stderr}")
        parts.append(p)
    os.makedirs(os.path.join(tmp, "merged"))
    out = os.path.join(tmp, "merged", "all.h5")
    r = run("merge", *parts, "-o", out, "--top", "0")
    check(r.returncode == 0, f"merge: {r.stderr}")
    a, b = without_time(table(out)), without_time(table(ref), ref)
    check(a.equals(b), "the merged shards equal one run")
    with h5py.File(out, "r") as f:
        for link in a["link"]:
            check("outputs" in f["/kernels"][link],
                  f"merged link {link} resolves from another directory")
    for args, what in (((parts[0], parts[0], parts[1], parts[2]),
                        "given twice"),
                       ((parts[0], parts[1]), "missing"),
                       ((parts[0], ref), "of different batches")):
        r = run("merge", *args, "-o", os.path.join(tmp, "x.h5"))
        check(r.returncode == 1 and r.stderr,
              f"a merge of shards {what} is refused: {r.returncode}")
        print(f"  refused ({what}): {r.stderr.strip()}")
    other = os.path.join(tmp, "o2.h5")
    run("batch", EXAMPLES, "--out", other, "--shard", "2/3", "--no-profile",
        "--quiet")
    r = run("merge", parts[0], other, parts[2], "-o", os.path.join(tmp, "y.h5"))
    check(r.returncode == 1 and "options" in r.stderr,
          f"shards with other options are refused: {r.stderr}")
    r = run("merge", parts[0], parts[1], "-o", os.path.join(tmp, "p.h5"),
            "--allow-partial", "--json")
    check(r.returncode == 0 and json.loads(r.stdout)["cases"] ==
          len(table(parts[0])) + len(table(parts[1])),
          "--allow-partial merges what there is")
    # The index never replaces a file that is not one.
    notes = os.path.join(tmp, "notes.txt")
    with open(notes, "w") as f:
        f.write("mine\n")
    r = run("batch", EXAMPLES, "--out", notes, "--quiet")
    check(r.returncode == 1 and open(notes).read() == "mine\n",
          "batch refuses to replace a text file")
    shutil.rmtree(tmp)


def commit():
    """A batch whose commits are held back (USC_BATCH_TEST_COMMIT_DELAY_MS,
    a window the test suite alone opens, between a group's flushes and its
    journal append) is killed while cases have finished (their result
    files in place) but are not committed (no journal record), once
    before any commit and once after the first.  The resumed run must
    take exactly the committed cases as done (its "resumed" count),
    check the rest again, and write the index of an uninterrupted run."""
    tmp = tempfile.mkdtemp(prefix="usc-batch-commit-")
    ref = os.path.join(tmp, "ref.h5")
    p = run("batch", EXAMPLES, "--out", ref, "-j2", "--quiet")
    check(p.returncode == 0, f"reference run: {p.stderr}")
    want = without_time(table(ref), ref)
    env = dict(os.environ, USC_BATCH_TEST_COMMIT_DELAY_MS="3000")
    for moment in ("before the first commit", "after the first commit"):
        out = os.path.join(tmp, "c.h5")
        shutil.rmtree(out + ".d", ignore_errors=True)
        if os.path.exists(out):
            os.remove(out)
        rows, cases = out + ".d/rows", out + ".d/cases"
        proc = subprocess.Popen([ULPSCOPE, "batch", EXAMPLES, "--out", out,
                                 "-j2", "--quiet"], env=env,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            done = committed_ids(rows)
            pending = result_ids(cases) - done
            if pending and (done or not moment.startswith("after")):
                # (Before: the cases that end meanwhile wait, unwritten,
                # for the first group's commit.)
                time.sleep(0.3)
                break
            time.sleep(0.01)
        check(proc.poll() is None, f"{moment}: the batch still runs "
              "when its cases wait for their commit")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done = committed_ids(rows)
        pending = result_ids(cases) - done
        check(pending, f"{moment}: cases finished but not committed at "
              f"the kill: {sorted(pending)}, committed {sorted(done)}")
        if moment.startswith("after"):
            check(done, f"{moment}: some cases committed at the kill")
        else:
            check(not done, f"{moment}: no case committed at the kill")
        p = run("batch", EXAMPLES, "--out", out, "-j2", "--quiet", "--json")
        check(p.returncode == 0, f"{moment}: the resumed run: {p.stderr}")
        summary = json.loads(p.stdout)
        check(summary["resumed"] == len(done),
              f"{moment}: the resumed run took the {len(done)} committed "
              f"cases as done and no other (it says {summary['resumed']})")
        got = without_time(table(out), out)
        check(got.equals(want), f"{moment}: the resumed index equals an "
              "uninterrupted run's (seconds aside)")
        left = [f for d in (rows, cases) for f in os.listdir(d)
                if ".tmp." in f]
        check(not left, f"{moment}: no temporaries left: {left}")
    shutil.rmtree(tmp)


def journal():
    """The journal as docs/batch.md describes it, read here: one record
    per case with the right checksum.  A damaged last record (cut short,
    as by a kill in the middle of an append; a changed byte) is dropped
    and that case alone is checked again; bytes after the last record
    that are no record are ignored; a work directory of the earlier
    layout (rows/<id>.row, the same text) resumes every case.  Each
    resumed index equals an uninterrupted run's."""
    tmp = tempfile.mkdtemp(prefix="usc-batch-journal-")
    out = os.path.join(tmp, "r.h5")
    p = run("batch", EXAMPLES, "--out", out, "-j2", "--quiet", "--json")
    check(p.returncode == 0, f"first run: {p.stderr}")
    total = json.loads(p.stdout)["cases"]
    want = without_time(table(out), out)
    rows = out + ".d/rows"
    names = sorted(os.listdir(rows))
    check(names == ["1.0.journal"], f"one journal, run 1, rank 0: {names}")
    jpath = os.path.join(rows, "1.0.journal")
    p = run("batch", EXAMPLES, "--out", out, "-j2", "--quiet", "--json")
    check(p.returncode == 0 and json.loads(p.stdout)["resumed"] == total,
          f"a second run resumes every case: {p.stdout} {p.stderr}")
    names = sorted(os.listdir(rows))
    check(names == ["1.0.journal"],
          f"a run with no case to check leaves no journal: {names}")
    recs, trailing = journal_records(jpath)
    check(len(recs) == total and not trailing,
          f"{total} whole records, nothing after them: {len(recs)}")
    check(len({r[0] for r in recs}) == total, "one record per case")
    check(all(r[1].startswith(b"ulpscope-batch-row 1\n") and
              r[1].endswith(b"\nend\n") for r in recs),
          "each record's payload is a row")
    with open(jpath, "rb") as f:
        pristine = f.read()
    last = recs[-1]

    def resume_with(data, expect, what):
        for n in os.listdir(rows):
            os.remove(os.path.join(rows, n))
        with open(jpath, "wb") as f:
            f.write(data)
        p = run("batch", EXAMPLES, "--out", out, "-j2", "--quiet", "--json")
        check(p.returncode == 0, f"{what}: the resumed run: {p.stderr}")
        got = json.loads(p.stdout)["resumed"] if p.returncode == 0 else -1
        check(got == expect, f"{what}: {expect} cases resumed, not {got}")
        check(without_time(table(out), out).equals(want),
              f"{what}: the resumed index equals an uninterrupted run's")

    cut = last[2] + (last[3] - last[2]) // 2
    resume_with(pristine[:cut], total - 1, "a last record cut short")
    resume_with(pristine[:last[2] + 10], total - 1, "a last head cut short")
    flipped = bytearray(pristine)
    flipped[last[3] - 8] ^= 0x01
    resume_with(bytes(flipped), total - 1, "a changed byte in the last record")
    resume_with(pristine + b"row 0123", total, "bytes after the last record")
    resume_with(pristine[:len(JOURNAL_MAGIC) - 5], 0,
                "a journal whose first line was cut short")
    # The earlier layout: a row file per case, no journal.
    for n in os.listdir(rows):
        os.remove(os.path.join(rows, n))
    for cid, payload, _, _ in recs:
        with open(os.path.join(rows, cid + ".row"), "wb") as f:
            f.write(payload)
    p = run("batch", EXAMPLES, "--out", out, "-j2", "--quiet", "--json")
    check(p.returncode == 0 and json.loads(p.stdout)["resumed"] == total,
          f"the earlier layout resumes every case: {p.stdout} {p.stderr}")
    check(without_time(table(out), out).equals(want),
          "the earlier layout: the index equals an uninterrupted run's")
    # A file in rows/ named as a journal but not one is refused, named.
    with open(os.path.join(rows, "7.0.journal"), "w") as f:
        f.write("something else\n")
    p = run("batch", EXAMPLES, "--out", out, "--quiet")
    check(p.returncode == 1 and "7.0.journal" in p.stderr and
          "not a batch journal" in p.stderr,
          f"a foreign journal is refused, named: {p.returncode} {p.stderr}")
    shutil.rmtree(tmp)


def mpi(mpiexec):
    """mpirun -np 2 over the examples: the same index as one process."""
    tmp = tempfile.mkdtemp(prefix="usc-batch-mpi-")
    ref = os.path.join(tmp, "ref.h5")
    run("batch", EXAMPLES, "--out", ref, "-j2", "--quiet")
    out = os.path.join(tmp, "mpi.h5")
    env = dict(os.environ, OMPI_MCA_mpi_warn_on_fork="0")
    p = subprocess.run([mpiexec, "--allow-run-as-root", "--oversubscribe",
                        "-np", "2", ULPSCOPE, "batch", EXAMPLES, "--out",
                        out, "-j1", "--json", "--quiet"],
                       capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"mpirun batch: {p.returncode} {p.stderr}")
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    check(len(lines) == 1, f"rank 0 alone prints the summary: {p.stdout}")
    check(without_time(table(out), out).equals(without_time(table(ref), ref)),
          "the index of 2 ranks equals one process's")
    shutil.rmtree(tmp)


def main():
    test = sys.argv[2]
    if test == "same-as-check":
        same_as_check(sys.argv[3])
    elif test == "bad":
        bad()
    elif test == "resume":
        resume(int(sys.argv[3]) if len(sys.argv) > 3 else 20)
    elif test == "shards":
        shards()
    elif test == "recycle":
        recycle()
    elif test == "commit":
        commit()
    elif test == "journal":
        journal()
    elif test == "mpi":
        mpi(sys.argv[3])
    else:
        sys.exit(f"unknown test {test}")
    if failures:
        print(f"{len(failures)} failed")
        sys.exit(1)
    print("passed")


main()
