#!/usr/bin/env bash
# Real XLA:CPU programs with control flow (data/control_flow/, made by
# tools/capture/control_flow.py): while (scan, fori_loop, a jax.random
# loop, a float condition), sort, argsort, TopK, cond, switch and call (a
# nested jax.jit whose calls XLA:CPU kept), and sorts and top-k with many
# ties (unstable ones in the device's order among ties, docs/evaluator.md,
# "Sort order").  Each is
# judged under xla-cpu, not refused, with not one element defect; the
# sorts, TopK and switch reproduce XLA's output bit for bit.  Then a
# device output made wrong is caught, and a loop over the iteration bound
# is an error naming its line:column.
# usage: test_control_flow_cases.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for case in "$src"/data/control_flow/*/; do
	k=$(basename "$case")
	if ! "$cli" check "$case" --profile xla-cpu --json >"$tmp/$k.json" 2>"$tmp/err"; then
		echo "FAIL: $k: check failed:"; cat "$tmp/err"; fail=1; continue
	fi
	grep -q '"verdict": "legit"' "$tmp/$k.json" ||
		{ echo "FAIL: $k: not legit: $(grep -o '"reason": "[^"]*"' "$tmp/$k.json")"; fail=1; }
	if grep -o '"defect": [0-9]*' "$tmp/$k.json" | grep -vq '"defect": 0$'; then
		echo "FAIL: $k: defect elements"; fail=1
	fi
	case $k in
	sort_*|argsort_*|top_k_*|switch_*)
		# Every output element equal to XLA's: bit_exact == count.
		c=$(grep -o '"count": [0-9]*' "$tmp/$k.json" | awk '{s+=$2} END {print s}')
		b=$(grep -o '"bit_exact": [0-9]*' "$tmp/$k.json" | awk '{s+=$2} END {print s}')
		[ "$c" = "$b" ] && [ "$c" -gt 0 ] ||
			{ echo "FAIL: $k: $b of $c elements bit-exact"; fail=1; }
		;;
	esac
	echo "$k: $(grep -o '"reason": "[^"]*"' "$tmp/$k.json")"
	n=$((n + 1))
done
[ "$n" -ge 15 ] || { echo "FAIL: $n cases under data/control_flow, expected 15"; fail=1; }
# The call case holds calls that XLA:CPU ran as calls, not inlined.
[ "$(grep -c ' call(' "$src/data/control_flow/call_nested_jit_f32/kernel.hlo")" -ge 2 ] ||
	{ echo "FAIL: call_nested_jit_f32 lacks its two calls"; fail=1; }

# A wrong device value (the last element of the sorted rows: 100.0) is a
# defect, so the checks above can fail.
cp -r "$src/data/control_flow/sort_rows_f32" "$tmp/bad"
size=$(stat -c %s "$tmp/bad/device_0.npy")
printf '\x00\x00\xc8\x42' | dd of="$tmp/bad/device_0.npy" bs=1 seek=$((size - 4)) conv=notrunc 2>/dev/null
"$cli" check "$tmp/bad" --profile xla-cpu --json >"$tmp/bad.json" 2>&1
grep -q '"verdict": "defect"' "$tmp/bad.json" ||
	{ echo "FAIL: a wrong sorted value was not a defect:"; head -c 400 "$tmp/bad.json"; fail=1; }

# The scan runs 16 iterations: a bound of 10 stops it, naming the while.
if "$cli" check "$src/data/control_flow/scan_rnn_f32" --max-iterations 10 >"$tmp/out" 2>&1; then
	echo "FAIL: --max-iterations 10 did not stop a 16-iteration loop"; fail=1
fi
grep -q "kernel.hlo: while loop still running after 10 iterations (its condition '[^']*' still holds); the limit is --max-iterations N (docs/limits.md) at [0-9]*:[0-9]* (instruction 'while[^']*')" "$tmp/out" ||
	{ echo "FAIL: message:"; cat "$tmp/out"; fail=1; }
exit $fail
