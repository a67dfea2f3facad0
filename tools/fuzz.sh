#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz/ (clang, ASan + UBSan) and
# runs each for a bounded time on seeds taken from the project's own files.
# usage: tools/fuzz.sh [SECONDS [HARNESS...]]
#   SECONDS  how long each harness runs (default 30; 0 builds only)
#   HARNESS  fuzz_hlo_parser, fuzz_eval, fuzz_npy, fuzz_h5, fuzz_results,
#            fuzz_profile, fuzz_case_json or fuzz_pb (default: all of them)
# The build goes to build-fuzz/; each harness keeps what it finds worth
# keeping in build-fuzz/corpus/NAME (so a second run continues from there)
# and writes an input that fails to build-fuzz/artifacts/NAME-crash-...
# Exits non-zero when a harness fails (a crash, a leak, undefined
# behaviour, a timeout) or cannot be built.  docs/fuzzing.md says more.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:-30}
shift || true
all=(fuzz_hlo_parser fuzz_eval fuzz_npy fuzz_h5 fuzz_results fuzz_profile
	fuzz_case_json fuzz_pb)
harnesses=("${all[@]}")
if [ "$#" -gt 0 ]; then
	harnesses=("$@")
fi
case $seconds in
'' | *[!0-9]*)
	echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2
	exit 2
	;;
esac

USC_WITH_FUZZ=1 tools/setup.sh
dir=build-fuzz
echo "== build the fuzz harnesses (clang, ASan + UBSan, libFuzzer)"
CC=clang cmake -S . -B "$dir" -DUSC_FUZZ=ON -DUSC_WERROR=ON \
	-DBUILD_TESTING=OFF -DUSC_BENCH=OFF >/dev/null
cmake --build "$dir" -j"$(nproc)" --target "${harnesses[@]}" >/dev/null
[ "$seconds" -gt 0 ] || exit 0
# ulpscope itself writes the seed result files of fuzz_results: the one
# tools/build.sh built, else one built here.
cli=build/ulpscope
if [ ! -x "$cli" ]; then
	cmake --build "$dir" -j"$(nproc)" --target ulpscope_cli >/dev/null
	cli=$dir/ulpscope
fi

# Seeds: one folder per harness under build-fuzz/seeds, made anew each run
# from files the project owns.
seeds=$dir/seeds
rm -rf "$seeds"
mkdir -p "$seeds" "$dir/corpus" "$dir/artifacts"
seed() { # seed NAME FILE...: copies the files into seeds/NAME
	local name=$1 f
	shift
	mkdir -p "$seeds/$name"
	for f in "$@"; do
		cp "$f" "$seeds/$name/$(echo "$f" | tr / _)"
	done
}
seed fuzz_hlo_parser tests/hlo/corpus/*.hlo kernels/*.hlo \
	tests/hlo_kernel/cases/*.hlo
seed fuzz_eval tests/hlo/corpus/*.hlo tests/eval/*.hlo \
	tests/hlo_kernel/cases/softmax.hlo
seed fuzz_npy tests/tensor/fixtures/*.npy
seed fuzz_h5 tests/tensor/fixtures/*.h5
seed fuzz_profile data/profiles/*.profile tests/profile/cases/*.profile
seed fuzz_case_json data/examples/*/*/case.json
seed fuzz_pb tests/proto/fixtures/*.pb kernels/pb/*.pb \
	data/control_flow/*/*.pb
mkdir -p "$seeds/fuzz_results"
"$cli" check data/examples/swiglu_bf16/large_s1 \
	--out "$seeds/fuzz_results/checked.h5" >/dev/null
"$cli" check data/examples/fp8_dequantize_bf16/normal_s0 \
	--attribute --out "$seeds/fuzz_results/attributed.h5" >/dev/null

failed=0
for h in "${harnesses[@]}"; do
	echo "== $h: ${seconds} s"
	mkdir -p "$dir/corpus/$h"
	log=$dir/artifacts/$h.log
	# -timeout: an input that takes 60 s is a hang (HDF5 spends seconds
	# under ASan on some damaged files, 0.03 s without it); -rss_limit_mb
	# keeps a runaway allocation a finding, not a dead machine.
	extra=()
	case $h in
	fuzz_h5 | fuzz_results)
		# HDF5 trusts sizes read from the file: a damaged chunk size
		# makes it malloc gigabytes that it never touches before the
		# read fails.  libFuzzer would call any single malloc over
		# -rss_limit_mb an out-of-memory finding; memory actually used
		# is still limited by -rss_limit_mb.
		extra+=(-malloc_limit_mb=1048576)
		;;
	esac
	# USC_FUZZ_SEED fixes libFuzzer's random seed (CI sets it, so that a
	# run can be repeated); unset, each run draws its own.
	if [ -n "${USC_FUZZ_SEED:-}" ]; then
		extra+=(-seed="$USC_FUZZ_SEED")
	fi
	if "$dir/tests/fuzz/$h" -max_total_time="$seconds" -timeout=60 \
		-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		"${extra[@]}" \
		-artifact_prefix="$dir/artifacts/$h-" \
		"$dir/corpus/$h" "$seeds/$h" >"$log" 2>&1; then
		grep -E '^stat::number_of_executed_units|^Done' "$log" || true
	else
		failed=$((failed + 1))
		echo "$h FAILED; the last lines of $log:"
		tail -n 40 "$log"
		ls "$dir/artifacts/$h-"* 2>/dev/null || true
	fi
done
echo "fuzz: $((${#harnesses[@]} - failed)) passed, $failed failed"
[ "$failed" = 0 ]
