#!/usr/bin/env python3
"""The injected-defect campaign (docs/fuzzing.md, "The injected-defect
campaign"): single-op mutants of random kernels, run through XLA:CPU,
judged against the original module, and explained by `ulpscope signature`.

    inject.py --ulpscope build/ulpscope --out /tmp/inj --seeds 0-499 [--per-kernel 2]
              [--at kernel|source]

--at kernel (the default) mutates XLA's optimized module K (the case's
kernel.hlo) and compiles each mutant without XLA's HLO passes
(kernel_mode.py), so the kernel that runs is a single-op mutation of the
kernel judged and the right answer is the mutated op of K by its own
name.  --at source mutates the generated module, as described next.

For each seed: `ulpscope gen` writes a module G and XLA:CPU runs it on
inputs drawn as tools/fuzz_xla/run.py draws them (the original case O; a
kernel that is not legit itself is skipped).  Then, per kernel, up to
--per-kernel mutants of G's entry (`ulpscope signature G --list-mutants`,
a kind drawn uniformly among the kinds that apply, then one of its
mutants; the draws are seeded by the seed) are written with `ulpscope
signature G --mutant OP KIND/V`, compiled and run by XLA:CPU on O's
inputs.  The mutant's output replaces O's device output in a copy of O,
which `ulpscope check` judges under the profile (the ORIGINAL module is
the reference) and, when it is a defect, `ulpscope signature` ranks.  The
right answer is the mutated op (matched through the metadata op_name XLA
keeps for it in the optimized module) and the mutation kind.

One JSON line per mutant in OUT/mutants.jsonl (resumable: a seed already
there is skipped); the totals in OUT/inject.json and on stdout.  Exit
status 0, or 1 when a tool failed, 2 usage.
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", "capture"))

import numpy as np  # noqa: E402

import kernel_mode  # noqa: E402

OPNAME = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*metadata=\{[^}]*op_name=\"([^\"]*)\"",
                    re.M)
ENTRY = re.compile(r"^ENTRY\s+%?([\w.\-]+)", re.M)
CONST = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\w+\[([\d,]*)\]\S*\s+"
                   r"constant\(([^)]*)\)", re.M)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check(ulpscope, case, profile):
    r = sh([ulpscope, "check", case, "--profile", profile, "--json"])
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"verdict": "error", "reason": r.stderr.strip()[:300]}


def outside(doc):
    """Elements check put outside the envelope (defect, NaN/Inf/sign
    mismatches) and the undecided ones, over every output."""
    n, und = 0, 0
    for out in doc.get("outputs", []):
        c = out.get("classes", {})
        n += sum(c.get(k, 0) for k in ("defect", "nan-mismatch", "inf-mismatch",
                                       "sign-mismatch"))
        und += c.get("undecided", 0)
    return n, und


CONVERT = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\s+convert\(%?([\w.\-]+)\)",
                     re.M)


COMP_HEAD = re.compile(r"^\s*(?:ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*)?\{\s*$")
TO_APPLY = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\s+reduce(?:-window)?\(.*"
                      r"to_apply=%?([\w.\-]+)", re.M)
FUSION_CALLS = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=.*\sfusion\(.*calls=%?([\w.\-]+)",
                          re.M)


def op_names(kernel_text):
    """{instruction of the optimized module: the generated op it came
    from} through XLA's metadata op_name.  A convert XLA added without
    one (the rounding of a bf16/f16 op it computes in f32) belongs to the
    op it converts; the unnamed reductions and wrapped ops are named as
    below."""
    names = {name: op for name, op in OPNAME.findall(kernel_text)}
    for name, operand in CONVERT.findall(kernel_text):
        if name not in names and operand in names:
            names[name] = names[operand]
    # A fusion XLA wraps around one op ("wrapped_reduce-window") carries
    # the op_name; the op inside, of the same opcode, has none.
    comps, cur = {}, None
    for line in kernel_text.splitlines():
        m = COMP_HEAD.match(line)
        if m:
            cur = comps.setdefault(m.group(1), [])
        elif cur is not None:
            i = INSTR.match(line)
            if i:
                cur.append(i.groups())
    # A reduction left without one is named by its region's parameters,
    # which XLA names after the generated reduction.
    for name, region in TO_APPLY.findall(kernel_text):
        if name in names:
            continue
        for pname, opcode in comps.get(region, []):
            if opcode == "parameter" and pname in names:
                names[name] = names[pname]
                break
    for fusion, comp in FUSION_CALLS.findall(kernel_text):
        op = names.get(fusion)
        if not op:
            continue
        base = re.sub(r"\.\d+$", "", op)
        for name, opcode in comps.get(comp, []):
            if name not in names and opcode == base:
                names[name] = op
    return names


def constants(text):
    """{constant: its value} for the scalar constants and the splat
    arrays (every element one value: the broadcast of a scalar XLA folded
    into one constant); XLA writes no op_name for the constants it moves
    into a fusion or folds, so a constant is matched by value."""
    out = {}
    for name, dims, v in CONST.findall(text):
        vals = [x for x in re.split(r"[{},\s]+", v) if x]
        try:
            vals = {float(x) for x in vals}
        except ValueError:
            continue
        if len(vals) == 1:
            out[name] = vals.pop()
    return out


INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\s+([\w\-]+)\(", re.M)


def unique_opcodes(gen_text):
    """The opcodes that occur once in the generated module's entry."""
    entry = gen_text[gen_text.rfind("ENTRY"):]
    count = {}
    for _, opcode in INSTR.findall(entry):
        count[opcode] = count.get(opcode, 0) + 1
    return {k for k, v in count.items() if v == 1}


GEN_OP = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\s+([\w\-]+)\(([^)]*)\)", re.M)
LAYOUT = {"broadcast", "transpose", "reshape", "copy", "bitcast"}


GEN_LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$", re.M)


def gen_graph(gen_text):
    """{op of the generated entry: (opcode, [operands], its text after '=')}."""
    entry = gen_text[gen_text.rfind("ENTRY"):]
    rhs = dict(GEN_LINE.findall(entry))
    return {name: (opcode, re.findall(r"%([\w.\-]+)", args), rhs.get(name, "").strip())
            for name, opcode, args in GEN_OP.findall(entry)}


UNARY = {"convert", "sqrt", "rsqrt", "cbrt", "exponential", "exponential-minus-one", "log",
         "log-plus-one", "sine", "cosine", "tan", "tanh", "logistic", "negate", "abs", "sign",
         "floor", "ceil", "round-nearest-even", "round-nearest-afz"}


def named(o_names, op, graph, o_opcode=None):
    """Whether an optimized op whose metadata op_name is o_names
    ("add.4", or "add.4;broadcast.2" when XLA fused several generated ops
    into one) implements the generated op: op is one of them or has the
    same text as one (XLA's CSE merged them), or op sits
    in a chain of layout ops (broadcast, transpose, reshape, copy,
    bitcast) that ends at one of them, which XLA folds into a single op
    named after the last (a transpose of a broadcast becomes one
    broadcast)."""
    for g in o_names.split(";"):
        if g == op:
            return True
        # Two generated ops of the same text (opcode, operands and
        # attributes) are one op after XLA's CSE, named after either.
        if g in graph and op in graph and graph[g][0] != "parameter" and \
                graph[g][2] == graph[op][2]:
            return True
        seen = 0
        while g in graph and graph[g][0] in LAYOUT and graph[g][1] and seen < 16:
            g = graph[g][1][0]
            seen += 1
            if g == op:
                return graph[g][0] in LAYOUT if g in graph else False
        # XLA sinks a transpose through unary elementwise ops into the
        # broadcast under them (transpose(sqrt(broadcast(x))) becomes
        # sqrt(broadcast'(x)), the broadcast named after the transpose):
        # an optimized broadcast named after such a chain is the
        # generated broadcast at its bottom.
        g = o_names.split(";")[-1]
        if o_opcode == "broadcast" and graph.get(op, ("",))[0] == "broadcast":
            seen = 0
            while g in graph and graph[g][0] in LAYOUT | UNARY and graph[g][1] and seen < 16:
                g = graph[g][1][0]
                seen += 1
                if g == op:
                    return True
    return False


def same_unique_opcode(o, op, unique):
    """An optimized op XLA gave no op_name (a reduce-window it wrapped)
    is the generated op when both are named after one opcode
    ("reduce-window.1", "reduce-window.19") that occurs once in the
    generated module."""
    base = re.sub(r"\.\d+$", "", o)
    return base == re.sub(r"\.\d+$", "", op) and base in unique


RANKED = re.compile(r"^(\S+) \((.*)\) ([\w\-]+)/\d+( =)?$")


def rescore(ulpscope, path):
    """Scores mutants.jsonl again from its 'ranked' lines, adding the
    unique-opcode rule to the op_name mapping they record (rows of the
    constant kinds, matched by value when they ran, keep their scores)."""
    rows = [json.loads(line) for line in open(path) if line.strip()]
    texts = {}
    for r in rows:
        if r.get("verdict") != "defect" or r["kind"] in ("wrong-constant", "constant-ulps") \
                or r.get("at") == "kernel":
            # At the kernel the op is named as it is: nothing to map.
            continue
        if r["seed"] not in texts:
            texts[r["seed"]] = unique_opcodes(run_gen(ulpscope, r["seed"]))
        unique = texts[r["seed"]]
        right, tie = [], []
        for line in r.get("ranked", []):
            m = RANKED.match(line)
            if not m:
                right.append(False)
                tie.append(False)
                continue
            o, mapped, mut, eq = m.groups()
            hit = mapped == r["op"] or (mapped == "?" and (o == r["op"] or
                                                            same_unique_opcode(o, r["op"], unique)))
            right.append(hit and mut == r["kind"])
            tie.append(bool(eq))
        tied = [i for i in range(len(right)) if i == 0 or (tie[i] and tie[0])]
        r["top1"] = bool(right[:1] and right[0])
        r["top3"] = any(right[:3])
        r["top1_tied"] = any(right[i] for i in tied)
        r["top3_tied"] = r["top3"] or r["top1_tied"]
    with open(path, "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))


def run_gen(ulpscope, seed, ops=12):
    r = sh([ulpscope, "gen", "--seed", str(seed), "--ops", str(ops)])
    return r.stdout


def same_outputs(case_dir, outputs):
    for k, y in enumerate(outputs):
        x = np.load(os.path.join(case_dir, f"device_{k}.npy"), allow_pickle=False)
        if x.tobytes() != np.ascontiguousarray(y).tobytes():
            return False
    return True


def write_device(case_dir, outputs):
    for k, y in enumerate(outputs):
        path = os.path.join(case_dir, f"device_{k}.npy")
        x = np.load(path, allow_pickle=False)
        y = np.ascontiguousarray(y)
        if y.dtype != x.dtype and y.dtype.itemsize == x.dtype.itemsize:
            y = y.view(x.dtype)
        np.save(path, y.reshape(x.shape))


def inputs_of(case_dir, case):
    import capture
    out = []
    for rec in case["inputs"]:
        x = np.load(os.path.join(case_dir, rec["file"]), allow_pickle=False)
        out.append(x.view(capture._np_dtype(rec["type"].split("[")[0])))  # noqa: SLF001
    return out


def judge(args, rec, orig, outs, work, gpath, profile, is_op, names, seed, op, mut,
          mutant_text=None, inputs_like=None):
    """Judges a mutant's outputs (run on the original's inputs): no
    effect when bit-identical, else `check` of the original case with the
    mutant's outputs as its device outputs and, for a defect, `signature`
    scored against the injected op (is_op) and kind.  At the kernel
    (mutant_text given), the outputs are first checked against the
    mutant itself (as_written).  Fills rec."""
    kind = rec["kind"]
    if same_outputs(orig, outs):
        rec["outcome"] = "no effect"
        return
    if mutant_text is not None:
        # Did XLA compile the mutant as written?  Its outputs must be a
        # legit run of the mutant's own text under the profile.  Without
        # layout assignment XLA:CPU takes a transpose whose result it
        # gave a permuted layout for a bitcast (no data moved), so a
        # mutant that adds a transpose (`transposed`) can run as another
        # program although every op is there.
        acase = os.path.join(work, "as_written")
        shutil.rmtree(acase, ignore_errors=True)
        shutil.copytree(orig, acase)
        with open(os.path.join(acase, "kernel.hlo"), "w") as f:
            f.write(mutant_text)
        write_device(acase, outs)
        rec["as_written"] = check(args.ulpscope, acase, profile).get("verdict")
        if rec["as_written"] != "legit":
            rec["faithful"] = False
            rec["rewritten"] = (rec.get("rewritten", "") + "; " if rec.get("rewritten") else "") + \
                f"its outputs are {rec['as_written']} for the mutant's own text"
    mcase = os.path.join(work, "mutated")
    shutil.rmtree(mcase, ignore_errors=True)
    shutil.copytree(orig, mcase)
    write_device(mcase, outs)
    t1 = time.time()
    doc = check(args.ulpscope, mcase, profile)
    rec["check_seconds"] = round(time.time() - t1, 2)
    rec["verdict"] = doc.get("verdict")
    rec["outside"], rec["undecided"] = outside(doc)
    rec["outcome"] = "changed"
    if args.keep:
        shutil.copytree(mcase, os.path.join(args.keep, f"seed_{seed}_{op}_{mut.replace('/', '_')}"),
                        dirs_exist_ok=True)
        shutil.copy(gpath, os.path.join(args.keep, f"seed_{seed}.generated.hlo"))
    if rec["verdict"] == "defect":
        t2 = time.time()
        # At the kernel the same search proposes separating inputs when
        # its first candidate is tied (written only then).
        sdir = os.path.join(work, "separating")
        shutil.rmtree(sdir, ignore_errors=True)
        sep_args = ["--separate", sdir, "--seed", str(args.separate_seed)] \
            if mutant_text is not None and not args.no_separate else []
        s = sh([args.ulpscope, "signature", mcase, "--profile", profile, "--json",
                "--top", "10", "--max-seconds", str(args.max_seconds)] + sep_args)
        rec["signature_seconds"] = round(time.time() - t2, 2)
        try:
            doc = json.loads(s.stdout)
        except ValueError:
            doc = {}
            rec["signature_error"] = s.stderr.strip()[:300]
        cands = doc.get("candidates", [])
        rec.update(rank_figures(cands, is_op, op, kind, names))
        rec["top1_op"] = bool(cands) and is_op(cands[0].get("op"), op)
        if sep_args and rec["tied"] > 1:
            separate(args, rec, doc.get("separation") or {}, mcase, sdir, work, inputs_like,
                     mutant_text, profile, is_op, op, kind, names)


def rank_figures(cands, is_op, op, kind, names, prefix=""):
    """The figures of one ranking (signature's candidates) against the
    injected op and kind: ranked, tied, top1, top3, equivalent,
    top1_equiv, top3_equiv, top1_tied, top3_tied; each key prefixed."""
    right = [is_op(c.get("op"), op) and c.get("mutation") == kind for c in cands]
    # A candidate is one program under several names when signature
    # found mutations that write the same program (docs/signatures.md,
    # "Equivalent mutations"): the injected mutation may be any of its
    # forms.
    right_eq = [r or any(is_op(e.get("op"), op) and e.get("mutation") == kind
                         for e in c.get("equivalent", []))
                for r, c in zip(right, cands)]
    # Candidates tied with the first (signature's "1="): mutations that
    # explain the output equally well, often equivalent ones (EQ<->NE of
    # a compare feeding a select is its branches swapped).
    tied = [i for i, c in enumerate(cands) if i == 0 or (c.get("tied_best") and
                                                         cands[0].get("tied_best"))]
    f = {
        "ranked": [f"{c.get('op')} ({names.get(c.get('op'), '?')}) "
                   f"{c.get('mutation')}/{c.get('variant')}"
                   f"{' =' if c.get('tied_best') else ''}" for c in cands[:5]],
        "tied": len(tied),
        "top1": bool(right[:1] and right[0]),
        "top3": any(right[:3]),
        "equivalent": [[f"{e.get('op')} ({names.get(e.get('op'), '?')}) "
                        f"{e.get('mutation')}/{e.get('variant')}"
                        for e in c.get("equivalent", [])] for c in cands[:5]],
        "top1_equiv": bool(right_eq[:1] and right_eq[0]),
        "top3_equiv": any(right_eq[:3]),
        "top1_tied": any(right_eq[i] for i in tied),
    }
    f["top3_tied"] = f["top3_equiv"] or f["top1_tied"]
    return {prefix + k: v for k, v in f.items()}


def separate(args, rec, sep, mcase, sdir, work, inputs_like, mutant_text, profile, is_op,
             op, kind, names):
    """The first candidate is tied (docs/fuzzing.md, "A second,
    separating run"): `signature --separate` proposed inputs on which the
    tied candidates differ (sep: its JSON, the files in sdir), the
    mutant runs on them as XLA:CPU compiles it, that run is a second
    case, and `signature CASE --also CASE2` ranks again.  Adds
    sep_outcome and, after a second run, the sep_ figures (rank_figures)
    and sep_seconds to rec."""
    t0 = time.time()
    rec["sep_draws"] = sep.get("draws")
    rec["sep_classes"] = sep.get("classes")
    rec["sep_inseparable"] = sep.get("inseparable")
    if sep.get("draw") is None:
        rec["sep_outcome"] = "no draw separates" if sep.get("tied", 0) > 1 \
            else "nothing to separate"
        return
    ins = []
    for k, like in enumerate(inputs_like):
        x = np.load(os.path.join(sdir, f"input_{k}.npy"), allow_pickle=False)
        ins.append(x.view(like.dtype).reshape(like.shape))
    try:
        outs = kernel_mode.run_without_passes(mutant_text, ins, os.path.join(work, "dump2"))
    except Exception as e:  # noqa: BLE001
        rec["sep_outcome"] = f"XLA refused the second run: {type(e).__name__}"
        return
    # The second case's device outputs: the mutant's run, in the first
    # case's files' types and shapes.
    for name in os.listdir(mcase):
        if name.startswith("device_"):
            shutil.copy(os.path.join(mcase, name), os.path.join(sdir, name))
    write_device(sdir, outs)
    s = sh([args.ulpscope, "signature", mcase, "--also", sdir, "--profile", profile,
            "--json", "--top", "10", "--max-seconds", str(args.max_seconds)])
    try:
        cands = json.loads(s.stdout).get("candidates", [])
    except ValueError:
        rec["sep_outcome"] = "error: " + s.stderr.strip()[:200]
        return
    rec["sep_outcome"] = "second run"
    rec.update(rank_figures(cands, is_op, op, kind, names, prefix="sep_"))
    rec["sep_seconds"] = round(time.time() - t0, 2)


def one_seed(args, seed, profile, log, only=None):
    import capture
    import run
    work = os.path.join(args.out, "work", f"seed_{seed}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    text, _ = run.gen_text(args.ulpscope, seed, args.ops, "")
    gpath = os.path.join(work, "generated.hlo")
    with open(gpath, "w") as f:
        f.write(text)
    orig = os.path.join(work, "original")
    dist = run.distribution_of(seed, args.distribution)
    try:
        case = run.capture_text(text, orig, dist=dist, seed=seed)
    except Exception as e:  # noqa: BLE001
        log({"seed": seed, "skipped": f"original not captured: {type(e).__name__}"})
        return
    doc = check(args.ulpscope, orig, profile)
    if doc.get("verdict") != "legit":
        log({"seed": seed, "skipped": f"original is {doc.get('verdict')}"})
        return
    kpath = os.path.join(orig, "kernel.hlo")
    inputs = inputs_of(orig, case)
    if args.at == "kernel":
        # The mutants are the kernel's own, and the kernel must run as
        # itself without XLA's passes: compiled so, the original kernel
        # gives the original run's bits, or the seed is skipped.
        marker = os.path.join(args.out, "in_progress.json")
        with open(marker, "w") as f:
            json.dump({"seed": seed, "skipped": "XLA:CPU aborted the process compiling "
                       "the kernel without passes"}, f)
        try:
            try:
                base = kernel_mode.run_without_passes(open(kpath).read(), inputs,
                                                      os.path.join(work, "dump"))
            finally:
                os.unlink(marker)
        except Exception as e:  # noqa: BLE001
            log({"seed": seed, "skipped": "kernel not compiled without passes: "
                 f"{type(e).__name__}: {str(e)[:200]}"})
            return
        base_census = (kernel_mode.op_census(open(kpath).read()),
                       kernel_mode.op_census(kernel_mode.compiled_text(os.path.join(work, "dump"))
                                             or ""))
        if not same_outputs(orig, base):
            # Compiled without passes, the kernel gives other bits (a
            # YNNPACK dot re-emitted as a loop fusion sums in another
            # order): that run is the original the mutants are compared
            # with, when it is legit itself.
            write_device(orig, base)
            doc = check(args.ulpscope, orig, profile)
            if doc.get("verdict") != "legit":
                log({"seed": seed, "skipped": "kernel compiled without passes is "
                     f"{doc.get('verdict')}"})
                return
            log({"seed": seed, "note": "kernel compiled without passes gives other bits, legit: "
                 "the original run is that one"})
    source = kpath if args.at == "kernel" else gpath
    entry = ENTRY.search(text).group(1)
    listing = sh([args.ulpscope, "signature", source, "--list-mutants"])
    by_kind = {}
    for line in listing.stdout.splitlines():
        parts = line.split("\t")
        # At the kernel, every computation's ops (the fused computations
        # are where the kernel computes); at the source, the entry's.
        if len(parts) >= 3 and (args.at == "kernel" or parts[1] == entry):
            kind = parts[2].split("/")[0]
            by_kind.setdefault(kind, []).append((parts[0], parts[2]))
    rng = random.Random(seed * 7919 + args.mutant_seed)
    kinds = sorted(by_kind)
    rng.shuffle(kinds)
    with open(os.path.join(orig, "kernel.hlo")) as f:
        ktext = f.read()
    names, kconst, gconst = op_names(ktext), constants(ktext), constants(text)

    unique = unique_opcodes(text)
    graph = gen_graph(text)

    kopcode = {name: opcode for name, opcode in INSTR.findall(ktext)}

    def is_op(o, op):
        if o in names:
            return named(names[o], op, graph, kopcode.get(o))
        if o in kconst:
            # XLA turns x - c into x + (-c): a constant whose value no
            # generated constant has is matched by its negation.
            v = kconst[o]
            return gconst.get(op) == v or (v not in gconst.values() and gconst.get(op) == -v)
        return o == op or same_unique_opcode(o, op, unique)
    if args.at == "kernel":
        # The mutated op is an op of the very kernel signature names.
        def is_op(o, op):  # noqa: F811
            return o == op
        names = {}
    draws = []
    for kind in kinds[:args.per_kernel]:
        op, mut = rng.choice(by_kind[kind])
        draws.append((op, kind, mut))
    if only is not None:
        # A replay: the mutants an earlier run recorded for this seed.
        draws = only
    for op, kind, mut in draws:
        rec = {"seed": seed, "distribution": dist, "op": op, "kind": kind, "mutant": mut}
        t0 = time.time()
        mpath = os.path.join(work, "mutant.hlo")
        r = sh([args.ulpscope, "signature", source, "--mutant", op, mut, "-o", mpath])
        if r.returncode != 0:
            rec["outcome"] = "not written"
            rec["error"] = r.stderr.strip()[:300]
            log(rec)
            continue
        with open(mpath) as f:
            mtext = f.read()
        rec["at"] = args.at
        try:
            if args.at == "kernel":
                dump = os.path.join(work, "dump")
                # XLA:CPU aborts the process on some kernels it compiles
                # without passes (a CHECK on incompatible layouts): the
                # mutant in hand is left here for the next run to record.
                marker = os.path.join(args.out, "in_progress.json")
                with open(marker, "w") as f:
                    json.dump(rec, f)
                try:
                    outs = kernel_mode.run_without_passes(mtext, inputs, dump)
                finally:
                    os.unlink(marker)
                rec["faithful"], diff = kernel_mode.faithful(mtext, dump, base_census)
                if diff:
                    rec["rewritten"] = diff
            else:
                exe = capture.compile_hlo_text(mtext)
                outs = capture._run_executable(exe, inputs)  # noqa: SLF001
        except Exception as e:  # noqa: BLE001
            rec["outcome"] = "XLA refused"
            rec["error"] = f"{type(e).__name__}: {str(e)[:200]}"
            if args.at == "kernel":
                rec["refused_as"] = kernel_mode.refusal(str(e))
            log(rec)
            continue
        judge(args, rec, orig, outs, work, gpath, profile, is_op, names, seed, op, mut,
              mtext if args.at == "kernel" else None, inputs)
        rec["seconds"] = round(time.time() - t0, 2)
        log(rec)
    shutil.rmtree(work, ignore_errors=True)


def summarise(path, with_replay=None):
    """The totals of mutants.jsonl at path; with_replay (a replay's
    mutants.jsonl): its separating-run figures (the sep_ keys) put on the
    same mutants (seed, op, mutant) of path, whose own figures are kept."""
    rows = []
    with open(path) as f:
        for line in f:
            rows.append(json.loads(line))
    if with_replay:
        sep = {}
        with open(with_replay) as f:
            for line in f:
                r = json.loads(line) if line.strip() else {}
                if "sep_outcome" in r:
                    sep[(r["seed"], r["op"], r["mutant"])] = {
                        k: v for k, v in r.items() if k.startswith("sep_")}
        for r in rows:
            r.update(sep.get((r.get("seed"), r.get("op"), r.get("mutant")), {}))
    muts = [r for r in rows if "outcome" in r]
    changed = [r for r in muts if r["outcome"] == "changed"]
    leaves = [r for r in changed if r.get("outside", 0) > 0]
    caught = [r for r in leaves if r["verdict"] == "defect"]
    defects = [r for r in changed if r["verdict"] == "defect"]
    s = {
        "kernels": len({r["seed"] for r in rows}),
        "kernels_skipped": sum(1 for r in rows if "skipped" in r),
        "mutants": len(muts),
        "by_outcome": {},
        "changed_by_verdict": {},
        "leaving_envelope": len(leaves),
        "caught": len(caught),
        "recall": round(len(caught) / len(leaves), 4) if leaves else None,
        "defects_ranked": len(defects),
        "top1": sum(1 for r in defects if r.get("top1")),
        "top3": sum(1 for r in defects if r.get("top3")),
        "top1_op": sum(1 for r in defects if r.get("top1_op")),
        "top1_equiv": sum(1 for r in defects if r.get("top1_equiv", r.get("top1"))),
        "top3_equiv": sum(1 for r in defects if r.get("top3_equiv", r.get("top3"))),
        "top1_tied": sum(1 for r in defects if r.get("top1_tied")),
        "top3_tied": sum(1 for r in defects if r.get("top3_tied")),
        "misses_by_kind": {},
        "seconds_per_mutant": round(sum(r.get("seconds", 0) for r in muts) / len(muts), 2)
        if muts else None,
        "signature_seconds_median": None,
    }
    for r in muts:
        s["by_outcome"][r["outcome"]] = s["by_outcome"].get(r["outcome"], 0) + 1
    for r in changed:
        s["changed_by_verdict"][r["verdict"]] = s["changed_by_verdict"].get(r["verdict"], 0) + 1
    for r in defects:
        k = s["misses_by_kind"].setdefault(r["kind"], {"ranked": 0, "top1_miss": 0,
                                                       "top3_miss": 0})
        k["ranked"] += 1
        k["top1_miss"] += not r.get("top1")
        k["top3_miss"] += not r.get("top3")
        k["top1_equiv_miss"] = k.get("top1_equiv_miss", 0) + \
            (not r.get("top1_equiv", r.get("top1")))
        k["top3_equiv_miss"] = k.get("top3_equiv_miss", 0) + \
            (not r.get("top3_equiv", r.get("top3")))
        k["top1_tied_miss"] = k.get("top1_tied_miss", 0) + (not r.get("top1_tied"))
    for r in leaves:
        if r["verdict"] != "defect":
            k = s["misses_by_kind"].setdefault(r["kind"], {"ranked": 0, "top1_miss": 0,
                                                           "top3_miss": 0})
            k["not_caught"] = k.get("not_caught", 0) + 1
    # At the kernel: the kernels judged in their form compiled without
    # passes, the mutants XLA refused by kind, and the figures again over
    # the defects whose mutation reached the compiled kernel op for op.
    s["kernels_recompiled"] = sum(1 for r in rows if "note" in r)
    refused = {}
    for r in muts:
        if r["outcome"] == "XLA refused":
            refused[r["kind"]] = refused.get(r["kind"], 0) + 1
    s["refused_by_kind"] = refused
    if any("faithful" in r for r in muts):
        rewritten = [r for r in muts if r.get("faithful") is False]
        s["rewritten"] = len(rewritten)
        s["rewritten_by_kind"] = {}
        for r in rewritten:
            s["rewritten_by_kind"][r["kind"]] = s["rewritten_by_kind"].get(r["kind"], 0) + 1
        kept = [r for r in defects if r.get("faithful")]
        s["faithful_defects"] = len(kept)
        if kept:
            s["faithful_top1_equiv_rate"] = round(
                sum(1 for r in kept if r.get("top1_equiv")) / len(kept), 4)
            s["faithful_top3_equiv_rate"] = round(
                sum(1 for r in kept if r.get("top3_equiv")) / len(kept), 4)
    # After one separating run (docs/fuzzing.md, "A second, separating
    # run"): a defect whose first candidate was tied counts with the
    # ranking over both runs, the others with their single run.
    if any("sep_outcome" in r for r in defects):
        def after(r, k):
            return r.get("sep_" + k, r.get(k, r.get(k.replace("_equiv", ""))))
        s["separating"] = {
            "tied_first": sum(1 for r in defects if r.get("tied", 1) > 1),
            "outcomes": {},
            "seconds_median": None,
        }
        for r in defects:
            if "sep_outcome" in r:
                o = s["separating"]["outcomes"]
                o[r["sep_outcome"]] = o.get(r["sep_outcome"], 0) + 1
        for k in ("top1", "top3", "top1_equiv", "top3_equiv", "top1_tied"):
            s["separating"][k] = sum(1 for r in defects if after(r, k))
            s["separating"][k + "_rate"] = round(s["separating"][k] / len(defects), 4)
        kept = [r for r in defects if r.get("faithful")]
        if kept:
            for k in ("top1_equiv", "top3_equiv"):
                s["separating"]["faithful_" + k + "_rate"] = round(
                    sum(1 for r in kept if after(r, k)) / len(kept), 4)
        secs = sorted(r["sep_seconds"] for r in defects if "sep_seconds" in r)
        if secs:
            s["separating"]["seconds_median"] = secs[len(secs) // 2]
        for r in defects:
            k = s["misses_by_kind"][r["kind"]]
            k["sep_top1_equiv_miss"] = k.get("sep_top1_equiv_miss", 0) + \
                (not after(r, "top1_equiv"))
            k["sep_top3_equiv_miss"] = k.get("sep_top3_equiv_miss", 0) + \
                (not after(r, "top3_equiv"))
    sig = sorted(r["signature_seconds"] for r in defects if "signature_seconds" in r)
    if sig:
        s["signature_seconds_median"] = sig[len(sig) // 2]
    if defects:
        s["top1_rate"] = round(s["top1"] / len(defects), 4)
        s["top3_rate"] = round(s["top3"] / len(defects), 4)
        s["top1_equiv_rate"] = round(s["top1_equiv"] / len(defects), 4)
        s["top3_equiv_rate"] = round(s["top3_equiv"] / len(defects), 4)
        s["top1_tied_rate"] = round(s["top1_tied"] / len(defects), 4)
        s["top3_tied_rate"] = round(s["top3_tied"] / len(defects), 4)
    return s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ulpscope", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seeds", default="0-99", help="e.g. 0-499 (run.py's syntax)")
    ap.add_argument("--ops", type=int, default=12)
    ap.add_argument("--at", choices=("kernel", "source"), default="kernel",
                    help="inject into XLA's optimized module, compiled without HLO passes "
                         "(kernel, the default), or into the generated module before XLA "
                         "(source)")
    ap.add_argument("--per-kernel", type=int, default=2, help="mutants per kernel (2)")
    ap.add_argument("--fast-math", choices=("off", "on"), default="off")
    ap.add_argument("--distribution", default="normal,uniform,large,ties",
                    help="input distributions, taken in turn by seed")
    ap.add_argument("--mutant-seed", type=int, default=0, help="varies the mutants drawn")
    ap.add_argument("--max-seconds", type=float, default=10,
                    help="signature --max-seconds per mutant (10)")
    ap.add_argument("--separate-seed", type=int, default=1,
                    help="signature --seed of the separating draws (1)")
    ap.add_argument("--no-separate", action="store_true",
                    help="no second, separating run for a tied first candidate")
    ap.add_argument("--replay", metavar="MUTANTS_JSONL",
                    help="run again only the mutants an earlier run judged defect "
                         "(its seeds, ops and mutants; --seeds then only filters)")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep each changed mutant's case (and the generated module) in DIR")
    ap.add_argument("--summary-only", action="store_true")
    ap.add_argument("--with-replay", metavar="MUTANTS_JSONL",
                    help="with --summary-only: the separating-run figures of a replay "
                         "put on the same mutants of OUT/mutants.jsonl")
    ap.add_argument("--rescore", action="store_true",
                    help="score OUT/mutants.jsonl again (runs made before the unique-opcode "
                         "rule), then total")
    args = ap.parse_args(argv)
    import run
    args.distribution = [d for d in args.distribution.split(",") if d]
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "mutants.jsonl")
    if args.rescore:
        rescore(args.ulpscope, path)
    elif not args.summary_only:
        import capture
        capture.setup(fast_math=args.fast_math == "on", extra_flags=run.DUMP_FLAGS)
        profile = "xla-cpu-fast-math" if args.fast_math == "on" else "xla-cpu"
        crashed = os.path.join(args.out, "in_progress.json")
        if os.path.exists(crashed):
            # The last run died compiling this mutant (XLA:CPU aborted):
            # recorded as such, and its seed counts as done.
            with open(crashed) as f:
                rec = json.load(f)
            if "skipped" not in rec:
                rec["outcome"] = "XLA refused"
                rec["refused_as"] = "XLA aborted"
                rec["error"] = "XLA:CPU aborted the process compiling it (see the run's log)"
            with open(path, "a") as f:
                f.write(json.dumps(rec) + "\n")
            os.unlink(crashed)
        done = set()
        if os.path.exists(path):
            with open(path) as f:
                done = {json.loads(line)["seed"] for line in f if line.strip()}
        with open(path, "a") as f:
            def log(rec):
                f.write(json.dumps(rec) + "\n")
                f.flush()
            replay = None
            if args.replay:
                replay = {}
                with open(args.replay) as g:
                    for line in g:
                        r = json.loads(line) if line.strip() else {}
                        if r.get("verdict") == "defect":
                            replay.setdefault(r["seed"], []).append(
                                (r["op"], r["kind"], r["mutant"]))
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
            for seed in run.parse_seeds(args.seeds):
                if seed in done or (replay is not None and seed not in replay):
                    continue
                one_seed(args, seed, profile, log, replay[seed] if replay else None)
        shutil.rmtree(os.path.join(args.out, "work"), ignore_errors=True)
    s = summarise(path, args.with_replay)
    with open(os.path.join(args.out, "inject.json"), "w") as f:
        json.dump(s, f, indent=1)
        f.write("\n")
    print(json.dumps(s, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
