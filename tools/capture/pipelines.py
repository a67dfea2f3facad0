"""Records XLA:CPU's per-pass HLO dumps of catalogue kernels (data/pipelines/).

usage: python tools/capture/pipelines.py [--out data/pipelines] [NAME...]

Each kernel of tools/capture/kernels.py named (default: PIPELINE_KERNELS) is
jitted and compiled on XLA:CPU with

    XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*

and its module's HLO text files are copied to OUT/<name>/, under XLA's own
names (docs/audit.md, "Pipelines"):

    module_NNNN.jit_<name>.before_optimizations.txt          the input
    module_NNNN.jit_<name>.SSSS.<pipeline>.after_<pass>.before_<next>.txt
    module_NNNN.jit_<name>.cpu_after_optimizations.txt       the output

XLA writes a per-pass file only when the pass changed the module; SSSS
orders them.  The buffer-assignment, LLVM and object files are left out.

Besides the catalogue's kernels, a few small kernels exist here only for
their pipelines (EXTRA_KERNELS): kernels in which some XLA:CPU pass changes
the arithmetic visibly, so that the pass the audit names can be checked
against the dump texts (tests/audit/pipelines.py).  XLA:CPU 0.10 expands
logistic, tanh, erf and f16 ops in its IR emitter, after the last HLO dump,
so those kernels change nothing a dump shows; these do:

    sum_bf16      a bf16 row sum: float-normalization-bf16 accumulates it
                  in f32, tree_reduction_rewriter splits it
    dot_bf16      a bf16 matrix product: float-normalization-bf16 computes
                  it in f32
    divconst_f32  x / 3: algsimp multiplies by RN(1/3) instead
    mean_f32      a mean of 300 terms: algsimp multiplies the sum by
                  RN(1/300), tree_reduction_rewriter splits the sum
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile

PIPELINE_KERNELS = (
    "softmax_f32", "softmax_bf16", "log_softmax_f32", "layer_norm_bf16",
    "rms_norm_bf16", "gelu_erf_f32", "gelu_tanh_bf16", "swiglu_bf16",
    "attention_logits_f32", "silu_bf16",
)


def _sum_bf16(x):
    from jax import lax
    import numpy as np
    return lax.reduce(x, np.array(0, x.dtype), lax.add, (1,))


def _dot_bf16(a, b):
    from jax import lax
    return lax.dot(a, b)


def _divconst_f32(x):
    return x / 3.0


def _mean_f32(x):
    import jax.numpy as jnp
    return jnp.mean(x, axis=1)


# name: (function, [(shape, dtype name)...])
EXTRA_KERNELS = {
    "sum_bf16": (_sum_bf16, [((8, 256), "bfloat16")]),
    "dot_bf16": (_dot_bf16, [((16, 64), "bfloat16"), ((64, 16), "bfloat16")]),
    "divconst_f32": (_divconst_f32, [((1024,), "float32")]),
    "mean_f32": (_mean_f32, [((8, 300), "float32")]),
}

KEEP = re.compile(r"^module_\d+\.jit_(?P<name>[A-Za-z0-9_]+)\."
                  r"(before_optimizations|\d{4}\..*|cpu_after_optimizations)\.txt$")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "data", "pipelines"))
    ap.add_argument("names", nargs="*",
                    default=list(PIPELINE_KERNELS) + list(EXTRA_KERNELS))
    args = ap.parse_args(argv)
    dump = tempfile.mkdtemp(prefix="usc_pipelines_")
    os.environ["XLA_FLAGS"] = (f"--xla_dump_to={dump} --xla_dump_hlo_pass_re=.*")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.path.insert(0, os.path.dirname(__file__))
    import jax
    import jax.numpy as jnp
    import kernels

    by_name = {k.name: k for k in kernels.KERNELS}
    for name in args.names:
        if name in EXTRA_KERNELS:
            f, shapes = EXTRA_KERNELS[name]
            specs = [jax.ShapeDtypeStruct(sh, jnp.dtype(dt)) for sh, dt in shapes]
        else:
            k = by_name[name]
            f = k.fn
            specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in k.args]

        def fn(*a, _f=f):
            return _f(*a)

        fn.__name__ = name  # the module is jit_<name>, as capture.py's
        jax.jit(fn).lower(*specs).compile()
    for name in args.names:
        out = os.path.join(args.out, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        n = 0
        for f in sorted(os.listdir(dump)):
            m = KEEP.match(f)
            if m and m.group("name") == name:
                shutil.copy(os.path.join(dump, f), out)
                n += 1
        print(f"{name}: {n} files", file=sys.stderr)
    shutil.rmtree(dump)


if __name__ == "__main__":
    main()
