#!/usr/bin/env python3
"""Captures the real XLA:CPU cases of issue 13 under tests/envelope/xla_cpu/.

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install -r tools/capture/requirements.txt
    /tmp/jaxenv/bin/python3 tests/envelope/xla_cpu/capture.py

conv2d_f32: an f32 3x3 convolution, NCHW, 3 input channels, SAME padding
(27 products per element), normal inputs: XLA:CPU's own accumulation order
is not the interpreter's sequential one.

affine_f16: the batch-norm-style x * scale + shift in f16, with inputs built
so that the exact x*scale + shift lies just off an f16 midpoint (within half
an f32 ulp of it): computed in f32 and rounded twice it lands on the tie,
rounded once it does not, so the two roundings differ there.

Both must be legit under xla-cpu (tests/envelope/tests.cmake).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools", "capture"))
import capture  # noqa: E402


def conv2d_f32(x, w):
    import jax
    return jax.lax.conv_general_dilated(
        x, w, window_strides=(1, 1), padding="SAME",
        dimension_numbers=("NCHW", "OIHW", "NCHW"))


def affine_f16(x, scale, shift):
    return x * scale + shift


def near_ties(rng, n):
    """x, scale, shift in f16 with x*scale + shift just above a midpoint."""
    xs, ss, cs = [], [], []
    while len(xs) < n:
        c = np.float16(rng.uniform(2, 16))
        h = np.spacing(c, dtype=np.float16).astype(np.float64) / 2
        a = np.float16(rng.uniform(1, 2))
        b = np.float16(h / float(a))
        d = float(a) * float(b) - h
        if 0 < d <= float(c) * 2.0 ** -25:
            xs.append(a)
            ss.append(b)
            cs.append(c)
    return (np.array(xs, np.float16), np.array(ss, np.float16),
            np.array(cs, np.float16))


def main():
    capture.setup()
    rng = np.random.default_rng(13)
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    capture.capture_function(conv2d_f32, [x, w], os.path.join(HERE, "conv2d_f32"),
                             name="conv2d_f32", arg_names=["x", "w"], seed=13,
                             distribution="normal",
                             notes="issue 13: f32 3x3 conv2d, NCHW, 3 input channels, SAME")
    a, b, c = near_ties(rng, 256)
    # Half the elements as built, half with the product's sign flipped.
    flip = np.where(np.arange(256) % 2 == 0, 1, -1).astype(np.float16)
    a = a * flip
    c = c * flip
    capture.capture_function(affine_f16, [a, b, c], os.path.join(HERE, "affine_f16"),
                             name="affine_f16", arg_names=["x", "scale", "shift"],
                             seed=13, distribution="given",
                             notes="issue 13: f16 x*scale+shift just off f16 midpoints")
    dev = np.load(os.path.join(HERE, "affine_f16", "device_0.npy"))
    exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    once = exact.astype(np.float16)
    twice = exact.astype(np.float32).astype(np.float16)
    print("affine_f16: %d elements differ between single and double rounding; "
          "XLA:CPU matches single %d, double %d"
          % ((once != twice).sum(), ((dev == once) & (once != twice)).sum(),
             ((dev == twice) & (once != twice)).sum()))


if __name__ == "__main__":
    main()
