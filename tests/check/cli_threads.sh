#!/usr/bin/env bash
# `ulpscope check -j 2`, and without -j (the default: the number of cores),
# against `-j 1` (docs/check.md, "Threads"): the same --json output byte for
# byte, and result files with the same datasets and attributes, on kernels that split into rows (softmax, layer norm, Adam's
# three outputs), checked a row or two per piece (--piece 128) so that
# there are several pieces to share out.  The datasets are compared with
# h5py when $USC_PYTHON is set (tools/pyenv.sh), all but the file's
# creation time; the JSON always.
# usage: cli_threads.sh ULPSCOPE SOURCE_DIR
set -euo pipefail
cli=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
# The option's help names its default.
"$cli" check --help | grep -q -- '-j N .*(the number of cores)' || {
	echo "check --help does not give -j's default as the number of cores"
	exit 1
}
for c in fastmath-off/softmax_f32/normal_s0 fastmath-off/layer_norm_bf16/normal_s0 \
	fastmath-off/adam_f32/normal_s0 fastmath-on/softmax_f32/large_s0; do
	dir=$src/data/acceptance/$c
	[ -d "$dir" ] || { echo "missing case $dir"; exit 1; }
	for j in 1 2 d; do
		jopt=(-j "$j")
		[ "$j" = d ] && jopt=()
		set +e
		"$cli" check "$dir" --json --piece 128 "${jopt[@]}" --worst 7 \
			--out "$tmp/r$j.h5" >"$tmp/j$j.json"
		echo $? >"$tmp/rc$j"
		set -e
	done
	for j in 2 d; do
		cmp "$tmp/rc1" "$tmp/rc$j" || {
			echo "$c: exit statuses differ (-j 1, -j $j)"
			exit 1
		}
		cmp "$tmp/j1.json" "$tmp/j$j.json" || {
			echo "$c: --json differs between -j 1 and -j $j"
			diff "$tmp/j1.json" "$tmp/j$j.json" | head -5
			exit 1
		}
	done
	grep -q '"verdict"' "$tmp/j1.json" || { echo "$c: no verdict"; exit 1; }
	for j in 2 d; do
		[ -n "${USC_PYTHON:-}" ] || break
		"$USC_PYTHON" - "$tmp/r1.h5" "$tmp/r$j.h5" <<'PY'
import sys
import h5py
import numpy as np

def items(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            for k, v in obj.attrs.items():
                out[name + "@" + k] = np.asarray(v).tobytes()
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()].tobytes() if obj.shape != () else np.asarray(obj[()]).tobytes()
        f.visititems(visit)
        for k, v in f.attrs.items():
            out["/@" + k] = np.asarray(v).tobytes()
    return out

# The file's creation time is the one thing that may differ.
a, b = items(sys.argv[1]), items(sys.argv[2])
a.pop("/@created", None)
b.pop("/@created", None)
if a.keys() != b.keys():
    sys.exit("result files hold different objects: %s" % sorted(set(a) ^ set(b)))
bad = [k for k in a if a[k] != b[k]]
if bad:
    sys.exit("result files differ in %s" % bad[:5])
if not any(k.endswith("ulp_error_oracle") for k in a):
    sys.exit("no per-element dataset found to compare")
PY
	done
	n=$((n + 1))
done
echo "$n cases: -j 2 and the default give what -j 1 gives"
