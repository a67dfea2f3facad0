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

KEEP = re.compile(r"^module_\d+\.jit_(?P<name>[A-Za-z0-9_]+)\."
                  r"(before_optimizations|\d{4}\..*|cpu_after_optimizations)\.txt$")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "data", "pipelines"))
    ap.add_argument("names", nargs="*", default=list(PIPELINE_KERNELS))
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
        k = by_name[name]
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in k.args]

        def fn(*a, _f=k.fn):
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
