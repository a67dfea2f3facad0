#!/usr/bin/env python3
"""Capture fused XLA:CPU kernels from JAX as ulpscope cases and catalogue files.

Offline developer tooling: needs jax (CPU jaxlib), numpy and ml_dtypes (see
requirements.txt).  CI never runs it; what it produces is committed as data.

  # the catalogue: kernels/<name>.hlo (+ kernels/unoptimized/<name>.hlo) and
  # the table in kernels/README.md
  python3 tools/capture/capture.py --catalogue kernels/

  # the committed example cases (tools/capture/kernels.py: EXAMPLES)
  python3 tools/capture/capture.py --examples data/examples/

  # cases of one catalogue kernel: OUT/<kernel>/<distribution>_s<seed>/
  python3 tools/capture/capture.py --cases /tmp/cases --kernel softmax_bf16 \
      --distribution normal,ties --seed 0,1,2

  # fast math on (XLA:CPU's default is off)
  python3 tools/capture/capture.py --fast-math true --cases /tmp/fm --kernel gelu_tanh_f32

  # ... and the values of instructions inside it, for `ulpscope bisect`
  # (intermediate_<name>.npy; 'all': each entry fusion's output, 'all-fused':
  # also the instructions inside the fusions, or NAME,...)
  python3 tools/capture/capture.py --case /tmp/ln --kernel layer_norm_bf16 \
      --intermediates all-fused
  python3 tools/capture/capture.py --add-intermediates /tmp/ln --intermediates mul.2,add.1

  # the acceptance corpus: every kernel x kernels.ACCEPTANCE x fast math off/on,
  # DIR/fastmath-{off,on}/<kernel>/<distribution>_s<seed>/ + table in DIR/README.md
  python3 tools/capture/capture.py --acceptance data/acceptance/

From your own code (a function and concrete arguments):

  import sys; sys.path.insert(0, "tools/capture")
  import capture                      # sets XLA_FLAGS before jax is imported
  capture.setup()                     # ... or call capture.setup() first thing
  import jax, jax.numpy as jnp
  capture.capture_function(my_fn, [x, w], "cases/my_kernel")

The capture itself (setup, compiling, running, writing case directories,
intermediates, snapshots) is python/ulpscope/capture/core.py, the same code
ulpscope.jax.capture runs; this script adds the project's catalogue
(kernels.py), the committed examples and the acceptance corpus, and the
command line.  Every name of ulpscope.capture.core is reachable as
capture.NAME, as before the move.

A case directory holds kernel.hlo, case.json, input_<i>.npy, device_<i>.npy
and, with --intermediates, intermediate_<name>.npy (docs/cases.md).  XLA_FLAGS is read once, when jax's CPU backend starts, so
setup() must run before the first jax computation.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for _p in (HERE, os.path.join(REPO, "python")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import numpy as np  # noqa: E402

from ulpscope.capture import core as _core  # noqa: E402
from ulpscope.capture import hlo_text  # noqa: E402
from ulpscope.capture.core import (  # noqa: E402,F401
    DISTRIBUTIONS, PLATFORMS, Compiled, _flags_for_record, _versions,
    capture_function, capture_intermediates, describe_fusions, draw_inputs,
    main_fusion, module_op_count, write_case, write_snapshot)

_STATE = _core._STATE


def setup(*args, **kwargs):
    """ulpscope.capture.core.setup, with source locations relative to the
    checkout and this script's frames kept out of the HLO."""
    kwargs.setdefault("source_root", REPO)
    kwargs.setdefault("exclude", (os.path.abspath(__file__),))
    return _core.setup(*args, **kwargs)


def __getattr__(name):
    # Everything else of the capture (describe_fusions, _dumps_of, ...).
    return getattr(_core, name)

# ---------------------------------------------------------------------------
# Catalogue kernels
# ---------------------------------------------------------------------------

_COMPILED = {}


def compile_kernel(kernel):
    if kernel.name not in _COMPILED:
        _COMPILED[kernel.name] = Compiled(kernel.name, kernel.fn,
                                          [(a.shape, a.dtype) for a in kernel.args])
    return _COMPILED[kernel.name]


def capture_kernel_case(kernel, dist, seed, out_dir, intermediates=None):
    comp = compile_kernel(kernel)
    inputs = draw_inputs(kernel, dist, seed)
    before = comp.snapshots_now()
    outputs = comp.run(inputs)
    case = write_case(
        out_dir, comp, inputs, outputs,
        function=f"tools/capture/kernels.py:{kernel.fn.__name__}",
        kernel_name=kernel.name, dtype=kernel.dtype, seed=seed, distribution=dist,
        notes=f"{kernel.source}; {kernel.formula}.",
        arg_names=kernel.arg_names(), roles=[a.role for a in kernel.args],
        extra={"catalogue_file": f"kernels/{kernel.name}.hlo"})
    rec = write_snapshot(out_dir, comp, inputs, outputs, before)
    if rec:
        case["snapshot"] = rec
        with open(os.path.join(out_dir, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
    if intermediates:
        case["intermediates"] = capture_intermediates(out_dir, intermediates)
    return case


def _rel(p):
    p = os.path.abspath(p)
    return os.path.relpath(p, REPO) if p.startswith(REPO + os.sep) else p


def _replace_between_markers(path, begin, end, body, template):
    text = open(path).read() if os.path.exists(path) else ""
    if begin in text and end in text:
        a = text.index(begin) + len(begin)
        b = text.index(end)
        text = text[:a] + "\n" + body + "\n" + text[b:]
    else:
        text = template.replace("@TABLE@", begin + "\n" + body + "\n" + end)
    with open(path, "w") as f:
        f.write(text)


_CAT_BEGIN = "<!-- BEGIN CATALOGUE (generated by tools/capture/capture.py --catalogue) -->"
_CAT_END = "<!-- END CATALOGUE -->"
_EX_BEGIN = "<!-- BEGIN CASES (generated by tools/capture/capture.py --examples) -->"
_EX_END = "<!-- END CASES -->"


def write_catalogue(out_dir, only=None):
    import kernels as K
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(os.path.join(out_dir, "unoptimized"), exist_ok=True)
    rows = []
    vers = _versions()
    for k in K.KERNELS:
        if only and k.name not in only:
            continue
        comp = compile_kernel(k)
        with open(os.path.join(out_dir, f"{k.name}.hlo"), "w") as f:
            f.write(comp.hlo)
        if comp.unoptimized:
            with open(os.path.join(out_dir, "unoptimized", f"{k.name}.hlo"), "w") as f:
                f.write(comp.unoptimized)
        fus = describe_fusions(comp.module)
        main = main_fusion(fus)
        mainf = next((f for f in fus if f["name"] == main), None)
        others = [f"{f['name']} ({f['op_count']})" for f in fus if f["name"] != main]
        sig = ", ".join(f"{a.name}: {hlo_text.numpy_to_hlo_dtype(np.dtype(a.dtype))}"
                        f"[{','.join(map(str, a.shape))}]" for a in k.args)
        rows.append(
            f"| `{k.name}.hlo` | `{k.source}` — {k.formula}; ({sig}) | {k.dtype} | "
            f"`{main}` ({mainf['op_count'] if mainf else 0}) | "
            f"{', '.join('`' + o.split(' ')[0] + '` ' + o.split(' ')[1] for o in others) or '—'} | "
            f"{module_op_count(comp.module)} | `--catalogue kernels/ --only {k.name}` |")
        print(f"{k.name}: {len(fus)} fusion(s), main {main}, "
              f"{module_op_count(comp.module)} ops, as_text==dump: {comp.as_text_matches_dump}")
    if only:
        return
    head = ("| file | computes (JAX source — formula; arguments) | dtype | main fusion (ops) | "
            "other fusions (ops) | module ops | capture (`python3 tools/capture/capture.py ...`) |\n"
            "|---|---|---|---|---|---|---|")
    flags = _flags_for_record()
    body = (f"Captured with jax {vers['jax_version']}, jaxlib {vers['jaxlib_version']} on "
            f"XLA:CPU ({platform.machine()}), XLA_FLAGS `{flags}`.\n\n" + head + "\n" + "\n".join(rows))
    _replace_between_markers(os.path.join(out_dir, "README.md"), _CAT_BEGIN, _CAT_END, body,
                             "# kernels/\n\n@TABLE@\n")


def write_examples(out_root, intermediates=None):
    """The committed examples (kernels.EXAMPLES); a (distribution, seed,
    spec) entry also records intermediates (capture_intermediates), as does
    every case when intermediates is given."""
    import kernels as K
    rows = []
    total = 0
    for kname, cases in K.EXAMPLES:
        k = K.BY_NAME[kname]
        for dist, seed, *spec in cases:
            d = os.path.join(out_root, kname, f"{dist}_s{seed}")
            which = intermediates or (spec[0] if spec else None)
            case = capture_kernel_case(k, dist, seed, d, intermediates=which)
            size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
            total += size
            ins = ", ".join(r["type"] for r in case["inputs"])
            outs = ", ".join(r["type"] for r in case["outputs"])
            fus = case["fusion"] or f"null (main `{case['main_fusion']}` of {len(case['fusions'])})"
            if case["fusion"]:
                fus = f"`{fus}`"
            inter = "—"
            if "intermediates" in case:
                im = case["intermediates"]
                inter = (f"{len(im['files'])} (`{im['requested']}`), outputs "
                         f"{'bit-identical' if im['outputs_match'] else 'DIFFER'}")
            rows.append(f"| `{kname}/{dist}_s{seed}/` | {k.dtype} | {dist} | {seed} | {ins} | "
                        f"{outs} | {fus} | {inter} | {size // 1024} KiB |")
            print(f"{d}: {len(case['inputs'])} in, {len(case['outputs'])} out, {size} bytes")
    head = ("| case | dtype | distribution | seed | inputs | device outputs | fusion | "
            "intermediates | size |\n|---|---|---|---|---|---|---|---|---|")
    body = head + "\n" + "\n".join(rows) + f"\n\nTotal: {total // 1024} KiB."
    _replace_between_markers(os.path.join(out_root, "README.md"), _EX_BEGIN, _EX_END, body,
                             "# data/examples/\n\n@TABLE@\n")


_ACC_BEGIN = "<!-- BEGIN CORPUS (generated by tools/capture/capture.py --acceptance) -->"
_ACC_END = "<!-- END CORPUS -->"
ACCEPTANCE_SETTINGS = (("fastmath-off", "false"), ("fastmath-on", "true"))


def write_acceptance_part(out_dir, names):
    """One fast-math setting (this process's XLA_FLAGS): every kernel in names
    x kernels.ACCEPTANCE, as out_dir/<kernel>/<dist>_s<seed>/."""
    import kernels as K
    for n in names:
        for dist, seed in K.ACCEPTANCE:
            d = os.path.join(out_dir, n, f"{dist}_s{seed}")
            capture_kernel_case(K.BY_NAME[n], dist, seed, d)
        print(f"{out_dir}/{n}: {len(K.ACCEPTANCE)} cases", flush=True)


def write_acceptance(out_root, names):
    """The acceptance corpus: both fast-math settings, each in its own process
    (XLA reads XLA_FLAGS once per process), then the table in out_root/README.md."""
    import subprocess
    import kernels as K
    for sub, fm in ACCEPTANCE_SETTINGS:
        cmd = [sys.executable, os.path.abspath(__file__), "--fast-math", fm,
               "--acceptance-part", os.path.join(out_root, sub), "--kernel", ",".join(names)]
        subprocess.run(cmd, check=True)
    rows = []
    total = 0
    ncases = 0
    for k in K.KERNELS:
        row_size = []
        hlos = set()
        case = None
        for sub, _ in ACCEPTANCE_SETTINGS:
            size = 0
            for dist, seed in K.ACCEPTANCE:
                d = os.path.join(out_root, sub, k.name, f"{dist}_s{seed}")
                if not os.path.isdir(d):
                    continue
                ncases += 1
                size += sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
                with open(os.path.join(d, "case.json")) as f:
                    case = json.load(f)
                hlos.add(case["hlo_sha256"])
            row_size.append(size)
            total += size
        if case is None:
            continue
        ins = ", ".join(r["type"] for r in case["inputs"])
        outs = ", ".join(r["type"] for r in case["outputs"])
        same = "yes" if len(hlos) == 1 else f"no ({len(hlos)} modules)"
        rows.append(f"| `{k.name}` | {k.dtype} | {ins} | {outs} | {len(case['fusions'])} | "
                    f"{same} | {row_size[0] // 1024} + {row_size[1] // 1024} KiB |")
    dists = ", ".join(f"{d}_s{s}" for d, s in K.ACCEPTANCE)
    head = ("| kernel | dtype | inputs | device outputs | fusions | one kernel.hlo for all "
            "cases (fast math off and on) | size (off + on) |\n|---|---|---|---|---|---|---|")
    body = (f"Cases per kernel and setting: {dists}.\n\n" + head + "\n" + "\n".join(rows) +
            f"\n\n{ncases} cases, total {total / 2**20:.1f} MiB.")
    _replace_between_markers(os.path.join(out_root, "README.md"), _ACC_BEGIN, _ACC_END, body,
                             "# data/acceptance/\n\n@TABLE@\n")


def _csv(s):
    return [x for x in s.split(",") if x] if s else []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalogue", metavar="DIR", help="write DIR/<kernel>.hlo for the catalogue")
    ap.add_argument("--only", default="", help="comma list of kernel names (with --catalogue)")
    ap.add_argument("--examples", metavar="DIR", help="write the committed example cases")
    ap.add_argument("--cases", metavar="DIR", help="write DIR/<kernel>/<dist>_s<seed>/")
    ap.add_argument("--case", metavar="DIR", help="write one case into DIR")
    ap.add_argument("--acceptance", metavar="DIR",
                    help="the acceptance corpus: DIR/fastmath-{off,on}/<kernel>/<dist>_s<seed>/ "
                         "for kernels.ACCEPTANCE (every kernel unless --kernel)")
    ap.add_argument("--acceptance-part", metavar="DIR", help=argparse.SUPPRESS)
    ap.add_argument("--kernel", default="",
                    help="comma list of catalogue kernels ('all': the whole catalogue)")
    ap.add_argument("--distribution", default="normal",
                    help="comma list of " + ", ".join(DISTRIBUTIONS))
    ap.add_argument("--seed", default="0", help="comma list of seeds")
    ap.add_argument("--fast-math", choices=("true", "false"), default=None,
                    help="pass --xla_cpu_enable_fast_math (default: XLA's default, off)")
    ap.add_argument("--platform", choices=tuple(PLATFORMS), default="cpu",
                    help="capture on XLA:CPU (default) or XLA:GPU (jax's CUDA plugin); "
                         "case.json records the platform, and for gpu the device, its "
                         "compute capability and the CUDA/cuDNN/driver versions")
    ap.add_argument("--xla-flag", metavar="FLAG", action="append", default=[],
                    help="one more XLA flag, e.g. --xla-flag=--xla_gpu_enable_triton_gemm=false "
                         "(repeatable; recorded in case.json's xla_flags)")
    ap.add_argument("--matmul-precision", metavar="P", default=None,
                    help="jax_default_matmul_precision (default, high, highest, ...); "
                         "default: jax's")
    ap.add_argument("--intermediates", metavar="SPEC", default=None,
                    help="with --case/--cases/--examples: also record the values of "
                         "instructions as intermediate_<name>.npy (for ulpscope bisect): "
                         "'all' (every entry instruction that is not an output: each entry "
                         "fusion's output), 'all-fused' (and the instructions inside each "
                         "entry fusion), or NAME,... (entry or fused-computation "
                         "instructions); --examples: overrides the specs in kernels.EXAMPLES")
    ap.add_argument("--add-intermediates", metavar="CASE_DIR", action="append", default=[],
                    help="record intermediates (--intermediates SPEC, default all) in an "
                         "existing case directory; repeatable")
    ap.add_argument("--keep-dump", metavar="DIR", help="dump to DIR and keep it")
    ap.add_argument("--snapshots", nargs="?", const="auto", choices=("auto", "python"),
                    default=None,
                    help="also write each case's run as snapshot.pb, an HloSnapshot: XLA's "
                         "own (--xla_dump_hlo_snapshots) where the backend writes one, else "
                         "written from Python ('python' always does); case.json's "
                         "snapshot.made_by says which (docs/dumps.md)")
    ap.add_argument("--list", action="store_true", help="list the catalogue kernels")
    a = ap.parse_args(argv)
    if a.intermediates is not None and not (a.case or a.cases or a.examples or
                                             a.add_intermediates):
        ap.error("--intermediates goes with --case, --cases, --examples or "
                 "--add-intermediates")

    if a.keep_dump:
        os.makedirs(a.keep_dump, exist_ok=True)
    fm = None if a.fast_math is None else (a.fast_math == "true")
    if a.platform != "cpu" and (fm is not None or a.acceptance or a.intermediates
                                or a.add_intermediates):
        ap.error("--fast-math, --acceptance and --intermediates are XLA:CPU only; "
                 f"not with --platform {a.platform}")
    try:
        setup(fast_math=fm, dump_dir=os.path.abspath(a.keep_dump) if a.keep_dump else None,
              extra_flags=a.xla_flag, platform=a.platform,
              matmul_precision=a.matmul_precision, snapshots=a.snapshots)
    except RuntimeError as e:
        print(f"capture: error: {e}", file=sys.stderr)
        return 1
    import kernels as K

    try:
        if a.list:
            for k in K.KERNELS:
                print(f"{k.name:32s} {k.dtype:24s} {k.source}")
        if a.catalogue:
            write_catalogue(a.catalogue, set(_csv(a.only)) or None)
        if a.examples:
            write_examples(a.examples, a.intermediates)
        names = _csv(a.kernel)
        if names == ["all"]:
            names = [k.name for k in K.KERNELS]
        for n in names:
            if n not in K.BY_NAME:
                ap.error(f"unknown kernel {n}; see --list")
        if a.acceptance:
            if a.fast_math is not None:
                ap.error("--acceptance sets fast math itself (both settings)")
            write_acceptance(a.acceptance, names or [k.name for k in K.KERNELS])
        if a.acceptance_part:
            write_acceptance_part(a.acceptance_part, names)
        for d in a.add_intermediates:
            rec = capture_intermediates(d, a.intermediates or "all")
            print(f"{d}: {len(rec['files'])} intermediates, outputs "
                  f"{'bit-identical' if rec['outputs_match'] else 'DIFFERENT'}")
        if a.cases or a.case:
            if not names:
                ap.error("--cases/--case need --kernel")
            dists, seeds = _csv(a.distribution), [int(s) for s in _csv(a.seed)]
            for d in dists:
                if d not in DISTRIBUTIONS:
                    ap.error(f"unknown distribution {d}")
            if a.case:
                if len(names) * len(dists) * len(seeds) != 1:
                    ap.error("--case takes one kernel, one distribution, one seed")
                capture_kernel_case(K.BY_NAME[names[0]], dists[0], seeds[0], a.case,
                                    intermediates=a.intermediates)
                print(a.case)
            else:
                failed = []
                for n in names:
                    for d in dists:
                        for s in seeds:
                            out = os.path.join(a.cases, n, f"{d}_s{s}")
                            try:
                                capture_kernel_case(K.BY_NAME[n], d, s, out,
                                                    intermediates=a.intermediates)
                            except Exception as e:  # noqa: BLE001
                                # One kernel XLA (or this tool's HLO reader)
                                # cannot take must not cost the others: a
                                # GPU run is one short try.  Named at the end.
                                failed.append(f"{n}/{d}_s{s}: {type(e).__name__}: {e}")
                                print(f"capture: error: {failed[-1]}", file=sys.stderr)
                                continue
                            print(out)
                if failed:
                    raise ValueError(f"{len(failed)} case(s) failed: " + "; ".join(failed))
    except ValueError as e:
        # A name that is not in the module, an instruction that cannot be an
        # output, a case captured with another fast-math setting: say which.
        print(f"capture: error: {e}", file=sys.stderr)
        return 1
    finally:
        if not a.keep_dump and _STATE["dump_dir"] and \
                os.path.basename(_STATE["dump_dir"]).startswith("ulpscope_xla_dump_"):
            shutil.rmtree(_STATE["dump_dir"], ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
