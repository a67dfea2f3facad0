"""Whole XLA:CPU programs with control flow, captured as case directories.

Real JAX programs whose optimized modules keep what fused kernels lack:
`while` (lax.scan, lax.fori_loop, a jax.random loop, a while_loop whose
condition reads floats), `sort` (jnp.sort, jnp.argsort), XLA:CPU's TopK
custom call (lax.top_k) and `conditional` (lax.cond, lax.switch).  Each
becomes OUT/<name>/ (kernel.hlo, input_i.npy, device_i.npy, case.json) by
capture.capture_function, for `ulpscope check` (docs/evaluator.md,
"Control flow"; the test test_control_flow_cases).

    python3 tools/capture/control_flow.py data/control_flow

With --calls, the programs whose modules keep `call`: XLA:CPU's call
inliner inlines every call by default (jax 0.10.2: a nested jax.jit with
inline=False, jax.checkpoint, jax.named_call and compute_on all come out
inlined), so these are compiled with --xla_disable_hlo_passes=call-inliner,
XLA's own switch, and run by XLA:CPU with their calls in place.  XLA_FLAGS
is read once per process, hence a run of its own.

    python3 tools/capture/control_flow.py --calls data/control_flow

Each case also holds kernel.hlo.pb, the HloProto of the same optimized
module, and snapshot.pb, the run as an HloSnapshot, both as XLA dumped
them (--xla_dump_hlo_as_proto, --xla_dump_hlo_snapshots) in the same run
as the text: for the test of the proto converter
(tests/proto/test_module_pb.c) and for checking a program from its protos
alone (tests/proto/test_dump_control_flow.sh).  The HLO's stack frames
hold this script's line numbers, so a case is recaptured whole, never its
proto alone.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import capture  # noqa: E402  (sets XLA_FLAGS before jax is imported)


def programs():
    """(name, function, arguments, notes) of every program."""
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import lax

    rng = np.random.default_rng(0)
    f32 = np.float32

    def normal(*shape):
        return rng.standard_normal(shape).astype(f32)

    def scan_rnn(xs, w):
        def step(h, x):
            h = jnp.tanh(h * w + x)
            return h, h * 2.0
        return lax.scan(step, jnp.zeros(xs.shape[1], jnp.float32), xs)[1]

    def fori_sine(x):
        return lax.fori_loop(0, 6, lambda i, v: jnp.sin(v) * 1.5 + i * 0.25,
                             x)

    def rng_dropout_loop(key, x):
        def body(i, c):
            k, v = c
            k, s = jax.random.split(k)
            keep = jax.random.bernoulli(s, 0.8, v.shape)
            return k, jnp.where(keep, v / 0.8, 0.0) * 0.5 + jnp.exp(-v * v)
        return lax.fori_loop(0, 12, body, (key, x))[1]

    def halve_until_small(x):
        # The condition reads floats: max |x| > 1.
        return lax.while_loop(lambda v: jnp.max(jnp.abs(v)) > 1.0,
                              lambda v: v * 0.5 + 0.01, x)

    def sort_rows(x):
        return jnp.sort(x, axis=-1)

    def argsort_cols(x):
        return jnp.argsort(x, axis=0)

    def top_k(x):
        v, i = lax.top_k(x, 5)
        return v * 2.0, i

    def cond_exp_cos(p, x):
        return lax.cond(p > 0, lambda v: jnp.exp(v), lambda v: jnp.cos(v) * 2,
                        x)

    def switch3(i, x):
        return lax.switch(i, [jnp.sin, jnp.tanh, lambda v: v * v], x)

    key = np.asarray(jax.random.PRNGKey(7), dtype=np.uint32)
    return [
        ("scan_rnn_f32", scan_rnn, [normal(16, 32), normal(32)],
         "lax.scan of h = tanh(h*w + x) over 16 steps: a while loop"),
        ("fori_sine_f32", fori_sine, [normal(8, 32)],
         "lax.fori_loop of v = sin(v)*1.5 + i/4, 6 iterations"),
        ("rng_dropout_loop_f32", rng_dropout_loop, [key, normal(8, 16)],
         "lax.fori_loop of 12 steps, each drawing a dropout mask with "
         "jax.random (threefry in integer ops) inside the loop"),
        ("while_float_cond_f32", halve_until_small,
         [(normal(8, 32) * 40).astype(f32)],
         "lax.while_loop whose condition is a float reduction"),
        ("sort_rows_f32", sort_rows, [normal(8, 64)], "jnp.sort on rows"),
        ("argsort_cols_f32", argsort_cols, [normal(32, 8)],
         "jnp.argsort on columns: a sort of (values, iota)"),
        ("top_k_f32", top_k, [normal(8, 64)],
         "lax.top_k(x, 5): XLA:CPU's TopK custom call"),
        ("cond_f32", cond_exp_cos, [np.asarray(0.5, f32), normal(8, 32)],
         "lax.cond on a scalar: a conditional with a pred"),
        ("switch_f32", switch3, [np.asarray(2, np.int32), normal(8, 32)],
         "lax.switch over three branches: a conditional with an index"),
    ]


def call_programs():
    """(name, function, arguments, notes) of the programs that keep call."""
    import numpy as np
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(1)
    f32 = np.float32

    def layer(v, b):
        return jnp.tanh(v * 1.5 + b) + jnp.exp(-v * v) * 0.25

    def nested_jit(x, b):
        # pjit: a jitted function called from a jitted function, twice,
        # on different arguments; inline=False keeps it a call.
        g = jax.jit(layer, inline=False)
        return g(g(x, b), b * 0.5) - jnp.sin(x)

    return [
        ("call_nested_jit_f32", nested_jit,
         [rng.standard_normal((8, 32)).astype(f32),
          rng.standard_normal((32,)).astype(f32)],
         "a nested jax.jit(inline=False) called twice: two call "
         "instructions, kept by --xla_disable_hlo_passes=call-inliner"),
    ]


CALL_FLAGS = ("--xla_disable_hlo_passes=call-inliner",)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    calls = argv[:1] == ["--calls"]
    argv = argv[1:] if calls else argv
    if len(argv) != 1:
        print(__doc__)
        return 2
    out = argv[0]
    # snapshots="auto": XLA also dumps the module as a proto and the run as
    # an HloSnapshot, dump flags that case.json's xla_flags leave out.
    capture.setup(extra_flags=CALL_FLAGS if calls else (), snapshots="auto")
    dump_dir = capture._STATE["dump_dir"]  # noqa: SLF001
    for name, fn, args, notes in call_programs() if calls else programs():
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        case = capture.capture_function(fn, args, d, name=name, notes=notes)
        stem = capture._dumps_of(dump_dir, f"jit_{name}")[-1][1]  # noqa: SLF001
        pbs = glob.glob(stem + ".*after_optimizations.hlo.pb")
        snaps = glob.glob(stem + ".snapshot.*.pb")
        if len(pbs) != 1 or len(snaps) != 1:
            print(f"{stem}: {len(pbs)} optimized protos and {len(snaps)} "
                  "snapshots, not one each", file=sys.stderr)
            return 1
        shutil.copy(pbs[0], os.path.join(d, "kernel.hlo.pb"))
        shutil.copy(snaps[0], os.path.join(d, "snapshot.pb"))
        case["snapshot"] = {"file": "snapshot.pb", "made_by": "xla",
                            "xla_file": os.path.basename(snaps[0])}
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
            f.write("\n")
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
        print(f"{d}: {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
