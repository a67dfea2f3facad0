"""Installs the ulpscope package with libulpscope.so inside it.

``pip install ./python`` from a checkout copies the shared library into
the package (ulpscope/_lib/), taken from, in order: the file ULPSCOPE_LIB
names, the checkout's build/libulpscope.so, or a fresh CMake build of the
library alone in build-python/ (the dependencies of tools/setup.sh must be
installed).  docs/python.md says more.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent


def find_or_build_library() -> Path:
    env = os.environ.get("ULPSCOPE_LIB")
    if env:
        if not Path(env).is_file():
            raise SystemExit(f"ULPSCOPE_LIB={env}: no such file")
        return Path(env)
    built = CHECKOUT / "build" / "libulpscope.so"
    if built.exists():
        return built
    if not (CHECKOUT / "CMakeLists.txt").exists():
        raise SystemExit("libulpscope.so not found: set ULPSCOPE_LIB to the "
                         "library, or install from a checkout of ulpscope")
    build = CHECKOUT / "build-python"
    subprocess.run(["cmake", "-S", str(CHECKOUT), "-B", str(build),
                    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                    "-DUSC_BENCH=OFF"], check=True)
    subprocess.run(["cmake", "--build", str(build), "--target",
                    "ulpscope_shared", "-j", str(os.cpu_count() or 1)],
                   check=True)
    return build / "libulpscope.so"


class BuildPyWithLibrary(build_py):
    """build_py, then the shared library copied into ulpscope/_lib/."""

    def run(self) -> None:
        super().run()
        lib = find_or_build_library()
        dest = Path(self.build_lib) / "ulpscope" / "_lib"
        dest.mkdir(parents=True, exist_ok=True)
        # The real file, not the symbolic link chain of the build folder.
        shutil.copyfile(lib.resolve(), dest / "libulpscope.so")


class BinaryDistribution(Distribution):
    """The wheel holds a native library: tag it for this platform."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPyWithLibrary}, distclass=BinaryDistribution)
