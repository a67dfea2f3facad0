#!/usr/bin/env bash
# Makes (once) the Python environment of the tests and of the Python
# package, a virtual environment with tools/requirements-dev.txt, and
# prints the path of its python.  The environment lives outside the
# checkout, under ${USC_PYENV_ROOT:-$HOME/.cache/ulpscope}, named by a hash
# of the requirements, so clones of the same tree share it and a change of
# requirements makes a new one.  usage: py=$(tools/pyenv.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
req=$root/tools/requirements-dev.txt
hash=$(sha256sum "$req" | cut -c1-12)
dir=${USC_PYENV_ROOT:-$HOME/.cache/ulpscope}/venv-$hash
if [ ! -x "$dir/bin/python" ] || [ ! -e "$dir/.complete" ]; then
	echo "pyenv: making $dir (pip install -r tools/requirements-dev.txt)" >&2
	rm -rf "$dir"
	mkdir -p "$(dirname "$dir")"
	/usr/bin/python3 -m venv "$dir" >&2
	"$dir/bin/pip" install -q --disable-pip-version-check -r "$req" >&2
	touch "$dir/.complete"
fi
echo "$dir/bin/python"
