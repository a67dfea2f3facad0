"""A deliberately small reader of XLA HLO text, for the capture tools only.

It finds computations, instructions, their types, opcodes, operand names and
the fusions of the entry computation.  It does not validate anything; the C
parser in src/hlo/ is the real one.  Pure Python + numpy + ml_dtypes (no jax),
so check_cases.py runs anywhere.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Optional

import numpy as np

try:
    import ml_dtypes
except ImportError:  # check_cases.py still works for f32/f16 cases
    ml_dtypes = None

_COMP_RE = re.compile(r"^(ENTRY\s+)?%?([^\s(]+)\s*\((.*)\)\s*->\s*(.*?)\s*\{\s*$")
_INSTR_HEAD_RE = re.compile(r"^\s*(ROOT\s+)?%?([^\s=]+)\s*=\s*")
_LEAF_RE = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\]")


def _match_paren(s: str, i: int) -> int:
    """s[i] is '(' ; return the index of the matching ')'.  Skips strings."""
    depth = 0
    j = i
    in_str = False
    while j < len(s):
        c = s[j]
        if in_str:
            if c == "\\":
                j += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    raise ValueError("unbalanced parentheses in: " + s)


def _split_top(s: str) -> List[str]:
    out, depth, cur, in_str = [], 0, [], False
    for c in s:
        if in_str:
            cur.append(c)
            if c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


@dataclasses.dataclass
class Leaf:
    dtype: str  # HLO spelling: f32, bf16, f8e4m3fn, pred, s32 ...
    dims: tuple

    def __str__(self):
        return f"{self.dtype}[{','.join(str(d) for d in self.dims)}]"


def parse_type(s: str) -> List[Leaf]:
    """All array leaves of an HLO type, tuples flattened in order."""
    leaves = []
    for m in _LEAF_RE.finditer(s):
        dims = tuple(int(d.lstrip("<=")) for d in m.group(2).split(",") if d.strip())
        leaves.append(Leaf(m.group(1), dims))
    return leaves


@dataclasses.dataclass
class Instr:
    name: str
    type_str: str
    opcode: str
    operands: List[str]
    attrs: str
    is_root: bool
    line: str
    lineno: int

    @property
    def leaves(self):
        return parse_type(self.type_str)

    def attr(self, key: str) -> Optional[str]:
        m = re.search(r"(?:^|[\s,])" + re.escape(key) + r"=(%?[^\s,]+)", self.attrs)
        return m.group(1).lstrip("%") if m else None

    def parameter_number(self) -> Optional[int]:
        if self.opcode != "parameter":
            return None
        return int(self.operands[0]) if self.operands else None


@dataclasses.dataclass
class Computation:
    name: str
    is_entry: bool
    signature: str
    result_type: str
    instrs: List[Instr]

    def root(self) -> Instr:
        for i in self.instrs:
            if i.is_root:
                return i
        return self.instrs[-1]

    def by_name(self) -> Dict[str, Instr]:
        return {i.name: i for i in self.instrs}

    def parameters(self) -> List[Instr]:
        ps = [i for i in self.instrs if i.opcode == "parameter"]
        return sorted(ps, key=lambda i: i.parameter_number())


@dataclasses.dataclass
class Module:
    name: str
    header: str
    computations: Dict[str, Computation]
    entry: Computation


def _parse_instr(line: str, lineno: int) -> Instr:
    m = _INSTR_HEAD_RE.match(line)
    if not m:
        raise ValueError(f"line {lineno}: not an instruction: {line!r}")
    is_root = bool(m.group(1))
    name = m.group(2)
    rest = line[m.end():]
    if rest.startswith("("):
        j = _match_paren(rest, 0)
        type_str = rest[: j + 1]
        rest = rest[j + 1:].lstrip()
    else:
        sp = rest.index(" ")
        type_str = rest[:sp]
        rest = rest[sp + 1:].lstrip()
    k = rest.index("(")
    opcode = rest[:k].strip()
    j = _match_paren(rest, k)
    inside = rest[k + 1: j]
    attrs = rest[j + 1:].lstrip(", ").strip()
    if opcode in ("constant", "parameter", "iota"):
        operands = [inside.strip()] if inside.strip() else []
    else:
        operands = [op.split()[-1].lstrip("%") for op in _split_top(inside) if op]
    return Instr(name, type_str, opcode, operands, attrs, is_root, line.strip(), lineno)


def parse_module(text: str) -> Module:
    lines = text.splitlines()
    header = lines[0] if lines else ""
    mname = re.match(r"HloModule\s+([^\s,]+)", header)
    comps: Dict[str, Computation] = {}
    entry = None
    cur = None
    for n, line in enumerate(lines, 1):
        if cur is None:
            m = _COMP_RE.match(line)
            if m and not line.startswith("HloModule"):
                cur = Computation(m.group(2).lstrip("%"), bool(m.group(1)), m.group(3),
                                  m.group(4), [])
            continue
        if line.strip() == "}":
            comps[cur.name] = cur
            if cur.is_entry:
                entry = cur
            cur = None
            continue
        if line.strip():
            cur.instrs.append(_parse_instr(line, n))
    if entry is None:
        raise ValueError("no ENTRY computation")
    return Module(mname.group(1) if mname else "?", header, comps, entry)


def fusion_body_ops(module: Module, comp_name: str) -> int:
    """Instructions of a fused computation, parameters not counted."""
    c = module.computations[comp_name]
    return sum(1 for i in c.instrs if i.opcode != "parameter")


def entry_fusions(module: Module) -> List[Instr]:
    return [i for i in module.entry.instrs if i.opcode == "fusion"]


# ---- HLO element type <-> numpy ------------------------------------------------

_NP = {
    "pred": np.bool_, "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}
_ML = {
    "bf16": "bfloat16", "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
    "f8e4m3fnuz": "float8_e4m3fnuz", "f8e5m2fnuz": "float8_e5m2fnuz",
    "f8e4m3b11fnuz": "float8_e4m3b11fnuz", "f8e4m3": "float8_e4m3",
    "f8e3m4": "float8_e3m4", "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fn": "float4_e2m1fn",
    "f6e2m3fn": "float6_e2m3fn", "f6e3m2fn": "float6_e3m2fn", "s4": "int4", "u4": "uint4",
}


def hlo_to_numpy_dtype(t: str):
    if t in _NP:
        return np.dtype(_NP[t])
    if t in _ML and ml_dtypes is not None and hasattr(ml_dtypes, _ML[t]):
        return np.dtype(getattr(ml_dtypes, _ML[t]))
    raise KeyError(f"no numpy dtype for HLO type {t}")


def numpy_to_hlo_dtype(dt) -> str:
    dt = np.dtype(dt)
    for k, v in _NP.items():
        if np.dtype(v) == dt:
            return k
    for k, v in _ML.items():
        if ml_dtypes is not None and hasattr(ml_dtypes, v) and np.dtype(getattr(ml_dtypes, v)) == dt:
            return k
    raise KeyError(f"no HLO type for numpy dtype {dt}")
