"""Deliberately wrong JAX functions: the defect corpus of data/defects/.

Each entry of MUTANTS pairs a kernel (a catalogue kernel of kernels.py, or
one of EXTRA_KERNELS below) with a *mutant*: the kernel's JAX function with
one realistic codegen defect written in by hand (a convert that truncates,
a reduce-window over the wrong window, a dot reading an operand transposed,
a compare with the wrong direction...).  defects.py compiles both with real
XLA:CPU, runs them on the same inputs and writes a case: the correct
kernel's optimized HLO and inputs, the mutant's device outputs, and a label
(`defect` in case.json) naming the instruction of the correct kernel.hlo a
perfect tool should blame, and the mutation kind (the spellings of
include/ulpscope/signature.h and docs/signatures.md).

A label says:
  op           the instruction of the correct kernel.hlo that the defect
               is in (chosen by reading the optimized HLO: its metadata
               op_name and the fused computation's structure)
  mutation     the kind, as `ulpscope signature` spells it
  variant      optional free text (bf16, lhs, size, +2...)
  legit        true when the mutation is something the case's profile
               allows (the output must then be judged legit)
  expressible  whether the signature catalogue can express the defect as a
               single-op mutation of kernel.hlo
  profile      optional: the profile the case is judged under (a built-in
               name, or a file under data/defects/profiles/); the default
               is the capture platform's (xla-cpu)

Several mutants need XLA not to "repair" them: a value rounded to bf16
inside an f32 computation is written with lax.reduce_precision (XLA:CPU
removes an f32 -> bf16 -> f32 convert pair under its default excess
precision, but never a reduce-precision); directed roundings are written
as integer steps of the encoding (XLA:CPU computes bf16 arithmetic in
f32, so a nextafter in bf16 would be upcast).

Keep this module importable without side effects beyond importing jax:
capture.setup() must run first (it sets XLA_FLAGS).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import kernels as K
from kernels import Arg, BF16, F16, F32, F8E4M3, F8E5M2

# ---------------------------------------------------------------------------
# Extra kernels: correct functions the catalogue lacks, for the mutations
# no catalogue kernel can show (a square dot, a square reduce, float -> int
# converts, a plain maximum).  Same shape budget as the catalogue.
# ---------------------------------------------------------------------------


def dense(x, w, b):
    # A dense layer on square weights: x @ w + b.
    return jnp.dot(x, w) + b


def softmax_sq(x):
    # softmax over the last axis of a square tile.
    return jax.nn.softmax(x, axis=-1)


def quantize_int8(x, scale):
    # Symmetric int8 quantisation: round(x / scale), clipped, converted.
    # (Its scale is drawn as a "weight", 1 + 0.1 N(0, 1): x / scale of normal
    # draws then spans a few units, where rounding and truncation differ.)
    q = jnp.round(x / scale)
    return jnp.clip(q, -127, 127).astype(jnp.int8)


def bucketize(x):
    # Histogram bin of x: floor((x + 4) * 8) clipped to [0, 63] (a
    # truncating convert of a non-negative value is a floor).
    return jnp.clip((x + 4.0) * 8.0, 0.0, 63.0).astype(jnp.int32)


def relu(x):
    return jnp.maximum(x, 0.0)


def local_mask(x):
    # Sliding-window attention mask on [16, 16] logits: position i attends
    # to j in (i - 4, i].
    i = jnp.arange(x.shape[0])[:, None]
    j = jnp.arange(x.shape[1])[None, :]
    keep = (j <= i) & (i - j < 4)
    return jnp.where(keep, x, -1e9)


EXTRA_KERNELS = [
    K.Kernel("dense_f32", dense,
             (Arg("x", (32, 32), F32), Arg("w", (32, 32), F32), Arg("b", (32,), F32)),
             "f32", "f32", "y = x @ w + b (square)", "jnp.dot(x, w) + b"),
    K.Kernel("softmax_sq_f32", softmax_sq, (Arg("x", (16, 16), F32),), "f32", "f32",
             "softmax over the last axis of a 16x16 tile", "jax.nn.softmax(x, axis=-1)"),
    K.Kernel("quantize_int8_f32", quantize_int8,
             (Arg("x", (1024,), F32), Arg("scale", (), F32, "weight")), "f32->s8", "f32",
             "q = s8(clip(round(x / scale), -127, 127))",
             "jnp.clip(jnp.round(x / scale), -127, 127).astype(int8)"),
    K.Kernel("bucketize_f32", bucketize, (Arg("x", (1024,), F32),), "f32->s32", "f32",
             "k = s32(clip((x + 4) * 8, 0, 63))",
             "jnp.clip((x + 4) * 8, 0, 63).astype(int32)"),
    K.Kernel("relu_f32", relu, (Arg("x", (1024,), F32),), "f32", "f32",
             "y = max(x, 0)", "jnp.maximum(x, 0)"),
    K.Kernel("local_mask_f32", local_mask, (Arg("x", (16, 16), F32),), "f32", "f32",
             "y = where(j <= i and i - j < 4, x, -1e9)",
             "jnp.where((j <= i) & (i - j < 4), x, -1e9)"),
]
EXTRA_BY_NAME = {k.name: k for k in EXTRA_KERNELS}


def kernel_by_name(name):
    return K.BY_NAME.get(name) or EXTRA_BY_NAME[name]


# ---------------------------------------------------------------------------
# Helpers: roundings XLA will not undo.
# ---------------------------------------------------------------------------

_UINT = {1: jnp.uint8, 2: jnp.uint16, 4: jnp.uint32}
_PRECISION = {BF16: (8, 7), F16: (5, 10)}


def _step(r, up):
    """r moved one code toward +inf (up) or -inf, on its encoding."""
    u = lax.bitcast_convert_type(r, _UINT[jnp.dtype(r.dtype).itemsize])
    neg = jnp.signbit(r)
    one = jnp.ones_like(u)
    up = jnp.asarray(up)
    away = jnp.where(neg, jnp.logical_not(up), up)  # away from zero
    u = jnp.where(away, u + one, u - one)
    return lax.bitcast_convert_type(u, r.dtype)


def round_to(y, dt, mode):
    """f32 values y rounded to the narrower dt toward zero ('tz'), +inf
    ('up') or -inf ('down'): round to nearest, then one code back where
    nearest went the wrong way (exact: y and the rounded value are f32)."""
    r = y.astype(dt)
    b = r.astype(F32)
    if mode == "up":
        return jnp.where(b < y, _step(r, True), r)
    if mode == "down":
        return jnp.where(b > y, _step(r, False), r)
    if mode == "tz":
        return jnp.where(jnp.abs(b) > jnp.abs(y), _step(r, y < 0), r)
    raise ValueError(mode)


def narrow(y, dt):
    """y (f32) rounded to dt but kept in f32: an XLA-proof bf16/f16 rounding."""
    e, m = _PRECISION[dt]
    return lax.reduce_precision(y, exponent_bits=e, mantissa_bits=m)


def tree_sum_narrow(p, dt):
    """Sum over the last axis (a power of two) as a tree of adds, each
    rounded to dt: a reduction whose accumulator is dt."""
    while p.shape[-1] > 1:
        h = p.shape[-1] // 2
        p = narrow(p[..., :h] + p[..., h:], dt)
    return p[..., 0]


def ulps(c, k, dt=np.float32):
    """The constant c moved k codes of dt (k > 0: up)."""
    v = np.asarray(c, dt)
    for _ in range(abs(k)):
        v = np.nextafter(v, np.asarray(np.inf if k > 0 else -np.inf, dt))
    return float(v)


# ---------------------------------------------------------------------------
# The mutants.  Each reproduces its kernel's JAX source (kernels.py) with
# the one change its label describes.
# ---------------------------------------------------------------------------

def softmax_exp_bf16(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    u = jnp.exp((x - m).astype(BF16)).astype(F32)
    return u / jnp.sum(u, axis=-1, keepdims=True)


def softmax_sum_init_one(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    u = jnp.exp(x - m)
    s = lax.reduce(u, np.float32(1.0), lax.add, (1,))[:, None]
    return u / s


def softmax_window_init_one(x):
    # The sum's reduce-window starts each window from 1.
    m = jnp.max(x, axis=-1, keepdims=True)
    u = jnp.exp(x - m)
    part = lax.reduce_window(u, np.float32(1), lax.add, (1, 32), (1, 32), "VALID")
    return u / jnp.sum(part, axis=-1, keepdims=True)


def softmax_window_size(x):
    # The sum's reduce-window covers 16 of each 32 elements (stride kept).
    m = jnp.max(x, axis=-1, keepdims=True)
    u = jnp.exp(x - m)
    part = lax.reduce_window(u, np.float32(0), lax.add, (1, 16), (1, 32), "VALID")
    return u / jnp.sum(part, axis=-1, keepdims=True)


def log_softmax_window_stride(x):
    # The sum of exponentials' reduce-window steps by 31 instead of 32
    # (the same 8 windows, shifted; the last elements are never summed).
    m = jnp.max(x, axis=-1, keepdims=True)
    s = x - m
    part = lax.reduce_window(jnp.exp(s), np.float32(0), lax.add, (1, 32), (1, 31), "VALID")
    return s - jnp.log(jnp.sum(part, axis=-1, keepdims=True))


def softmax_window_acc_bf16(x):
    # The sum's reduce-window accumulates in bf16.
    m = jnp.max(x, axis=-1, keepdims=True)
    u = jnp.exp(x - m)
    p = u.reshape(x.shape[0], -1, 32)
    s = jnp.sum(tree_sum_narrow(p, BF16), axis=-1, keepdims=True)
    return u / s


def softmax_f16_acc_f16(x):
    # The whole sum accumulates in f16 (reduce-window and reduce).
    m = jnp.max(x, axis=-1, keepdims=True)
    u = jnp.exp(x - m)
    s = tree_sum_narrow(u.astype(F32), F16)[:, None]
    return u / s.astype(F16)


def softmax_sq_sum_dim0(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    u = jnp.exp(x - m)
    return u / jnp.sum(u, axis=0)[:, None]


def softmax_sq_max_bcast_permuted(x):
    # The row maximum broadcast along rows instead of columns.
    m = jnp.max(x, axis=-1)
    u = jnp.exp(x - m[None, :])
    return u / jnp.sum(u, axis=-1, keepdims=True)


def _ln_parts(x, gamma, beta):
    x32 = x.astype(F32)
    mean = jnp.mean(x32, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x32 - mean), axis=-1, keepdims=True)
    return x32, mean, var


def layer_norm_f32_swapped_sub(x, gamma, beta):
    x32, mean, var = _ln_parts(x, gamma, beta)
    y = (mean - x32) * lax.rsqrt(var + 1e-5)
    return y * gamma + beta


def layer_norm_f32_gamma_off_by_one(x, gamma, beta):
    x32, mean, var = _ln_parts(x, gamma, beta)
    y = (x32 - mean) * lax.rsqrt(var + 1e-5)
    return y * jnp.roll(gamma, -1) + beta


def layer_norm_bf16_truncate(x, gamma, beta):
    x32, mean, var = _ln_parts(x, gamma, beta)
    y = (x32 - mean) * lax.rsqrt(var + 1e-5)
    y = y * gamma.astype(F32) + beta.astype(F32)
    return round_to(y, BF16, "tz")


def layer_norm_bf16_var_zero(x, gamma, beta):
    # The variance buffer never written (zeros): rsqrt(0 + eps).
    x32, mean, _ = _ln_parts(x, gamma, beta)
    y = (x32 - mean) * lax.rsqrt(jnp.zeros_like(mean) + 1e-5)
    y = y * gamma.astype(F32) + beta.astype(F32)
    return y.astype(BF16)


def rms_norm_bf16_round_down(x, weight):
    x32 = x.astype(F32)
    ms = jnp.mean(x32 * x32, axis=-1, keepdims=True)
    y = (x32 * lax.rsqrt(ms + 1e-6)).astype(BF16)
    return round_to(y.astype(F32) * weight.astype(F32), BF16, "down")


def rms_norm_bf16_no_round_trip(x, weight):
    # The bf16 rounding of the normalised value elided: computed in f32.
    x32 = x.astype(F32)
    ms = jnp.mean(x32 * x32, axis=-1, keepdims=True)
    y = x32 * lax.rsqrt(ms + 1e-6)
    return (y * weight.astype(F32)).astype(BF16)


def rms_norm_f32_square_bf16(x, weight):
    # The square feeding the sum computed (rounded) in bf16.
    x32 = x.astype(F32)
    ms = jnp.mean(narrow(x32 * x32, BF16), axis=-1, keepdims=True)
    return (x32 * lax.rsqrt(ms + 1e-6)) * weight


def gelu_erf_f16_round_up(x):
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    a = x * np.array(0.5, x.dtype)
    e = lax.erfc(-x * sqrt_half)
    return round_to(a.astype(F32) * e.astype(F32), F16, "up")


def gelu_erf_f16_ftz(x):
    y = jax.nn.gelu(x, approximate=False)
    tiny = np.array(np.finfo(np.float16).tiny, np.float16)
    return jnp.where(jnp.abs(y) < tiny, jnp.zeros_like(y) * jnp.sign(y), y)


def gelu_tanh_f32_constant_bf16(x):
    c = float(np.float32(math.sqrt(2 / math.pi)).astype(jnp.bfloat16))
    cdf = 0.5 * (1.0 + jnp.tanh(np.float32(c) * (x + 0.044715 * (x * x * x))))
    return x * cdf


def fp8_e5m2_saturate(g, scale):
    fmax = float(jnp.finfo(F8E5M2).max)
    return jnp.clip(g * (1.0 / scale), -fmax, fmax).astype(F8E5M2)


def fp8_e5m2_overflow_nan(g, scale):
    y = g * (1.0 / scale)
    q = y.astype(F8E5M2)
    return jnp.where(jnp.isinf(q), jnp.array(jnp.nan, F8E5M2), q)


def fp8_quantize_clamp_drops_nan(x, scale):
    fmax = float(jnp.finfo(F8E4M3).max)
    y = x.astype(F32) * (1.0 / scale)
    y = jnp.where(jnp.isnan(y), -fmax, y)
    return jnp.clip(y, -fmax, fmax).astype(F8E4M3)


def fp8_quantize_clamp_swapped(x, scale):
    fmax = float(jnp.finfo(F8E4M3).max)
    y = x.astype(F32) * (1.0 / scale)
    return lax.clamp(np.float32(fmax), y, np.float32(-fmax)).astype(F8E4M3)


def adam_no_bias_correction_v(p, g, m, v, step):
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3
    t = step.astype(F32)
    m_new = b1 * m + (1.0 - b1) * g
    v_new = b2 * v + (1.0 - b2) * (g * g)
    m_hat = m_new / (1.0 - b1 ** t)
    v_hat = v_new  # the division by (1 - b2^t) dropped
    p_new = p - lr * m_hat / (jnp.sqrt(v_hat) + eps)
    return p_new, m_new, v_new


def adam_b1_plus_2ulps(p, g, m, v, step):
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3
    b1_bad = np.float32(ulps(b1, 2))
    t = step.astype(F32)
    m_new = b1_bad * m + (1.0 - b1) * g
    v_new = b2 * v + (1.0 - b2) * (g * g)
    m_hat = m_new / (1.0 - b1 ** t)
    v_hat = v_new / (1.0 - b2 ** t)
    p_new = p - lr * m_hat / (jnp.sqrt(v_hat) + eps)
    return p_new, m_new, v_new


def adam_b2_minus_1ulp(p, g, m, v, step):
    b1, b2, eps, lr = 0.9, 0.999, 1e-8, 1e-3
    b2_bad = np.float32(ulps(b2, -1))
    t = step.astype(F32)
    m_new = b1 * m + (1.0 - b1) * g
    v_new = b2_bad * v + (1.0 - b2) * (g * g)
    m_hat = m_new / (1.0 - b1 ** t)
    v_hat = v_new / (1.0 - b2 ** t)
    p_new = p - lr * m_hat / (jnp.sqrt(v_hat) + eps)
    return p_new, m_new, v_new


def swiglu_f32_stale_rows(gate, up):
    y = jax.nn.silu(gate) * up
    n = y.shape[0]
    return jnp.concatenate([y[: n - n // 2], y[: n // 2]], axis=0)


def bias_residual_f32_h_transposed(h, bias, residual):
    r, c = h.shape
    return residual + (h.reshape(c, r).T + bias)


def bias_residual_bf16_tail_unwritten(h, bias, residual):
    y = residual + (h + bias)
    n = y.shape[0]
    return y.at[n - n // 4:].set(0)


def attention_select_swapped(q, k, mask):
    d = q.shape[-1]
    logits = jnp.einsum("hqd,hkd->hqk", q, k) * (1.0 / math.sqrt(d))
    big_neg = jnp.finfo(q.dtype).min
    return jnp.where(mask[None, :, :], big_neg, logits)


def attention_output_transposed(q, k, mask):
    d = q.shape[-1]
    logits = jnp.einsum("hqd,hkd->hkq", q, k) * (1.0 / math.sqrt(d))
    big_neg = jnp.finfo(q.dtype).min
    return jnp.where(mask[None, :, :], logits, big_neg)


def attention_mask_bcast_permuted(q, k, mask):
    d = q.shape[-1]
    logits = jnp.einsum("hqd,hkd->hqk", q, k) * (1.0 / math.sqrt(d))
    big_neg = jnp.finfo(q.dtype).min
    return jnp.where(mask.T[None, :, :], logits, big_neg)


def attention_causal_gt(q, k):
    d = q.shape[-1]
    s = q.shape[1]
    logits = jnp.einsum("hqd,hkd->hqk", q, k, preferred_element_type=F32)
    logits = logits * (1.0 / math.sqrt(d))
    causal = jnp.arange(s)[:, None] > jnp.arange(s)[None, :]
    logits = jnp.where(causal[None], logits, -1e9)
    return logits.astype(q.dtype)


def local_mask_window_le(x):
    # The window's bound compared with <= instead of <: five positions.
    i = jnp.arange(x.shape[0])[:, None]
    j = jnp.arange(x.shape[1])[None, :]
    keep = (j <= i) & (i - j <= 4)
    return jnp.where(keep, x, -1e9)


def dense_lhs_transposed(x, w, b):
    return jnp.dot(x.T, w) + b


def dense_rhs_transposed(x, w, b):
    return jnp.dot(x, w.T) + b


def dense_output_transposed(x, w, b):
    return jnp.dot(x, w).T + b


def quantize_int8_no_round(x, scale):
    return jnp.clip(x / scale, -127, 127).astype(jnp.int8)


def bucketize_rounds(x):
    return jnp.round(jnp.clip((x + 4.0) * 8.0, 0.0, 63.0)).astype(jnp.int32)


def relu_drops_nan(x):
    return jnp.where(jnp.isnan(x), 0.0, jnp.maximum(x, 0.0))


# ---------------------------------------------------------------------------
# The corpus.
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Mutant:
    case: str            # case directory name under data/defects/<kernel>/
    kernel: str          # kernels.py catalogue name or an EXTRA_KERNELS name
    fn: Callable         # the mutant
    mutation: str        # the kind (docs/signatures.md spelling)
    op: str              # instruction of the correct kernel.hlo to blame
    variant: Optional[str] = None
    legit: bool = False
    expressible: bool = True
    distribution: str = "normal"
    seed: int = 0
    nan_at: tuple = ()   # flat positions of input 0 set to NaN
    profile: Optional[str] = None  # None: the platform's (xla-cpu)
    # (op, mutation) pairs that give the same bits by construction.
    equivalent: tuple = ()
    note: str = ""


# data/defects/profiles/: xla-cpu without the freedoms that make the
# skip-rounding, nan-dropping and convert-saturate mutants legitimate.
PINNED = "profiles/xla-cpu-pinned.profile"
_NAN = (0, 37, 100, 511, 512, 700, 1023)

MUTANTS = [
    # --- the catalogue's kinds
    Mutant("narrow-exp-bf16", "softmax_f32", softmax_exp_bf16, "narrow", "exp.0",
           variant="bf16", note="exp(x - max) computed in bf16"),
    Mutant("round-toward-zero", "layer_norm_bf16", layer_norm_bf16_truncate,
           "round-toward-zero", "convert_element_type.0",
           note="the final f32 -> bf16 convert truncates"),
    Mutant("round-up", "gelu_erf_f16", gelu_erf_f16_round_up, "round-up", "mul.0",
           note="the final f16 multiply rounds toward +inf"),
    Mutant("round-down", "rms_norm_bf16", rms_norm_bf16_round_down, "round-down",
           "convert.15", note="the bf16 multiply by the weight rounds toward -inf "
           "(XLA computes it in f32 and rounds with convert.15)"),
    Mutant("skip-rounding", "rms_norm_bf16", rms_norm_bf16_no_round_trip, "skip-rounding",
           "convert.17", profile=PINNED,
           note="the f32 -> bf16 -> f32 round trip before the weight elided; judged "
           "under xla-cpu-pinned (no excess precision)"),
    Mutant("skip-rounding-legit", "rms_norm_bf16", rms_norm_bf16_no_round_trip,
           "skip-rounding", "convert.17", legit=True,
           note="the same elided round trip: legitimate under xla-cpu "
           "(excess_precision = yes)"),
    Mutant("flush-denormals", "gelu_erf_f16", gelu_erf_f16_ftz, "flush-denormals", "mul.0",
           distribution="denormal", note="subnormal f16 results flushed to zero "
           "(xla-cpu keeps f16 subnormals)"),
    Mutant("convert-saturate", "fp8_quantize_e5m2_f32", fp8_e5m2_saturate,
           "convert-saturate", "convert_element_type.0", distribution="large",
           profile=PINNED, note="the e5m2 convert saturates instead of giving Inf; judged "
           "under a profile whose fp8 converts do not saturate"),
    Mutant("convert-saturate-legit", "fp8_quantize_e5m2_f32", fp8_e5m2_saturate,
           "convert-saturate", "convert_element_type.0", distribution="large", legit=True,
           note="the same saturating convert: legitimate under xla-cpu "
           "(fp8_overflow = either)"),
    Mutant("convert-nan", "fp8_quantize_e5m2_f32", fp8_e5m2_overflow_nan, "convert-nan",
           "convert_element_type.0", distribution="large",
           note="the e5m2 convert gives NaN instead of Inf on overflow"),
    Mutant("nan-dropping", "fp8_quantize_f32", fp8_quantize_clamp_drops_nan,
           "nan-dropping", "clamp.1", nan_at=_NAN, profile=PINNED,
           note="the clamp gives its lower bound for NaN; judged under a profile "
           "whose min/max propagate NaN"),
    Mutant("nan-dropping-legit", "fp8_quantize_f32", fp8_quantize_clamp_drops_nan,
           "nan-dropping", "clamp.1", nan_at=_NAN, legit=True,
           note="the clamp gives its lower bound for NaN: legitimate under xla-cpu "
           "(minmax_nan = either)"),
    Mutant("nan-dropping", "relu_f32", relu_drops_nan, "nan-dropping", "max.0",
           nan_at=_NAN, profile=PINNED,
           note="max(NaN, 0) gives 0; judged under xla-cpu-pinned (min/max propagate NaN)"),
    Mutant("nan-dropping-legit", "relu_f32", relu_drops_nan, "nan-dropping", "max.0",
           nan_at=_NAN, legit=True,
           note="max(NaN, 0) gives 0: legitimate under xla-cpu (minmax_nan = either, "
           "xla_cpu_enable_fast_min_max)"),
    Mutant("swap-operands", "layer_norm_f32", layer_norm_f32_swapped_sub, "swap-operands",
           "sub.0", note="mean - x instead of x - mean in the normalisation"),
    Mutant("swap-select", "attention_logits_f32", attention_select_swapped,
           "swap-operands", "select_n.2", note="the mask's select branches swapped"),
    Mutant("drop", "adam_f32", adam_no_bias_correction_v, "drop", "multiply.2",
           variant="0", note="v's bias correction (XLA: a multiply by 1/(1-b2^t)) dropped"),
    Mutant("wrong-init", "softmax_f32", softmax_window_init_one, "wrong-init",
           "reduce-window.3", note="each window of the sum's reduce-window starts from 1"),
    Mutant("wrong-init-reduce", "softmax_f32", softmax_sum_init_one, "wrong-init",
           "reduce-window.3", expressible=False,
           note="the sum written as a reduce from 1: XLA:CPU splits it into a "
           "reduce-window and a reduce and starts both (every window) from 1, so "
           "the device sums 9 + the sum: two ops of kernel.hlo"),
    Mutant("wrong-constant", "gelu_tanh_f32", gelu_tanh_f32_constant_bf16,
           "wrong-constant", "constant.2", variant="0",
           note="sqrt(2/pi) rounded to bf16"),
    Mutant("off-by-one", "layer_norm_f32", layer_norm_f32_gamma_off_by_one, "off-by-one",
           "mul.1", note="gamma read one element off (rotated)"),
    Mutant("transposed", "bias_residual_f32", bias_residual_f32_h_transposed, "transposed",
           "add.1", variant="0", note="h's [8,128] data read as [128,8] transposed"),
    Mutant("wrong-reduce-dimension", "softmax_sq_f32", softmax_sq_sum_dim0,
           "wrong-reduce-dimension", "reduce_sum.0",
           note="the sum of exponentials over the rows instead of the columns"),
    Mutant("zero", "layer_norm_bf16", layer_norm_bf16_var_zero, "zero",
           "wrapped_reduce-window.1", note="the variance's partial sums never written"),
    Mutant("stale", "swiglu_f32", swiglu_f32_stale_rows, "stale", "multiply_multiply_fusion",
           variant="0", note="rows 4..7 hold rows 0..3"),
    Mutant("output-zero", "bias_residual_bf16", bias_residual_bf16_tail_unwritten,
           "output-zero", "add_convert_fusion", note="the last quarter of the rows left zero"),
    # --- the kinds of issue 13, item 2
    Mutant("dot-transpose-output", "attention_logits_f32", attention_output_transposed,
           "dot-transpose-output", "dot_general.0",
           equivalent=(("dot_general.0", "swap-operands"),),
           note="q k^T written transposed (the same bits as k q^T: the dot's operands "
           "swapped)"),
    Mutant("dot-transpose-output", "dense_f32", dense_output_transposed,
           "dot-transpose-output", "dot_general.0", note="x @ w written transposed"),
    Mutant("dot-transpose-lhs", "dense_f32", dense_lhs_transposed, "dot-transpose-operand",
           "dot_general.0", variant="lhs", note="x read transposed"),
    Mutant("dot-transpose-rhs", "dense_f32", dense_rhs_transposed, "dot-transpose-operand",
           "dot_general.0", variant="rhs", note="w read transposed"),
    Mutant("narrow-accumulator-square", "rms_norm_f32", rms_norm_f32_square_bf16,
           "narrow-accumulator", "mul.4", variant="bf16",
           note="the square feeding the mean computed in bf16"),
    Mutant("narrow-accumulator-window", "softmax_f32", softmax_window_acc_bf16,
           "narrow-accumulator", "reduce-window.3", variant="bf16",
           note="the sum's reduce-window accumulates in bf16"),
    Mutant("narrow-accumulator-sum", "softmax_f16", softmax_f16_acc_f16,
           "narrow-accumulator", "reduce-window.3", variant="f16", expressible=False,
           seed=4, note="the whole sum (reduce-window and reduce) accumulates in f16: two ops; "
           "seed 4, because on seed 0's draw every element stays inside the xla-cpu "
           "envelope (the sum is rounded to f16 right after, so accumulating it in f16 "
           "moves it by about what a legitimate rounding does) and no tool can call it "
           "a defect"),
    Mutant("wrong-window-size", "softmax_f32", softmax_window_size, "wrong-window",
           "reduce-window.3", variant="size", note="sum windows of 16 at stride 32"),
    Mutant("wrong-window-stride", "log_softmax_f32", log_softmax_window_stride,
           "wrong-window", "reduce-window.3", variant="stride",
           note="sum windows of 32 at stride 31"),
    Mutant("flip-compare", "attention_logits_causal_bf16", attention_causal_gt,
           "flip-compare", "ge.0", variant="GE->GT",
           equivalent=(("iota.8", "off-by-one"),),
           note="causal mask i > j instead of i >= j (the same bits as j read one "
           "higher: i >= j + 1)"),
    Mutant("flip-compare-lt", "local_mask_f32", local_mask_window_le, "flip-compare",
           "lt.0", variant="LT->LE", equivalent=(("iota.12", "off-by-one"),),
           note="the window bound i - j < 4 compared with <= (the same bits as the "
           "j of i - j read one higher: i - (j + 1) < 4)"),
    Mutant("swap-clamp-bounds", "fp8_quantize_f32", fp8_quantize_clamp_swapped,
           "swap-clamp-bounds", "clamp.1", note="clamp(448, y, -448)"),
    Mutant("convert-int-truncate", "quantize_int8_f32", quantize_int8_no_round,
           "convert-int-truncate", "convert_element_type.4",
           equivalent=(("round.2", "drop"), ("round.2", "convert-int-truncate")),
           note="round(x / scale) dropped: the s8 convert truncates"),
    Mutant("convert-int-round", "bucketize_f32", bucketize_rounds, "convert-int-round",
           "convert_element_type.0", note="the s32 convert rounds to nearest"),
    Mutant("constant-ulps", "adam_f32", adam_b1_plus_2ulps, "constant-ulps", "constant.19",
           variant="+2", note="b1 = 0.9 two ulps high in m' = b1 m + (1 - b1) g"),
    Mutant("constant-ulps-minus-1", "adam_f32", adam_b2_minus_1ulp, "constant-ulps",
           "constant.6", variant="-1",
           note="b2 = 0.999 one ulp low in v' = b2 v + (1 - b2) g^2"),
    Mutant("broadcast-permute", "attention_logits_f32", attention_mask_bcast_permuted,
           "broadcast-permute", "broadcast_in_dim.10",
           note="the mask broadcast with dimensions {2,1}: mask transposed"),
    Mutant("broadcast-permute", "softmax_sq_f32", softmax_sq_max_bcast_permuted,
           "broadcast-permute", "sub.1", expressible=False,
           note="the row maximum broadcast along dimension 1: a rank-1 operand "
           "moved to the other dimension, not a permutation of dimensions={0}"),
]
