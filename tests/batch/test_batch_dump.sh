#!/usr/bin/env bash
# ulpscope batch on an XLA dump directory (data/dumps/xla_cpu) gives the
# verdicts and figures of `import` and then `batch` on the cases (the JSON
# reports, less the index's name, the seconds and the case paths); a
# second run resumes every case; a dump without snapshots is refused.
# usage: test_batch_dump.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
dump=$src/data/dumps/xla_cpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0
strip() { tr ',' '\n' <"$1" | grep -v '"index": \|"seconds": \|"path": '; }

"$cli" batch "$dump" --out dump.h5 -j2 --quiet --json >dump.json 2>dump.err ||
	{ echo "FAIL: batch on the dump:"; cat dump.err; fail=1; }
grep -q "xla_cpu: 5 executions of 5 modules as cases in dump.h5.dumps/xla_cpu (5 imported now, 0 from before, 0 refused)" dump.err ||
	{ echo "FAIL: message:"; cat dump.err; fail=1; }
"$cli" import "$dump" -o cases >/dev/null || { echo "FAIL: import"; fail=1; }
"$cli" batch cases --out cases.h5 -j2 --quiet --json >cases.json ||
	{ echo "FAIL: batch on the imported cases"; fail=1; }
if ! cmp -s <(strip dump.json) <(strip cases.json); then
	echo "FAIL: batch on the dump and on its imported cases differ:"
	diff <(strip dump.json) <(strip cases.json) | head -20
	fail=1
fi
grep -q '"cases": 5, ' dump.json || { echo "FAIL: not 5 cases"; fail=1; }
grep -q '"ok": 5, ' dump.json || { echo "FAIL: not 5 ok"; fail=1; }

# Again: the cases are where they were, and every one resumes.
"$cli" batch "$dump" --out dump.h5 -j2 --quiet --json >again.json 2>again.err ||
	{ echo "FAIL: the second batch:"; cat again.err; fail=1; }
grep -q "(0 imported now, 5 from before, 0 refused)" again.err ||
	{ echo "FAIL: message:"; cat again.err; fail=1; }
grep -q '"resumed": 5' again.json || { echo "FAIL: not resumed"; fail=1; }

# A dump directory whose module has no snapshot.
mkdir nosnap
cp "$dump"/module_0002.jit_swiglu_bf16.cpu_after_optimizations.txt nosnap/
if "$cli" batch nosnap --out nosnap.h5 --quiet >out 2>&1; then
	echo "FAIL: a dump without snapshots was batched"; fail=1
fi
grep -q "nosnap: no module has a snapshot; run with XLA_FLAGS=--xla_dump_hlo_snapshots (docs/dumps.md)" out ||
	{ echo "FAIL: message:"; cat out; fail=1; }
exit $fail
