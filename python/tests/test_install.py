"""pip install of the package: the library travels inside it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from ulpscope import _ffi


def test_pip_install_bundles_the_library(tmp_path, root):
    # A copy of python/, so that the build leaves nothing in the checkout.
    src = tmp_path / "src"
    shutil.copytree(root / "python", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                  "__pycache__"))
    target = tmp_path / "site"
    env = dict(os.environ, ULPSCOPE_LIB=_ffi.LIBRARY_PATH)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "--no-build-isolation", "--no-deps", "--no-index",
                    "--target", str(target), str(src)],
                   check=True, env=env, capture_output=True)
    bundled = target / "ulpscope" / "_lib" / "libulpscope.so"
    assert bundled.is_file() and not bundled.is_symlink()
    env = {k: v for k, v in os.environ.items()
           if k not in ("ULPSCOPE_LIB", "PYTHONPATH")}
    env["PYTHONPATH"] = str(target)
    out = subprocess.run(
        [sys.executable, "-c",
         "import ulpscope; print(ulpscope.LIBRARY_PATH); print(ulpscope.version())"],
        check=True, env=env, capture_output=True, text=True, cwd=tmp_path).stdout
    path, version = out.split()
    assert path == str(bundled)
    assert version == _ffi.string(_ffi.lib.usc_version())
