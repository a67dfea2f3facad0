"""Sorts and top-k with many ties: real XLA:CPU captures and tie-permuted variants.

Real JAX programs whose inputs are drawn from a few values, so that most
elements tie: an unstable argsort of bf16, an unstable `lax.sort` of f8
keys carrying an f32 payload, a stable argsort of bf16, `lax.top_k` of f32
(XLA:CPU's TopK custom call) and of bf16 (which XLA:CPU rewrites into a
stable sort).  Each becomes OUT/<name>/ (kernel.hlo, input_i.npy,
device_i.npy, case.json): legit under xla-cpu, not one element defect.

XLA:CPU may happen to return the stable order, so each also gets variants
under VARIANTS/<name>/ whose device outputs are XLA's with the elements of
each tie group permuted (or a pair that does not tie swapped), done here in
numpy from the device outputs and inputs alone, not by ulpscope:

- legit_*: ties of an unstable sort or of top-k permuted (for top-k also
  a tied element beyond k brought in): legit (docs/evaluator.md, "Sort
  order");
- defect_*: ties of a stable sort permuted, or two elements of an
  unstable sort that do not tie swapped: a defect.

    python3 tools/capture/sort_ties.py data/control_flow data/sort_ties
"""

from __future__ import annotations

import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import capture  # noqa: E402  (sets XLA_FLAGS before jax is imported)


def programs():
    """(name, function, arguments, notes) of every program."""
    import numpy as np
    import ml_dtypes
    import jax.numpy as jnp
    from jax import lax

    rng = np.random.default_rng(16)

    def few(values, shape, dtype):
        return np.asarray(rng.choice(values, size=shape)).astype(dtype)

    def argsort_unstable(x):
        return jnp.argsort(x, axis=-1, stable=False)

    def argsort_stable(x):
        return jnp.argsort(x, axis=-1, stable=True)

    def sort_pairs_unstable(k, v):
        return lax.sort((k, v), dimension=1, is_stable=False, num_keys=1)

    def top_k(x):
        return lax.top_k(x, 6)

    bf16 = ml_dtypes.bfloat16
    f8 = ml_dtypes.float8_e4m3fn
    return [
        ("argsort_ties_bf16", argsort_unstable,
         [few([-1.5, 0.25, 1.0, 3.0], (8, 32), bf16)],
         "jnp.argsort(stable=False) of bf16 drawn from 4 values: an "
         "unstable sort of (values, iota), most elements tie"),
        ("argsort_stable_ties_bf16", argsort_stable,
         [few([-1.5, 0.25, 1.0, 3.0], (8, 32), bf16)],
         "jnp.argsort(stable=True) of bf16 drawn from 4 values: a stable "
         "sort, ties in index order"),
        ("sort_pairs_ties_f8", sort_pairs_unstable,
         [few([-2.0, 0.5, 1.0, 4.0, 6.0], (4, 24), f8),
          rng.standard_normal((4, 24)).astype(np.float32)],
         "lax.sort((f8e4m3fn keys from 5 values, f32 payload), "
         "is_stable=False, num_keys=1): both operands sorted, ties carry "
         "different payloads"),
        ("top_k_ties_f32", top_k,
         [few([-1.0, 0.5, 2.0, 3.0], (8, 16), np.float32)],
         "lax.top_k(x, 6) of f32 drawn from 4 values: XLA:CPU's TopK "
         "custom call, the 6th place mostly inside a tie group"),
        ("top_k_ties_bf16", top_k,
         [few([-1.0, 0.5, 2.0, 3.0], (8, 16), bf16)],
         "lax.top_k(x, 6) of bf16 drawn from 4 values: XLA:CPU makes it a "
         "stable sort and a slice"),
    ]


def runs(keys):
    """[start, end) of each run of equal keys in a sorted row."""
    out, s = [], 0
    for j in range(1, len(keys) + 1):
        if j == len(keys) or keys[j] != keys[s]:
            out.append((s, j))
            s = j
    return out


def permute_ties(keys, cols, rng):
    """cols (arrays of a row's positions) with each tie run of the sorted
    keys permuted, one permutation per run applied to every col."""
    cols = [c.copy() for c in cols]
    changed = False
    for s, e in runs(keys):
        if e - s < 2:
            continue
        p = rng.permutation(e - s)
        while (p == range(e - s)).all():
            p = rng.permutation(e - s)
        for c in cols:
            c[s:e] = c[s:e][p]
        changed = True
    return cols, changed


def variants(name, args, outputs, rng):
    """(variant name, device outputs, notes) made from XLA's outputs."""
    import numpy as np

    out = []
    if name in ("argsort_ties_bf16", "argsort_stable_ties_bf16"):
        x, idx = np.asarray(args[0], np.float32), outputs[0]
        p = idx.copy()
        for r in range(p.shape[0]):
            (p[r],), _ = permute_ties(x[r][idx[r]], [idx[r]], rng)
        kind = "legit" if name == "argsort_ties_bf16" else "defect"
        out.append((f"{kind}_{name}_ties_permuted", [p],
                    "the indices of each run of equal values permuted"))
        if kind == "legit":
            q = idx.copy()
            # Swap the last of one run with the first of the next.
            keys = x[0][idx[0]]
            s, e = runs(keys)[0]
            q[0, e - 1], q[0, e] = q[0, e], q[0, e - 1]
            out.append((f"defect_{name}_nontie_swapped", [q],
                        "two indices whose values differ swapped"))
    elif name == "sort_pairs_ties_f8":
        import ml_dtypes

        k, v = outputs
        # np.load reads f8 back as raw bytes: view them as f8 again.
        if k.dtype.kind in "VS":
            k = k.view(ml_dtypes.float8_e4m3fn)
        kf = np.asarray(k, np.float32)
        pk, pv = k.copy(), v.copy()
        for r in range(k.shape[0]):
            (pk[r], pv[r]), _ = permute_ties(kf[r], [k[r], v[r]], rng)
        out.append((f"legit_{name}_ties_permuted", [pk, pv],
                    "each run of equal keys permuted with its payloads"))
        qk, qv = k.copy(), v.copy()
        s, e = runs(kf[1])[0]
        for c in (qk, qv):
            c[1, e - 1], c[1, e] = c[1, e], c[1, e - 1]
        out.append((f"defect_{name}_nontie_swapped", [qk, qv],
                    "two elements whose keys differ swapped, with their "
                    "payloads"))
    elif name in ("top_k_ties_f32", "top_k_ties_bf16"):
        x = np.asarray(args[0], np.float32)
        vals, idx = outputs
        # np.load reads bf16 back as raw bytes: view them as bf16 again.
        if vals.dtype.kind in "VS":
            vals = vals.view(args[0].dtype)
        kk = idx.shape[1]
        pv, pi = vals.copy(), idx.copy()
        for r in range(idx.shape[0]):
            vf = np.asarray(vals[r], np.float32)
            (pi[r],), _ = permute_ties(vf, [idx[r]], rng)
            # The last run may continue beyond k: bring in an index of
            # an equal element that top-k left out.
            last = vf[kk - 1]
            left = [j for j in range(x.shape[1])
                    if x[r, j] == last and j not in set(idx[r])]
            if left:
                s, _e = runs(vf)[-1]
                pi[r, s] = left[0]
        kind = "legit" if name == "top_k_ties_f32" else "defect"
        out.append((f"{kind}_{name}_ties_permuted", [pv, pi],
                    "the indices of each run of equal values permuted, "
                    "an equal element beyond k brought in"))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__)
        return 2
    out, var = argv
    capture.setup()
    import numpy as np

    rng = np.random.default_rng(1616)
    for name, fn, args, notes in programs():
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        capture.capture_function(fn, args, d, name=name, notes=notes)
        outputs = [np.load(os.path.join(d, f"device_{i}.npy"))
                   for i in range(len(os.listdir(d)))
                   if os.path.exists(os.path.join(d, f"device_{i}.npy"))]
        print(f"{d}")
        for vname, dev, vnotes in variants(name, args, outputs, rng):
            vd = os.path.join(var, vname)
            shutil.rmtree(vd, ignore_errors=True)
            capture.capture_function(fn, args, vd, name=name,
                                     notes=f"{notes}; variant: {vnotes}",
                                     device_outputs=dev)
            print(f"  {vd}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
