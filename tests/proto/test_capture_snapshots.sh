#!/usr/bin/env bash
# tools/capture/capture.py --snapshots: each case's snapshot.pb, XLA's own
# (auto) or written from Python (python), must be the run the case holds.
# Each is put in a directory under XLA's dump names beside the case's
# kernel.hlo, and `ulpscope check` on that dump must judge it exactly as on
# the case (docs/dumps.md).  Needs the Python environment (USC_PYTHON).
# usage: test_capture_snapshots.sh ULPSCOPE SOURCE_DIR
set -u
[ -n "${USC_PYTHON:-}" ] || { echo "skipped: USC_PYTHON is not set (tools/pyenv.sh)"; exit 77; }
cli=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
strip() { sed -E 's/"hlo_file": "[^"]*", //' "$1"; }
# XLA's own for a tuple result; Python's for a tuple and for scalar inputs.
for mode in auto python; do
	kernels=adam_f32
	[ "$mode" = python ] && kernels=adam_f32,fp8_quantize_f32
	"$USC_PYTHON" "$src/tools/capture/capture.py" --snapshots "$mode" \
		--cases "$tmp/$mode" --kernel "$kernels" \
		--distribution normal --seed 0 >/dev/null 2>"$tmp/err" ||
		{ echo "FAIL: capture --snapshots $mode"; cat "$tmp/err"; exit 1; }
	for case in "$tmp/$mode"/*/normal_s0; do
		k=$(basename "$(dirname "$case")")
		want=$([ "$mode" = auto ] && echo xla || echo python)
		grep -q "\"made_by\": \"$want\"" "$case/case.json" ||
			{ echo "FAIL: $k ($mode): case.json does not say made_by $want"; fail=1; }
		d=$tmp/dump_${mode}_$k
		mkdir "$d"
		cp "$case/snapshot.pb" "$d/module_0001.jit_$k.snapshot.0.pb"
		cp "$case/kernel.hlo" "$d/module_0001.jit_$k.cpu_after_optimizations.txt"
		"$cli" check "$d" --module 1 --json >"$tmp/d.json" 2>"$tmp/err" ||
			{ echo "FAIL: $k ($mode): check on the snapshot:"; cat "$tmp/err"; fail=1; continue; }
		"$cli" check "$case" --json >"$tmp/c.json"
		cmp -s <(strip "$tmp/d.json") <(strip "$tmp/c.json") ||
			{ echo "FAIL: $k ($mode): the snapshot is judged differently from the case"; fail=1; }
		echo "$k ($mode): $(grep -o '"verdict": "[a-z-]*"' "$tmp/d.json")"
	done
done
exit $fail
