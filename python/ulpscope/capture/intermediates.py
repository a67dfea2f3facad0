"""Rewrite an optimized HLO module so that chosen instructions become outputs.

The capture tool (capture.py --intermediates) records the values some
instructions of a captured module took, for `ulpscope bisect`.  XLA:CPU gives
no handle on the buffers of a compiled executable, so the module is changed
and compiled again: its ENTRY's ROOT becomes a tuple of the original outputs
followed by the chosen instructions.

Every entry fusion is inlined into the entry: its parameters are replaced by
the fusion's operands, its root takes the fusion's name, and every other
instruction keeps its own (XLA names are unique in a module), so each name
of kernel.hlo still means the same value and an instruction inside a fusion
can be made an output.  Inlining everything is also what makes the
recompilation work at all: XLA's HLO -> StableHLO import turns fused
computations into calls, and XLA:CPU 0.10.2 aborts on a CHECK failure when
it compiles some optimized modules in that form (rope_f32: "has_layout()",
cross_entropy_f32: "operand_maps.size() == 1"), while the flat entry
compiles for every kernel of the catalogue.  A bitcast between row-major
arrays of one element type is spelled as the reshape it is, because the
StableHLO import rejects the bitcasts of an optimized module.

Pure Python (hlo_text only, no jax): the rewrite can be read and checked
without XLA.  capture.py compiles and runs the result.
"""

from __future__ import annotations

import re
from typing import Dict, List

import hlo_text

# Entry instructions that `--intermediates all` leaves out: the inputs
# themselves, constants, and tuples (bisect takes their get-tuple-elements,
# which `all` includes).
_NOT_VALUES = ("parameter", "constant", "tuple")


class RewriteError(ValueError):
    """A requested instruction cannot be made an output (the message says why)."""


def _strip_layout(type_str: str) -> str:
    """'f32[8,128]{1,0}' -> 'f32[8,128]' (also inside tuple types)."""
    return re.sub(r"\{[^{}]*\}", "", type_str)


def _is_tuple(ins: hlo_text.Instr) -> bool:
    return ins.type_str.lstrip().startswith("(")


def entry_outputs(module: hlo_text.Module) -> List[str]:
    """Names whose values are the module's outputs, in result order: the
    ROOT, or the operands of a ROOT tuple."""
    root = module.entry.root()
    if root.opcode == "tuple":
        return list(root.operands)
    return [root.name]


def fused_callers(module: hlo_text.Module) -> Dict[str, List[hlo_text.Instr]]:
    """Fused computation name -> the entry fusion instructions that call it."""
    out: Dict[str, List[hlo_text.Instr]] = {}
    for ins in module.entry.instrs:
        if ins.opcode == "fusion":
            out.setdefault(ins.attr("calls"), []).append(ins)
    return out


def _body_values(module: hlo_text.Module, fusion: hlo_text.Instr) -> List[str]:
    """Instructions of an entry fusion's computation that compute a value:
    parameters, constants and the root (the fusion's own value) left out."""
    body = module.computations.get(fusion.attr("calls"))
    if body is None:
        return []
    root = body.root()
    return [b.name for b in body.instrs
            if b.opcode not in ("parameter", "constant") and b is not root
            and not _is_tuple(b)]


def select(module: hlo_text.Module, spec: str) -> List[str]:
    """The instruction names a --intermediates value asks for.

    'all': every entry instruction that computes a value and is not an output
    (the output of each entry fusion of a whole-program module, plus any
    unfused op), in entry order.  'all-fused': those plus, before each entry
    fusion, the instructions of its computation (parameters, constants and
    the root, which is the fusion's own value, left out), for the fusions
    that produce outputs too.  Otherwise a comma list of names (with or
    without %), of the entry or of a fused computation.
    """
    spec = spec.strip()
    if spec in ("all", "all-fused"):
        outs = set(entry_outputs(module))
        names = []
        for ins in module.entry.instrs:
            if spec == "all-fused" and ins.opcode == "fusion":
                names += _body_values(module, ins)
            if ins.opcode in _NOT_VALUES or ins.name in outs or _is_tuple(ins):
                continue
            names.append(ins.name)
        return names
    names = [n.strip().lstrip("%") for n in spec.split(",") if n.strip()]
    if not names:
        raise RewriteError("--intermediates: no instruction named (use all, all-fused "
                           "or NAME,...)")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise RewriteError(f"--intermediates: {', '.join(dup)} named twice")
    return names


def _locate(module: hlo_text.Module, name: str):
    """(computation, instruction) defining name, or raise with the reason."""
    hits = [(c, i) for c in module.computations.values() for i in c.instrs if i.name == name]
    if not hits:
        known = [i.name for i in module.entry.instrs]
        raise RewriteError(f"no instruction {name!r} in module {module.name!r}; the entry "
                           f"has: {' '.join(known)} (and the instructions of the fused "
                           f"computations its fusions call)")
    if len(hits) > 1:
        raise RewriteError(f"instruction name {name!r} occurs in "
                           f"{len(hits)} computations of {module.name!r}")
    return hits[0]


def resolve(module: hlo_text.Module, names: List[str]) -> List[dict]:
    """One record per name: 'name', 'type' (HLO, with layout), 'opcode',
    'computation', 'fusion' (the entry fusion whose computation holds it, or
    None), 'value_of' (the entry instruction that carries the same value
    without inlining: itself, the fusion for a fused root, the operand for a
    fused parameter; None when the fusion must be inlined), or raise."""
    callers = fused_callers(module)
    recs = []
    for name in names:
        comp, ins = _locate(module, name)
        if _is_tuple(ins):
            raise RewriteError(f"{name} has the tuple type {ins.type_str}: capture its "
                               "get-tuple-elements instead")
        rec = {"name": name, "type": ins.type_str, "opcode": ins.opcode,
               "computation": comp.name, "fusion": None, "value_of": name}
        if not comp.is_entry:
            calls = callers.get(comp.name, [])
            if len(calls) != 1:
                why = ("is not the computation of an entry fusion (a reduce, map or "
                       "scatter body, or a computation called from another one), so a run "
                       "evaluates it several times or not at the entry") if not calls else \
                    f"is called by {len(calls)} entry fusions"
                raise RewriteError(f"{name} is an instruction of {comp.name}, which {why}; "
                                   "only instructions of the entry and of its fusions' "
                                   "computations can be captured")
            fus = calls[0]
            rec["fusion"] = fus.name
            if ins.opcode == "parameter":
                rec["value_of"] = fus.operands[ins.parameter_number()]
            elif ins is comp.root():
                rec["value_of"] = fus.name
            else:
                rec["value_of"] = None
        recs.append(rec)
    return recs


def plan_runs(module: hlo_text.Module, names: List[str]) -> List[dict]:
    """The compilations that capture names.  Run 0 makes every
    value-computing entry instruction an output (select 'all'): the
    requested entry-level names are taken from it, the others are a
    reference for the later runs.  Then one run per entry fusion with
    instructions inside it requested: those instructions plus run 0's
    entry instructions as outputs (so that each compilation gets few extra
    outputs, and each run can be compared with run 0).  Each run: 'fusion'
    (the fusion whose insides it captures, or None), 'outputs' (instruction
    names after the module's own outputs, in tuple order), 'captures' (the
    records of resolve() taken from this run)."""
    recs = resolve(module, names)
    entry_all = select(module, "all")
    run0 = {"fusion": None, "outputs": list(entry_all), "captures": []}
    runs = [run0]
    by_fusion: Dict[str, dict] = {}
    for rec in recs:
        if rec["value_of"] is not None:
            if rec["value_of"] not in run0["outputs"]:
                run0["outputs"].append(rec["value_of"])
            run0["captures"].append(rec)
            continue
        run = by_fusion.get(rec["fusion"])
        if run is None:
            run = {"fusion": rec["fusion"], "outputs": list(entry_all), "captures": []}
            by_fusion[rec["fusion"]] = run
            runs.append(run)
        run["outputs"].append(rec["name"])
        run["captures"].append(rec)
    return runs


def rewrite(text: str, extra: List[str], inline=(), module_name: str = None) -> str:
    """The module text with its ENTRY's ROOT a tuple of the module's outputs
    followed by the instructions extra (names of the rewritten entry), and
    each entry fusion named in inline ('all': every one) replaced by the
    instructions of its computation: parameters become the fusion's
    operands, the root takes the fusion's name, every other instruction
    keeps its own.

    The header keeps the module name (or module_name) only: layouts,
    schedule and sharding attributes describe the old signature, and XLA
    recompiles the module anyway.
    """
    module = hlo_text.parse_module(text)
    entry = module.entry
    by_name = entry.by_name()
    outputs = entry_outputs(module)
    for o in outputs:
        if o in by_name and _is_tuple(by_name[o]):
            raise RewriteError(f"output {o} of {module.name} is a tuple: nested tuple "
                               "results are not supported")
    if inline == "all":
        inline = [i.name for i in hlo_text.entry_fusions(module)]
    elif isinstance(inline, str):
        inline = [inline]
    types = {i.name: i.type_str for i in entry.instrs}
    bodies = {}
    for fname in inline:
        fus = by_name.get(fname)
        if fus is None or fus.opcode != "fusion":
            raise RewriteError(f"{fname} is not a fusion of the entry of {module.name}")
        body = module.computations[fus.attr("calls")]
        renames: Dict[str, str] = {}
        for b in body.instrs:
            if b.opcode == "fusion":
                raise RewriteError(f"fusion {fname} calls {body.name}, which holds the "
                                   f"nested fusion {b.name}: not supported")
            if b.name in by_name:
                raise RewriteError(f"{b.name} of {body.name} has the name of an entry "
                                   "instruction: cannot inline it")
            if b.opcode == "parameter":
                renames[b.name] = fus.operands[b.parameter_number()]
            else:
                types[b.name] = b.type_str
        renames[body.root().name] = fname
        bodies[fname] = (body, renames)
    tuple_names = list(outputs) + list(extra)
    for n in tuple_names:
        if n not in types:
            raise RewriteError(f"{n} is not an instruction of the rewritten entry of "
                               f"{module.name}")
    tuple_type = "(" + ", ".join(types[n] for n in tuple_names) + ")"

    lines = text.splitlines()
    out = [f"HloModule {module_name or module.name}"]
    in_entry = False
    for lineno, line in enumerate(lines[1:], 2):
        if line.startswith("ENTRY"):
            out.append(f"ENTRY %{entry.name} ({entry.signature}) -> "
                       f"{_strip_layout(tuple_type)} {{")
            in_entry = True
            continue
        if not in_entry:
            out.append(line)
            continue
        if line.strip() == "}":
            out.append(f"  ROOT %usc_capture_root = {tuple_type} tuple("
                       + ", ".join("%" + n for n in tuple_names) + ")")
            out.append(line)
            in_entry = False
            continue
        if not line.strip():
            continue
        ins = hlo_text._parse_instr(line, lineno)  # noqa: SLF001 - same package
        if ins.name in bodies:
            out += _inlined_lines(*bodies[ins.name], types)
            continue
        line = _bitcast_as_reshape(line, ins, types)
        out.append(line.replace("ROOT ", "", 1) if ins.is_root else line)
    return "\n".join(out) + "\n"


_LAYOUT_RE = re.compile(r"^\s*([a-z][a-z0-9]*)\[([0-9,]*)\](?:\{([^{}]*)\})?\s*$")


def _row_major(type_str: str):
    """(element type, dims) of an array type with the default layout
    {n-1,...,0} (or none written), else None."""
    m = _LAYOUT_RE.match(type_str)
    if not m:
        return None
    dims = tuple(int(d) for d in m.group(2).split(",") if d)
    if m.group(3) is not None:
        want = ",".join(str(d) for d in reversed(range(len(dims))))
        if m.group(3) != want:
            return None
    return m.group(1), dims


def _bitcast_as_reshape(line: str, ins: hlo_text.Instr, types: Dict[str, str]) -> str:
    """A bitcast between row-major arrays of one element type and size is a
    reshape; XLA's HLO -> StableHLO import needs it spelled so (it turns a
    bitcast's layouts into an error).  Other bitcasts are left alone."""
    if ins.opcode != "bitcast" or len(ins.operands) != 1:
        return line
    a = _row_major(ins.type_str)
    b = _row_major(types.get(ins.operands[0], ""))
    if a is None or b is None or a[0] != b[0]:
        return line
    n = 1
    for d in a[1]:
        n *= d
    m = 1
    for d in b[1]:
        m *= d
    if n != m:
        return line
    return line.replace(" bitcast(", " reshape(", 1)


_REF_RE = re.compile(r"%([^\s,(){}=]+)")


def _inlined_lines(comp: hlo_text.Computation, renames: Dict[str, str],
                   types: Dict[str, str]) -> List[str]:
    """The instructions of comp as entry lines, names renamed by renames
    (types: the type of every entry-level name, for bitcasts)."""
    out = []

    def sub(m):
        return "%" + renames.get(m.group(1), m.group(1))

    for b in comp.instrs:
        if b.opcode == "parameter":
            continue
        line = b.line[len("ROOT "):] if b.line.startswith("ROOT ") else b.line
        rest = line[hlo_text._INSTR_HEAD_RE.match(line).end():]  # noqa: SLF001
        # Only operand references change: the text between the opcode's
        # parentheses.  Attributes (calls=, to_apply=, metadata) keep theirs.
        k = hlo_text._match_paren(rest, 0) + 1 if rest.startswith("(") else rest.index(" ")  # noqa: SLF001,E501
        tail = rest[k:]
        p = tail.index("(")
        q = hlo_text._match_paren(tail, p)  # noqa: SLF001
        ops = tail[p:q + 1]
        if b.opcode not in ("constant", "iota"):
            ops = _REF_RE.sub(sub, ops)
        opcode = tail[:p].strip()
        if opcode == "bitcast":
            src = renames.get(b.operands[0], b.operands[0])
            probe = hlo_text.Instr(b.name, b.type_str, "bitcast", [src], "", False, "", 0)
            opcode = _bitcast_as_reshape(" bitcast(", probe, types).strip("( ")
        out.append(f"  %{renames.get(b.name, b.name)} = {rest[:k].strip()} "
                   f"{opcode}{ops}{tail[q + 1:]}")
    return out
