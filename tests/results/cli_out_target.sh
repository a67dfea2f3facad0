#!/usr/bin/env bash
# ulpscope check --out from the command line: what it refuses to replace
# (and leaves untouched), --force, a missing directory and a file size
# limit, each with its exact message or its words, and the exit status.
# usage: cli_out_target.sh ULPSCOPE CASE_DIR
set -u
cli=$1
case_dir=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/usc_out_XXXXXX")
trap 'rm -rf "$dir"' EXIT
status=0

# expect NAME WANT_RC WANT_STDERR ARGS...: runs check with ARGS.
expect() {
	local name=$1 want_rc=$2 want_err=$3
	shift 3
	"$cli" check "$case_dir" --worst 0 "$@" >/dev/null 2>"$dir/err"
	local rc=$?
	if [ "$rc" != "$want_rc" ]; then
		echo "$name: exit status $rc, expected $want_rc"
		status=1
	fi
	if [ "$(cat "$dir/err")" != "$want_err" ]; then
		echo "$name: stderr differs:"
		echo "  got:  $(cat "$dir/err")"
		echo "  want: $want_err"
		status=1
	fi
}

# is_hdf5 FILE: the HDF5 signature opens the file.
is_hdf5() {
	[ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = "211HDF" ]
}

printf 'my notes\n' >"$dir/notes.txt"
expect text 1 "ulpscope: $dir/notes.txt: refusing to replace it: it is not an ulpscope result file (--force replaces it)" \
	--out "$dir/notes.txt"
[ "$(cat "$dir/notes.txt")" = "my notes" ] || { echo "notes.txt was changed"; status=1; }

mkfifo "$dir/fifo"
expect fifo 1 "ulpscope: $dir/fifo: refusing to replace it: it is a FIFO, not a regular file" \
	--out "$dir/fifo"
[ -p "$dir/fifo" ] || { echo "the FIFO was replaced"; status=1; }
expect fifo-force 1 "ulpscope: $dir/fifo: refusing to replace it: it is a FIFO, not a regular file" \
	--out "$dir/fifo" --force
mkdir "$dir/sub"
expect directory 1 "ulpscope: $dir/sub: refusing to replace it: it is a directory, not a regular file" \
	--out "$dir/sub"
ln -s notes.txt "$dir/link.h5"
expect link 1 "ulpscope: $dir/link.h5: refusing to replace it: it is a symbolic link, not a regular file" \
	--out "$dir/link.h5"
expect missing-dir 1 "ulpscope: cannot create $dir/no/such/r.h5: directory $dir/no/such does not exist" \
	--out "$dir/no/such/r.h5"
expect append-force 2 "ulpscope: --append and --force do not go together: --append only adds to a result file" \
	--out "$dir/r.h5" --append --force
expect force-alone 2 "ulpscope: --force needs --out" --force

# --force replaces the text file with a result file.
expect force 0 "" --out "$dir/notes.txt" --force
is_hdf5 "$dir/notes.txt" || { echo "--force did not write a result file"; status=1; }

# A file size limit: exit status 1 (not a crash), the file named, the
# error in words, nothing left behind.
(
	ulimit -f 16
	trap '' XFSZ
	exec "$cli" check "$case_dir" --worst 0 --out "$dir/full.h5"
) >/dev/null 2>"$dir/err"
rc=$?
if [ "$rc" != 1 ]; then
	echo "file size limit: exit status $rc, expected 1"
	status=1
fi
case $(cat "$dir/err") in
"ulpscope: $dir/full.h5"*"file size limit exceeded"*) ;;
*)
	echo "file size limit: stderr: $(cat "$dir/err")"
	status=1
	;;
esac
if grep -q 'errno\|buf =\|flags =' "$dir/err"; then
	echo "file size limit: HDF5 internals in the message"
	status=1
fi
if ls "$dir" | grep -q '^full\.h5$\|\.tmp\.'; then
	echo "file size limit: left $(ls "$dir")"
	status=1
fi
exit $status
