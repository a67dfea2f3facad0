#!/usr/bin/env bash
# Every numeric option of every subcommand at -1, 0, its maximum, one past
# it and 2^64 (and a few malformed values): a value outside the range
# docs/check.md, docs/explain.md, docs/signatures.md and docs/limits.md
# give is a usage error (exit 2) naming the option and the value; a value
# inside it is taken (the command then fails on the missing kernel, exit
# 1, or succeeds).  A timeout turns a hang (--precision-max -1 once looped
# for ever) into a failure.
set -u
cli=$1
missing=/nonexistent-ulpscope-dir/kernel.hlo
fails=0
two64=18446744073709551616

# run EXPECT WHAT ARGS...: EXPECT is "usage" (exit 2 naming the option
# and the value) or "taken" (any other exit, no complaint about it).
run() {
	local expect=$1 opt=$2 val=$3
	shift 3
	local out rc
	out=$(timeout 60 "$cli" "$@" 2>&1)
	rc=$?
	if [ "$expect" = usage ]; then
		if [ "$rc" != 2 ] || [[ "$out" != *"$opt expects "*"found '$val'"* ]]; then
			echo "FAIL: $* -> exit $rc, expected 2 naming $opt and '$val': $out"
			fails=$((fails + 1))
		fi
	elif [ "$rc" = 2 ] || [ "$rc" = 124 ] || [ "$rc" -gt 128 ] ||
		[[ "$out" == *" expects "* ]]; then
		echo "FAIL: $* -> exit $rc, expected the value to be taken: $out"
		fails=$((fails + 1))
	fi
}

# int CMD-PREFIX OPTION MIN MAX: the sweep of an integer option.
int() {
	local prefix=$1 opt=$2 min=$3 max=$4 next
	next=$(python3 -c "print($max + 1)")
	run usage "$opt" -1 $prefix "$opt" -1
	if [ "$min" = 0 ]; then
		run taken "$opt" 0 $prefix "$opt" 0
	else
		run usage "$opt" 0 $prefix "$opt" 0
		run taken "$opt" "$min" $prefix "$opt" "$min"
		run usage "$opt" "$((min - 1))" $prefix "$opt" "$((min - 1))"
	fi
	run taken "$opt" "$max" $prefix "$opt" "$max"
	run usage "$opt" "$next" $prefix "$opt" "$next"
	run usage "$opt" "$two64" $prefix "$opt" "$two64"
	for bad in "" " 1" "+1" "1x" "1.0" "1e3"; do
		run usage "$opt" "$bad" $prefix "$opt" "$bad"
	done
}

# real CMD-PREFIX OPTION MAX: an option in (0, MAX].
real() {
	local prefix=$1 opt=$2 max=$3 next
	next=$(python3 -c "print($max + 1)")
	for bad in -1 0 "$next" "$two64" nan inf 1e999 "" " 1" 1x; do
		run usage "$opt" "$bad" $prefix "$opt" "$bad"
	done
	run taken "$opt" "$max" $prefix "$opt" "$max"
	run taken "$opt" 0.5 $prefix "$opt" 0.5
}

check="check $missing"
int "$check" --worst 0 1000000
int "$check" --precision-max 64 65536
int "$check" --top-k 1 64
int "$check" --attr-max-ops 1 1000000
real "$check" --lambda 1000000

sig="signature $missing"
int "$sig" --top 1 1000
int "$sig" --max-candidates 1 1000000000
real "$sig" --max-seconds 31536000
real "$sig" --min-fraction 1
int "$sig" --separate-draws 1 10000
int "$sig" --seed 0 4294967295

explain="explain $missing --element 0"
int "$explain" --output 0 65535
int "$explain" --depth 1 1000
int "$explain" --terms 0 1000
int "explain $missing --flat" --element 0 9223372036854775807

int "cast f32 1.5 --round stochastic" --random-bits 1 64
# --random takes any 64-bit word, in decimal or hex.
run usage --random -1 cast f32 1.5 --random -1
run usage --random "$two64" cast f32 1.5 --random "$two64"
run usage --random 0x10000000000000000 cast f32 1.5 --random 0x10000000000000000
run taken --random 18446744073709551615 cast f32 1.5 --random 18446744073709551615
run taken --random 0xffffffffffffffff cast f32 1.5 --random 0xffffffffffffffff
run taken --random 0 cast f32 1.5 --random 0

# The limits every command takes, anywhere after the command name.
for opt in --max-file-size --max-elements; do
	int "hlo $missing" "$opt" 1 1125899906842624
	run taken "$opt" 1K hlo "$missing" "$opt" 1K
	run taken "$opt" 1024T hlo "$missing" "$opt" 1024T
	run usage "$opt" 1025T hlo "$missing" "$opt" 1025T
	run usage "$opt" 1Q hlo "$missing" "$opt" 1Q
	run taken "$opt" 5 check "$opt" 5 "$missing"
done

# A mutant's variant (the library bounds it further per kind).
for v in -1 1001 "$two64" x; do
	out=$("$cli" signature "$missing" --mutant x "narrow/$v" -o /dev/null 2>&1)
	rc=$?
	if [ "$rc" != 2 ] || [[ "$out" != *"found '$v'"* ]]; then
		echo "FAIL: variant $v -> exit $rc: $out"
		fails=$((fails + 1))
	fi
done

# --help of every command with numeric options lists each with its range.
for c in check signature explain cast; do
	out=$("$cli" "$c" --help)
	for want in "an integer from" "--max-file-size BYTES" "--max-elements N"; do
		[[ "$out" == *"$want"* ]] || {
			echo "FAIL: $c --help lacks '$want'"
			fails=$((fails + 1))
		}
	done
done
"$cli" check --help | grep -q -- "--precision-max BITS" &&
	"$cli" check --help | grep -q "an integer from 64 to 65536" || {
	echo "FAIL: check --help lacks --precision-max's range"
	fails=$((fails + 1))
}

echo "$fails failures"
[ "$fails" = 0 ]
