#!/usr/bin/python3
"""run_acceptance.py on trees made here: does it take a GPU tree, and does
it still refuse a broken one?

  test_trees.py ULPSCOPE_CLI SOURCE_DIR

The trees are copies of real captures of data/acceptance/fastmath-off
(outputs that are legit under xla-gpu too: exact adds, a softmax and a
layer norm whose errors are inside both profiles' bounds), with case.json's
`platform` set to "gpu" where the tree is a GPU tree, as
tools/capture/gpu_run.sh writes one (xla-gpu/<setting>/<kernel>/<draw>/).
Each expectation comes from how the tree was built:

  1. a GPU tree with two settings holding the same cases passes, every
     case judged under xla-gpu (the runner checks the profile the CLI
     reports against the one case.json implies);
  2. a setting missing one of its sibling's cases fails, naming both;
  3. a case whose case.json says gpu inside fastmath-off fails (the tree
     says xla-cpu, the case says xla-gpu);
  4. a tree named on the command line that does not exist skips (77).

Exit 0 when all hold, 1 otherwise.  Python's standard library only.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

CASES = ["bias_residual_f32/normal_s0", "softmax_f32/normal_s0",
         "layer_norm_f32/normal_s0"]
FAILS = []


def expect(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL " + what)


def make_tree(src, root, tree, settings, platform):
    for setting in settings:
        for c in CASES:
            d = os.path.join(root, tree, setting, c)
            shutil.copytree(os.path.join(src, c), d)
            path = os.path.join(d, "case.json")
            with open(path) as f:
                case = json.load(f)
            case["platform"] = platform
            case.pop("xla_cpu_enable_fast_math", None)
            with open(path, "w") as f:
                json.dump(case, f)


def runner(src_dir, cli, root, *trees):
    script = os.path.join(src_dir, "tests", "acceptance", "run_acceptance.py")
    p = subprocess.run([sys.executable, script, cli, root, *trees],
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    cli, src_dir = argv[1], argv[2]
    src = os.path.join(src_dir, "data", "acceptance", "fastmath-off")
    with tempfile.TemporaryDirectory() as tmp:
        # 1. a GPU tree, two settings.
        root = os.path.join(tmp, "one")
        make_tree(src, root, "xla-gpu", ["default", "highest"], "gpu")
        rc, out = runner(src_dir, cli, root, "xla-gpu")
        n = 2 * len(CASES)
        expect(rc == 0 and f"{n} of {n} cases pass" in out,
               f"a GPU tree of {n} cases: exit {rc}, expected 0 and all passing:\n{out}")
        # The whole root (no TREE) is the same tree.
        rc, out = runner(src_dir, cli, root)
        expect(rc == 0, f"the root holding only a GPU tree: exit {rc}:\n{out}")

        # 2. a setting with a case missing.
        shutil.rmtree(os.path.join(root, "xla-gpu", "highest", CASES[0]))
        rc, out = runner(src_dir, cli, root, "xla-gpu")
        expect(rc == 1 and "xla-gpu/default" in out and "xla-gpu/highest" in out
               and "same cases" in out,
               f"settings with different cases: exit {rc}, expected 1 naming both:\n{out}")

        # 3. a GPU case in the fastmath-off tree.
        root = os.path.join(tmp, "three")
        make_tree(src, root, ".", ["fastmath-off"], "cpu")
        make_tree(src, root, ".", ["fastmath-on"], "cpu")
        path = os.path.join(root, "fastmath-off", CASES[1], "case.json")
        with open(path) as f:
            case = json.load(f)
        case["platform"] = "gpu"
        with open(path, "w") as f:
            json.dump(case, f)
        # fastmath-on's copies say "no fast math" (popped above): only the
        # fastmath-off tree's own case may be wrong, so fix fastmath-on.
        for c in CASES:
            p = os.path.join(root, "fastmath-on", c, "case.json")
            with open(p) as f:
                case = json.load(f)
            case["xla_cpu_enable_fast_math"] = True
            with open(p, "w") as f:
                json.dump(case, f)
        rc, out = runner(src_dir, cli, root, "fastmath-off", "fastmath-on")
        expect(rc == 1 and f"FAIL fastmath-off/{CASES[1]}" in out and "xla-gpu" in out
               and out.count("FAIL ") == 1,
               f"a GPU case in fastmath-off: exit {rc}, expected 1 and that case only:\n{out}")

        # 4. a tree that is not there.
        rc, out = runner(src_dir, cli, root, "xla-gpu")
        expect(rc == 77, f"a missing tree: exit {rc}, expected 77 (skip):\n{out}")
    print("every expectation holds" if not FAILS else
          f"{len(FAILS)} expectation(s) failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
