#!/usr/bin/env bash
# The limits on what is read, through the command line (docs/limits.md):
# issue 12's `hlo /dev/zero` (read until memory ran out), a FIFO (blocked
# for ever) and a 105-byte module declaring f32[1610612736] (eval filled
# 6 GiB) each fail at once with exit 1 and a message naming the file and
# the limit; --max-file-size and --max-elements raise the limits; "-"
# reads standard input under the same cap.  Memory is capped so that a
# reader that ignored the limits fails here instead of swapping (except
# under AddressSanitizer, which cannot start with a cap on address space).
set -u
cli=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
if (ulimit -v 2000000 && "$cli" --version) >/dev/null 2>&1; then
	ulimit -v 2000000
fi

# expect RC SUBSTRING CMD...: the exit status and a part of the output.
expect() {
	local want_rc=$1 want=$2 out rc
	shift 2
	out=$(timeout 30 "$@" 2>&1 </dev/null)
	rc=$?
	if [ "$rc" != "$want_rc" ] || [[ "$out" != *"$want"* ]]; then
		echo "FAIL: $* -> exit $rc (expected $want_rc), output: ${out:0:400}"
		echo "      expected to contain: $want"
		fails=$((fails + 1))
	fi
}

mkfifo "$tmp/k.hlo"
mkdir "$tmp/d.hlo"
regular="not a regular file; ulpscope reads its inputs from regular files only"
expect 1 "/dev/zero: is a character device, $regular" "$cli" hlo /dev/zero
expect 1 "$tmp/k.hlo: is a FIFO (named pipe), $regular" "$cli" hlo "$tmp/k.hlo"
expect 1 "$tmp/k.hlo: is a FIFO (named pipe), $regular" "$cli" eval "$tmp/k.hlo"
expect 1 "$tmp/d.hlo: is a directory, $regular" "$cli" hlo "$tmp/d.hlo"
expect 1 "$tmp/k.hlo: is a FIFO (named pipe), $regular" \
	"$cli" check "$tmp/k.hlo" --device "$tmp/k.hlo"

printf 'HloModule big\nENTRY e {\n  c = f32[] constant(1)\n  ROOT b = f32[1610612736] broadcast(c), dimensions={}\n}\n' >"$tmp/big.hlo"
limit="f32[1610612736] has 1610612736 elements, more than the limit of 268435456 on one tensor (raise it with --max-elements, or usc_limits_set; docs/limits.md) at 4:8 (instruction 'b')"
expect 1 "$tmp/big.hlo: $limit" "$cli" eval "$tmp/big.hlo"
npy="$tmp/d.npy"
printf '\x93NUMPY\x01\x00\x76\x00{"descr": "<f4", "fortran_order": False, "shape": (1,), }' >"$npy"
printf '%*s\n' $((128 - 10 - 62 - 1)) '' >>"$npy"
printf '\0\0\0\0' >>"$npy"
for c in check signature; do
	expect 1 "$tmp/big.hlo: $limit" "$cli" "$c" "$tmp/big.hlo" --device "$npy"
done
expect 1 "$tmp/big.hlo: $limit" "$cli" explain "$tmp/big.hlo" --device "$npy" --element 0 --flat
# Hitting the limit exactly is allowed: f32[1000] under 1000, not 999.
printf 'HloModule s\nENTRY e {\n  c = f32[] constant(1)\n  ROOT b = f32[1000] broadcast(c), dimensions={}\n}\n' >"$tmp/small.hlo"
expect 1 "f32[1000] has 1000 elements, more than the limit of 999 on one tensor" \
	"$cli" eval "$tmp/small.hlo" --max-elements 999
expect 0 "output 0: f32[1000]" "$cli" eval "$tmp/small.hlo" --max-elements 1000

size=$(wc -c <"$tmp/small.hlo")
expect 1 "$tmp/small.hlo: $size bytes, more than the limit of $((size - 1)) bytes on a text input (raise it with --max-file-size" \
	"$cli" hlo "$tmp/small.hlo" --max-file-size $((size - 1))
expect 0 "module s: 1 computation" "$cli" hlo "$tmp/small.hlo" --max-file-size "$size"
# Standard input, under the same cap.
out=$("$cli" hlo - <"$tmp/small.hlo" 2>&1)
[[ "$out" == *"module s: 1 computation"* ]] || {
	echo "FAIL: hlo - < small.hlo: $out"
	fails=$((fails + 1))
}
out=$(head -c 4096 /dev/zero | "$cli" hlo - --max-file-size 1K 2>&1)
rc=$?
[ "$rc" = 1 ] && [[ "$out" == *"<stdin>: more than the limit of 1024 bytes on a text input"* ]] || {
	echo "FAIL: 4 KiB on stdin under 1K: exit $rc: $out"
	fails=$((fails + 1))
}
echo "$fails failures"
[ "$fails" = 0 ]
