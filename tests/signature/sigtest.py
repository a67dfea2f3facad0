"""Helpers shared by the signature tests (run_signature.py, run_equiv.py,
acceptance.py): where the CLI and the sources are (USC_CLI and
USC_SOURCE_DIR, as ctest sets them), failures collected in FAIL, the CLI
run with its status checked, an evaluation's command line, a case's input
files in parameter order, and the loop that runs the tests in a temporary
directory."""
import os
import subprocess
import tempfile

CLI = os.environ.get("USC_CLI", "ulpscope")
SRC = os.environ.get("USC_SOURCE_DIR",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(SRC, "data", "examples")
HARNESS = os.path.join(SRC, "tests", "classify", "inject_defects.py")

FAIL = []


def fail(msg):
    FAIL.append(msg)
    print("FAIL " + msg)


def run(args, ok=(0,)):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in ok:
        raise RuntimeError("%s -> %d\n%s%s" % (" ".join(args), p.returncode,
                                              p.stdout, p.stderr))
    return p


def inputs_of(d):
    out, i = [], 0
    while os.path.exists(os.path.join(d, "input_%d.npy" % i)):
        out.append(os.path.join(d, "input_%d.npy" % i))
        i += 1
    return out


def cli_eval(hlo, inputs, prefix):
    """ulpscope eval of hlo on the input files, outputs at prefix_<i>.npy."""
    run([CLI, "eval", hlo, "-o", prefix] +
        sum((["--input", x] for x in inputs), []))


def run_tests(prefix, tests):
    """Runs each test on one temporary directory; a RuntimeError (a CLI
    run that failed) is that test's failure.  Returns the exit status."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        for t in tests:
            try:
                t(tmp)
            except RuntimeError as e:
                fail("%s: %s" % (t.__name__, e))
    return 1 if FAIL else 0
