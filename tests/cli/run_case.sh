#!/usr/bin/env bash
# Runs one CLI case file: its "# args:" line gives the arguments, "# exit:"
# the expected exit status, and every other line the expected output
# (stdout and stderr together), compared exactly.
set -u
cli=$1
case_file=$2
args=$(sed -n 's/^# args: //p' "$case_file")
want_rc=$(sed -n 's/^# exit: //p' "$case_file")
expected=$(grep -v '^# \(args\|exit\):' "$case_file")
# shellcheck disable=SC2086 # the args line is split on purpose
actual=$(cd "$(dirname "$case_file")" && "$cli" $args 2>&1)
rc=$?
status=0
if [ "$rc" != "$want_rc" ]; then
	echo "exit status $rc, expected $want_rc"
	status=1
fi
if [ "$actual" != "$expected" ]; then
	echo "output differs (expected vs actual):"
	diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual")
	status=1
fi
exit $status
