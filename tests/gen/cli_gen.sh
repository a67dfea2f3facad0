#!/usr/bin/env bash
# ulpscope gen through the command line: a seed gives the same text every
# time, the text verifies (hlo --verify; tests/gen/test_gen.c evaluates
# many more), -o writes the same text, and bad options are usage errors
# naming what is wrong.  usage: cli_gen.sh ULPSCOPE
set -u
cli=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for seed in 0 1 17 123456789 0xdeadbeef; do
	"$cli" gen --seed "$seed" > "$tmp/a.hlo" || fail "gen --seed $seed"
	"$cli" gen --seed "$seed" > "$tmp/b.hlo" || fail "gen --seed $seed (2)"
	cmp -s "$tmp/a.hlo" "$tmp/b.hlo" || fail "seed $seed: two runs differ"
	"$cli" gen --seed "$seed" -o "$tmp/c.hlo" || fail "gen -o"
	cmp -s "$tmp/a.hlo" "$tmp/c.hlo" || fail "seed $seed: -o differs from stdout"
	"$cli" hlo --verify "$tmp/a.hlo" > "$tmp/v.txt" || fail "seed $seed: hlo --verify failed: $(cat "$tmp/v.txt")"
	grep -q "verified" "$tmp/v.txt" || fail "seed $seed: not verified"
done
# 0xdeadbeef and 3735928559 are one seed.
"$cli" gen --seed 3735928559 | cmp -s - "$tmp/a.hlo" || fail "hex and decimal seeds differ"
# Different seeds, different modules; --ops changes the size.
"$cli" gen --seed 1 > "$tmp/1.hlo"
"$cli" gen --seed 2 > "$tmp/2.hlo"
cmp -s "$tmp/1.hlo" "$tmp/2.hlo" && fail "seeds 1 and 2 give the same module"
small=$("$cli" gen --seed 3 --ops 1 | wc -l)
big=$("$cli" gen --seed 3 --ops 60 | wc -l)
[ "$small" -lt "$big" ] || fail "--ops 60 ($big lines) not larger than --ops 1 ($small)"
"$cli" gen --seed 4 --types f32 | grep -qE "bf16|f16|f8e" && fail "--types f32 let another type in"

expect_usage() {
	local want=$1; shift
	"$cli" gen "$@" > /dev/null 2> "$tmp/err"
	rc=$?
	[ $rc = 2 ] || fail "gen $*: exit status $rc, expected 2"
	grep -q -- "$want" "$tmp/err" || fail "gen $*: message lacks '$want': $(cat "$tmp/err")"
}
expect_usage "seed is required"
expect_usage "--ops" --seed 1 --ops 0
expect_usage "--ops" --seed 1 --ops 201
expect_usage "'s32' is not a type" --seed 1 --types f32,s32
expect_usage "unknown or incomplete option '--bogus'" --seed 1 --bogus
echo "ok"
