#!/usr/bin/env python3
"""One HLO module of your own through XLA:CPU as a case directory: the
minimisation step of docs/fuzzing.md.  Edit a flagged case's generated.hlo
down, run this on it with the case's inputs (or values given on the
command line), and `ulpscope check OUT` tells whether the verdict stays.

    case_from_hlo.py MIN.hlo OUT --fast-math on --input CASE/input_0.npy ...
    case_from_hlo.py MIN.hlo OUT --values=-0.4866,2 --values=13,1   # per parameter
    case_from_hlo.py MIN.hlo OUT --distribution ties --seed 3

The inputs must match the entry parameters (number, shape, type).  Each
--values gives one parameter (in order) the listed values in its own type,
rounded once, the list repeating to fill the shape; a single --values
serves every parameter.  Write --values=-1,2 for a list that starts with a
minus sign.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools", "capture"))

import numpy as np  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("hlo")
    ap.add_argument("out")
    ap.add_argument("--fast-math", choices=("off", "on"), default="off")
    ap.add_argument("--input", action="append", default=[], help=".npy, one per parameter")
    ap.add_argument("--values", action="append", default=[],
                    help="comma-separated values of one parameter (repeat per parameter)")
    ap.add_argument("--distribution", default="normal")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    import capture
    import hlo_text
    import run
    capture.setup(fast_math=args.fast_math == "on", extra_flags=run.DUMP_FLAGS)
    with open(args.hlo) as f:
        text = f.read()
    inputs = None
    if args.input:
        inputs = [np.load(p, allow_pickle=False) for p in args.input]
    elif args.values:
        inputs = []
        for k, p in enumerate(hlo_text.parse_module(text).entry.parameters()):
            given = args.values[k] if k < len(args.values) else args.values[-1]
            vals = np.array([float(v) for v in given.split(",")], dtype=np.float64)
            leaf = p.leaves[0]
            n = int(np.prod(leaf.dims, dtype=np.int64))
            x = np.resize(vals, n).reshape(leaf.dims)
            inputs.append(x.astype(hlo_text.hlo_to_numpy_dtype(leaf.dtype)))
    if inputs is not None:
        # Raw '|V1'/'<V2' arrays (fp8, bf16 as np.save wrote them) as their types.
        params = hlo_text.parse_module(text).entry.parameters()
        if len(params) != len(inputs):
            ap.error(f"{args.hlo} has {len(params)} parameters, got {len(inputs)} inputs")
        for k, p in enumerate(params):
            want = hlo_text.hlo_to_numpy_dtype(p.leaves[0].dtype)
            if inputs[k].dtype != want and inputs[k].dtype.itemsize == want.itemsize:
                inputs[k] = inputs[k].view(want)
    case = run.capture_text(text, args.out, inputs=inputs, dist=args.distribution,
                            seed=args.seed, notes=f"from {os.path.basename(args.hlo)}")
    with open(os.path.join(args.out, "generated.hlo"), "w") as f:
        f.write(text)
    print(f"{args.out}: {len(case['inputs'])} inputs, {len(case['outputs'])} outputs, "
          f"fast math {args.fast_math}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
