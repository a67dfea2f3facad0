#!/usr/bin/python3
"""Defect signatures, the acceptance bar of the provenance issue.

For every op of captured cases of several kernels (data/examples) and
every mutation of the catalogue that applies to it:

1. the mutant is written (`ulpscope signature --mutant OP KIND/V`) and
   evaluated (`ulpscope eval`): that output is the "device" output.  Where
   the Python harness of tests/classify (inject_defects.py --mutant, HLO
   text written without the C mutator) has the same defect, its mutant is
   evaluated too and must give the same bits: the expectation does not
   come from the code under test alone;
2. mutants without effect (output == the strict reference) are skipped,
   and mutants whose output is bit-identical to the mutant of another
   (op, mutation) are ambiguous by construction: nothing in the output can
   tell them apart;
3. the search (`ulpscope signature --device-sets`, every mutant's output
   one set, each set searched as on its own) must name the true (op,
   mutation) first (an other variant of the same op and mutation giving
   the same bits counts) in at least 95% of the distinguishable mutants,
   and have the true one among its top 3 (or, ambiguous by construction,
   among the candidates tied with the best) for all of them.

Cost.  Every mutant of the chosen cases is written, evaluated and
classified; the search runs once per case for all selected mutants.  By
default a deterministic subset is searched: per case and mutation, at most
PER_KIND of its effective mutants, evenly spread over the enumeration
order (first and last included), so every mutation that applies is
searched on every case.  USC_SIGNATURE_FULL=1 searches every mutant.
USC_SIGNATURE_CASES=a/b,c/d restricts the cases and USC_SIGNATURE_PER_KIND
the subset (the ASan build uses both).

Exit 0 on success, 1 on failure, 77 without numpy.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    sys.exit(77)

CLI = os.environ.get("USC_CLI", "ulpscope")
SRC = os.environ.get("USC_SOURCE_DIR",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(SRC, "data", "examples")
HARNESS = os.path.join(SRC, "tests", "classify", "inject_defects.py")
CASES = ["layer_norm_bf16/normal_s0", "softmax_f32/normal_s0",
         "gelu_erf_f16/normal_s0", "fp8_quantize_f32/normal_s0",
         "rms_norm_bf16/normal_s0", "adam_f32/normal_s0"]
PER_KIND = 3
FAIL = []


def fail(msg):
    FAIL.append(msg)
    print("FAIL " + msg)


def run(args, ok=(0,)):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in ok:
        raise RuntimeError("%s -> %d\n%s%s" % (" ".join(args), p.returncode,
                                              p.stdout, p.stderr))
    return p


def inputs_of(d):
    out, i = [], 0
    while os.path.exists(os.path.join(d, "input_%d.npy" % i)):
        out.append(os.path.join(d, "input_%d.npy" % i))
        i += 1
    return out


# (exponent mask, mantissa mask) of the float types: a NaN has every
# exponent bit set and a mantissa (f8e4m3fn: all of both).
NAN_MASKS = {"f64": (0x7FF0000000000000, 0xFFFFFFFFFFFFF),
             "f32": (0x7F800000, 0x7FFFFF), "f16": (0x7C00, 0x3FF),
             "bf16": (0x7F80, 0x7F), "f8e5m2": (0x7C, 0x3)}


def nan_mask(b, t):
    if t == "f8e4m3fn":
        return (b & 0x7F) == 0x7F
    if t not in NAN_MASKS:
        return np.zeros(b.shape, bool)
    e, m = NAN_MASKS[t]
    return ((b & e) == e) & ((b & m) != 0)


def evaluate(hlo, inputs, prefix, types):
    """The outputs' files and a digest of their bits, NaNs made one (the
    search counts all NaNs equal: payloads are the device's business).
    types: the outputs' element types (bf16 and fp8 files load as void)."""
    run([CLI, "eval", hlo, "-o", prefix] +
        sum((["--input", x] for x in inputs), []))
    files, h = [], hashlib.sha256()
    for i, t in enumerate(types):
        f = "%s_%d.npy" % (prefix, i)
        a = np.load(f).reshape(-1)
        b = a.view({1: np.uint8, 2: np.uint16, 4: np.uint32,
                    8: np.uint64}[a.dtype.itemsize]).copy()
        nan = nan_mask(b, t)
        b[nan] = 0
        h.update(nan.tobytes())
        h.update(b.tobytes())
        files.append(f)
    if os.path.exists("%s_%d.npy" % (prefix, len(types))):
        raise RuntimeError("%s: more outputs than case.json lists" % hlo)
    return files, h.hexdigest()


# The harness's spelling of a C (mutation, variant), where it has one.
HARNESS_KIND = {("narrow", 0): "narrow", ("round-toward-zero", 0): "truncate",
                ("drop", 0): "drop", ("swap-operands", 0): "swap",
                ("off-by-one", 0): "off-by-one", ("transposed", 0):
                "transpose", ("wrong-init", 0): "init"}


def spread_order(items):
    """items reordered to spread over the list: first, last, middle, then
    the middles of the halves, and so on (deterministic)."""
    if len(items) <= 2:
        return list(items)
    out, seen, spans = [items[0], items[-1]], {0, len(items) - 1}, \
        [(0, len(items) - 1)]
    while spans:
        nxt = []
        for a, b in spans:
            if b - a < 2:
                continue
            m = (a + b) // 2
            if m not in seen:
                seen.add(m)
                out.append(items[m])
            nxt += [(a, m), (m, b)]
        spans = nxt
    return out


def run_case(case, tmp, full, per_kind, table):
    d = os.path.join(EX, case)
    k = os.path.join(d, "kernel.hlo")
    with open(os.path.join(d, "case.json")) as fh:
        meta = json.load(fh)
    # A case's files are the entry's parameters and results: the whole
    # module is mutated, case.json's "fusion" only says which is the main.
    types = [o["type"].split("[")[0] for o in meta["outputs"]]
    ins = inputs_of(d)
    _, ref = evaluate(k, ins, os.path.join(tmp, "ref"), types)
    lines = run([CLI, "signature", k, "--list-mutants"]).stdout.splitlines()
    muts = [ln.split("\t") for ln in lines if ln]
    if not muts:
        fail("%s: no mutant listed" % case)
        return
    digests, files, crossed, crossbad = {}, {}, [0], [0]

    def mutant(j):
        """Writes, evaluates and cross-checks mutant j (once)."""
        if j in digests:
            return digests[j]
        op, kv = muts[j][0], muts[j][2]
        kind, var = kv.split("/")
        mh = os.path.join(tmp, "m%d.hlo" % j)
        run([CLI, "signature", k, "--mutant", op, kv, "-o", mh])
        files[j], digests[j] = evaluate(mh, ins, os.path.join(tmp, "m%d" % j),
                                        types)
        hk = HARNESS_KIND.get((kind, int(var)))
        if hk is None:
            return digests[j]
        hh = os.path.join(tmp, "h.hlo")
        p = subprocess.run(["/usr/bin/python3", HARNESS, "--mutant", k, hk,
                            op, hh], capture_output=True, text=True)
        if p.returncode != 0:
            return digests[j]  # the harness's narrower catalogue
        _, hd = evaluate(hh, ins, os.path.join(tmp, "h"), types)
        crossed[0] += 1
        if hd != digests[j]:
            crossbad[0] += 1
            fail("%s: %s %s: the C mutant and the harness's %s differ" %
                 (case, op, kv, hk))
        return digests[j]

    index = {(m[0], m[2]): j for j, m in enumerate(muts)}
    if full:
        for j in range(len(muts)):
            mutant(j)
        chosen = [j for j in digests if digests[j] != ref]
    else:
        per = {}
        for j, m in enumerate(muts):
            per.setdefault(m[2].split("/")[0], []).append(j)
        chosen = []
        for js in per.values():
            got = []
            for j in spread_order(js):
                if len(got) == per_kind:
                    break
                if mutant(j) != ref:
                    got.append(j)
            chosen += got
        chosen.sort()
    # Classes of identical outputs among the mutants evaluated.
    by_digest = {}
    for j, dg in digests.items():
        by_digest.setdefault(dg, set()).add((muts[j][0], muts[j][2].split(
            "/")[0]))
    effective = [j for j in digests if digests[j] != ref]
    ambiguous = {j for j in effective if len(by_digest[digests[j]]) > 1}
    sets = os.path.join(tmp, "sets.txt")
    with open(sets, "w") as fh:
        for j in chosen:
            fh.write(" ".join(files[j]) + "\n")
    t0 = time.time()
    p = run([CLI, "signature", k, "--input"] + ins +
            ["--device-sets", sets, "--json", "--top", "3",
             "--max-seconds", "100000"], ok=(0, 3))
    secs = time.time() - t0
    reports = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    if len(reports) != len(chosen):
        fail("%s: %d reports for %d sets" % (case, len(reports),
                                              len(chosen)))
        return
    for j, r in zip(chosen, reports):
        op, kind = muts[j][0], muts[j][2].split("/")[0]
        cands = r["candidates"]
        label = "%s: %s %s" % (case, op, muts[j][2])
        names = [(c["op"], c["mutation"]) for c in cands]
        row = table.setdefault((case, kind), [0, 0, 0, 0])
        if r["budget_exhausted"] or r["verdict"] != "explained":
            fail("%s: verdict %s%s" % (label, r["verdict"],
                                        ", budget exhausted"
                                        if r["budget_exhausted"] else ""))
            row[3] += 1
            continue
        if names[0] == (op, kind) and j not in ambiguous:
            row[0] += 1
            continue
        # A best of another (op, mutation) reproducing everything: its
        # own mutant, evaluated here, must give the same bits (then the
        # two are indistinguishable: ambiguous by construction).
        b = cands[0]
        bj = index.get((b["op"], "%s/%d" % (b["mutation"], b["variant"])))
        if names[0] != (op, kind) and b["fraction"] == 1.0 and \
                bj is not None and mutant(bj) == digests[j]:
            ambiguous.add(j)
        if j in ambiguous:
            tied = [(c["op"], c["mutation"]) for c in cands if c["tied_best"]]
            if (op, kind) in tied or (op, kind) in names[:3]:
                row[2] += 1
            else:
                row[3] += 1
                fail("%s (ambiguous by construction): not among the tied "
                     "best %s" % (label, tied))
        elif (op, kind) in names[:3]:
            row[1] += 1
            print("  %s: ranked %d, best %s %s (%s)" % (
                label, names.index((op, kind)) + 1, b["op"], b["mutation"],
                b["detail"]))
        else:
            row[3] += 1
            fail("%s: not in the top 3: %s" % (label, names[:3]))
    print("%s: %d mutants listed, %d evaluated, %d with effect, %d "
          "ambiguous by construction, %d searched in %.1f s; %d cross-checked against "
          "the harness (%d differ)" %
          (case, len(muts), len(digests), len(effective), len(ambiguous), len(chosen),
           secs, crossed[0], crossbad[0]))
    if crossed[0] == 0:
        fail("%s: no mutant cross-checked against the harness" % case)


def main():
    full = os.environ.get("USC_SIGNATURE_FULL", "") not in ("", "0")
    per_kind = int(os.environ.get("USC_SIGNATURE_PER_KIND", PER_KIND))
    cases = [c for c in os.environ.get("USC_SIGNATURE_CASES", "").split(",")
             if c] or CASES
    table = {}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="usc_sigacc_") as tmp:
        for case in cases:
            try:
                run_case(case, tmp, full, per_kind, table)
            except RuntimeError as e:
                fail("%s: %s" % (case, e))
    print("\n%-28s %-24s %6s %6s %6s %6s" % ("case", "mutation", "first",
                                              "top3", "ambig", "missed"))
    tot = [0, 0, 0, 0]
    for (case, kind), row in sorted(table.items()):
        print("%-28s %-24s %6d %6d %6d %6d" % (case.split("/")[0], kind,
                                                *row))
        tot = [a + b for a, b in zip(tot, row)]
    dist = tot[0] + tot[1] + tot[3]
    print("%-28s %-24s %6d %6d %6d %6d" % ("total", "", *tot))
    print("%s: %d distinguishable mutants searched, %d named first "
          "(%.2f%%), %d in the top 3; %d ambiguous by construction among "
          "the tied best; %.0f s" % (
              "full set" if full else "subset (%d per case and mutation)"
              % per_kind, dist, tot[0], 100.0 * tot[0] / max(dist, 1),
              tot[1], tot[2], time.time() - t0))
    if len({c for c, _ in table}) < min(5, len(cases)):
        fail("fewer than 5 kernels searched")
    if tot[0] < 0.95 * dist:
        fail("fewer than 95% of the distinguishable mutants named first")
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
