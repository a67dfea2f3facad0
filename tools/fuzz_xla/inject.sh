#!/usr/bin/env bash
# The injected-defect campaign (docs/fuzzing.md, "The injected-defect
# campaign"): N seeds from FIRST (default 0), PER (default 4) mutants per
# kernel, in JOBS (default 2) tools/fuzz_xla/inject.py processes of
# disjoint seed ranges under OUT/part_<k>/; then every part's mutants.jsonl
# is joined into OUT/mutants.jsonl and the totals are written to
# OUT/inject.json and printed.  A part already run is resumed (its seeds
# done are skipped).
#
#   tools/fuzz_xla/inject.sh 300                    # seeds 0-299, /tmp/fuzz_inject
#   JOBS=1 tools/fuzz_xla/inject.sh 50 1000 /tmp/inj
#
# ULPSCOPE (default build/ulpscope), USC_PYTHON (default tools/pyenv.sh's),
# FAST_MATH (off or on: the setting and its profile, default off), AT
# (kernel: mutate XLA's optimized module, compiled without HLO passes, the
# default; source: mutate the generated module before XLA), REPLAY
# (an earlier run's mutants.jsonl: run again only the mutants it judged
# defect, on its seeds within the range; about a third of the time).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:?usage: inject.sh N [FIRST_SEED] [OUT]}
first=${2:-0}
out=${3:-/tmp/fuzz_inject}
cli=${ULPSCOPE:-$root/build/ulpscope}
py=${USC_PYTHON:-$("$root/tools/pyenv.sh")}
jobs=${JOBS:-2}
per=${PER:-4}
fm=${FAST_MATH:-off}
at=${AT:-kernel}
replay=()
[ -n "${REPLAY:-}" ] && replay=(--replay "$REPLAY")
mkdir -p "$out"
step=$(( (n + jobs - 1) / jobs ))
pids=()
for ((k = 0; k < jobs; k++)); do
	lo=$((first + k * step))
	hi=$((lo + step - 1))
	[ $hi -ge $((first + n)) ] && hi=$((first + n - 1))
	[ $lo -gt $hi ] && continue
	# XLA:CPU aborts the process on a few kernel-level mutants (a CHECK
	# failure): the part is run again, resuming after the mutant it
	# records as refused, until it ends by itself (at most 50 times).
	(
		for ((try = 0; try < 50; try++)); do
			"$py" "$root/tools/fuzz_xla/inject.py" --ulpscope "$cli" \
				--out "$out/part_$k" --seeds "$lo-$hi" --per-kernel "$per" \
				--fast-math "$fm" --at "$at" "${replay[@]}" >> "$out/part_$k.log" 2>&1 &&
				rc=0 || rc=$?
			[ $rc -le 128 ] && exit $rc
		done
		exit 1
	) &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
cat "$out"/part_*/mutants.jsonl > "$out/mutants.jsonl"
"$py" "$root/tools/fuzz_xla/inject.py" --ulpscope "$cli" --out "$out" --summary-only
exit $rc
