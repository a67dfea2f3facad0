#!/usr/bin/env bash
# check, bisect and explain on a case whose case.json is malformed or has
# a member of the wrong type or value: exit status 1 (docs/check.md) and
# a message naming case.json, the line:column and the key.  Before issue
# 12 these ran with no profile, exit 0 and "no verdict".
set -u
cli=$1
example=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
cp -r "$example" "$tmp/case"
expect() { # JSON, the message expected after "ulpscope: CASE/case.json:"
	printf '%s' "$1" >"$tmp/case/case.json"
	for cmd in "check $tmp/case" "bisect $tmp/case" \
		"explain $tmp/case --element 0 --flat"; do
		# shellcheck disable=SC2086 # split on purpose
		out=$("$cli" $cmd 2>&1 >/dev/null)
		rc=$?
		if [ "$rc" != 1 ] ||
			[ "$out" != "ulpscope: $tmp/case/case.json:$2" ]; then
			echo "FAIL: $cmd with $1: exit $rc, '$out'"
			fails=$((fails + 1))
		fi
	done
}
expect '{"fusion": [1], "platform": 5, "profile": {}}' \
	'1:12: "fusion": expected an instruction name (a string) or null, found an array'
expect '{"platform": 5}' \
	'1:14: "platform": expected a string (cpu, gpu, tpu...) or null, found a number'
expect '{"platform": "quantum"}' \
	"1:14: \"platform\": 'quantum' is not a platform ulpscope knows; expected cpu, host, gpu, cuda, rocm or tpu (\"profile\" names a profile for another device)"
expect '{"profile": {}}' \
	'1:13: "profile": expected a built-in profile name or a profile file (a non-empty string) or null, found an object'
expect '{"platform": "cpu", "xla_cpu_enable_fast_math": "yes"}' \
	'1:49: "xla_cpu_enable_fast_math": expected true, false or null, found a string'
expect '{"platform": "cpu",' '1:20: malformed JSON: expected a member name'
echo "$fails failures"
[ "$fails" = 0 ]
