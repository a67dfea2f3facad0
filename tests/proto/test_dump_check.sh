#!/usr/bin/env bash
# ulpscope check on an XLA dump directory against the same run written as a
# case directory by tools/capture (data/dumps/, docs/dumps.md): the verdict
# and every figure must agree (the JSON reports, less the kernel file's
# path).  Then import, and the errors of a dump whose files disagree.
# usage: test_dump_check.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
dump=$src/data/dumps/xla_cpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
strip() { sed -E 's/"hlo_file": "[^"]*", //' "$1"; }

n=0
for case in "$src"/data/dumps/cases/*/; do
	k=$(basename "$case")
	"$cli" check "$dump" --module "jit_$k" --json >"$tmp/dump.json" 2>"$tmp/err" ||
		{ echo "FAIL: check on the dump, module jit_$k:"; cat "$tmp/err"; fail=1; continue; }
	"$cli" check "$case" --json >"$tmp/case.json" ||
		{ echo "FAIL: check on $case"; fail=1; continue; }
	if ! cmp -s <(strip "$tmp/dump.json") <(strip "$tmp/case.json"); then
		echo "FAIL: jit_$k: the dump and the case directory are judged differently"
		diff <(strip "$tmp/dump.json" | tr ',' '\n') <(strip "$tmp/case.json" | tr ',' '\n') | head -20
		fail=1
	fi
	grep -o '"verdict": "[a-z-]*"' "$tmp/dump.json" | sed "s/^/jit_$k: /"
	n=$((n + 1))
done
[ "$n" -ge 5 ] || { echo "FAIL: $n cases under data/dumps/cases, expected 5"; fail=1; }

# import writes case directories that judge alike too.
"$cli" import "$dump" -o "$tmp/imported" >"$tmp/import.out" || { echo "FAIL: import"; fail=1; }
m=$(ls -d "$tmp"/imported/jit_softmax_f32/execution_* | head -1)
"$cli" check "$m" --json >"$tmp/imp.json" || { echo "FAIL: check on $m"; fail=1; }
"$cli" check "$src/data/dumps/cases/softmax_f32" --json >"$tmp/case.json"
cmp -s <(strip "$tmp/imp.json") <(strip "$tmp/case.json") ||
	{ echo "FAIL: the imported softmax_f32 case is judged differently"; fail=1; }
grep -q '"snapshot": "module_0000.jit_softmax_f32.snapshot.' "$m/case.json" ||
	{ echo "FAIL: case.json does not name its snapshot"; fail=1; }

# A snapshot whose module is not the text beside it: an error naming both.
bad=$tmp/bad
mkdir "$bad"
cp "$dump"/module_0000.jit_softmax_f32.snapshot.*.pb "$bad/"
cp "$dump"/module_0002.jit_swiglu_bf16.cpu_after_optimizations.txt \
	"$bad/module_0000.jit_softmax_f32.cpu_after_optimizations.txt"
if "$cli" check "$bad" --module 0 >"$tmp/out" 2>&1; then
	echo "FAIL: a snapshot that disagrees with its text was checked"; fail=1
fi
grep -q "module_0000.jit_softmax_f32.cpu_after_optimizations.txt and .*module_0000.jit_softmax_f32.snapshot.*hold different modules" "$tmp/out" ||
	{ echo "FAIL: message:"; cat "$tmp/out"; fail=1; }

# A module without a snapshot, and a name that is not there.
nosnap=$tmp/nosnap
mkdir "$nosnap"
cp "$dump"/module_0002.jit_swiglu_bf16.cpu_after_optimizations.txt "$nosnap/"
"$cli" check "$nosnap" --module jit_swiglu_bf16 >"$tmp/out" 2>&1 && fail=1
grep -q "no snapshot .*--xla_dump_hlo_snapshots" "$tmp/out" ||
	{ echo "FAIL: message:"; cat "$tmp/out"; fail=1; }
"$cli" check "$dump" --module jit_nothing >"$tmp/out" 2>&1 && fail=1
grep -q "no module 'jit_nothing'; the dump holds 0 jit_softmax_f32" "$tmp/out" ||
	{ echo "FAIL: message:"; cat "$tmp/out"; fail=1; }
exit $fail
