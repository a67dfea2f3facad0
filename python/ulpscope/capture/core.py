"""Capturing XLA kernels from JAX as ulpscope case directories.

The one implementation behind ``ulpscope.jax.capture`` and the developer
tool ``tools/capture/capture.py`` (which adds the project's catalogue,
examples and corpora on top): set XLA up to dump what it compiles
(:func:`setup`), compile a function (:class:`Compiled`), run it, and write
``kernel.hlo``, ``input_<i>.npy``, ``device_<i>.npy`` and ``case.json``
(docs/cases.md, :func:`write_case`), with the values of chosen
instructions for ``ulpscope bisect`` (:func:`capture_intermediates`) and
the run as an HloSnapshot (:func:`write_snapshot`).

Nothing here needs the C library, and jax is imported only by
:func:`setup`, so the HLO reading helpers work with numpy alone.
XLA_FLAGS is read once, when jax's backend starts: :func:`setup` must run
before the first jax computation to get XLA's own dump (without it, the
module is ``compiled.as_text()``, the same text).
"""
from __future__ import annotations

import atexit
import datetime
import glob
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import types

import numpy as np

from . import hlo_text, platform_info

# Source locations in captured HLO are written relative to this directory
# (setup's source_root; the checkout for tools/capture).
HERE = os.path.dirname(os.path.abspath(__file__))

DISTRIBUTIONS = ("normal", "uniform", "large", "ties", "denormal")

_STATE = {"dump_dir": None, "flags": None, "codegen_flags": [], "jax": None,
          "platform": "cpu", "matmul_precision": None}

# --platform: the capture platform -> the JAX_PLATFORMS value that selects it.
PLATFORMS = {"cpu": "cpu", "gpu": "cuda"}


# ---------------------------------------------------------------------------
# XLA / jax setup
# ---------------------------------------------------------------------------

def setup(fast_math=None, dump_dir=None, extra_flags=(), platform="cpu",
          matmul_precision=None, snapshots=None, source_root=None,
          exclude=(), quiet=False):
    """Set XLA_FLAGS (dump to a directory, HLO as text) and import jax.

    Must run before jax initialises its backend.  fast_math: None leaves
    XLA's default (off), True/False pass --xla_cpu_enable_fast_math (CPU
    only).  platform: 'cpu' (XLA:CPU) or 'gpu' (XLA:GPU through jax's CUDA
    plugin: JAX_PLATFORMS=cuda).  extra_flags: more XLA flags (e.g.
    --xla_gpu_enable_triton_gemm=false).  matmul_precision: None leaves
    jax's default, else jax_default_matmul_precision ('highest', ...).
    snapshots: None, 'auto' (ask XLA for its own HloSnapshots, write one
    from Python where it writes none) or 'python' (always write it here);
    see write_snapshot.  platform None: whatever jax chooses (the
    platform is read back from jax; ulpscope.jax.capture).  source_root:
    source locations in the HLO are written relative to it (default: the
    current directory).  exclude: more files whose frames stay out of the
    HLO's stack frames (a tool's own).  quiet: no warning when jax's backend
    started already (XLA's dump is then not available, and the module is
    compiled.as_text(), the same text).
    """
    if platform is not None and platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}; use one of {', '.join(PLATFORMS)}")
    if _STATE["jax"] is not None:
        return _STATE["jax"]
    if "jax" in sys.modules:
        import jax  # noqa: F401
        try:
            backends_up = bool(jax._src.xla_bridge._backends)  # noqa: SLF001
        except Exception:  # pragma: no cover - private API moved
            backends_up = False
        if backends_up and not quiet:
            print("capture: warning: jax's backend already started; XLA_FLAGS set now "
                  "are ignored; falling back to compiled.as_text()", file=sys.stderr)
    else:
        backends_up = False
    if dump_dir is None:
        dump_dir = tempfile.mkdtemp(prefix="ulpscope_xla_dump_")
        atexit.register(shutil.rmtree, dump_dir, True)
    codegen = []
    if fast_math is not None and platform not in ("cpu", None):
        raise ValueError("--fast-math is an XLA:CPU flag; it does not apply to --platform "
                         + platform)
    if fast_math is not None:
        codegen.append("--xla_cpu_enable_fast_math=" + ("true" if fast_math else "false"))
    codegen += list(extra_flags)
    prior = os.environ.get("XLA_FLAGS", "").split()
    prior = [f for f in prior if not f.startswith(("--xla_dump_to", "--xla_dump_hlo_as_text"))]
    codegen = prior + codegen
    flags = [f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_as_text"] + codegen
    if snapshots == "auto":
        # Dump flags, not code generation: kept out of case.json's xla_flags.
        flags += ["--xla_dump_hlo_as_proto", "--xla_dump_hlo_snapshots"]
    if not backends_up:
        # Flags set after the backend started would only mislead a child
        # process; before, they are how XLA is told to dump.
        os.environ["XLA_FLAGS"] = " ".join(flags)
        if platform is not None:
            os.environ["JAX_PLATFORMS"] = PLATFORMS[platform]
    import jax
    if platform is None:
        backend = jax.default_backend()
        platform = "gpu" if backend in ("cuda", "rocm", "gpu") else backend
    if matmul_precision is not None:
        jax.config.update("jax_default_matmul_precision", matmul_precision)
    if platform == "gpu" and os.environ.get("JAX_PLATFORMS") == "cuda":
        # Say so now, not deep inside the first compilation, when jax has no
        # backend for the platform (no CUDA plugin, no visible GPU).
        try:
            devs = jax.devices()
        except Exception as e:
            raise RuntimeError(f"--platform {platform}: jax has no backend for "
                               f"JAX_PLATFORMS={PLATFORMS[platform]} ({type(e).__name__}: "
                               f"{str(e).strip() or 'no message'}); install jax's CUDA plugin "
                               f"and run on a machine with an NVIDIA GPU") from None
        if not devs or devs[0].platform not in ("gpu", "cuda"):
            raise RuntimeError(f"--platform {platform}: jax's devices are {devs}, not GPUs")
    # Source locations in the dumped HLO: repository-relative, not /home/...
    # (A jax without the option, such as a GPU machine's newer one, keeps
    # absolute paths: a warning, not a lost run.)
    try:
        jax.config.update("jax_hlo_source_file_canonicalization_regex",
                          "^" + re.escape(os.path.abspath(source_root or os.getcwd())
                                          + os.sep))
    except (AttributeError, KeyError, ValueError) as e:  # pragma: no cover
        print(f"capture: warning: source paths in the HLO stay absolute ({e})",
              file=sys.stderr)
    # Keep this tool's own frames out of the HLO's stack frames: the dumped
    # module then depends on the kernel source only, not on how it was called.
    try:
        from jax._src import source_info_util
        for path in (os.path.abspath(__file__), *exclude):
            source_info_util.register_exclusion(os.path.abspath(path))
    except Exception:  # pragma: no cover - private API moved
        pass
    _STATE.update(snapshots=snapshots)
    _STATE.update(dump_dir=dump_dir, flags=flags, codegen_flags=codegen, jax=jax,
                  platform=platform, matmul_precision=matmul_precision)
    return jax


def _versions():
    import jax
    import jaxlib
    import ml_dtypes
    return {
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "numpy_version": np.__version__,
        "ml_dtypes_version": ml_dtypes.__version__,
    }


def _host():
    flags = []
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    flags = sorted(x for x in have
                                   if x in ("fma", "avx", "avx2", "f16c", "avx512f",
                                            "avx512bw", "avx512_bf16", "avx512_fp16",
                                            "amx_bf16", "sse4_2"))
                    break
    except OSError:
        pass
    return {"machine": platform.machine(), "system": platform.system(), "cpu_flags": flags}


def platform_record(comp):
    """case.json's platform keys: `platform`, and for XLA:CPU the fast-math
    setting, for XLA:GPU the GPU and CUDA stack (gpu_info) and the numerics
    flags; both: jax's default matmul precision and each dot's precision."""
    plat = _STATE["platform"]
    rec = {"platform": plat}
    if plat == "cpu":
        rec["xla_cpu_enable_fast_math"] = fast_math_in_effect(comp.debug_options)
    elif plat == "gpu":
        # Asked once per process: the GPU and its stack do not change between
        # cases, and nvidia-smi takes a while.
        if _STATE.get("gpu_info") is None:
            _STATE["gpu_info"] = platform_info.gpu_info(setup())
        rec["gpu"] = _STATE["gpu_info"]
        rec["xla_gpu_flags"] = platform_info.xla_flag_values(
            platform_info.GPU_NUMERIC_FLAGS, _STATE["codegen_flags"], comp.debug_options)
    rec["jax_default_matmul_precision"] = _STATE["matmul_precision"] or "default"
    rec["dot_precision"] = platform_info.dot_precisions(comp.module)
    return rec


def _debug_options(path):
    """The dumped .debug_options file: 'key: value' lines -> dict."""
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if ":" in line:
                k, v = line.split(":", 1)
                v = v.strip().strip('"')
                if k.strip() == "xla_dump_to":
                    v = "<dump dir>"
                out[k.strip()] = v
    return out


# ---------------------------------------------------------------------------
# Compile and find the dump
# ---------------------------------------------------------------------------

# The optimized module's dump: XLA:CPU writes
# module_NNNN.<module>.cpu_after_optimizations.txt, XLA:GPU
# module_NNNN.<module>.sm_9.0_gpu_after_optimizations.txt (the compute
# capability in the name).
def _dumps_of(d, module_name):
    """[(after_optimizations path, stem)] of module_name's dumps, oldest first;
    stem + '.before_optimizations.txt' / '.debug_options' are its siblings."""
    after = re.compile(r"module_(\d+)\." + re.escape(module_name) +
                       r"\.(?:[A-Za-z0-9_.]*_)?after_optimizations\.txt$")
    hits = []
    for path in glob.glob(os.path.join(d, f"module_*.{module_name}.*after_optimizations.txt")):
        m = after.match(os.path.basename(path))
        if m:
            stem = os.path.join(d, f"module_{m.group(1)}.{module_name}")
            hits.append((int(m.group(1)), path, stem))
    return [(p, st) for _, p, st in sorted(hits)]


class Compiled:
    """One jitted function compiled at fixed argument shapes."""

    def __init__(self, name, fn, arg_specs):
        jax = setup()
        self.name = name

        # A copy of fn under the kernel's name: the module is jit_<name>, and
        # the entry parameters keep the Python argument names (metadata op_name).
        if isinstance(fn, types.FunctionType):
            named = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__,
                                       fn.__closure__)
            named.__kwdefaults__ = fn.__kwdefaults__
            named.__qualname__ = name
        else:
            # A callable that is no plain function (a jitted one, a
            # partial): compiled as it is, under its own module name.
            named = fn
        self.jitted = jax.jit(named, keep_unused=True)
        specs = [jax.ShapeDtypeStruct(tuple(s), d) for s, d in arg_specs]
        self.lowered = self.jitted.lower(*specs)
        self.compiled = self.lowered.compile()
        self.as_text = self.compiled.as_text()
        self.dump_after, self.dump_before, self.dump_debug = self._find_dump()
        if self.dump_after:
            with open(self.dump_after) as f:
                self.hlo = f.read()
            self.hlo_source = "xla_dump_to"
        else:
            self.hlo = self.as_text
            self.hlo_source = "compiled.as_text()"
        self.unoptimized = None
        if self.dump_before:
            with open(self.dump_before) as f:
                self.unoptimized = f.read()
        self.as_text_matches_dump = (self.hlo.rstrip("\n") == self.as_text.rstrip("\n"))
        self.module = hlo_text.parse_module(self.hlo)
        self.debug_options = _debug_options(self.dump_debug)

    def _find_dump(self):
        d = _STATE["dump_dir"]
        if not d:
            return None, None, None
        hits = _dumps_of(d, f"jit_{self.name}")
        if not hits:
            return None, None, None
        after, stem = hits[-1]
        self.dump_stem = stem
        before = stem + ".before_optimizations.txt"
        debug = stem + ".debug_options"
        return after, before if os.path.exists(before) else None, \
            debug if os.path.exists(debug) else None

    dump_stem = None

    def snapshots_now(self):
        """The snapshot files XLA has written for this module so far."""
        if not self.dump_stem:
            return set()
        return set(glob.glob(self.dump_stem + ".snapshot.*.pb"))

    def run(self, inputs):
        jax = setup()
        outs = self.compiled(*inputs)
        leaves = jax.tree_util.tree_leaves(outs)
        return [np.asarray(jax.device_get(x)) for x in leaves]


def describe_fusions(module):
    """Per entry fusion: name, kind, body, op count, operands with their HLO."""
    entry = module.entry
    by_name = entry.by_name()
    root = entry.root()
    root_items = root.operands if root.opcode == "tuple" else [root.name]
    users = {}
    for ins in entry.instrs:
        for op in ins.operands:
            users.setdefault(op, []).append(ins.name)
    out = []
    for ins in hlo_text.entry_fusions(module):
        calls = ins.attr("calls")
        body = module.computations.get(calls)
        ops = hlo_text.fusion_body_ops(module, calls) if body else None
        opcodes = {}
        if body:
            for b in body.instrs:
                if b.opcode != "parameter":
                    opcodes[b.opcode] = opcodes.get(b.opcode, 0) + 1
        operands = []
        for op in ins.operands:
            d = by_name.get(op)
            rec = {"name": op}
            if d is not None:
                rec["type"] = d.type_str
                rec["opcode"] = d.opcode
                if d.opcode == "parameter":
                    rec["entry_parameter"] = d.parameter_number()
                rec["hlo"] = d.line
            operands.append(rec)
        out.append({
            "name": ins.name,
            "kind": ins.attr("kind"),
            "calls": calls,
            "type": ins.type_str,
            "op_count": ops,
            "compute_op_count": None,
            "opcodes": dict(sorted(opcodes.items())),
            "operands": operands,
            "users": users.get(ins.name, []),
            "output_index": [i for i, r in enumerate(root_items) if r == ins.name],
            "hlo": ins.line,
        })
        out[-1]["compute_op_count"] = compute_ops(out[-1])
    return out


_NOT_COMPUTE = {"parameter", "constant", "broadcast", "reshape", "bitcast", "copy",
                "transpose", "tuple", "get-tuple-element", "iota"}


def compute_ops(fusion):
    """Ops of a fusion body that compute (data movement and constants not counted)."""
    return sum(n for op, n in fusion["opcodes"].items() if op not in _NOT_COMPUTE)


def main_fusion(fusions):
    """The fusion to call 'the kernel' when XLA made several: the most computing
    ops (compute_ops); ties go to a fusion that produces an entry output, then
    to the later one.  A hint: the whole module is what ran."""
    if not fusions:
        return None
    best, best_key = None, None
    for pos, f in enumerate(fusions):
        key = (compute_ops(f), bool(f["output_index"]), pos)
        if best_key is None or key > best_key:
            best, best_key = f, key
    return best["name"]


def module_op_count(module):
    """Ops the module executes: fusion bodies + unfused entry instructions
    (parameters, constants, tuple and get-tuple-element not counted)."""
    n = 0
    for ins in module.entry.instrs:
        if ins.opcode == "fusion":
            n += hlo_text.fusion_body_ops(module, ins.attr("calls"))
        elif ins.opcode not in ("parameter", "constant", "tuple", "get-tuple-element"):
            n += 1
    return n


# ---------------------------------------------------------------------------
# Input distributions
# ---------------------------------------------------------------------------

def _np_dtype(dt):
    """numpy dtype of a jnp/numpy dtype or an HLO type name ('bf16', 'f8e4m3fn')."""
    if isinstance(dt, str):
        return hlo_text.hlo_to_numpy_dtype(dt)
    return np.dtype(dt)


def _finfo(dt):
    import ml_dtypes
    return ml_dtypes.finfo(_np_dtype(dt))


def _nmant(dt):
    return int(_finfo(dt).nmant)


def _signs(rng, n):
    return np.where(rng.random(n) < 0.5, -1.0, 1.0)


def _ties(rng, n, arg_dt, target_dt):
    """Values (k + 1/2) ulp of the target type: exact rounding ties of target.

    If the argument's type cannot hold them (same or narrower significand),
    values whose last significand bit is set instead (ties of the type one
    bit narrower): the best an input of that type can do.  A quarter of the
    values are moved one ulp of the argument type off the tie (near ties).
    """
    tf = _finfo(target_dt)
    nt = _nmant(target_dt)
    na = _nmant(arg_dt)
    lo = max(-4, int(np.log2(float(tf.smallest_normal))) + 1)
    hi = min(4, int(np.log2(float(tf.max))) - 1)
    e = rng.integers(lo, hi + 1, n).astype(np.float64)
    if na > nt:
        m = rng.integers(0, 2 ** nt, n).astype(np.float64)
        v = (1.0 + m / 2 ** nt) * 2.0 ** e
        v = v + 2.0 ** (e - nt) / 2  # + 1/2 ulp of target
        near = rng.random(n) < 0.25
        v = np.where(near, v + _signs(rng, n) * 2.0 ** (e - na), v)
    else:
        m = rng.integers(0, 2 ** (na - 1), n).astype(np.float64) * 2 + 1  # odd
        v = (1.0 + m / 2 ** na) * 2.0 ** e
    return _signs(rng, n) * v


def _denormals(rng, n, dt):
    f = _finfo(dt)
    sub = float(f.smallest_subnormal)
    na = _nmant(dt)
    k = rng.integers(1, 2 ** na, n).astype(np.float64)
    v = k * sub
    normal = rng.random(n) < 0.25
    v = np.where(normal, float(f.smallest_normal) * rng.uniform(1, 4, n), v)
    return _signs(rng, n) * v


def draw_float(rng, dist, shape, dt, target_dt):
    n = int(np.prod(shape, dtype=np.int64))
    if dist == "normal":
        v = rng.standard_normal(n)
    elif dist == "uniform":
        v = rng.uniform(-1.0, 1.0, n)
    elif dist == "large":
        v = _signs(rng, n) * 2.0 ** rng.uniform(4.0, 12.0, n)
        v = np.clip(v, -float(_finfo(dt).max) / 16, float(_finfo(dt).max) / 16)
    elif dist == "ties":
        v = _ties(rng, n, dt, target_dt)
    elif dist == "denormal":
        v = _denormals(rng, n, dt)
    else:
        raise ValueError(f"unknown distribution {dist!r}; use one of {DISTRIBUTIONS}")
    return v.reshape(shape).astype(_np_dtype(dt))


def draw_inputs(kernel, dist, seed):
    """Inputs of a catalogue kernel, in argument (= entry parameter) order."""
    rng = np.random.default_rng([seed, _stable_hash(kernel.name), DISTRIBUTIONS.index(dist)])
    out = [None] * len(kernel.args)
    target = kernel.target
    data_idx = [i for i, a in enumerate(kernel.args) if a.role in ("data", "positive")]
    scale_idx = [i for i, a in enumerate(kernel.args) if a.role == "scale"]
    # the scale first where the data depends on it (ties of x/scale)
    tie_scale = None
    if scale_idx and dist == "ties":
        tie_scale = float(2.0 ** rng.integers(-4, 5))
    for i, a in enumerate(kernel.args):
        dt = _np_dtype(a.dtype)
        if a.role in ("data", "positive"):
            v = draw_float(rng, dist, a.shape, a.dtype, target)
            if a.role == "positive":
                v = np.abs(v)
            if tie_scale is not None:
                v = (v.astype(np.float64) * tie_scale).astype(dt)
            out[i] = v
        elif a.role == "weight":
            out[i] = (1.0 + 0.1 * rng.standard_normal(a.shape)).astype(dt)
        elif a.role == "mask":
            out[i] = rng.random(a.shape) < 0.8
        elif a.role == "labels":
            out[i] = rng.integers(0, a.classes, a.shape).astype(np.int32)
        elif a.role == "step":
            out[i] = np.asarray(rng.integers(1, 1001), dtype=np.int32).reshape(a.shape)
        elif a.role == "fp8data":
            fmax = float(_finfo(dt).max)
            if dist in ("normal", "uniform"):
                v = draw_float(rng, dist, a.shape, np.float64, np.float64) * fmax / 4
            elif dist == "large":
                v = _signs(rng, int(np.prod(a.shape))).reshape(a.shape) * \
                    2.0 ** rng.uniform(4.0, np.log2(fmax), a.shape)
            else:
                v = draw_float(rng, dist, a.shape, dt, dt).astype(np.float64)
            out[i] = np.clip(v, -fmax, fmax).astype(dt)
        elif a.role == "scale":
            pass  # below, once the data exists
        else:
            raise ValueError(f"unknown role {a.role}")
    for i in scale_idx:
        a = kernel.args[i]
        if tie_scale is not None:
            s = tie_scale
        elif any(kernel.args[j].role == "fp8data" for j in range(len(kernel.args))):
            s = float(np.float32(2.0 ** rng.uniform(-10.0, 0.0)))  # dequantize scale
        else:
            amax = max(float(np.max(np.abs(out[j].astype(np.float64)))) for j in data_idx)
            tmax = float(_finfo(target).max)
            s = amax / tmax if amax > 0 else 1.0
            if dist == "large":
                s = s / 4  # stale (delayed) scale: a quarter of the range saturates
        out[i] = np.asarray(s, dtype=_np_dtype(a.dtype)).reshape(a.shape)
    return out


def _stable_hash(s):
    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16)


# ---------------------------------------------------------------------------
# Writing cases
# ---------------------------------------------------------------------------

def _flags_for_record():
    return " ".join(_STATE["codegen_flags"] + ["--xla_dump_to=<dump dir>", "--xla_dump_hlo_as_text"])


def fast_math_in_effect(debug_options=None):
    """Whether XLA:CPU compiled with --xla_cpu_enable_fast_math=true: the last
    such flag in XLA_FLAGS wins (XLA's own rule); without one, the dumped
    .debug_options (which list non-default values) or else XLA's default, off."""
    val = None
    for f in _STATE["codegen_flags"]:
        if f.startswith("--xla_cpu_enable_fast_math="):
            val = f.split("=", 1)[1].lower() in ("true", "1")
    if val is None and debug_options:
        v = debug_options.get("xla_cpu_enable_fast_math")
        if v is not None:
            val = v.lower() in ("true", "1")
    return bool(val)


def check_entry_order(module, inputs, names=None):
    """Inputs must match the entry parameters by number, shape and dtype.
    Returns [{index, hlo_name, metadata_name, type}] or raises."""
    params = module.entry.parameters()
    if len(params) != len(inputs):
        raise ValueError(f"entry has {len(params)} parameters, got {len(inputs)} inputs")
    rec = []
    for k, p in enumerate(params):
        if p.parameter_number() != k:
            raise ValueError(f"entry parameter numbering is not dense at {p.name}")
        leaf = p.leaves[0]
        x = inputs[k]
        want = hlo_text.hlo_to_numpy_dtype(leaf.dtype)
        if tuple(x.shape) != leaf.dims or np.dtype(x.dtype) != want:
            raise ValueError(f"input {k}: {x.dtype}{list(x.shape)} does not match entry "
                             f"parameter {p.name}: {p.type_str}")
        m = re.search(r'op_name="([^"]*)"', p.attrs)
        meta = m.group(1) if m else None
        if names is not None and meta is not None and meta != names[k]:
            # jax names parameters after the Python argument; a mismatch means
            # the pytree flattening reordered something.
            raise ValueError(f"entry parameter {k} is {meta!r} in the HLO, argument "
                             f"{names[k]!r} in the function")
        rec.append({"index": k, "hlo_name": p.name, "argument": meta, "type": str(leaf)})
    return rec


def check_outputs(module, outputs):
    leaves = module.entry.root().leaves
    if len(leaves) != len(outputs):
        raise ValueError(f"root has {len(leaves)} leaves, got {len(outputs)} outputs")
    for k, (leaf, y) in enumerate(zip(leaves, outputs)):
        want = hlo_text.hlo_to_numpy_dtype(leaf.dtype)
        if tuple(y.shape) != leaf.dims or np.dtype(y.dtype) != want:
            raise ValueError(f"output {k}: {y.dtype}{list(y.shape)} vs root leaf {leaf}")
    return [str(l) for l in leaves]


def _auto_notes(comp, dist, outputs):
    notes = []
    text = comp.hlo
    cpu = _STATE["platform"] == "cpu"
    if "reduce-window(" in text and cpu:
        notes.append("XLA:CPU split the reductions: a reduce-window over fixed windows "
                     "(see window={size=...}) then a reduce of the partial results; the "
                     "summation order is that tree, not a sequential loop.")
    if dist == "denormal" and cpu:
        notes.append("XLA:CPU runs its f32 arithmetic with FTZ/DAZ: values subnormal in "
                     "f32 (every f32 and bf16 subnormal) act as zeros and such results "
                     "come out as zeros; f16 and fp8 subnormals are normal f32 numbers "
                     "and survive.")
    n_nonfinite = sum(int(np.sum(~np.isfinite(y.astype(np.float64))))
                      for y in outputs if y.dtype.kind in "fV")
    if n_nonfinite:
        notes.append(f"{n_nonfinite} non-finite output element(s).")
    return notes


def save_npy(path, x):
    """np.save, except for a dtype whose npy descriptor numpy cannot read back:
    ml_dtypes' float8_e5m2 is '<f1', which np.load refuses even with ml_dtypes
    imported.  Such arrays are saved as raw bytes ('|V1'), the form docs/cases.md
    gives for fp8 (bf16 and the other fp8 types already come out as '<V2'/'<V1')."""
    try:
        np.dtype(np.lib.format.dtype_to_descr(x.dtype))
    except TypeError:
        x = x.view(np.dtype(f"V{x.dtype.itemsize}"))
    np.save(path, x, allow_pickle=False)


def write_case(out_dir, comp, inputs, outputs, *, function, kernel_name, dtype,
               seed, distribution, notes="", arg_names=None, roles=None, extra=None):
    os.makedirs(out_dir, exist_ok=True)
    for old in glob.glob(os.path.join(out_dir, "*.npy")):
        os.remove(old)
    params = check_entry_order(comp.module, inputs, arg_names)
    out_types = check_outputs(comp.module, outputs)
    fusions = describe_fusions(comp.module)
    names = [f["name"] for f in fusions]
    main = main_fusion(fusions)
    with open(os.path.join(out_dir, "kernel.hlo"), "w") as f:
        f.write(comp.hlo)
    in_rec = []
    for k, x in enumerate(inputs):
        fn = f"input_{k}.npy"
        save_npy(os.path.join(out_dir, fn), x)
        in_rec.append({"file": fn, "entry_parameter": k,
                       "argument": arg_names[k] if arg_names else params[k]["argument"],
                       "hlo_name": params[k]["hlo_name"], "type": params[k]["type"],
                       **({"role": roles[k]} if roles else {})})
    out_rec = []
    for k, y in enumerate(outputs):
        fn = f"device_{k}.npy"
        save_npy(os.path.join(out_dir, fn), y)
        out_rec.append({"file": fn, "tuple_index": k, "type": out_types[k]})
    auto = _auto_notes(comp, distribution, outputs)
    case = {
        "fusion": names[0] if len(names) == 1 else None,
        "fusions": names,
        "main_fusion": main,
        **platform_record(comp),
        **_versions(),
        "xla_flags": _flags_for_record(),
        "function": function,
        "kernel": kernel_name,
        "dtype": dtype,
        "seed": seed,
        "distribution": distribution,
        "notes": " ".join([n for n in [notes] if n] + auto),
        "module": comp.module.name,
        "hlo_source": comp.hlo_source,
        "hlo_sha256": hashlib.sha256(comp.hlo.encode()).hexdigest(),
        "inputs": in_rec,
        "outputs": out_rec,
        "fusion_details": fusions,
        "xla_debug_options": comp.debug_options,
        "host": _host(),
        "captured": datetime.date.today().isoformat(),
    }
    if extra:
        case.update(extra)
    with open(os.path.join(out_dir, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")
    return case


def capture_function(fn, args, out_dir, *, name=None, arg_names=None, dtype=None,
                     seed=None, distribution="given", notes="", intermediates=None,
                     device_outputs=None):
    """Capture your own function at concrete arguments as a case directory.

    args: arrays, or pytrees of them (the case's inputs are the leaves, in
    jax's order).  intermediates: None, or what capture_intermediates()
    takes ('all', 'all-fused', names) to record those instructions' values
    too.  device_outputs: the outputs to record instead of running the
    compiled function here (say, from another device): a list of arrays in
    output order, checked against the module's root.  Returns case.json's
    record."""
    jax = setup()
    leaves, tree = jax.tree_util.tree_flatten(list(args))
    arrays = [np.asarray(jax.device_get(a)) for a in leaves]
    name = name or getattr(fn, "__name__", "kernel")
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if tree != jax.tree_util.tree_structure([0] * len(leaves)):
        # A pytree argument: the kernel takes the leaves one by one.
        def flat(*xs, _fn=fn, _tree=tree):
            return _fn(*jax.tree_util.tree_unflatten(_tree, list(xs)))
        kernel = flat
    else:
        kernel = fn
    comp = Compiled(name, kernel, [(a.shape, a.dtype) for a in arrays])
    if device_outputs is None:
        outputs = comp.run(arrays)
    else:
        outputs = [np.asarray(jax.device_get(y)) for y in device_outputs]
    if dtype is None:
        dtype = ",".join(sorted({hlo_text.numpy_to_hlo_dtype(a.dtype) for a in arrays}))
    case = write_case(out_dir, comp, arrays, outputs,
                      function=f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', name)}",
                      kernel_name=name, dtype=dtype, seed=seed, distribution=distribution,
                      notes=notes, arg_names=arg_names)
    if intermediates:
        case["intermediates"] = capture_intermediates(out_dir, intermediates)
    return case


# ---------------------------------------------------------------------------
# Intermediates: the values of chosen instructions, for `ulpscope bisect`
# ---------------------------------------------------------------------------

def _newest_dump(module_name):
    """(after_optimizations, debug_options) paths of the newest dump of module_name."""
    d = _STATE["dump_dir"]
    if not d:
        return None, None
    hits = _dumps_of(d, module_name)
    if not hits:
        return None, None
    debug = hits[-1][1] + ".debug_options"
    return hits[-1][0], debug if os.path.exists(debug) else None


def compile_hlo_text(text):
    """Compile HLO text on XLA:CPU through jaxlib, as jax compiles a jit:
    hlo_module_from_text -> XlaComputation -> StableHLO
    (xla_computation_to_mlir_module) -> Client.compile_and_load with jax's
    own compile options (jax._src.compiler.get_compile_options).  jaxlib
    0.10.2 compiles nothing but StableHLO/MHLO, so XLA runs its whole
    pipeline on the module again (fusion included).  Returns the
    LoadedExecutable."""
    jax = setup()
    from jax._src import compiler
    from jax._src.lib import _jax, xla_client as xc
    from jax._src.lib import hlo as xla_hlo
    dev = jax.devices("cpu")[0]
    module = xla_hlo.hlo_module_from_text(text)
    mlir = _jax.mlir.xla_computation_to_mlir_module(
        xc.XlaComputation(module.as_serialized_hlo_module_proto()))
    opts = compiler.get_compile_options(num_replicas=1, num_partitions=1,
                                        device_assignment=[dev], backend=dev.client)
    return dev.client.compile_and_load(mlir, xc.DeviceList((dev,)), opts)


def _run_executable(exe, inputs):
    jax = setup()
    dev = jax.devices("cpu")[0]
    outs = exe.execute([jax.device_put(x, dev) for x in inputs])
    return [np.asarray(jax.device_get(y)) for y in outs]


def _as_hlo_type(x, leaf):
    """An array read from a case as the HLO type of leaf (raw '<V2' bf16 -> bf16)."""
    want = hlo_text.hlo_to_numpy_dtype(leaf.dtype)
    if x.dtype != want:
        if x.dtype.itemsize != want.itemsize:
            raise ValueError(f"{x.dtype} does not match {leaf}")
        x = x.view(want)
    if tuple(x.shape) != leaf.dims:
        raise ValueError(f"shape {list(x.shape)} does not match {leaf}")
    return x


def _bits(x):
    return np.ascontiguousarray(x).view(np.uint8).reshape(x.shape + (x.dtype.itemsize,))


def _differing(a, b):
    """Elements whose encodings differ (NaN payloads and -0 included)."""
    if a.shape != b.shape or a.dtype.itemsize != b.dtype.itemsize:
        return -1
    return int(np.sum(np.any(_bits(a) != _bits(b), axis=-1)))


def _warn(msg):
    print(f"capture: warning: {msg}", file=sys.stderr)


def capture_intermediates(case_dir, which="all"):
    """Record the values of instructions of a case's kernel.hlo as
    case_dir/intermediate_<name>.npy, and what was done as case.json's
    `intermediates`.  which: 'all' (every entry instruction that computes a
    value and is not an output: the output of each entry fusion), 'all-fused'
    (those and the instructions inside each entry fusion's computation), or a
    list / comma string of instruction names (entry or fused computation).

    The module is rewritten (ulpscope/capture/intermediates.py): every entry
    fusion inlined into the entry (names kept), the ENTRY's ROOT a tuple of
    the original outputs and the chosen instructions.  Each rewritten module
    is compiled again on XLA:CPU (compile_hlo_text) in this process (same
    XLA_FLAGS, which must give the fast-math setting the case was captured
    with) and run on the case's inputs; its first outputs are compared bit
    for bit with device_<i>.npy.  Run 0 gives the entry-level values; each
    fusion with requested instructions inside gets a run of its own, which
    also recomputes run 0's values as a cross-check.  Mismatches are warned
    about and recorded, never hidden.  Returns the record."""
    from . import intermediates as inter
    setup()
    if _STATE["platform"] != "cpu":
        raise ValueError("--intermediates recompiles the module on XLA:CPU; it does not "
                         "apply to --platform " + _STATE["platform"])
    case_path = os.path.join(case_dir, "case.json")
    with open(case_path) as f:
        case = json.load(f)
    with open(os.path.join(case_dir, "kernel.hlo")) as f:
        text = f.read()
    module = hlo_text.parse_module(text)
    want_fm = bool(case.get("xla_cpu_enable_fast_math", False))
    if fast_math_in_effect() != want_fm:
        raise ValueError(f"{case_dir}: captured with xla_cpu_enable_fast_math={want_fm}, this "
                         f"process compiles with {fast_math_in_effect()}; rerun with "
                         f"--fast-math {'true' if want_fm else 'false'}")
    for key, now in _versions().items():
        if case.get(key) not in (None, now):
            _warn(f"{case_dir}: captured with {key} {case[key]}, this is {now}: "
                  "the recompiled module may differ")
    if case.get("xla_flags") not in (None, _flags_for_record()):
        _warn(f"{case_dir}: captured with XLA_FLAGS {case['xla_flags']!r}, now "
              f"{_flags_for_record()!r}")

    params = module.entry.parameters()
    inputs = [_as_hlo_type(np.load(os.path.join(case_dir, f"input_{k}.npy")), p.leaves[0])
              for k, p in enumerate(params)]
    leaves = module.entry.root().leaves
    devices = [_as_hlo_type(np.load(os.path.join(case_dir, f"device_{k}.npy")), leaf)
               for k, leaf in enumerate(leaves)]

    spec = which if isinstance(which, str) else ",".join(which)
    names = inter.select(module, spec)
    runs = inter.plan_runs(module, names)
    entry_ref = {}
    values = {}
    run_recs = []
    orig_debug = case.get("xla_debug_options") or {}
    for k, run in enumerate(runs):
        mname = f"{module.name}_usc_intermediates_{k}"
        new_text = inter.rewrite(text, run["outputs"], "all", module_name=mname)
        exe = compile_hlo_text(new_text)
        outs = _run_executable(exe, inputs)
        n_out = len(devices)
        if len(outs) != n_out + len(run["outputs"]):
            raise RuntimeError(f"run {k}: {len(outs)} results, expected "
                               f"{n_out} + {len(run['outputs'])}")
        mism = []
        for i, (y, dv) in enumerate(zip(outs[:n_out], devices)):
            nd = _differing(y, dv)
            if nd:
                mism.append({"output": i, "elements": nd})
        extra = dict(zip(run["outputs"], outs[n_out:]))
        entry_mism = []
        if k == 0:
            entry_ref = extra
        else:
            for n in run["outputs"]:
                if n not in entry_ref:
                    continue
                nd = _differing(extra[n], entry_ref[n])
                if nd:
                    entry_mism.append({"instruction": n, "elements": nd})
        for rec in run["captures"]:
            src = rec["value_of"] if rec["value_of"] is not None else rec["name"]
            values[rec["name"]] = (extra[src], k)
        after, debug = _newest_dump(mname)
        opt_text = open(after).read() if after else exe.hlo_modules()[0].to_string()
        dbg = _debug_options(debug)
        dbg_diff = sorted(key for key in set(dbg) | set(orig_debug)
                          if dbg.get(key) != orig_debug.get(key)) if debug else None
        rr = {
            "run": k,
            "inside_fusion": run["fusion"],
            "instructions": [r["name"] for r in run["captures"]],
            "extra_outputs": len(run["outputs"]),
            "rewritten_sha256": hashlib.sha256(new_text.encode()).hexdigest(),
            "recompiled_entry_fusions": len(hlo_text.entry_fusions(
                hlo_text.parse_module(opt_text))),
            "outputs_match": not mism,
            "output_mismatches": mism,
        }
        if k:
            # The fusion's own operands: when they match run 0, the
            # instructions inside it were computed from the same bits as in
            # the entry-level run, whatever XLA did downstream.
            fus = module.entry.by_name()[run["fusion"]]
            bad = {m["instruction"] for m in entry_mism}
            rr["fusion_operands_match"] = not any(o in bad for o in fus.operands)
            rr["entry_values_match"] = not entry_mism
            rr["entry_value_mismatches"] = entry_mism
        if dbg_diff is not None:
            rr["debug_options_differ"] = dbg_diff
        run_recs.append(rr)
        if mism:
            _warn(f"{case_dir}: run {k} ({run['fusion'] or 'entry'}): outputs differ "
                  f"from device_*.npy: {mism}; its values are still XLA:CPU's, of a module "
                  "that computed the outputs differently")
        if entry_mism:
            _warn(f"{case_dir}: run {k} ({run['fusion']}): entry values differ from "
                  f"run 0: {entry_mism}"
                  + ("" if rr["fusion_operands_match"] else
                     f"; among them operands of {run['fusion']}, so the values inside it "
                     "come from other operand bits than run 0's"))

    for old in glob.glob(os.path.join(case_dir, "intermediate_*.npy")):
        os.remove(old)
    files = []
    for rec in inter.resolve(module, names):
        y, k = values[rec["name"]]
        leaf = hlo_text.parse_type(rec["type"])[0]
        y = _as_hlo_type(y, leaf)
        fn = f"intermediate_{rec['name']}.npy"
        save_npy(os.path.join(case_dir, fn), y)
        files.append({"file": fn, "instruction": rec["name"], "type": str(leaf),
                      "opcode": rec["opcode"], "computation": rec["computation"],
                      "fusion": rec["fusion"],
                      "value_of": rec["value_of"] or rec["name"], "run": k})
    record = {
        "requested": spec,
        "method": "recompiled",
        "how": ("kernel.hlo rewritten (ulpscope/capture/intermediates.py): every entry fusion "
                "inlined into the entry (a fused root takes its fusion's name, every other "
                "name kept), the ENTRY's ROOT a tuple of the original outputs and the "
                "instructions of the run; compiled again on XLA:CPU through jaxlib "
                "(hlo_module_from_text -> xla_computation_to_mlir_module -> "
                "Client.compile_and_load with jax's compile options) in the capturing "
                "process, and run on input_*.npy. XLA re-optimizes and re-fuses the "
                "rewritten module: the values are XLA:CPU's for these instructions in that "
                "module, whose outputs are bit-identical to device_*.npy when the run's "
                "outputs_match is true; they are not necessarily the bits inside the "
                "original fused loop, where a value may never have been rounded to its "
                "type."),
        "tool": "ulpscope.capture.core.capture_intermediates",
        **_versions(),
        "xla_flags": _flags_for_record(),
        "kernel_entry_fusions": len(hlo_text.entry_fusions(module)),
        "outputs_match": all(r["outputs_match"] for r in run_recs),
        "fusion_operands_match": all(r.get("fusion_operands_match", True) for r in run_recs),
        "entry_values_match": all(r.get("entry_values_match", True) for r in run_recs),
        "files": files,
        "runs": run_recs,
    }
    case["intermediates"] = record
    with open(case_path, "w") as f:
        json.dump(case, f, indent=1)
        f.write("\n")
    return record


def write_snapshot(out_dir, comp, inputs, outputs, before):
    """out_dir/snapshot.pb, the run as an HloSnapshot (docs/dumps.md), and
    the record case.json keeps of it.  XLA's own when it wrote one for this
    run (--xla_dump_hlo_snapshots; XLA:CPU does), else written here from the
    compiled module and the run's buffers (ulpscope/capture/snapshot.py)."""
    mode = _STATE.get("snapshots")
    if not mode:
        return None
    path = os.path.join(out_dir, "snapshot.pb")
    new = sorted(comp.snapshots_now() - before) if mode == "auto" else []
    if len(new) == 1:
        shutil.copy(new[0], path)
        return {"file": "snapshot.pb", "made_by": "xla",
                "xla_file": os.path.basename(new[0])}
    from . import snapshot as snap
    module = comp.compiled.runtime_executable().hlo_modules()[0]
    layout = re.search(r"entry_computation_layout=\{\(.*?\)->(.)", comp.hlo)
    is_tuple = bool(layout and layout.group(1) == "(")
    with open(path, "wb") as f:
        f.write(snap.snapshot(module.as_serialized_hlo_module_proto(), inputs,
                              outputs, is_tuple))
    why = ("asked to" if mode == "python" else
           f"XLA wrote {len(new)} snapshots for this run, not one")
    return {"file": "snapshot.pb", "made_by": "python",
            "note": f"written by ulpscope/capture/snapshot.py ({why})"}
