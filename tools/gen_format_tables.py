#!/usr/bin/env python3
"""Generates the reference tables of ulpscope's narrow floating formats.

Every value written here comes from outside ulpscope: numpy (float16) and
ml_dtypes (every other format) decode each code and encode each sample, so
the C tests that read these tables check ulpscope against an independent
implementation (docs: data/formats/README.md).

Outputs, all rewritten on every run (the script is deterministic: fixed
seeds, sorted samples, no timestamps):

  data/formats/<name>.decode.bin   every code's value, float64 LE, code order
  data/formats/<name>.encode.bin   (uint32 f32 bits, uint32 code) LE records
  data/formats/manifest.tsv        record counts of the two tables per format
  data/formats/finfo.tsv           ml_dtypes.finfo / numpy.finfo figures
  src/dtype/selfcheck_decode.inc   rows {USC_T, 0xCODEu, value},
  src/dtype/selfcheck_encode.inc   rows {USC_T, 0xF32BITSu, 0xCODEu},

Usage: python3 tools/gen_format_tables.py [--root REPO_ROOT]
Requirements: tools/requirements.txt (ml_dtypes 0.6.0 and numpy).
"""

import argparse
from fractions import Fraction
import math
import os
import sys

import ml_dtypes
import numpy as np

ML_DTYPES_VERSION = "0.6.0"

# (ulpscope HLO name, numpy/ml_dtypes type name, bits of one encoding)
FORMATS = [
    ("f16", "float16", 16),
    ("bf16", "bfloat16", 16),
    ("f8e5m2", "float8_e5m2", 8),
    ("f8e4m3", "float8_e4m3", 8),
    ("f8e4m3fn", "float8_e4m3fn", 8),
    ("f8e4m3fnuz", "float8_e4m3fnuz", 8),
    ("f8e4m3b11fnuz", "float8_e4m3b11fnuz", 8),
    ("f8e5m2fnuz", "float8_e5m2fnuz", 8),
    ("f8e3m4", "float8_e3m4", 8),
    ("f8e8m0fnu", "float8_e8m0fnu", 8),
    ("f6e2m3fn", "float6_e2m3fn", 6),
    ("f6e3m2fn", "float6_e3m2fn", 6),
    ("f4e2m1fn", "float4_e2m1fn", 4),
]

# Wider formats that only get a finfo row (numpy's own figures).
FINFO_EXTRA = [("f32", "float32", 32), ("f64", "float64", 64)]

SEED = 20240607
RANDOM_WIDE = 2000    # uniformly random f32 bit patterns per format
RANDOM_RANGE = 2000   # random f32 within (and just around) the format's range
SELFCHECK_ENCODE_ROWS = 150
SELFCHECK_DECODE_ROWS_WIDE = 150  # for 16-bit formats; narrower ones: all codes

# Priority of the sample classes: a sample that falls in several keeps the
# first.  The self-check rows are picked by class.
CLASSES = ["special", "overflow", "tiny", "midpoint", "midpoint_nb",
           "value", "value_nb", "random"]
PRIO = {c: i for i, c in enumerate(CLASSES)}

CANONICAL_NAN64 = 0x7FF8000000000000


def np_type(mlname):
    if mlname in ("float16", "float32", "float64"):
        return getattr(np, mlname)
    return getattr(ml_dtypes, mlname)


def finfo(mlname):
    if mlname in ("float16", "float32", "float64"):
        return np.finfo(getattr(np, mlname))
    return ml_dtypes.finfo(getattr(ml_dtypes, mlname))


def code_dtype(bits):
    return np.uint16 if bits == 16 else np.uint8


def decode_all(mlname, bits):
    """Value of every code (float64), NaNs made canonical."""
    codes = np.arange(1 << bits, dtype=code_dtype(bits))
    with np.errstate(all="ignore"):
        vals = codes.view(np_type(mlname)).astype(np.float64)
    raw = vals.view(np.uint64).copy()
    raw[np.isnan(vals)] = CANONICAL_NAN64
    return raw.view(np.float64)


def encode_f32(mlname, bits, f32bits):
    """Codes ml_dtypes (numpy for float16) gives to float32 inputs."""
    x = np.asarray(f32bits, dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        y = x.astype(np_type(mlname))
    codes = y.view(code_dtype(bits)).astype(np.uint32)
    mask = (1 << bits) - 1
    if np.any(codes & ~np.uint32(mask)):
        sys.exit(f"{mlname}: a code has bits above the width {bits}")
    return codes


def e8m0_divergences(samples, codes):
    """Corrects ml_dtypes' f8e8m0fnu codes where they are not the nearest.

    ml_dtypes 0.6.0 sends every value strictly between 2^-127 and
    1.5 * 2^-127 to 2^-126, although 2^-127 is nearer (it rounds the
    mantissa as if that binade continued below the format's range).  The
    nearest code is decided here with exact rationals; the rows where the
    two differ are returned so they can be recorded, and the tables carry
    the nearest code.  Any other disagreement stops the generator.
    """
    lo = Fraction(2) ** -127
    hi = Fraction(3, 2) * lo
    fixed = codes.copy()
    diverged = []
    for i, b in enumerate(samples):
        x = float(np.uint32(b).view(np.float32))
        if not (x > 0 and np.isfinite(x)):
            continue
        v = Fraction(x)
        if lo < v < hi:
            if codes[i] != 0x01:
                sys.exit(f"f8e8m0fnu: unexpected code {codes[i]:#x} for "
                         f"{x.hex()}")
            fixed[i] = 0x00
            diverged.append((int(b), int(codes[i]), 0x00))
    return fixed, diverged


def f32_bits(x):
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def f32_exact(v):
    """True if the double v is a finite float32 value."""
    if not math.isfinite(v):
        return False
    with np.errstate(all="ignore"):
        f = np.float32(v)
    return bool(np.isfinite(f)) and float(f) == v


def f32_neighbours(v):
    f = np.float32(v)
    with np.errstate(all="ignore"):
        up = np.nextafter(f, np.float32(np.inf), dtype=np.float32)
        down = np.nextafter(f, np.float32(-np.inf), dtype=np.float32)
    return [float(down), float(up)]


class Sample:
    """f32 inputs keyed by bit pattern, each with its class."""

    def __init__(self):
        self.cls = {}

    def add_bits(self, b, c):
        b &= 0xFFFFFFFF
        old = self.cls.get(b)
        if old is None or PRIO[c] < PRIO[old]:
            self.cls[b] = c

    def add(self, v, c, both_signs=True):
        """Adds the double v, which must be float32-exact (or +-inf)."""
        if not (f32_exact(v) or math.isinf(v)):
            raise AssertionError(f"{v!r} is not a float32 value")
        b = f32_bits(v)
        self.add_bits(b, c)
        if both_signs:
            self.add_bits(b ^ 0x80000000, c)

    def add_with_neighbours(self, v, c, cnb):
        if not f32_exact(v):
            return
        self.add(v, c)
        for n in f32_neighbours(v):
            if math.isfinite(n):
                self.add(n, cnb)


def build_sample(mlname, bits, values, fi, rng):
    s = Sample()
    # The format's non-negative finite values, in order.
    pos = sorted({float(v) for v in values
                  if math.isfinite(v) and v >= 0})
    vmax = pos[-1]
    # The first value past the top: the next step of the top binade's grid
    # (the format's grid continued; for f8e8m0fnu the next power of two).
    beyond = vmax + math.ldexp(1.0, math.frexp(vmax)[1] - 1 - int(fi.nmant))
    for v in pos:
        if v == 0.0:
            continue
        s.add_with_neighbours(v, "value", "value_nb")

    # Midpoints between neighbours, and the one between max and beyond.
    grid = pos + [beyond]
    for a, b in zip(grid, grid[1:]):
        m = (a + b) / 2.0  # exact in binary64: both are short
        if not math.isinf(m) and not f32_exact(m):
            raise AssertionError(f"{mlname}: midpoint {m.hex()} not in f32")
        s.add_with_neighbours(m, "midpoint", "midpoint_nb")

    # Overflow: max, the midpoint above, the next grid step, far beyond.
    f32max = float(np.finfo(np.float32).max)
    for v in (vmax, (vmax + beyond) / 2.0, beyond, 2.0 * vmax, 4.0 * vmax,
              2.0 * beyond, f32max, 2.0 ** 127):
        if f32_exact(v):
            s.add_with_neighbours(v, "overflow", "overflow")

    # Tiny values: the smallest codes, half of them, and below.
    smallest = pos[1] if pos[0] == 0.0 else pos[0]
    normal = float(fi.smallest_normal)
    for v in (smallest, smallest / 2.0, smallest / 4.0, smallest * 0.75,
              smallest * 1.5, normal, normal / 2.0, (normal + pos[pos.index(
                  normal) - 1]) / 2.0 if pos.index(normal) > 0 else normal,
              2.0 ** -149, 2.0 ** -126, 2.0 ** -127, 2.0 ** -128):
        if f32_exact(v):
            s.add_with_neighbours(v, "tiny", "tiny")

    # Specials: zeros, infinities, quiet and signalling NaNs, both signs.
    for b in (0x00000000, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF,
              0x7FA00000):
        s.add_bits(b, "special")
        s.add_bits(b | 0x80000000, "special")

    # Random f32: uniform bit patterns, then the format's range and a bit
    # beyond it on both sides.
    for b in rng.integers(0, 1 << 32, size=RANDOM_WIDE, dtype=np.uint64):
        s.add_bits(int(b), "random")
    lo = max(math.frexp(smallest)[1] - 4, -149)
    hi = min(math.frexp(vmax)[1] + 3, 127)
    exps = rng.integers(lo, hi + 1, size=RANDOM_RANGE)
    mants = rng.integers(0, 1 << 23, size=RANDOM_RANGE)
    signs = rng.integers(0, 2, size=RANDOM_RANGE)
    for e, m, sg in zip(exps, mants, signs):
        v = math.ldexp(1.0 + int(m) / float(1 << 23), int(e))
        if not f32_exact(v):  # f32 subnormal range: keep what fits
            v = float(np.float32(v))
        b = f32_bits(v) | (int(sg) << 31)
        s.add_bits(b, "random")
    return s


def hexfloat(v):
    """C99 hex-float spelling of a double, shortest mantissa digits."""
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INFINITY" if v > 0 else "-INFINITY"
    h = v.hex()  # e.g. '-0x1.c000000000000p+8'
    mant, exp = h.split("p")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}p{exp}"


def write_if_changed(path, data):
    """Writes bytes, leaving an identical file untouched (idempotence)."""
    try:
        with open(path, "rb") as f:
            if f.read() == data:
                return
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def select_decode_rows(bits, decoded, fi, rng):
    n = 1 << bits
    if n <= 256:
        return list(range(n))
    # 16-bit: zeros and the smallest codes, the first normal, the top, a
    # few NaNs, the infinities, the codes around 1, then random codes.
    sign = 1 << (bits - 1)
    pick = set()
    nans = [c for c in range(n) if math.isnan(decoded[c])]
    pick.update(nans[:2] + nans[-2:])
    pick.update(c for c in range(n) if math.isinf(decoded[c]))
    finite = [c for c in range(sign) if math.isfinite(decoded[c])]
    top = max(finite, key=lambda c: decoded[c])
    normal = next(c for c in finite
                  if decoded[c] == float(fi.smallest_normal))
    one = next(c for c in finite if decoded[c] == 1.0)
    for c in [0, 1, 2, 3, top, top - 1, normal - 1, normal, normal + 1] + \
            list(range(one - 3, one + 4)):
        pick.add(c)
        pick.add(c | sign)
    rest = sorted(set(range(n)) - pick)
    need = SELFCHECK_DECODE_ROWS_WIDE - len(pick)
    if need > 0:
        pick.update(int(c) for c in rng.choice(rest, size=need,
                                               replace=False))
    return sorted(pick)


def select_encode_rows(samples, codes, classes, rng):
    """About SELFCHECK_ENCODE_ROWS (input, code) pairs, boundaries first."""
    by = {c: [] for c in CLASSES}
    for b, code in zip(samples, codes):
        by[classes[b]].append((b, code))
    rows = []
    quota = [("special", None), ("overflow", 40), ("tiny", 36),
             ("midpoint", 30), ("midpoint_nb", 12), ("value", 8),
             ("value_nb", 8), ("random", None)]
    for c, q in quota:
        pool = by[c]
        left = SELFCHECK_ENCODE_ROWS - len(rows)
        if left <= 0:
            break
        if q is None or c == "random":
            q = left if c == "random" else len(pool)
        q = min(q, len(pool), left)
        if q == len(pool):
            rows.extend(pool)
        else:
            idx = sorted(rng.choice(len(pool), size=q, replace=False))
            rows.extend(pool[i] for i in idx)
    return sorted(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="repository root")
    args = ap.parse_args()
    if ml_dtypes.__version__ != ML_DTYPES_VERSION:
        sys.exit(f"need ml_dtypes {ML_DTYPES_VERSION}, have "
                 f"{ml_dtypes.__version__} (tools/requirements.txt)")

    outdir = os.path.join(args.root, "data", "formats")
    incdir = os.path.join(args.root, "src", "dtype")
    os.makedirs(outdir, exist_ok=True)

    manifest = ["name\tml_dtypes\tbits\tdecode_records\tencode_records\n"]
    finfo_rows = ["name\tml_dtypes\tbits\tnexp\tnmant\tmax\tsmallest_normal"
                  "\tsmallest_subnormal\teps\n"]
    dec_inc = []
    enc_inc = []
    header = ("/*\n * Generated by tools/gen_format_tables.py; do not edit.\n"
              f" * Source: ml_dtypes {ML_DTYPES_VERSION}, numpy "
              f"{np.__version__} (float16).\n")
    for name, mlname, bits in FORMATS:
        # One generator per format, so one format's sample does not depend
        # on another's.
        rng = np.random.default_rng([SEED, bits, sum(map(ord, mlname))])
        decoded = decode_all(mlname, bits)
        write_if_changed(os.path.join(outdir, f"{name}.decode.bin"),
                         decoded.astype("<f8").tobytes())

        fi = finfo(mlname)
        s = build_sample(mlname, bits, decoded, fi, rng)
        samples = np.array(sorted(s.cls), dtype=np.uint32)
        codes = encode_f32(mlname, bits, samples)
        if name == "f8e8m0fnu":
            codes, diverged = e8m0_divergences(samples, codes)
            write_if_changed(
                os.path.join(outdir, "f8e8m0fnu.divergent.tsv"),
                ("# f32 inputs where ml_dtypes " + ML_DTYPES_VERSION +
                 " is not the nearest f8e8m0fnu code; the tables carry "
                 "the nearest\ninput_f32_bits\tml_dtypes_code\t"
                 "nearest_code\n" + "".join(
                     f"0x{b:08x}\t0x{m:02x}\t0x{n:02x}\n"
                     for b, m, n in diverged)).encode())
        rec = np.empty((len(samples), 2), dtype="<u4")
        rec[:, 0] = samples
        rec[:, 1] = codes
        write_if_changed(os.path.join(outdir, f"{name}.encode.bin"),
                         rec.tobytes())
        manifest.append(f"{name}\t{mlname}\t{bits}\t{1 << bits}\t"
                        f"{len(samples)}\n")

        enum = "USC_" + name.upper()
        width = (bits + 3) // 4
        for c in select_decode_rows(bits, decoded, fi, rng):
            dec_inc.append(f"\t{{{enum}, 0x{c:0{width}x}u, "
                           f"{hexfloat(float(decoded[c]))}}},\n")
        for b, code in select_encode_rows([int(x) for x in samples],
                                          [int(x) for x in codes], s.cls,
                                          rng):
            enc_inc.append(f"\t{{{enum}, 0x{b:08x}u, 0x{code:0{width}x}u}},"
                           "\n")

    for name, mlname, bits in FORMATS + FINFO_EXTRA:
        fi = finfo(mlname)
        figs = [float(fi.max), float(fi.smallest_normal),
                float(fi.smallest_subnormal), float(fi.eps)]
        finfo_rows.append(f"{name}\t{mlname}\t{fi.bits}\t{fi.nexp}\t"
                          f"{fi.nmant}\t" + "\t".join(x.hex() for x in figs)
                          + "\n")

    write_if_changed(os.path.join(outdir, "manifest.tsv"),
                     "".join(manifest).encode())
    write_if_changed(os.path.join(outdir, "finfo.tsv"),
                     "".join(finfo_rows).encode())
    write_if_changed(os.path.join(incdir, "selfcheck_decode.inc"), (
        header + " * Rows {type, code, value}: the value of a code.  NaN\n"
        " * rows say only that the code is a NaN.\n */\n"
        + "".join(dec_inc)).encode())
    write_if_changed(os.path.join(incdir, "selfcheck_encode.inc"), (
        header + " * Rows {type, float32 input bits, code}: the code that\n"
        " * the default conversion (nearest-even, the format's own overflow\n"
        " * policy) gives the float32.  Where the code is a NaN, any NaN\n"
        " * of the format matches.\n */\n" + "".join(enc_inc)).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
