#!/usr/bin/env bash
# Configures and builds ulpscope.  usage: tools/build.sh BUILD_DIR [cmake args...]
set -euo pipefail
dir=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
cmake -S "$root" -B "$dir" -DUSC_WERROR=ON "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
