"""JAX sources of the ulpscope kernel catalogue (kernels/*.hlo).

Every entry of KERNELS is one jitted function at one fixed set of argument
shapes and dtypes.  capture.py jits it on XLA:CPU, dumps the optimized module
and, for cases, draws inputs from the distributions in capture.py.

An argument is described by Arg(name, shape, dtype, role).  The role tells
capture.py how to draw it:
  data      drawn from the case's distribution (normal, uniform, large, ties,
            denormal), rounded to the argument's dtype
  positive  like data, then absolute value (second moments, variances)
  weight    1 + 0.1 * N(0,1), whatever the distribution (norm gains)
  scale     a positive f32 scalar: amax(data args)/max_finite(target) for most
            distributions, a power of two for "ties" (so x/scale is exact)
  mask      bool, True with probability 0.8
  labels    int32 in [0, classes)
  step      int32 scalar in [1, 1000]
  fp8data   float8 values: data drawn in units of the format, then encoded

Shapes are kept small (<= 4096 elements per tensor, mostly 256..1024) so that
committed cases stay small.

Keep this file importable without side effects: capture.py sets XLA_FLAGS
before it imports jax, and imports this module afterwards.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Sequence

import jax
import jax.numpy as jnp
from jax import lax

F32 = jnp.float32
BF16 = jnp.bfloat16
F16 = jnp.float16
F8E4M3 = jnp.float8_e4m3fn
F8E5M2 = jnp.float8_e5m2


@dataclasses.dataclass(frozen=True)
class Arg:
    name: str
    shape: tuple
    dtype: object
    role: str = "data"
    classes: int = 0  # for role == "labels"


@dataclasses.dataclass(frozen=True)
class Kernel:
    name: str  # file stem: kernels/<name>.hlo; also the jit name (jit_<name>)
    fn: Callable
    args: Sequence[Arg]
    dtype: str  # the kernel's working low-precision type (README column)
    target: str  # type whose rounding ties the "ties" distribution aims at
    formula: str  # one-line formula for the README
    source: str  # the JAX expression, short

    def arg_names(self):
        return [a.name for a in self.args]


# --------------------------------------------------------------------------
# The functions.  Written the way model code writes them (jax.nn where it has
# the op, flax/llama-style upcasts for the norms), not tuned for XLA.
# --------------------------------------------------------------------------

def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def log_softmax(x):
    return jax.nn.log_softmax(x, axis=-1)


def layer_norm(x, gamma, beta):
    # flax.linen.LayerNorm style: statistics in f32, result in the input type.
    eps = 1e-5
    x32 = x.astype(F32)
    mean = jnp.mean(x32, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x32 - mean), axis=-1, keepdims=True)
    y = (x32 - mean) * lax.rsqrt(var + eps)
    y = y * gamma.astype(F32) + beta.astype(F32)
    return y.astype(x.dtype)


def rms_norm(x, weight):
    # Llama style: normalise in f32, round to the input type, then scale.
    eps = 1e-6
    x32 = x.astype(F32)
    ms = jnp.mean(x32 * x32, axis=-1, keepdims=True)
    y = (x32 * lax.rsqrt(ms + eps)).astype(x.dtype)
    return y * weight


def gelu_tanh(x):
    return jax.nn.gelu(x, approximate=True)


def gelu_erf(x):
    return jax.nn.gelu(x, approximate=False)


def silu(x):
    return jax.nn.silu(x)


def swiglu(gate, up):
    return jax.nn.silu(gate) * up


def rope(x):
    # Rotary embedding, "rotate half" (GPT-NeoX) layout, x: [seq, heads, dim].
    seq, _, dim = x.shape
    half = dim // 2
    inv_freq = 1.0 / (10000.0 ** (jnp.arange(0, half, dtype=F32) * 2.0 / dim))
    pos = jnp.arange(seq, dtype=F32)
    ang = pos[:, None] * inv_freq[None, :]  # [seq, half]
    cos = jnp.cos(ang)[:, None, :]
    sin = jnp.sin(ang)[:, None, :]
    x32 = x.astype(F32)
    x1, x2 = x32[..., :half], x32[..., half:]
    out = jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return out.astype(x.dtype)


def attention_logits_masked(q, k, mask):
    # q, k: [heads, seq, dim]; mask: [seq, seq] bool (True = attend).
    d = q.shape[-1]
    logits = jnp.einsum("hqd,hkd->hqk", q, k) * (1.0 / math.sqrt(d))
    logits = logits.astype(q.dtype)
    big_neg = jnp.finfo(q.dtype).min
    return jnp.where(mask[None, :, :], logits, big_neg)


def attention_logits_causal(q, k):
    # bf16 inputs, f32 accumulation (preferred_element_type), causal mask from iota.
    d = q.shape[-1]
    s = q.shape[1]
    logits = jnp.einsum("hqd,hkd->hqk", q, k, preferred_element_type=F32)
    logits = logits * (1.0 / math.sqrt(d))
    causal = jnp.arange(s)[:, None] >= jnp.arange(s)[None, :]
    logits = jnp.where(causal[None], logits, -1e9)
    return logits.astype(q.dtype)


def fp8_quantize_div(x, scale):
    # Given-scale quantisation: x / scale, clip to the e4m3fn range, convert.
    fmax = float(jnp.finfo(F8E4M3).max)
    y = x.astype(F32) / scale
    return jnp.clip(y, -fmax, fmax).astype(F8E4M3)


def fp8_quantize_mul(x, scale):
    # Same with a reciprocal computed once (Transformer-Engine style).
    fmax = float(jnp.finfo(F8E4M3).max)
    inv = 1.0 / scale
    y = x.astype(F32) * inv
    return jnp.clip(y, -fmax, fmax).astype(F8E4M3)


def fp8_quantize_e5m2(g, scale):
    # Gradient quantisation to e5m2 (no clip: e5m2 has Inf).
    return (g / scale).astype(F8E5M2)


def fp8_dequantize_f32(q, scale):
    return q.astype(F32) * scale


def fp8_dequantize_bf16(q, scale):
    return (q.astype(F32) * scale).astype(BF16)


def adam(p, g, m, v, step):
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3
    t = step.astype(F32)
    m_new = b1 * m + (1.0 - b1) * g
    v_new = b2 * v + (1.0 - b2) * (g * g)
    m_hat = m_new / (1.0 - b1 ** t)
    v_hat = v_new / (1.0 - b2 ** t)
    p_new = p - lr * m_hat / (jnp.sqrt(v_hat) + eps)
    return p_new, m_new, v_new


def adam_mixed(p, g, m, v, step):
    # bf16 parameters and gradients, f32 optimizer state (mixed precision).
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3
    t = step.astype(F32)
    g32 = g.astype(F32)
    m_new = b1 * m + (1.0 - b1) * g32
    v_new = b2 * v + (1.0 - b2) * (g32 * g32)
    m_hat = m_new / (1.0 - b1 ** t)
    v_hat = v_new / (1.0 - b2 ** t)
    p_new = (p.astype(F32) - lr * m_hat / (jnp.sqrt(v_hat) + eps)).astype(p.dtype)
    return p_new, m_new, v_new


def cross_entropy_gather(logits, labels):
    # Per-example loss with integer labels: logsumexp - logits[label].
    x = logits.astype(F32)
    lse = jax.nn.logsumexp(x, axis=-1)
    picked = jnp.take_along_axis(x, labels[:, None], axis=-1)[:, 0]
    return lse - picked


def cross_entropy_onehot(logits, labels):
    # One-hot form (optax.softmax_cross_entropy style), f32 math.
    x = logits.astype(F32)
    onehot = jax.nn.one_hot(labels, x.shape[-1], dtype=F32)
    return -jnp.sum(onehot * jax.nn.log_softmax(x, axis=-1), axis=-1)


def bias_residual(h, bias, residual):
    return residual + (h + bias)


# --------------------------------------------------------------------------
# The catalogue.
# --------------------------------------------------------------------------

_DT = {F32: "f32", BF16: "bf16", F16: "f16", F8E4M3: "f8e4m3fn", F8E5M2: "f8e5m2"}


def _k(name, fn, args, dtype, formula, source, target=None):
    return Kernel(name=name, fn=fn, args=tuple(args), dtype=dtype,
                  target=target or dtype, formula=formula, source=source)


def _catalogue():
    ks = []
    # softmax / log-softmax: [4, 256]
    for dt in (F32, BF16, F16):
        n = _DT[dt]
        ks.append(_k(f"softmax_{n}", softmax, [Arg("x", (4, 256), dt)], n,
                     "y = exp(x - max x) / sum exp(x - max x) over the last axis",
                     "jax.nn.softmax(x, axis=-1)"))
    for dt in (F32, BF16):
        n = _DT[dt]
        ks.append(_k(f"log_softmax_{n}", log_softmax, [Arg("x", (4, 256), dt)], n,
                     "y = x - max x - log sum exp(x - max x) over the last axis",
                     "jax.nn.log_softmax(x, axis=-1)"))
    # layer norm / RMS norm: [8, 128]
    for dt in (F32, BF16, F16):
        n = _DT[dt]
        ks.append(_k(f"layer_norm_{n}", layer_norm,
                     [Arg("x", (8, 128), dt), Arg("gamma", (128,), dt, "weight"),
                      Arg("beta", (128,), dt)], n,
                     "y = (x - mean) * rsqrt(var + 1e-5) * gamma + beta, stats in f32",
                     "layer_norm(x, gamma, beta) (flax-style, f32 statistics)"))
    for dt in (F32, BF16):
        n = _DT[dt]
        ks.append(_k(f"rms_norm_{n}", rms_norm,
                     [Arg("x", (8, 128), dt), Arg("weight", (128,), dt, "weight")], n,
                     "y = T(x * rsqrt(mean(x^2) + 1e-6)) * w (llama-style, rounds to T before w)",
                     "rms_norm(x, weight)"))
    # activations: [1024]
    for dt in (F32, BF16):
        n = _DT[dt]
        ks.append(_k(f"gelu_tanh_{n}", gelu_tanh, [Arg("x", (1024,), dt)], n,
                     "y = x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))",
                     "jax.nn.gelu(x, approximate=True)"))
    for dt in (F32, F16):
        n = _DT[dt]
        ks.append(_k(f"gelu_erf_{n}", gelu_erf, [Arg("x", (1024,), dt)], n,
                     "y = x/2 * (1 + erf(x / sqrt 2))",
                     "jax.nn.gelu(x, approximate=False)"))
    for dt in (F32, BF16):
        n = _DT[dt]
        ks.append(_k(f"silu_{n}", silu, [Arg("x", (1024,), dt)], n,
                     "y = x * sigmoid(x)", "jax.nn.silu(x)"))
    for dt in (F32, BF16, F16):
        n = _DT[dt]
        ks.append(_k(f"swiglu_{n}", swiglu,
                     [Arg("gate", (8, 128), dt), Arg("up", (8, 128), dt)], n,
                     "y = gate * sigmoid(gate) * up",
                     "jax.nn.silu(gate) * up"))
    # RoPE: [seq 16, heads 4, dim 16]
    for dt in (F32, BF16):
        n = _DT[dt]
        ks.append(_k(f"rope_{n}", rope, [Arg("x", (16, 4, 16), dt)], n,
                     "y = [x1 cos - x2 sin, x2 cos + x1 sin], angle = pos / 10000^(2i/d)",
                     "rope(x) (rotate-half, sin/cos computed in the kernel)"))
    # attention logits: q, k [heads 2, seq 16, dim 32]
    ks.append(_k("attention_logits_f32", attention_logits_masked,
                 [Arg("q", (2, 16, 32), F32), Arg("k", (2, 16, 32), F32),
                  Arg("mask", (16, 16), jnp.bool_, "mask")], "f32",
                 "y = where(mask, (q k^T) / sqrt(d), finfo.min)",
                 "jnp.where(mask, einsum('hqd,hkd->hqk', q, k) / sqrt(d), min)"))
    ks.append(_k("attention_logits_causal_bf16", attention_logits_causal,
                 [Arg("q", (2, 16, 32), BF16), Arg("k", (2, 16, 32), BF16)], "bf16",
                 "y = bf16(where(i >= j, f32(q k^T) / sqrt(d), -1e9))",
                 "einsum(..., preferred_element_type=f32) * d^-0.5, causal iota mask"))
    # fp8 quantize / dequantize: [1024]
    ks.append(_k("fp8_quantize_f32", fp8_quantize_div,
                 [Arg("x", (1024,), F32), Arg("scale", (), F32, "scale")], "f32->f8e4m3fn",
                 "q = f8e4m3fn(clip(x / scale, -448, 448))",
                 "jnp.clip(x / scale, -448, 448).astype(float8_e4m3fn)",
                 target="f8e4m3fn"))
    ks.append(_k("fp8_quantize_bf16", fp8_quantize_mul,
                 [Arg("x", (1024,), BF16), Arg("scale", (), F32, "scale")], "bf16->f8e4m3fn",
                 "q = f8e4m3fn(clip(f32(x) * (1 / scale), -448, 448))",
                 "jnp.clip(x.astype(f32) * (1/scale), -448, 448).astype(float8_e4m3fn)",
                 target="f8e4m3fn"))
    ks.append(_k("fp8_quantize_e5m2_f32", fp8_quantize_e5m2,
                 [Arg("g", (1024,), F32), Arg("scale", (), F32, "scale")], "f32->f8e5m2",
                 "q = f8e5m2(g / scale) (no clip: overflow goes to Inf)",
                 "(g / scale).astype(float8_e5m2)", target="f8e5m2"))
    ks.append(_k("fp8_dequantize_f32", fp8_dequantize_f32,
                 [Arg("q", (1024,), F8E4M3, "fp8data"), Arg("scale", (), F32, "scale")],
                 "f8e4m3fn->f32",
                 "y = f32(q) * scale", "q.astype(f32) * scale", target="f8e4m3fn"))
    ks.append(_k("fp8_dequantize_bf16", fp8_dequantize_bf16,
                 [Arg("q", (1024,), F8E4M3, "fp8data"), Arg("scale", (), F32, "scale")],
                 "f8e4m3fn->bf16",
                 "y = bf16(f32(q) * scale)", "(q.astype(f32) * scale).astype(bf16)",
                 target="bf16"))
    # Adam: [1024] params and state
    ks.append(_k("adam_f32", adam,
                 [Arg("p", (1024,), F32), Arg("g", (1024,), F32), Arg("m", (1024,), F32),
                  Arg("v", (1024,), F32, "positive"), Arg("step", (), jnp.int32, "step")],
                 "f32",
                 "m'=b1 m+(1-b1) g; v'=b2 v+(1-b2) g^2; p'=p-lr m'/(1-b1^t) / (sqrt(v'/(1-b2^t))+eps)",
                 "adam(p, g, m, v, step) -> (p', m', v')"))
    ks.append(_k("adam_bf16", adam_mixed,
                 [Arg("p", (1024,), BF16), Arg("g", (1024,), BF16), Arg("m", (1024,), F32),
                  Arg("v", (1024,), F32, "positive"), Arg("step", (), jnp.int32, "step")],
                 "bf16 params, f32 state",
                 "as adam_f32 with f32(p), f32(g); p' rounded to bf16",
                 "adam_mixed(p, g, m, v, step) -> (p', m', v')", target="bf16"))
    # cross-entropy: logits [8, 128], labels [8]
    ks.append(_k("cross_entropy_f32", cross_entropy_gather,
                 [Arg("logits", (8, 128), F32), Arg("labels", (8,), jnp.int32, "labels", 128)],
                 "f32",
                 "loss = logsumexp(x) - x[label]",
                 "logsumexp(x, -1) - take_along_axis(x, labels[:, None], -1)[:, 0]"))
    ks.append(_k("cross_entropy_bf16", cross_entropy_onehot,
                 [Arg("logits", (8, 128), BF16), Arg("labels", (8,), jnp.int32, "labels", 128)],
                 "bf16 in, f32 math",
                 "loss = -sum(one_hot(label) * log_softmax(f32(x)))",
                 "-sum(one_hot(labels) * log_softmax(x.astype(f32)), -1)", target="bf16"))
    # bias + residual: [8, 128] + [128] + [8, 128]
    for dt in (F32, BF16):
        n = _DT[dt]
        ks.append(_k(f"bias_residual_{n}", bias_residual,
                     [Arg("h", (8, 128), dt), Arg("bias", (128,), dt),
                      Arg("residual", (8, 128), dt)], n,
                     "y = residual + (h + bias)", "residual + (h + bias)"))
    names = [k.name for k in ks]
    assert len(names) == len(set(names)), "duplicate kernel names"
    return ks


KERNELS = _catalogue()
BY_NAME = {k.name: k for k in KERNELS}

# The committed example cases (data/examples/): kernel, [(distribution, seed)
# or (distribution, seed, intermediates)]; the third element is what
# capture.py --intermediates takes: that case also holds the values of those
# instructions (intermediate_<name>.npy, for ulpscope bisect).
EXAMPLES = [
    ("softmax_f32", [("normal", 0), ("large", 1)]),
    ("softmax_f16", [("uniform", 0), ("ties", 1)]),
    ("layer_norm_bf16", [("normal", 0), ("denormal", 1), ("uniform", 0, "all-fused")]),
    ("rms_norm_bf16", [("normal", 0), ("ties", 1)]),
    ("gelu_erf_f16", [("normal", 0), ("ties", 1)]),
    ("swiglu_bf16", [("normal", 0), ("large", 1)]),
    ("rope_f32", [("normal", 0), ("uniform", 1)]),
    ("fp8_quantize_f32", [("normal", 0), ("ties", 1)]),
    ("fp8_dequantize_bf16", [("normal", 0), ("uniform", 1)]),
    ("adam_f32", [("normal", 0), ("normal", 1)]),
    ("cross_entropy_f32", [("normal", 0), ("large", 1)]),
    ("attention_logits_f32", [("normal", 0), ("denormal", 1)]),
]

# The acceptance corpus (data/acceptance/, capture.py --acceptance): every
# kernel with these (distribution, seed) pairs, fast math off and on.
ACCEPTANCE = [("normal", 0), ("uniform", 0), ("large", 0), ("ties", 0), ("denormal", 0),
              ("normal", 1)]
