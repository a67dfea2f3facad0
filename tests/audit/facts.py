"""Facts about XLA's per-pass dumps, read from the HLO texts alone.

tests/audit/pipelines.py checks the passes `ulpscope audit --pipeline`
names against these.  Nothing here uses ulpscope: the texts are parsed
with regular expressions, and what a change means for the arithmetic is
argued in the comments (docs/audit.md, "Pipelines").
"""

import collections
import re
import struct
from fractions import Fraction

COMP = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+) .*\{\s*$")
INSTR = re.compile(r"^\s*(ROOT\s+)?%?([\w.\-]+) = (\w+)(?:\[[^\]]*\])?"
                   r"(?:\{[^}]*\})? ([\w\-]+)\((.*)$")
CONST = re.compile(r"= (\w+)\[\] constant\(([^)]*)\)")

# The ops that round their result (converts aside: see signature()).
ROUNDING = {"add", "subtract", "multiply", "divide", "sqrt", "rsqrt", "cbrt",
            "exponential", "exponential-minus-one", "log", "log-plus-one",
            "tanh", "erf", "logistic", "power", "atan2", "sine", "cosine",
            "tan", "dot", "convolution"}
NARROW = {"bf16", "f16"}


def parse(text):
    """{computation: {"instrs": {name: {op, ty, ops, calls}}, "root": name}}."""
    comps, cur = {}, None
    for line in text.splitlines():
        m = COMP.match(line)
        if m and " = " not in line:
            cur = comps.setdefault(m.group(2), {"instrs": {}, "root": None})
            continue
        if line.startswith("}"):
            cur = None
            continue
        m = INSTR.match(line)
        if m and cur is not None:
            root, name, ty, op, rest = m.groups()
            operands = re.findall(r"%([\w.\-]+)", rest.split(")", 1)[0])
            calls = re.findall(r"(?:calls|to_apply)=%([\w.\-]+)", rest)
            cur["instrs"][name] = {"op": op, "ty": ty, "ops": operands,
                                   "calls": calls}
            if root:
                cur["root"] = name
    return comps


def signature(text):
    """The set of (opcode, type) of the module's rounding ops.

    A module's strict result changes only if the ops that round, or the
    types they round to, change; so two modules with the same signature
    compute the same reference (duplicates that CSE merges, copies,
    layouts, fusions and exact ops such as maximum or negate do not count).
    Two refinements make it exact for what XLA:CPU does:

    - an f32 elementwise op whose every use is a convert to bf16 or f16
      counts as an op of that type: float-normalization computes a bf16 op
      in f32 and rounds it back at once, and rounding to f32 then to bf16
      is rounding to bf16 for +, -, *, /, sqrt (24 >= 2 * 8 + 2 bits);
      for exp, tanh and erf the two differ only when the exact value lies
      within 2^-25 relative of a bf16 midpoint;
    - a reduce or reduce-window is an entry of its own, whatever its type
      (its rounding is its reducer's add, typed as above): a reduction
      split into a reduce-window and a reduce sums in another order.
    A dot rounds once per product and sum, inside; it keeps its type.
    """
    comps = parse(text)
    users = collections.defaultdict(list)
    callers = collections.defaultdict(list)
    for cn, c in comps.items():
        for n, i in c["instrs"].items():
            for o in i["ops"]:
                users[(cn, o)].append((cn, n))
            for cc in i["calls"]:
                callers[cc].append((cn, n))

    def uses(cn, n, depth=0):
        # The root of a fused computation is used where the fusion is.
        u = list(users[(cn, n)])
        if comps[cn]["root"] == n and depth < 8:
            for pc, pn in callers[cn]:
                if comps[pc]["instrs"][pn]["op"] in ("fusion", "call"):
                    u += uses(pc, pn, depth + 1)
        return u

    sig = set()
    for cn, c in comps.items():
        for n, i in c["instrs"].items():
            if i["op"] in ("reduce", "reduce-window"):
                sig.add((i["op"], ""))
            if i["op"] not in ROUNDING:
                continue
            ty = i["ty"]
            if i["op"] not in ("dot", "convolution") and ty == "f32":
                u = [comps[a]["instrs"][b] for a, b in uses(cn, n)]
                if u and all(x["op"] == "convert" and x["ty"] in NARROW
                             for x in u) and len({x["ty"] for x in u}) == 1:
                    ty = u[0]["ty"]
            sig.add((i["op"], ty))
    return frozenset(sig)


def signature_changes(texts):
    """The stages (indices) whose signature differs from the previous one's."""
    sigs = [signature(t) for t in texts]
    return {k for k in range(1, len(sigs)) if sigs[k] != sigs[k - 1]}


def _round(v, ty):
    """The value of a literal of type ty, rounded from its printed digits."""
    x = float(v)
    if ty == "f64":
        return Fraction(x)
    if ty == "f16":
        return Fraction(struct.unpack("<e", struct.pack("<e", x))[0])
    b = struct.unpack("<I", struct.pack("<f", x))[0]
    if ty == "bf16":
        # Round to nearest even on the upper 16 bits.
        b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return Fraction(struct.unpack("<f", struct.pack("<I", b))[0])


def constants(text):
    return {_round(v, t) for t, v in CONST.findall(text)
            if t in ("f32", "bf16", "f16", "f64")
            and v not in ("inf", "-inf", "nan")}


def reciprocal_folds(texts):
    """Stages where a constant c gave way to RN_f32(1/c) != 1/c.

    x / c and x * RN(1/c) are different real functions unless 1/c is a
    float (a power of two): such a fold changes the function, by at most
    half an ulp of 1/c relative.  Nothing else XLA:CPU does to these
    kernels changes a real value.
    """
    out = set()
    for k in range(1, len(texts)):
        before, after = constants(texts[k - 1]), constants(texts[k])
        for c in before - after:
            if c == 0:
                continue
            r = _round(float(1 / c), "f32")
            if r in after - before and r != 1 / c:
                out.add(k)
    return out


def first_stage(texts, pred):
    return next((k for k, t in enumerate(texts) if pred(t)), None)


def split_reduction(text):
    return "reduce-window(" in text


def f32_dot(text):
    return re.search(r"= f32\[[^\]]*\](\{[^}]*\})? dot\(", text) is not None
