#!/usr/bin/env bash
# Programs with control flow from their protos alone: each case of
# data/control_flow/ (while, conditional, sort, TopK, call) holds the
# HloProto and the HloSnapshot XLA dumped in the run that made it.  A dump
# directory of just those two files, as --xla_dump_hlo_as_proto with
# --xla_dump_hlo_snapshots leaves it (no text), is checked and must be
# judged exactly as the case directory (the JSON reports, less the kernel
# file's path); batch on all of them together judges every one legit.
# usage: test_dump_control_flow.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
strip() { sed -E 's/"hlo_file": "[^"]*", //' "$1"; }

n=0
for case in "$src"/data/control_flow/*/; do
	k=$(basename "$case")
	[ -f "$case/snapshot.pb" ] && [ -f "$case/kernel.hlo.pb" ] || continue
	# XLA's name of the snapshot, module_NNNN.jit_NAME.snapshot.K.pb.
	x=$(grep -o '"xla_file": "[^"]*"' "$case/case.json" | cut -d'"' -f4)
	stem=${x%%.snapshot.*}
	d=$tmp/dumps/$k
	mkdir -p "$d"
	cp "$case/kernel.hlo.pb" "$d/$stem.cpu_after_optimizations.hlo.pb"
	cp "$case/snapshot.pb" "$d/$x"
	"$cli" check "$d" --module "jit_$k" --profile xla-cpu --json >"$tmp/dump.json" 2>"$tmp/err" ||
		{ echo "FAIL: $k: check on the proto-only dump:"; cat "$tmp/err"; fail=1; continue; }
	"$cli" check "$case" --profile xla-cpu --json >"$tmp/case.json" 2>"$tmp/err" ||
		{ echo "FAIL: $k: check on the case:"; cat "$tmp/err"; fail=1; continue; }
	if ! cmp -s <(strip "$tmp/dump.json") <(strip "$tmp/case.json"); then
		echo "FAIL: $k: the proto-only dump and the case are judged differently"
		diff <(strip "$tmp/dump.json" | tr ',' '\n') <(strip "$tmp/case.json" | tr ',' '\n') | head -20
		fail=1
	fi
	echo "$k: $(grep -o '"verdict": "[a-z-]*"' "$tmp/dump.json")"
	n=$((n + 1))
done
[ "$n" -ge 10 ] || { echo "FAIL: $n control-flow cases with protos, expected 10"; fail=1; }

# With the text beside them (the usual dump), the text and the proto of
# each program are compared, no longer set aside as not converted: import
# writes no module_not_compared, and a proto that is not the text's module
# is refused.
for k in top_k_f32 scan_rnn_f32; do
	d=$tmp/dumps/$k
	t=$tmp/text/$k
	mkdir -p "$t"
	cp "$d"/* "$t/"
	pb=$(ls "$t"/*.cpu_after_optimizations.hlo.pb)
	cp "$src/data/control_flow/$k/kernel.hlo" "${pb%.hlo.pb}.txt"
	"$cli" import "$t" -o "$tmp/imp_$k" >/dev/null 2>"$tmp/err" ||
		{ echo "FAIL: $k: import:"; cat "$tmp/err"; fail=1; continue; }
	if grep -rq module_not_compared "$tmp/imp_$k"; then
		echo "FAIL: $k: text and proto not compared:"
		grep -rh module_not_compared "$tmp/imp_$k"; fail=1
	fi
done
# The scan's text beside the TopK's snapshot: two different modules.
bad=$tmp/text/bad
mkdir -p "$bad"
cp "$tmp"/text/top_k_f32/*.snapshot.*.pb "$bad/"
s=$(basename "$(ls "$bad"/*.snapshot.*.pb)")
cp "$src/data/control_flow/scan_rnn_f32/kernel.hlo" "$bad/${s%%.snapshot.*}.cpu_after_optimizations.txt"
if "$cli" check "$bad" --module jit_top_k_f32 >"$tmp/out" 2>&1; then
	echo "FAIL: a snapshot that disagrees with its text was checked"; fail=1
fi
grep -q "cpu_after_optimizations.txt and .*snapshot.*hold different modules" "$tmp/out" ||
	{ echo "FAIL: message:"; cat "$tmp/out"; fail=1; }

# batch over the proto-only dumps: every program judged, none refused.
"$cli" batch "$tmp"/dumps/* --out "$tmp/b.h5" --profile xla-cpu --json >"$tmp/batch.json" 2>"$tmp/err" ||
	{ echo "FAIL: batch on the proto-only dumps:"; cat "$tmp/err"; fail=1; }
ok=$(grep -o '"ok": [0-9]*' "$tmp/batch.json" | head -1 | grep -o '[0-9]*$')
[ "${ok:-0}" -ge 10 ] ||
	{ echo "FAIL: batch judged ${ok:-0} of the proto-only dumps, expected 10:"; head -c 600 "$tmp/batch.json"; cat "$tmp/err"; fail=1; }
exit $fail
