#!/usr/bin/env bash
# ulpscope reduce on the command line: the candidates of generated modules
# all pass `ulpscope hlo --verify` (they come as one file of modules split
# by "// -----"), each announced by a "// candidate" line; usage errors.
# usage: cli_reduce.sh ULPSCOPE
set -u
cli=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for seed in 1 2 3 5 8 13 1029; do
	"$cli" gen --seed $seed --ops 10 -o "$tmp/g.hlo" || fail "gen --seed $seed"
	"$cli" reduce "$tmp/g.hlo" --candidates > "$tmp/c.hlo" || fail "reduce (seed $seed)"
	n=$(grep -c '^// candidate ' "$tmp/c.hlo")
	m=$(grep -c '^HloModule ' "$tmp/c.hlo")
	[ "$n" -gt 0 ] && [ "$n" = "$m" ] || fail "seed $seed: $n candidate lines, $m modules"
	"$cli" hlo --verify "$tmp/c.hlo" > /dev/null || fail "seed $seed: a candidate fails hlo --verify"
done
"$cli" reduce "$tmp/g.hlo" --size | grep -Eq '^instrs [0-9]+ outputs [0-9]+ elements [0-9]+ constants [0-9]+$' \
	|| fail "--size format"
"$cli" reduce "$tmp/g.hlo" > /dev/null 2> "$tmp/err"
[ $? = 2 ] && grep -q "give one of --candidates and --size" "$tmp/err" || fail "no mode: exit 2"
"$cli" reduce "$tmp/missing.hlo" --size > /dev/null 2> "$tmp/err"
[ $? = 1 ] && grep -q "missing.hlo" "$tmp/err" || fail "a missing file is named"
printf 'HloModule m\nENTRY %%e {\n  ROOT %%x = f32[2] parameter(\n}\n' > "$tmp/bad.hlo"
"$cli" reduce "$tmp/bad.hlo" --candidates > /dev/null 2> "$tmp/err"
[ $? = 1 ] && grep -q "bad.hlo:4:1: error: expected parameter number" "$tmp/err" || fail "a parse error names FILE:LINE"
echo ok
