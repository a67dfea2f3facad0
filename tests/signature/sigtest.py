"""Helpers shared by the signature tests (run_signature.py, acceptance.py):
failures collected in FAIL, the CLI run with its status checked, and a
case's input files in parameter order."""
import os
import subprocess

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
