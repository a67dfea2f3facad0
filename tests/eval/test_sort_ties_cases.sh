#!/usr/bin/env bash
# Sorts and top-k whose device outputs have tie groups permuted
# (data/sort_ties/, made by tools/capture/sort_ties.py in numpy from real
# XLA:CPU outputs): legit_* (ties of an unstable sort or of TopK
# permuted) are legit with every element bit-exact, since the reference
# takes the device's order among ties; defect_* (ties of a stable sort
# permuted, or a pair that does not tie swapped) are defects, and a swap
# of one pair is exactly its two positions in each output it shows in.
# usage: test_sort_ties_cases.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
sum() { grep -o "\"$1\": [0-9]*" "$2" | awk '{s+=$2} END {print s+0}'; }
for case in "$src"/data/sort_ties/*/; do
	k=$(basename "$case")
	# Exit status 0 is legit, 4 a defect (docs/check.md).
	"$cli" check "$case" --profile xla-cpu --json >"$tmp/$k.json" 2>"$tmp/err"
	rc=$?
	want_rc=0
	case $k in defect_*) want_rc=4 ;; esac
	if [ "$rc" != "$want_rc" ]; then
		echo "FAIL: $k: exit status $rc, want $want_rc:"; cat "$tmp/err"; fail=1; continue
	fi
	# Elements outside the envelope, of every class (sign mismatches too).
	defects=$(grep -o '"reason": "defect: [0-9]*' "$tmp/$k.json" | grep -o '[0-9]*$')
	defects=${defects:-0}
	case $k in
	legit_*)
		grep -q '"verdict": "legit"' "$tmp/$k.json" ||
			{ echo "FAIL: $k: not legit: $(grep -o '"reason": "[^"]*"' "$tmp/$k.json")"; fail=1; }
		c=$(sum count "$tmp/$k.json")
		b=$(sum bit_exact "$tmp/$k.json")
		[ "$c" = "$b" ] && [ "$c" -gt 0 ] ||
			{ echo "FAIL: $k: $b of $c elements bit-exact"; fail=1; }
		;;
	defect_*)
		grep -q '"verdict": "defect"' "$tmp/$k.json" ||
			{ echo "FAIL: $k: not a defect: $(grep -o '"reason": "[^"]*"' "$tmp/$k.json")"; fail=1; }
		case $k in
		defect_argsort_*_nontie_swapped) want=2 ;;  # one output
		defect_sort_pairs_*_nontie_swapped) want=4 ;;  # keys, payloads
		*) want= ;;
		esac
		if [ -n "$want" ] && [ "$defects" != "$want" ]; then
			echo "FAIL: $k: $defects defect elements, want $want"; fail=1
		fi
		;;
	esac
	echo "$k: $defects defect: $(grep -o '"reason": "[^"]*"' "$tmp/$k.json")"
	n=$((n + 1))
done
[ "$n" -ge 7 ] || { echo "FAIL: $n cases under data/sort_ties, expected 7"; fail=1; }

# An unstable argsort whose indices feed an add (tests/eval/
# sort_ties_internal): the tied 1s at 0 and 1 carry indices 0 and 1, and
# the device's order of them is unseen, so the envelope is unknown and
# the two elements that differ from the stable order are undecided
# (exit status 5), the reason naming the sort.
d="$src/tests/eval/sort_ties_internal"
"$cli" check "$d/kernel.hlo" --input "$d/input_0.npy" --device "$d/device_0.npy" \
	--profile xla-cpu >"$tmp/internal" 2>&1
rc=$?
[ "$rc" = 5 ] || { echo "FAIL: internal: exit status $rc, want 5"; cat "$tmp/internal"; fail=1; }
grep -q "undecided: 2 of 4 elements could not be classified; the envelope is unknown: the elements of the unstable sort that compare equal from position 1 of its result on differ in a result that feeds further ops and is no output, so the device's order among them, which that result depends on, is unknown at 14:3 (instruction 's')" "$tmp/internal" ||
	{ echo "FAIL: internal: message:"; cat "$tmp/internal"; fail=1; }
exit $fail
