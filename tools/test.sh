#!/usr/bin/env bash
# README command 2: installs what is missing, builds with warnings as
# errors, and runs the whole test suite twice: as built, and under
# AddressSanitizer + UndefinedBehaviorSanitizer.  USC_TEST_ASAN=0 leaves
# the second build and run out (CI's fresh-clone run does, see .ci/run).
# Tests of XLA's corpus in ../shared report "skipped" when it is absent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tools/setup.sh
# The tests that need JAX, ml_dtypes or the Python package find their
# interpreter in USC_PYTHON (tools/pyenv.sh makes its environment once).
USC_PYTHON=$(tools/pyenv.sh)
export USC_PYTHON
jobs=$(nproc)

echo "== build (warnings as errors)"
tools/build.sh build
asan=${USC_TEST_ASAN:-1}
if [ "$asan" != 0 ]; then
	echo "== build (ASan + UBSan)"
	tools/build.sh build-asan -DUSC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== tests"
(cd build && ctest --output-on-failure -j"$jobs")
if [ "$asan" != 0 ]; then
	echo "== tests under ASan + UBSan"
	(cd build-asan && ctest --output-on-failure -j"$jobs")
fi
