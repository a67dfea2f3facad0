#!/usr/bin/python3
"""Defect signatures, the acceptance bar of the provenance issue.

For every op of captured cases of several kernels and every mutation of
the catalogue that applies to it:

1. the mutant is written (`ulpscope signature --mutant OP KIND/V`) and
   evaluated (`ulpscope eval`): that output is the "device" output.  Where
   the Python harness of tests/classify (inject_defects.py --mutant, HLO
   text written without the C mutator) has the same defect, its mutant is
   evaluated too and must give the same bits; where an identity gives the
   mutant's bits without the mutator (oracle() below: a flushed parameter
   is the kernel on flushed inputs, a saturating output convert is the
   reference with its infinities clamped...), they must agree too: the
   expectation does not come from the code under test alone;
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

The cases.  BASE: seven captured cases of data/examples (normal draws),
every mutation.  On normal draws some mutations never take effect (no NaN
reaches a maximum or clamp, nothing overflows a convert, few results are
subnormal), so EXTRA adds captures of data/acceptance/fastmath-off whose
inputs make them show, searched for EXTRA_KINDS: `denormal` draws (three
quarters subnormal inputs: flush-denormals), `large` draws (a narrowing
convert overflows: convert-saturate, convert-nan), a causal mask
(attention_logits_causal_bf16: its compare, flipped, moves the diagonal;
flip-compare of the other kernels' compares shows only on ties), and two
real captures
with a few input values replaced by NaN (the corpus has no NaN input;
`+nan` in the name: NaN_EDITS says which values; nan-dropping).  The
`output-zero` candidate (elements left unwritten) is not an op mutation:
each BASE case gets one more device set, its reference with the last
quarter of output 0 zeroed.  `wrong-reduce-dimension` applies to no
catalogue kernel (every reduce is over a dimension of a size no other
dimension of its operand has): NOT_APPLICABLE, covered by
run_signature.py on a hand-written kernel instead.

Cost.  The search runs once per case for all its selected mutants (each
mutant of the kernel evaluated once, every set scored).  By default a
deterministic subset is written, evaluated and searched: per case and
mutation, at most PER_KIND effective mutants of distinct outputs, taken
evenly spread over the enumeration order (first, last, middle...), so
every mutation that takes effect is searched on every case.
USC_SIGNATURE_FULL=1 writes, evaluates and searches every mutant (and
every mutation on the EXTRA cases too).  USC_SIGNATURE_CASES=a/b,c/d
restricts the cases (names as in BASE and EXTRA) and
USC_SIGNATURE_PER_KIND the subset (the ASan build uses both).  With the
default cases every mutation of the catalogue but NOT_APPLICABLE must have
been searched somewhere.

Exit 0 on success, 1 on failure, 77 without numpy.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    sys.exit(77)

from sigtest import (  # noqa: E402
    CLI, EX, FAIL, HARNESS, SRC, cli_eval, fail, inputs_of, run)

ACC = os.path.join(SRC, "data", "acceptance", "fastmath-off")
BASE = ["layer_norm_bf16/normal_s0", "softmax_f32/normal_s0",
        "gelu_erf_f16/normal_s0", "fp8_quantize_f32/normal_s0",
        "rms_norm_bf16/normal_s0", "adam_f32/normal_s0",
        "attention_logits_f32/normal_s0"]
# The mutations the normal draws leave without effect (or nearly).
EXTRA_KINDS = ["flush-denormals", "convert-saturate", "convert-nan",
               "nan-dropping", "flip-compare"]
EXTRA = ["layer_norm_bf16/denormal_s0", "adam_f32/denormal_s0",
         "rope_f32/denormal_s0",
         "fp8_quantize_f32/denormal_s0", "bias_residual_bf16/denormal_s0",
         "fp8_quantize_e5m2_f32/large_s0", "silu_bf16/large_s0",
         "swiglu_bf16/large_s0", "attention_logits_causal_bf16/normal_s0",
         "fp8_quantize_f32/normal_s0+nan",
         "fp8_quantize_bf16/normal_s0+nan"]
# "+nan" cases: (input index, flat positions) set to a quiet NaN of the
# input's type; the rest of the capture is as XLA:CPU got it.
NaN_EDITS = {"fp8_quantize_f32/normal_s0+nan": (0, [0, 37, 512, 1023]),
             "fp8_quantize_bf16/normal_s0+nan": (0, [0, 37, 512, 1023])}
QNAN = {"f32": 0x7FC00000, "bf16": 0x7FC0, "f16": 0x7E00}
# Cases whose output convert overflows from finite operands only (g *
# (1/scale), |g| <= 4096): there every Inf of the reference is an overflow
# that convert-nan makes NaN.
FINITE_OVERFLOW = ["fp8_quantize_e5m2_f32/large_s0"]
# Mutations no case can exercise, and why (docs/signatures.md).
NOT_APPLICABLE = {"wrong-reduce-dimension":
                  "no catalogue reduce has another dimension of the "
                  "reduced one's size",
                  "convert-int-truncate":
                  "no catalogue kernel converts a float to an integer "
                  "(run_signature.py and defects.py cover it)",
                  "convert-int-round":
                  "no catalogue kernel converts a float to an integer "
                  "(run_signature.py and defects.py cover it)"}
PER_KIND = 3
OUTPUT_ZERO = "output-zero"


def uview(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32,
                   8: np.uint64}[a.dtype.itemsize])


# (exponent mask, mantissa mask) of the float types: a NaN has every
# exponent bit set and a mantissa (f8e4m3fn: all of both).
NAN_MASKS = {"f64": (0x7FF0000000000000, 0xFFFFFFFFFFFFF),
             "f32": (0x7F800000, 0x7FFFFF), "f16": (0x7C00, 0x3FF),
             "bf16": (0x7F80, 0x7F), "f8e5m2": (0x7C, 0x3)}
# The largest finite encoding (published format tables), for the types a
# saturating convert of the chosen cases targets.
MAX_FINITE = {"f32": 0x7F7FFFFF, "f16": 0x7BFF, "bf16": 0x7F7F,
              "f8e5m2": 0x7B}
WIDTH = {"f64": 64, "f32": 32, "f16": 16, "bf16": 16, "f8e5m2": 8,
         "f8e4m3fn": 8}


def nan_mask(b, t):
    if t == "f8e4m3fn":
        return (b & 0x7F) == 0x7F
    if t not in NAN_MASKS:
        return np.zeros(b.shape, bool)
    e, m = NAN_MASKS[t]
    return ((b & e) == e) & ((b & m) != 0)


def inf_mask(b, t):
    if t not in NAN_MASKS:
        return np.zeros(b.shape, bool)
    e, m = NAN_MASKS[t]
    return ((b & e) == e) & ((b & m) == 0)


def digest_of(arrays, types):
    """A digest of the outputs' bits, NaNs made one (the search counts all
    NaNs equal: payloads are the device's business)."""
    h = hashlib.sha256()
    for a, t in zip(arrays, types):
        b = uview(a.reshape(-1)).copy()
        nan = nan_mask(b, t)
        b[nan] = 0
        h.update(nan.tobytes())
        h.update(b.tobytes())
    return h.hexdigest()


def evaluate(hlo, inputs, prefix, types):
    """The outputs' files, arrays and digest.  types: the outputs'
    element types (bf16 and fp8 files load as void)."""
    cli_eval(hlo, inputs, prefix)
    files = ["%s_%d.npy" % (prefix, i) for i in range(len(types))]
    arrays = [np.load(f) for f in files]
    if os.path.exists("%s_%d.npy" % (prefix, len(types))):
        raise RuntimeError("%s: more outputs than case.json lists" % hlo)
    return files, arrays, digest_of(arrays, types)


# The harness's spelling of a C (mutation, variant), where it has one.
HARNESS_KIND = {("narrow", 0): "narrow", ("round-toward-zero", 0): "truncate",
                ("drop", 0): "drop", ("swap-operands", 0): "swap",
                ("off-by-one", 0): "off-by-one", ("transposed", 0):
                "transpose", ("wrong-init", 0): "init"}


# ------------------------------------------------ independent expectations

def flush_input(path, t, out):
    """A copy of input file path with its subnormals replaced by zeros of
    their sign (exponent field 0, mantissa not)."""
    a = np.load(path)
    b = uview(a).copy()
    w = WIDTH[t]
    e, m = NAN_MASKS[t]
    sub = ((b & e) == 0) & ((b & m) != 0)
    b[sub] &= np.array(1 << (w - 1), b.dtype)
    np.save(out, b.view(a.dtype))
    return int(sub.sum())


def oracle(c, op, comp, kind):
    """The digest the mutant (op, kind) must give, computed without the C
    mutator, or None where no identity is known.  c: the case's context."""
    if kind == "flush-denormals" and comp == c["entry"] and \
            op in c["params"]:
        # Flushing an entry parameter (DAZ) = the kernel on flushed inputs.
        i, t = c["params"][op]
        if t not in NAN_MASKS:
            return None
        ins = list(c["ins"])
        ins[i] = os.path.join(c["tmp"], "flushed.npy")
        if flush_input(c["ins"][i], t, ins[i]) == 0:
            return None
        return evaluate(c["kernel"], ins, os.path.join(c["tmp"], "o"),
                        c["types"])[2]
    if kind in ("convert-saturate", "convert-nan") and \
            op == c["output_convert"] and len(c["types"]) == 1 and \
            (kind == "convert-saturate" or c["finite_overflow"]):
        # The convert that makes the output: where the reference is
        # +-Inf, the largest finite value of that sign (a clamp then a
        # convert: an Inf operand saturates too), or, where every Inf is
        # an overflow of a finite operand, a NaN.
        t = c["types"][0]
        if t not in MAX_FINITE:
            return None
        b = uview(c["ref"][0].reshape(-1)).copy()
        inf = inf_mask(b, t)
        sign = b & np.array(1 << (WIDTH[t] - 1), b.dtype)
        if kind == "convert-saturate":
            b[inf] = sign[inf] | np.array(MAX_FINITE[t], b.dtype)
        else:
            b[inf] = np.array(QNAN.get(t, NAN_MASKS[t][0] |
                                       NAN_MASKS[t][1]), b.dtype)
        return digest_of([b], [t])
    if kind == "nan-dropping" and c["nan_input"] is not None and \
            c["clamp_of_input"] == op:
        # A clamp giving its lower bound for a NaN = the kernel with the
        # NaNs made -inf (x * (1/scale), scale > 0, stays -inf and is
        # clamped to the lower bound).
        i, pos, t = c["nan_input"]
        a = np.load(c["ins"][i])
        b = uview(a).reshape(-1).copy()
        e, _ = NAN_MASKS[t]
        b[pos] = np.array(e | (1 << (WIDTH[t] - 1)), b.dtype)
        ins = list(c["ins"])
        ins[i] = os.path.join(c["tmp"], "neginf.npy")
        np.save(ins[i], b.view(a.dtype).reshape(a.shape))
        return evaluate(c["kernel"], ins, os.path.join(c["tmp"], "o"),
                        c["types"])[2]
    return None


def module_facts(text):
    """The entry computation's name, its parameters (name -> index), the
    root instruction of the computation whose result is the output when it
    is a convert, and the clamps of the module."""
    entry, params, block, roots, clamps = None, {}, None, {}, []
    root_call = None
    for ln in text.splitlines():
        if ln and not ln.startswith(" ") and ln.rstrip().endswith("{"):
            head = ln.split("(")[0].split()
            block = head[-1].lstrip("%") if head else None
            if ln.startswith("ENTRY"):
                entry = block
            continue
        s = ln.strip()
        if " = " not in s:
            continue
        is_root = s.startswith("ROOT ")
        name = s[5:] if is_root else s
        name, rhs = name.split(" = ", 1)
        name = name.lstrip("%")
        if block == entry and " parameter(" in rhs:
            params[name] = int(rhs.split(" parameter(")[1].split(")")[0])
        if is_root:
            m = re.search(r"\s([a-z][a-z0-9_-]*)\(", " " + rhs)
            op = m.group(1) if m else None
            roots[block] = (name, op)
            if block == entry and op == "fusion" and "calls=" in rhs:
                root_call = rhs.split("calls=")[1].split(",")[0].strip(
                ).lstrip("%")
        if " clamp(" in rhs:
            clamps.append(name)
    out_convert = None
    for b in (root_call, entry):
        if b in roots and roots[b][1] == "convert":
            out_convert = roots[b][0]
    return entry, params, out_convert, clamps


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


def case_dir(case):
    """(directory, kinds searched by default or None for all, NaN edit)."""
    if case in BASE:
        return os.path.join(EX, case), None, None
    if case in EXTRA:
        return os.path.join(ACC, case.split("+")[0]), EXTRA_KINDS, \
            NaN_EDITS.get(case)
    raise RuntimeError("unknown case '%s' (cases: %s)" %
                       (case, ", ".join(BASE + EXTRA)))


def new_row():
    # listed, evaluated, effective, searched, first, top3, ambiguous,
    # missed, oracle-checked
    return [0] * 9


def run_case(case, tmp, full, per_kind, table):
    d, kinds, edit = case_dir(case)
    k = os.path.join(d, "kernel.hlo")
    with open(os.path.join(d, "case.json")) as fh:
        meta = json.load(fh)
    with open(k) as fh:
        entry, params, out_convert, clamps = module_facts(fh.read())
    # A case's files are the entry's parameters and results: the whole
    # module is mutated, case.json's "fusion" only says which is the main.
    types = [o["type"].split("[")[0] for o in meta["outputs"]]
    in_types = [x["type"].split("[")[0] for x in meta["inputs"]]
    ins = inputs_of(d)
    nan_input = None
    if edit:
        i, pos = edit
        t = in_types[i]
        a = np.load(ins[i])
        b = uview(a).reshape(-1).copy()
        b[pos] = np.array(QNAN[t], b.dtype)
        ins[i] = os.path.join(tmp, "nan_input_%d.npy" % i)
        np.save(ins[i], b.view(a.dtype).reshape(a.shape))
        nan_input = (i, pos, t)
    if full:
        kinds = None
    _, ref_arrays, ref = evaluate(k, ins, os.path.join(tmp, "ref"), types)
    ctx = {"kernel": k, "ins": ins, "types": types, "tmp": tmp,
           "entry": entry, "ref": ref_arrays, "output_convert": out_convert,
           "params": {n: (i, in_types[i]) for n, i in params.items()
                      if i < len(in_types)},
           "nan_input": nan_input,
           "finite_overflow": case in FINITE_OVERFLOW,
           "clamp_of_input": clamps[0] if len(clamps) == 1 else None}
    lines = run([CLI, "signature", k, "--list-mutants"]).stdout.splitlines()
    muts = [ln.split("\t") for ln in lines if ln]
    if not muts:
        fail("%s: no mutant listed" % case)
        return
    for m in muts:
        kind = m[2].split("/")[0]
        if kinds is None or kind in kinds:
            table.setdefault((case, kind), new_row())[0] += 1
    digests, files, crossed, crossbad = {}, {}, [0], [0]

    def mutant(j):
        """Writes, evaluates and cross-checks mutant j (once)."""
        if j in digests:
            return digests[j]
        op, kv = muts[j][0], muts[j][2]
        kind, var = kv.split("/")
        mh = os.path.join(tmp, "m%d.hlo" % j)
        run([CLI, "signature", k, "--mutant", op, kv, "-o", mh])
        files[j], _, digests[j] = evaluate(
            mh, ins, os.path.join(tmp, "m%d" % j), types)
        row = table.get((case, kind))
        if row is not None:
            row[1] += 1
            row[2] += digests[j] != ref
        want = oracle(ctx, op, muts[j][1], kind)
        if want is not None:
            if row is not None:
                row[8] += 1
            if want != digests[j]:
                fail("%s: %s %s: the mutant differs from its independent "
                     "expectation" % (case, op, kv))
        hk = HARNESS_KIND.get((kind, int(var)))
        if hk is None:
            return digests[j]
        hh = os.path.join(tmp, "h.hlo")
        p = subprocess.run(["/usr/bin/python3", HARNESS, "--mutant", k, hk,
                            op, hh], capture_output=True, text=True)
        if p.returncode != 0:
            return digests[j]  # the harness's narrower catalogue
        hd = evaluate(hh, ins, os.path.join(tmp, "h"), types)[2]
        crossed[0] += 1
        if hd != digests[j]:
            crossbad[0] += 1
            fail("%s: %s %s: the C mutant and the harness's %s differ" %
                 (case, op, kv, hk))
        return digests[j]

    index = {(m[0], m[2]): j for j, m in enumerate(muts)}
    per = {}
    for j, m in enumerate(muts):
        kind = m[2].split("/")[0]
        if kinds is None or kind in kinds:
            per.setdefault(kind, []).append(j)
    chosen = []
    for js in per.values():
        got, outs = [], set()
        for j in (js if full else spread_order(js)):
            if not full and len(got) == per_kind:
                break
            # The subset takes outputs not yet taken: one flushed input
            # is often flushed again by the fusion parameter it feeds.
            if mutant(j) != ref and (full or digests[j] not in outs):
                got.append(j)
                outs.add(digests[j])
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
        # Elements left unwritten (BASE cases): the reference with the
        # last quarter of output 0 zero, an output no op mutant makes.
        if kinds is None or OUTPUT_ZERO in kinds:
            z = [a.copy() for a in ref_arrays]
            flat = uview(z[0].reshape(-1))
            flat[len(flat) - len(flat) // 4:] = 0
            zf = []
            for i, a in enumerate(z):
                zf.append(os.path.join(tmp, "oz_%d.npy" % i))
                np.save(zf[-1], a)
            if digest_of(z, types) == ref:
                fail("%s: output-zero: the reference's tail is all zero"
                     % case)
            else:
                fh.write(" ".join(zf) + "\n")
                chosen.append(OUTPUT_ZERO)
                row = table.setdefault((case, OUTPUT_ZERO), new_row())
                row[0] += 1
                row[1] += 1
                row[2] += 1
    if not chosen:
        fail("%s: no mutant of %s has an effect" % (case, kinds))
        return
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
        if j == OUTPUT_ZERO:
            op, kind, kv = None, OUTPUT_ZERO, OUTPUT_ZERO
        else:
            op, kind, kv = muts[j][0], muts[j][2].split("/")[0], muts[j][2]
        cands = r["candidates"]
        label = "%s: %s %s" % (case, op, kv)
        # output-zero is named after the op that writes the output: any
        # op counts, the mutation is what is checked.
        def key(c):
            return (None if c["mutation"] == OUTPUT_ZERO else c["op"],
                    c["mutation"])
        # A candidate's equivalent forms (docs/signatures.md, "Equivalent
        # mutations") are the same program under other names.
        def keys(c):
            return [key(c)] + [(e["op"], e["mutation"])
                               for e in c.get("equivalent", [])]
        names = [key(c) for c in cands]
        top3 = [k for c in cands[:3] for k in keys(c)]
        row = table[(case, kind)]
        row[3] += 1
        if r["budget_exhausted"] or r["verdict"] != "explained":
            fail("%s: verdict %s%s" % (label, r["verdict"],
                                        ", budget exhausted"
                                        if r["budget_exhausted"] else ""))
            row[7] += 1
            continue
        tied = [k for c in cands if c["tied_best"] for k in keys(c)]
        # Several (op, mutation) tied with the best reproduce the whole
        # output, as the true one does: bit-identical outputs, ambiguous
        # by construction.
        if len(set(tied)) > 1 and (op, kind) in tied and \
                cands[0]["fraction"] == 1.0:
            ambiguous.add(j)
        # Named by an equivalent form of the best: the same program.
        if cands and (op, kind) in keys(cands[0])[1:]:
            ambiguous.add(j)
        if names[0] == (op, kind) and j not in ambiguous:
            row[4] += 1
            continue
        # A best of another (op, mutation) reproducing everything: its
        # own mutant, evaluated here, must give the same bits (then the
        # two are indistinguishable: ambiguous by construction).
        b = cands[0]
        bj = index.get((b["op"], "%s/%d" % (b["mutation"], b["variant"])))
        if names[0] != (op, kind) and b["fraction"] == 1.0 and \
                bj is not None and j != OUTPUT_ZERO and \
                mutant(bj) == digests[j]:
            ambiguous.add(j)
        if j in ambiguous:
            if (op, kind) in tied or (op, kind) in top3:
                row[6] += 1
            else:
                row[7] += 1
                fail("%s (ambiguous by construction): not among the tied "
                     "best %s" % (label, tied))
        elif (op, kind) in top3:
            row[5] += 1
            print("  %s: ranked %d, best %s %s (%s)" % (
                label, 1 + next(i for i, c in enumerate(cands)
                                if (op, kind) in keys(c)),
                b["op"], b["mutation"], b["detail"]))
        else:
            row[7] += 1
            fail("%s: not in the top 3: %s" % (label, names[:3]))
    print("%s: %d mutants listed, %d evaluated, %d with effect, %d "
          "ambiguous by construction, %d searched in %.1f s; %d "
          "cross-checked against the harness (%d differ)" %
          (case, len(muts), len(digests), len(effective), len(ambiguous),
           len(chosen), secs, crossed[0], crossbad[0]))
    if kinds is None and case in BASE and crossed[0] == 0:
        fail("%s: no mutant cross-checked against the harness" % case)


def catalogue():
    """The catalogue's spellings, as the CLI lists them for a bad one."""
    k = os.path.join(EX, BASE[0], "kernel.hlo")
    p = run([CLI, "signature", k, "--mutant", "x", "no-such-mutation", "-o",
             os.devnull], ok=(1, 2))
    msg = p.stderr.split("expected one of:")
    if len(msg) != 2:
        raise RuntimeError("no catalogue in: " + p.stderr)
    return [x for x in msg[1].split() if x != "none"]


def main():
    full = os.environ.get("USC_SIGNATURE_FULL", "") not in ("", "0")
    per_kind = int(os.environ.get("USC_SIGNATURE_PER_KIND", PER_KIND))
    chosen = [c for c in os.environ.get("USC_SIGNATURE_CASES", "").split(",")
              if c]
    cases = chosen or BASE + EXTRA
    table = {}
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="usc_sigacc_") as tmp:
        for n, case in enumerate(cases):
            try:
                tc = time.time()
                # A directory per case: outputs of one never pass for
                # another's (a kernel with more outputs leaves more files).
                ct = os.path.join(tmp, "case%d" % n)
                os.mkdir(ct)
                run_case(case, ct, full, per_kind, table)
                print("%s: %.0f s" % (case, time.time() - tc))
            except RuntimeError as e:
                fail("%s: %s" % (case, e))
        try:
            kinds = catalogue()
        except RuntimeError as e:
            fail(str(e))
            kinds = []
    hdr = ("listed", "eval", "effect", "search", "first", "top3", "ambig",
           "missed", "indep")
    print("\n%-34s %-22s" % ("case", "mutation") +
          "".join(" %6s" % h for h in hdr))
    for (case, kind), row in sorted(table.items()):
        if row[3]:
            print("%-34s %-22s" % (case, kind) +
                  "".join(" %6d" % x for x in row))
    # Per mutation: the cases where it was searched, and the sums.
    print("\n%-22s %5s" % ("mutation", "cases") +
          "".join(" %6s" % h for h in hdr))
    tot = new_row()
    for kind in kinds + [x for x in sorted({kd for _, kd in table})
                         if x not in kinds]:
        rows = [r for (c, kd), r in table.items() if kd == kind]
        s = [sum(x) for x in zip(*rows)] if rows else new_row()
        ncase = sum(1 for r in rows if r[3])
        note = ""
        if kind in NOT_APPLICABLE:
            note = "  (not applicable: %s)" % NOT_APPLICABLE[kind]
        print("%-22s %5d" % (kind, ncase) + "".join(" %6d" % x for x in s)
              + note)
        tot = [a + b for a, b in zip(tot, s)]
        if not chosen and not s[3] and kind not in NOT_APPLICABLE:
            fail("mutation %s searched on no case" % kind)
    print("%-22s %5s" % ("total", "") + "".join(" %6d" % x for x in tot))
    dist = tot[4] + tot[5] + tot[7]
    print("%s: %d distinguishable mutants searched, %d named first "
          "(%.2f%%), %d in the top 3; %d ambiguous by construction among "
          "the tied best; %d checked against an independent expectation; "
          "%.0f s" % (
              "full set" if full else "subset (%d per case and mutation)"
              % per_kind, dist, tot[4], 100.0 * tot[4] / max(dist, 1),
              tot[5], tot[6], tot[8], time.time() - t0))
    kernels = {c.split("/")[0] for c in cases}
    if len({c.split("/")[0] for (c, _), r in table.items() if r[3]}) < \
            min(5, len(kernels)):
        fail("fewer than 5 kernels searched")
    if tot[4] < 0.95 * dist:
        fail("fewer than 95% of the distinguishable mutants named first")
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
