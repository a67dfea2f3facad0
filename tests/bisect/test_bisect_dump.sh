#!/usr/bin/env bash
# ulpscope bisect on an XLA dump directory (data/dumps/xla_cpu, --module
# NAME) reports what bisect reports on the same run written as a case
# directory (data/dumps/cases): the JSON, less the kernel's and the
# sources' paths, for every program, and with an intermediate given on
# the command line (a wrong one: adam's parameter update passed as its
# first moment, found outside).
# usage: test_bisect_dump.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
dump=$src/data/dumps/xla_cpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
strip() { sed -E 's/"(hlo_file|source)": "[^"]*"/"\1": ""/g' "$1"; }
same() { # NAME, then the arguments after the dump or case
	local k=$1
	shift
	"$cli" bisect "$dump" --module "jit_$k" --json "$@" >"$tmp/dump.json" 2>"$tmp/err"
	local a=$?
	"$cli" bisect "$src/data/dumps/cases/$k" --json "$@" >"$tmp/case.json" 2>>"$tmp/err"
	local b=$?
	[ "$a" = "$b" ] || { echo "FAIL: $k: exit $a on the dump, $b on the case"; cat "$tmp/err"; fail=1; }
	cmp -s <(strip "$tmp/dump.json") <(strip "$tmp/case.json") ||
		{ echo "FAIL: $k: bisect differs on the dump and the case"; diff <(strip "$tmp/dump.json") <(strip "$tmp/case.json") | head; fail=1; }
}
n=0
for case in "$src"/data/dumps/cases/*/; do
	same "$(basename "$case")"
	grep -q '"found": false' "$tmp/dump.json" || { echo "FAIL: $case: a defect found"; fail=1; }
	n=$((n + 1))
done
[ "$n" -ge 5 ] || { echo "FAIL: $n cases"; fail=1; }
same adam_f32 --intermediate "multiply_add_fusion=$src/data/dumps/cases/adam_f32/device_0.npy"
grep -q '"found": true, "first_bad": "multiply_add_fusion"' "$tmp/dump.json" ||
	{ echo "FAIL: the wrong intermediate was not found:"; head -c 400 "$tmp/dump.json"; fail=1; }
# No --module: the modules are listed.
"$cli" bisect "$dump" >"$tmp/out" 2>&1 && fail=1
grep -q "is an XLA dump directory: choose a module with --module NAME_OR_ID" "$tmp/out" ||
	{ echo "FAIL: message:"; cat "$tmp/out"; fail=1; }
exit $fail
