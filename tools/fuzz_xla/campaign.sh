#!/usr/bin/env bash
# A long campaign of random kernels through XLA:CPU (docs/fuzzing.md,
# "Running a campaign"): N seeds from FIRST (default 0), in chunks of 100
# seeds, each chunk a tools/fuzz_xla/run.py run (both fast-math settings)
# into OUT/chunk_<first seed>/.  A chunk whose summary.json exists is not
# run again, so a killed campaign goes on where it stopped.  At the end
# tools/fuzz_xla/aggregate.py totals every chunk into OUT/campaign.json
# and prints the figures; the exit status is aggregate.py's (0: nothing
# flagged that triage.json does not explain).
#
#   tools/fuzz_xla/campaign.sh 1000                 # seeds 0-999, /tmp/fuzz_xla
#   tools/fuzz_xla/campaign.sh 5000 100000 /data/fz # seeds 100000-104999
#
# ULPSCOPE (default build/ulpscope), USC_PYTHON (default tools/pyenv.sh's),
# JOBS (batch -j, default the cores), OPS (ulpscope gen --ops, default 12)
# and CHUNK (seeds per chunk, 100) change the defaults.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:?usage: campaign.sh N [FIRST_SEED] [OUT]}
first=${2:-0}
out=${3:-/tmp/fuzz_xla}
cli=${ULPSCOPE:-$root/build/ulpscope}
py=${USC_PYTHON:-$("$root/tools/pyenv.sh")}
jobs=${JOBS:-$(nproc)}
ops=${OPS:-12}
chunk=${CHUNK:-100}
mkdir -p "$out"
start=$(date +%s)
for ((s = first; s < first + n; s += chunk)); do
	last=$((s + chunk - 1))
	[ $last -ge $((first + n)) ] && last=$((first + n - 1))
	dir=$out/chunk_$s
	if [ -f "$dir/summary.json" ]; then
		echo "campaign: seeds $s-$last already done"
		continue
	fi
	echo "campaign: seeds $s-$last ($(( $(date +%s) - start )) s so far)"
	# A chunk with flagged cases exits non-zero; the campaign goes on.
	"$py" "$root/tools/fuzz_xla/run.py" --ulpscope "$cli" --out "$dir" \
		--seeds "$s-$last" --ops "$ops" -j "$jobs" --case-timeout 300 \
		> "$dir.log" 2>&1 || true
	if [ ! -f "$dir/summary.json" ]; then
		echo "campaign: chunk $s-$last failed; see $dir.log" >&2
		exit 1
	fi
	grep -E "^fastmath|UNTRIAGED|not captured" "$dir.log" || true
done
exec "$py" "$root/tools/fuzz_xla/aggregate.py" "$out"
