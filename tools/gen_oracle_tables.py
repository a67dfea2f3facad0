#!/usr/bin/env python3
"""Reference tables for the certified oracle's containment tests.

For each elementwise float op the oracle supports, draws sample operands
(binary64 values: random over the whole exponent range, specials, values
near each op's discontinuities and domain edges) and writes the op's exact
value at those operands, computed by mpmath at 200 significant digits and
then rounded to a 128-bit binary number, into data/oracle/<op>.txt:

    # comment lines
    <x> [<y>] <value>

x and y are binary64 values as Python's float.hex() writes them ("inf",
"-inf", "nan" for the specials); value is the exact result rounded to 128
bits as a hexadecimal float with an integer mantissa ("-0x1f3ap-140"),
or one of "nan", "inf", "-inf", "0", "-0" for IEEE specials and exact
zeros; "huge" / "-huge" for a finite value of magnitude past 2^(2^40)
and "tiny" / "-tiny" for a non-zero one below 2^-(2^40) (exp(1e300)).  Special values follow IEEE 754 / C99 Annex F and XLA (NaN
propagates through maximum and minimum; pow(NaN, 0) = pow(1, NaN) = 1).

The tests (tests/oracle/test_oracle_tables.c) read whatever count a file
holds.  The oracle's enclosures at precision P < 128 bits must meet
[value - ulp128, value + ulp128] (mpmath's rounding is faithful).

    python3 tools/gen_oracle_tables.py                # 2000 per op (committed)
    python3 tools/gen_oracle_tables.py --count 100000 --out /tmp/big
"""
import argparse
import fractions
import math
import os
import random
import sys

import mpmath
from mpmath import mp, mpf

mp.dps = 200

UNARY = [
    "negate", "abs", "sign", "exponential", "exponential-minus-one", "log",
    "log-plus-one", "logistic", "tanh", "erf", "sqrt", "rsqrt", "cbrt",
    "sine", "cosine", "tan", "floor", "ceil", "round-nearest-even",
    "round-nearest-afz",
]
BINARY = [
    "add", "subtract", "multiply", "divide", "remainder", "power",
    "maximum", "minimum", "atan2",
]

NAN = float("nan")
INF = float("inf")


def rand_double(rng, lo_exp=-1074, hi_exp=1023):
    """A random binary64 of random sign, log-uniform in magnitude."""
    e = rng.randint(lo_exp, hi_exp)
    m = 1.0 + rng.random()
    x = math.ldexp(m, e)
    if math.isinf(x):
        x = sys.float_info.max
    return -x if rng.random() < 0.5 else x


SPECIALS = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
            5e-324, -5e-324, sys.float_info.max, -sys.float_info.max,
            sys.float_info.min, 3.0, -3.0, 0.1, -0.1]


def near(rng, c):
    """A binary64 within a few units in the last place of c, or c."""
    k = rng.randint(-4, 4)
    x = float(c)
    for _ in range(abs(k)):
        x = math.nextafter(x, INF if k > 0 else -INF)
    return x


def sample_unary(op, rng):
    r = rng.random()
    if r < 0.04:
        return rng.choice(SPECIALS)
    if r < 0.5:
        # Moderate arguments, where most kernels live.
        return rand_double(rng, -30, 10 if op not in ("exponential",
                                                      "exponential-minus-one",
                                                      "logistic") else 9)
    if r < 0.7:
        # Near the op's discontinuity or domain edge.
        if op in ("floor", "ceil", "round-nearest-even", "round-nearest-afz"):
            c = rng.randint(-1000, 1000) / (2 if rng.random() < 0.5 else 1)
            return near(rng, c)
        if op in ("log", "sqrt", "rsqrt"):
            return near(rng, 0.0) if rng.random() < 0.5 else near(rng, 1.0)
        if op == "log-plus-one":
            return near(rng, -1.0) if rng.random() < 0.5 else near(rng, 0.0)
        if op == "tan":
            return near(rng, math.pi / 2 * rng.choice([-3, -1, 1, 3, 101]))
        return near(rng, rng.choice([0.0, 1.0, -1.0]))
    return rand_double(rng)


def sample_binary(op, rng):
    r = rng.random()
    if r < 0.05:
        return rng.choice(SPECIALS), rng.choice(SPECIALS)
    if op == "power":
        if r < 0.6:
            x = abs(rand_double(rng, -10, 10))
            y = rand_double(rng, -8, 6)
            return x, y
        if r < 0.8:
            x = rand_double(rng, -10, 10)
            return x, float(rng.randint(-40, 40))
        return rand_double(rng, -40, 40), rand_double(rng, -10, 4)
    if op == "remainder" and r < 0.4:
        y = rand_double(rng, -20, 20)
        x = near(rng, y * rng.randint(-1000, 1000))
        return x, y
    if op in ("add", "subtract") and r < 0.3:
        x = rand_double(rng, -40, 40)
        return x, near(rng, -x if op == "add" else x)
    if op in ("maximum", "minimum") and r < 0.2:
        x = rand_double(rng, -10, 10)
        return x, rng.choice([x, -x, 0.0, -0.0])
    if r < 0.6:
        return rand_double(rng, -30, 30), rand_double(rng, -30, 30)
    return rand_double(rng), rand_double(rng)


def exact_unary(op, x):
    """The exact real value (an mpf, or a float special) of op at x."""
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        s = 1.0 if x > 0 else -1.0
        return {
            "negate": -x, "abs": INF, "sign": s,
            "exponential": INF if s > 0 else 0.0,
            "exponential-minus-one": INF if s > 0 else -1.0,
            "log": INF if s > 0 else NAN,
            "log-plus-one": INF if s > 0 else NAN,
            "logistic": 1.0 if s > 0 else 0.0, "tanh": s, "erf": s,
            "sqrt": INF if s > 0 else NAN,
            "rsqrt": 0.0 if s > 0 else NAN, "cbrt": x,
            "floor": x, "ceil": x, "round-nearest-even": x,
            "round-nearest-afz": x,
        }.get(op, NAN)
    X = mpf(x)
    neg0 = math.copysign(1.0, x) < 0
    if op == "negate":
        return -0.0 if (x == 0 and not neg0) else (0.0 if x == 0 else -X)
    if op == "abs":
        return 0.0 if x == 0 else abs(X)
    if op == "sign":
        return x if x == 0 else mpf(1 if x > 0 else -1)
    if op == "exponential":
        return mpmath.exp(X)
    if op == "exponential-minus-one":
        return x if x == 0 else mpmath.expm1(X)
    if op == "log":
        if x < 0:
            return NAN
        if x == 0:
            return -INF
        return 0.0 if x == 1 else mpmath.log(X)
    if op == "log-plus-one":
        if x < -1:
            return NAN
        if x == -1:
            return -INF
        return x if x == 0 else mpmath.log1p(X)
    if op == "logistic":
        return 1 / (1 + mpmath.exp(-X))
    if op == "tanh":
        return x if x == 0 else mpmath.tanh(X)
    if op == "erf":
        return x if x == 0 else mpmath.erf(X)
    if op == "sqrt":
        if x == 0:
            return x
        return NAN if x < 0 else mpmath.sqrt(X)
    if op == "rsqrt":
        if x == 0:
            return -INF if neg0 else INF
        return NAN if x < 0 else 1 / mpmath.sqrt(X)
    if op == "cbrt":
        return x if x == 0 else mpmath.sign(X) * mpmath.cbrt(abs(X))
    if op == "sine":
        return x if x == 0 else mpmath.sin(X)
    if op == "cosine":
        return mpmath.cos(X)
    if op == "tan":
        return x if x == 0 else mpmath.tan(X)
    # Discrete ops: exact integers; a zero result keeps x's sign.
    if op == "floor":
        v = mpmath.floor(X)
    elif op == "ceil":
        v = mpmath.ceil(X)
    elif op == "round-nearest-even":
        v = mpmath.nint(X)  # ties to even
    else:
        v = mpmath.sign(X) * mpmath.floor(abs(X) + mpf(1) / 2)
    if v == 0:
        return -0.0 if (x < 0 or neg0) else 0.0
    return v


def fsign(x):
    return math.copysign(1.0, x)


def exact_binary(op, x, y):
    if op in ("maximum", "minimum"):
        if math.isnan(x) or math.isnan(y):
            return NAN
        if x == 0 and y == 0:
            negs = (fsign(x) < 0) + (fsign(y) < 0)
            if op == "maximum":
                return -0.0 if negs == 2 else 0.0
            return -0.0 if negs >= 1 else 0.0
        return max(x, y) if op == "maximum" else min(x, y)
    if op == "power":
        return exact_pow(x, y)
    if math.isnan(x) or math.isnan(y):
        return NAN
    if op == "atan2":
        if math.isinf(x) or math.isinf(y) or (x == 0 and y == 0):
            r = math.atan2(x, y)
            if r == 0.0:
                return r
            # C99 F.9.1.4: the specials' values are multiples of pi/4.
            k = round(abs(r) / (math.pi / 4))
            return math.copysign(1.0, r) * k * mpmath.pi / 4
        if x == 0:
            return x if y > 0 else (mpmath.pi if fsign(x) > 0
                                    else -mpmath.pi)
        return mpmath.atan2(mpf(x), mpf(y))
    if math.isinf(x) or math.isinf(y):
        # IEEE specials with an infinite operand: exact in binary64.
        with_errstate = {
            "add": lambda: x + y, "subtract": lambda: x - y,
            "multiply": lambda: x * y,
            "divide": lambda: x / y if y != 0 else math.copysign(INF, fsign(x) * fsign(y)),
            "remainder": lambda: NAN if math.isinf(x) else x,
        }
        try:
            r = with_errstate[op]()
        except (ZeroDivisionError, ValueError, OverflowError):
            r = NAN
        return r
    X, Y = mpf(x), mpf(y)
    if op == "add":
        v = X + Y
        if v == 0:
            return -0.0 if (x == 0 and y == 0 and fsign(x) < 0 and fsign(y) < 0) else 0.0
        return v
    if op == "subtract":
        v = X - Y
        if v == 0:
            return -0.0 if (x == 0 and y == 0 and fsign(x) < 0 and fsign(y) > 0) else 0.0
        return v
    if op == "multiply":
        v = X * Y
        if v == 0:
            return math.copysign(0.0, fsign(x) * fsign(y))
        return v
    if op == "divide":
        if y == 0:
            if x == 0:
                return NAN
            return math.copysign(INF, fsign(x) * fsign(y))
        v = X / Y
        if v == 0:
            return math.copysign(0.0, fsign(x) * fsign(y))
        return v
    if op == "remainder":
        if y == 0:
            return NAN
        # Exact in rationals: x - y trunc(x / y), representable in binary64.
        fx, fy = fractions.Fraction(x), fractions.Fraction(y)
        v = fx - fy * int(fx / fy)
        if v == 0:
            return math.copysign(0.0, fsign(x))
        return mpf(float(v))
    raise ValueError(op)


def exact_pow(x, y):
    # C99 F.9.4.4 for the specials, then the real power.
    if y == 0:
        return 1.0
    if x == 1:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return NAN
    odd = (not math.isinf(y)) and float(y).is_integer() and int(y) % 2 == 1
    if x == 0:
        # pow(+-0, y): a pole below 0, a zero above, odd y keeps the sign.
        if y < 0:
            return math.copysign(INF, x) if odd else INF
        return math.copysign(0.0, x) if odd else 0.0
    if math.isinf(x) or math.isinf(y):
        return math.pow(x, y)
    X, Y = mpf(x), mpf(y)
    if x < 0:
        if not float(y).is_integer():
            return NAN
        v = mpmath.power(abs(X), Y)
        return -v if int(y) % 2 else v
    return mpmath.power(X, Y)


def fmt_in(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float.hex(x)


def fmt_out(v):
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v == 0:
            return "-0" if fsign(v) < 0 else "0"
        v = mpf(v)
    with mp.workprec(128):
        w = +v
    if w == 0:
        return "0"
    sign, man, exp, _ = w._mpf_
    s = "-" if sign else ""
    # Past 2^(+-2^40) only the side matters: no format comes near.
    if exp + man.bit_length() > 2**40:
        return s + "huge"
    if exp < -2**40:
        return s + "tiny"
    return "%s0x%xp%d" % (s, abs(man), exp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "oracle"))
    ap.add_argument("--ops", nargs="*", default=UNARY + BINARY)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for op in a.ops:
        rng = random.Random("%d/%s" % (a.seed, op))
        path = os.path.join(a.out, op + ".txt")
        with open(path, "w") as f:
            f.write("# %s: exact values (mpmath, %d digits, rounded to 128"
                    " bits)\n" % (op, mp.dps))
            f.write("# generated by tools/gen_oracle_tables.py --count %d"
                    " --seed %d\n" % (a.count, a.seed))
            for _ in range(a.count):
                if op in UNARY:
                    x = sample_unary(op, rng)
                    v = exact_unary(op, x)
                    f.write("%s %s\n" % (fmt_in(x), fmt_out(v)))
                else:
                    x, y = sample_binary(op, rng)
                    v = exact_binary(op, x, y)
                    f.write("%s %s %s\n" % (fmt_in(x), fmt_in(y),
                                            fmt_out(v)))
        print("wrote", path, file=sys.stderr)


if __name__ == "__main__":
    main()
