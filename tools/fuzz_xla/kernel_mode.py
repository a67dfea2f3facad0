"""Kernel-level injection for inject.py (docs/fuzzing.md, "The
injected-defect campaign"): the mutation goes into XLA's *optimized*
module (the kernel XLA:CPU runs, the case's kernel.hlo), and XLA:CPU
compiles the mutant without running its HLO passes again, so the kernel
that runs is a single-op mutation of the kernel ulpscope judges.

jaxlib 0.10.2 compiles nothing but StableHLO, so the mutant's text goes
HLO -> StableHLO -> XLA as every module does; what keeps XLA from
optimizing it again is the per-compile debug option
xla_enable_hlo_passes_only set to a name no pass has (XLA then runs no
HLO pass at all).  Two things are left that can still change the mutant:
the MLIR canonicalisation jaxlib runs while converting StableHLO back to
HLO (it folds constant subexpressions, an identity reshape, a select of a
constant predicate), and the YNNPACK dot fusions (kind=kCustom with a
backend_config) whose configuration the conversion drops.  The first is
measured on every mutant (faithful(), below: the compiled module is
compared with the mutant, op for op); the second is undone before the
compile (compilable()).  And with no layout assignment, XLA:CPU takes a
transpose whose result it gave a permuted layout for a bitcast, so a
module can compile op for op and still compute another thing: inject.py
checks a changed mutant's outputs against the mutant's own text
(as_written), and a kernel's against the original run.
"""
import collections
import os
import re
import shutil

# A pass name no XLA pass has: xla_enable_hlo_passes_only then enables
# none of them.
NO_PASS = "ulpscope-no-hlo-pass"

YNN = re.compile(r"kind=kCustom(.*?), backend_config=\{[^\n]*?\"__ynn_fusion\"\}\}")


def compilable(text):
    """The kernel text with each YNNPACK dot fusion (kCustom, whose
    backend_config the StableHLO round trip drops, and which XLA:CPU
    then refuses: "Fusion must have backend config") turned into a loop
    fusion of the same computation.  Whether this still computes the
    original kernel's bits is checked per kernel (inject.py): a kernel
    that gives other bits compiled so is judged in that form, or skipped
    when that form is not legit (a transpose whose layout the round trip
    loses: without XLA's layout assignment, a fusion's result keeps its
    permuted layout and its user reads it as row-major)."""
    return YNN.sub(r"kind=kLoop\1", text)


def refusal(message):
    """Why XLA:CPU refused a kernel-level mutant, from its error message:
    'fp8 arithmetic' (the mutant computes in an fp8 type, which XLA:CPU
    only runs after its float-normalization pass widens it to f32; its
    code generator even emits an integer fabs for the abs of an fp8
    value),
    'unused fusion parameter' (the mutation left a fused computation's
    parameter without a user, which XLA's verifier refuses: a dropped
    root op, an init replaced by a constant), else 'other'."""
    if ("failed to legalize operation" in message and re.search(r"\bf8E\w+", message)) or \
            "@llvm.fabs.i8" in message:
        return "fp8 arithmetic"
    if "Non-root instruction" in message and "parameter(" in message:
        return "unused fusion parameter"
    return "other"


def compile_without_passes(text, dump_dir):
    """Compiles kernel text on XLA:CPU (this process's XLA_FLAGS: fast
    math as set) with no HLO pass, dumping to dump_dir.  Returns the
    LoadedExecutable."""
    import capture
    jax = capture.setup()
    from jax._src import compiler
    from jax._src.lib import _jax, xla_client as xc
    from jax._src.lib import hlo as xla_hlo
    dev = jax.devices("cpu")[0]
    module = xla_hlo.hlo_module_from_text(compilable(text))
    mlir = _jax.mlir.xla_computation_to_mlir_module(
        xc.XlaComputation(module.as_serialized_hlo_module_proto()))
    opts = compiler.get_compile_options(num_replicas=1, num_partitions=1,
                                        device_assignment=[dev], backend=dev.client)
    debug = opts.executable_build_options.debug_options
    debug.xla_enable_hlo_passes_only = NO_PASS
    debug.xla_dump_to = dump_dir
    return dev.client.compile_and_load(mlir, xc.DeviceList((dev,)), opts)


def compiled_text(dump_dir):
    """XLA's after-optimizations dump in dump_dir (the module it ran)."""
    for name in sorted(os.listdir(dump_dir)):
        if name.endswith("after_optimizations.txt"):
            with open(os.path.join(dump_dir, name)) as f:
                return f.read()
    return None


LINE = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\(.*?\)|\w+\[[\d,]*\](?:\{[^}]*\})?)"
                  r"\s+([\w\-]+)\((.*)$")
HEAD = re.compile(r"^\s*(ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*)?\{\s*$")
CALLS = re.compile(r"(?:calls|to_apply|body|condition)=%?([\w.\-]+)")
LAYOUT = re.compile(r"\{[^}]*\}")


def op_census(text):
    """{(opcode, shape): count} of the live ops (those the root reads,
    directly or not) of the computations reachable from the entry, the
    constant subexpressions left out.  XLA's StableHLO round trip writes
    those its own way with the same values (a convert of a constant
    becomes a constant of the new type; a rank-2 iota, an iota and a
    broadcast), drops dead ops and identities (a reshape, bitcast, copy
    or broadcast to the operand's own shape), and writes its own layouts;
    none of that changes what the kernel computes, so none of it counts."""
    comps, roots, entry, cur = {}, {}, None, None
    for line in text.splitlines():
        h = HEAD.match(line)
        if h:
            cur = comps.setdefault(h.group(2), {})
            if h.group(1):
                entry = h.group(2)
            curname = h.group(2)
            continue
        m = LINE.match(line)
        if m and cur is not None:
            name, shape, opcode, rest = m.groups()
            args = rest[:rest.find(")")] if ")" in rest else rest
            cur[name] = (LAYOUT.sub("", shape), opcode,
                         re.findall(r"%?([\w.\-]+)", args) if opcode != "constant" else [],
                         CALLS.findall(rest))
            if line.lstrip().startswith("ROOT"):
                roots[curname] = name
    census = collections.Counter()
    todo, seen = [entry], set()
    while todo:
        c = todo.pop()
        if c in seen or c not in comps:
            continue
        seen.add(c)
        ops = comps[c]
        live, stack = set(), [roots.get(c)]
        while stack:
            n = stack.pop()
            if n in ops and n not in live:
                live.add(n)
                stack += [o for o in ops[n][2] if o in ops]
        const = {}

        def constant(n):
            if n not in const:
                shape, opcode, operands, _ = ops[n]
                const[n] = opcode in ("constant", "iota") or (
                    opcode != "parameter" and bool(operands) and
                    all(o in ops and constant(o) for o in operands))
            return const[n]
        for n in ops:
            if n not in live or constant(n):
                continue
            shape, opcode, operands, called = ops[n]
            if opcode in ("reshape", "bitcast", "copy", "broadcast") and operands and \
                    operands[0] in ops and ops[operands[0]][0] == shape:
                continue
            census[(opcode, shape)] += 1
            todo += called
    return census


def faithful(mutant_text, dump_dir, base):
    """(True, '') when the mutation reached the module XLA compiled, op
    for op: the ops the mutant adds to and removes from the kernel (by
    op_census) are the ops the compiled mutant adds to and removes from
    the compiled kernel.  base: (census of the kernel, census of the
    kernel as compiled without passes).  Else (False, what differs): XLA's
    conversion folded part of the mutation (x + 0 of a constant zeroed)."""
    got = compiled_text(dump_dir)
    if got is None:
        return False, "XLA wrote no after_optimizations dump"
    want, have = op_census(mutant_text), op_census(got)
    want.subtract(base[0])
    have.subtract(base[1])
    want = +want, +(-want)
    have = +have, +(-have)
    if want == have:
        return True, ""

    def show(c):
        return ", ".join(f"{k[0]} {k[1]}" for k in c) or "-"
    return False, (f"the mutant adds {show(want[0])} and removes {show(want[1])}; "
                   f"compiled, it adds {show(have[0])} and removes {show(have[1])}")[:300]


def run_without_passes(text, inputs, dump_dir):
    """(outputs, compiled module's dump folder): text compiled without
    HLO passes and run on inputs.  The dump folder is emptied first."""
    import capture
    shutil.rmtree(dump_dir, ignore_errors=True)
    os.makedirs(dump_dir)
    exe = compile_without_passes(text, dump_dir)
    return capture._run_executable(exe, inputs)  # noqa: SLF001
