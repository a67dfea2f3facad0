#!/usr/bin/env bash
# A case directory whose files are not regular files is refused with a
# message naming the file, never skipped (docs/cases.md).
# usage: case_discovery.sh ULPSCOPE CASE_DIR KIND
# Copies CASE_DIR to a scratch folder, spoils it one way (KIND), runs
# `ulpscope check` (and `bisect`) on it and compares the exit status and
# the message exactly.
set -u
cli=$1
case_dir=$2
kind=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/usc_case_XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dir="$tmp/case"
cp -r "$case_dir" "$dir"
case $kind in
input_dir)
	rm "$dir/input_0.npy" && mkdir "$dir/input_0.npy"
	want="ulpscope: $dir/input_0.npy is a directory, expected a regular .npy file" ;;
input_fifo)
	rm "$dir/input_0.npy" && mkfifo "$dir/input_0.npy"
	want="ulpscope: $dir/input_0.npy is a FIFO, expected a regular .npy file" ;;
device_dir)
	rm "$dir/device_0.npy" && mkdir "$dir/device_0.npy"
	want="ulpscope: $dir/device_0.npy is a directory, expected a regular .npy file" ;;
input_gap)
	mv "$dir/input_0.npy" "$dir/input_1.npy"
	want="ulpscope: $dir: input_1.npy is there, but input_0.npy is missing (the files are numbered from 0 without gaps)" ;;
case_json_dir)
	rm "$dir/case.json" && mkdir "$dir/case.json"
	want="ulpscope: $dir/case.json is a directory, expected a regular JSON file" ;;
kernel_dangling)
	rm "$dir/kernel.hlo" && ln -s "$tmp/nowhere.hlo" "$dir/kernel.hlo"
	want="ulpscope: $dir/kernel.hlo is a symbolic link to nothing (it dangles), expected a regular HLO text file" ;;
*)
	echo "unknown kind $kind"
	exit 2 ;;
esac
status=0
for sub in check bisect; do
	# A FIFO opened by mistake would block: the timeout turns that into
	# a failure instead of a hang.
	got=$(timeout 60 "$cli" $sub "$dir" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != 1 ]; then
		echo "$sub: exit status $rc, expected 1"
		status=1
	fi
	if [ "$got" != "$want" ]; then
		printf '%s: message\n  %s\nexpected\n  %s\n' "$sub" "$got" "$want"
		status=1
	fi
done
exit $status
