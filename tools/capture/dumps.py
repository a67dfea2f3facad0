"""XLA's own dumps of the catalogue: protocol buffers and snapshots.

Runs catalogue kernels (kernels.py) on XLA:CPU with

    XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text --xla_dump_hlo_as_proto
              --xla_dump_hlo_snapshots

and keeps what ulpscope reads from such a directory (docs/dumps.md):

  --protos DIR   DIR/<kernel>.hlo.pb: the optimized module as XLA wrote it
                 (an HloProto), next to kernels/<kernel>.hlo, its text; the
                 tool says when the text it dumped differs from the committed
                 kernels/<kernel>.hlo (then the catalogue needs recapturing).
  --dumps DIR    DIR/xla_cpu/: the kernels' modules as XLA dumped them in one
                 process (module_NNNN.jit_<kernel>.* text, protos, one
                 snapshot per run), and DIR/cases/<kernel>/: the same runs
                 written as case directories by capture.py (kernel.hlo,
                 input_i.npy, device_i.npy), so that a test can check that
                 ulpscope judges both alike (data/dumps/).

  --ops DIR      DIR/<program>.txt and DIR/<program>.hlo.pb: the optimized
                 modules of OPS below, small JAX programs that make XLA:CPU
                 keep the ops the catalogue lacks (convolution, scatter,
                 pad, opt-barrier, reduce-precision, ...), for the test of
                 the proto converter (tests/proto/modules/).

XLA:CPU writes snapshots itself (jax 0.10.2): module_NNNN.NAME.snapshot.K.pb,
K a number XLA draws per execution.  No snapshot is made up here.

    python3 tools/capture/dumps.py --protos kernels/pb
    python3 tools/capture/dumps.py --dumps data/dumps --kernel softmax_f32,swiglu_bf16,fp8_dequantize_bf16,fp8_quantize_f32,adam_f32
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import capture  # noqa: E402  (sets XLA_FLAGS before jax is imported)

# What a dump directory keeps for ulpscope; the LLVM IR, object files and
# buffer assignments are left out of the committed copies.
KEEP = (".before_optimizations.txt", ".before_optimizations.hlo.pb",
        "after_optimizations.txt", "after_optimizations.hlo.pb")


def module_files(dump_dir, name):
    """The files of the newest module named jit_<name> in dump_dir."""
    hits = capture._dumps_of(dump_dir, f"jit_{name}")  # noqa: SLF001
    if not hits:
        raise RuntimeError(f"no dump of jit_{name} in {dump_dir}")
    _, stem = hits[-1]
    files = sorted(glob.glob(stem + ".*"))
    keep = [f for f in files if f.endswith(KEEP) or ".snapshot." in f]
    return stem, keep


def ops_programs():
    """(name, function, example arguments) of the --ops programs."""
    import jax.numpy as jnp
    from jax import lax
    f32 = jnp.float32
    x = jnp.linspace(-2, 2, 64, dtype=f32).reshape(8, 8)
    img = jnp.linspace(-1, 1, 2 * 3 * 8 * 8, dtype=f32).reshape(2, 3, 8, 8)
    ker = jnp.linspace(-1, 1, 4 * 3 * 3 * 3, dtype=f32).reshape(4, 3, 3, 3)
    idx = jnp.array([1, 3, 3, 6], dtype=jnp.int32)
    return [
        ("conv2d", lambda a, k: lax.conv_general_dilated(
            a, k, (1, 1), ((1, 1), (1, 1))), (img, ker)),
        ("conv_grouped", lambda a, k: lax.conv_general_dilated(
            a, k[:, :1], (2, 1), "VALID", feature_group_count=3,
            rhs_dilation=(1, 2)), (img, ker[:3])),
        ("scatter_add", lambda a, i: a.at[i].add(1.5), (x, idx)),
        ("pad_reverse", lambda a: jnp.flip(jnp.pad(a, ((1, 2), (0, 3))), 0) * 2, (x,)),
        ("opt_barrier", lambda a: lax.optimization_barrier(a * 2) + 1, (x,)),
        ("reduce_precision", lambda a: lax.reduce_precision(a * 3, 5, 10), (x,)),
        ("dynamic_update", lambda a, i: lax.dynamic_update_slice(
            a, a[:2, :2] * 2, (i[0], i[1])), (x, idx)),
        ("dot_highest", lambda a: jnp.dot(a, a.T, precision=lax.Precision.HIGHEST), (x,)),
        ("integer_bits", lambda i: (i << 2) ^ lax.population_count(i) >> 1, (idx,)),
        ("clamp_sign", lambda a: jnp.clip(jnp.sign(a) * jnp.abs(a) ** 0.5, -1, 1), (x,)),
        ("argmax", lambda a: jnp.argmax(a, axis=1), (x,)),
        ("transpose_reduce_window", lambda a: lax.reduce_window(
            a.T, -jnp.inf, lax.max, (2, 2), (2, 1), "SAME"), (x,)),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--protos", metavar="DIR")
    ap.add_argument("--dumps", metavar="DIR")
    ap.add_argument("--ops", metavar="DIR")
    ap.add_argument("--kernel", default="all", help="comma list (default: all)")
    ap.add_argument("--distribution", default="normal")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    if not a.protos and not a.dumps and not a.ops:
        ap.error("give --protos DIR, --dumps DIR or --ops DIR")
    dump_dir = tempfile.mkdtemp(prefix="ulpscope_dumps_")
    capture.setup(dump_dir=dump_dir,
                  extra_flags=["--xla_dump_hlo_as_proto", "--xla_dump_hlo_snapshots"])
    # Keep this script's frames out of the dumped stack frames, as capture.py
    # does for its own: the text must equal the committed kernels/<kernel>.hlo.
    from jax._src import source_info_util
    source_info_util.register_exclusion(os.path.abspath(__file__))
    import kernels as K
    if a.ops:
        import jax
        os.makedirs(a.ops, exist_ok=True)
        for name, fn, args in ops_programs():
            fn.__name__ = fn.__qualname__ = name
            jax.block_until_ready(jax.jit(fn)(*args))
            stem, files = module_files(dump_dir, name)
            for f in files:
                if f.endswith("after_optimizations.txt"):
                    shutil.copy(f, os.path.join(a.ops, name + ".txt"))
                elif f.endswith("after_optimizations.hlo.pb"):
                    shutil.copy(f, os.path.join(a.ops, name + ".hlo.pb"))
            print(f"{a.ops}/{name}: {os.path.basename(stem)}")
        if not a.protos and not a.dumps:
            shutil.rmtree(dump_dir, ignore_errors=True)
            return
    names = [k.name for k in K.KERNELS] if a.kernel == "all" else a.kernel.split(",")
    by_name = {k.name: k for k in K.KERNELS}
    for name in names:
        k = by_name[name]
        if a.dumps:
            case_dir = os.path.join(a.dumps, "cases", name)
            shutil.rmtree(case_dir, ignore_errors=True)
            capture.capture_kernel_case(k, a.distribution, a.seed, case_dir)
            stem, files = module_files(dump_dir, name)
            out = os.path.join(a.dumps, "xla_cpu")
            os.makedirs(out, exist_ok=True)
            for f in files:
                shutil.copy(f, os.path.join(out, os.path.basename(f)))
            print(f"{case_dir}: {len(files)} dump files in {out}")
        if a.protos:
            comp = capture.compile_kernel(k)
            comp.run(capture.draw_inputs(k, a.distribution, a.seed))
            stem, files = module_files(dump_dir, name)
            pb = [f for f in files if f.endswith("after_optimizations.hlo.pb")]
            os.makedirs(a.protos, exist_ok=True)
            shutil.copy(pb[0], os.path.join(a.protos, name + ".hlo.pb"))
            txt = [f for f in files if f.endswith("after_optimizations.txt")][0]
            ref = os.path.join(capture.REPO, "kernels", name + ".hlo")
            same = os.path.exists(ref) and open(ref).read() == open(txt).read()
            print(f"{name}: {'text as committed' if same else 'TEXT DIFFERS from ' + ref}")
    shutil.rmtree(dump_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
