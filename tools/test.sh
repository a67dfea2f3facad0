#!/usr/bin/env bash
# README command 2: installs what is missing, builds with warnings as
# errors, and runs the whole test suite twice: as built, and under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tools/setup.sh
jobs=$(nproc)

echo "== build (warnings as errors)"
tools/build.sh build
echo "== build (ASan + UBSan)"
tools/build.sh build-asan -DUSC_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== tests"
(cd build && ctest --output-on-failure -j"$jobs")
echo "== tests under ASan + UBSan"
(cd build-asan && ctest --output-on-failure -j"$jobs")
