#!/usr/bin/env python3
"""How big and how slow `ulpscope report` is on a batch of 10^4 cases.

usage: report_scale.py ULPSCOPE INDEX N OUT_DIR

Makes scaled-N.h5 beside INDEX: a copy of the batch index INDEX (for instance the
acceptance corpus's, `ulpscope batch data/acceptance --out A.h5`) whose
/batch table repeats INDEX's rows until it has N of them (the links under
/kernels stay those of INDEX, so repeated rows name the same kernels),
then times `ulpscope report` on it (the page goes to OUT_DIR) and prints the page's size.  The
figures go to docs/report.md, "Size and speed".
"""
import os
import shutil
import subprocess
import sys
import time

import h5py
import numpy as np

ulpscope, index, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
os.makedirs(out, exist_ok=True)
# Beside INDEX: its links to the cases' result files are relative to its
# directory.
scaled = os.path.join(os.path.dirname(os.path.abspath(index)),
                      f"scaled-{n}.h5")
shutil.copy(index, scaled)
with h5py.File(scaled, "r+") as f:
    rows = f["batch"][()]
    attrs = dict(f["batch"].attrs)
    big = np.resize(rows, n)
    big["index"] = np.arange(n, dtype=big["index"].dtype)
    del f["batch"]
    d = f.create_dataset("batch", data=big, chunks=True, compression="gzip")
    for k, v in attrs.items():
        d.attrs[k] = v
    d.attrs["case_total"] = np.uint64(n)
page = os.path.join(out, "scaled.html")
for detail in ("50", "0"):
    t = time.perf_counter()
    subprocess.run([ulpscope, "report", scaled, "-o", page, "--detail", detail],
                   check=True, stdout=subprocess.DEVNULL)
    dt = time.perf_counter() - t
    print(f"{n} cases, --detail {detail}: {os.path.getsize(page) / 2**20:.2f} "
          f"MiB in {dt:.2f} s")
