#!/usr/bin/env bash
# README command 1: installs what is missing, builds, and runs ulpscope on
# its bundled data.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tools/setup.sh
echo "== building"
tools/build.sh build
u=build/ulpscope
run() {
	echo
	echo "\$ ulpscope $*"
	"$u" "$@"
}
# A check whose verdict is expected to be a defect (exit status 4).
run_defect() {
	echo
	echo "\$ ulpscope $*"
	local rc=0
	"$u" "$@" || rc=$?
	if [ "$rc" != 4 ]; then
		echo "demo: expected the defect verdict (exit 4), got exit $rc" >&2
		exit 1
	fi
	echo "(exit status 4: defect)"
}
run formats
run cast f8e4m3fn 448 464 465 1e-3 --round nearest-even
run cast bf16 1.00390625000000000001 0.1
run cast f4e2m1fn 5 7 -inf
run decode f8e5m2 0x7b 0x7c 0x01
run ulp bf16 0b:0x3dcd 0.1
run formats --check
run hlo kernels/softmax_f32.hlo --verify
run profiles
run check data/examples/softmax_f32/normal_s0 --worst 3
# The same XLA:CPU output under the strict profile: the reassociated
# reductions XLA:CPU legitimately uses are not allowed there.
run_defect check data/examples/softmax_f32/normal_s0 --worst 1 --profile strict
run check data/examples/swiglu_bf16/large_s1 --worst 1 --out build/demo-results.h5
run extract kernels/softmax_f32.hlo --fusion subtract_exponential_fusion --short
# What XLA:CPU's passes did to softmax's precision, pass by pass, from its
# per-pass dumps (docs/audit.md): the reduction rewrite halves the error.
run audit --pipeline data/pipelines/softmax_f32 --draw normal --samples 1 --seed 1
# Every bundled case at once, in parallel worker processes, ranked; run it
# again and it resumes (here: every case is already done).
run batch data/examples --out build/demo-batch.h5 --top 5 --quiet
# The same results as one self-contained HTML page each (docs/report.md):
# open them in a browser, from disk.
run report build/demo-results.h5 -o build/demo-report.html
run report build/demo-batch.h5 -o build/demo-batch.html
echo
echo "demo: HTML reports in $root/build/demo-report.html (one kernel) and"
echo "      $root/build/demo-batch.html (every bundled case); open them in a browser"
