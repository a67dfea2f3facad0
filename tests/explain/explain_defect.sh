#!/bin/sh
# ulpscope explain on a real XLA:CPU case with a defect injected: the
# layer norm of data/examples/layer_norm_bf16/normal_s0 with its mul.2
# computed in bf16 (tests/classify/inject_defects.py --mutant), the
# mutant's strict reference taken as the device output.  Element [5,53]
# is one the mutation moves 227 codes outside the xla-cpu envelope (a
# cancellation in add.1 magnifies it): the root must say defect, and the
# tree must show mul.2 with its operands and source line.
# Usage: explain_defect.sh ULPSCOPE SOURCE_DIR.  Exit 77 without numpy.
set -eu
cli=$1
src=$2
case_dir=$src/data/examples/layer_norm_bf16/normal_s0
python3 -c 'import numpy, h5py' 2>/dev/null || exit 77
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/tests/classify/inject_defects.py" --mutant \
	"$case_dir/kernel.hlo" narrow mul.2 "$tmp/mutant.hlo" >/dev/null
"$cli" eval "$tmp/mutant.hlo" --input "$case_dir/input_0.npy" \
	--input "$case_dir/input_1.npy" --input "$case_dir/input_2.npy" \
	-o "$tmp/device" >/dev/null
"$cli" explain "$case_dir/kernel.hlo" --input "$case_dir/input_0.npy" \
	"$case_dir/input_1.npy" "$case_dir/input_2.npy" \
	--device "$tmp/device_0.npy" --profile xla-cpu --element 5,53 \
	--depth 6 >"$tmp/out.txt"
cat "$tmp/out.txt"
fail=0
expect() {
	if ! grep -qF -- "$1" "$tmp/out.txt"; then
		echo "FAIL: no line with: $1"
		fail=1
	fi
}
expect "kernel jit_layer_norm_bf16, output 0 [5,53] of bf16[8,128], profile xla-cpu"
expect "  device     0x3ab0 = 0.00134277344"
expect "  class      defect (227 codes outside the envelope)"
expect "        mul.2  multiply f32[8,128] [5,53]  kernels.py:86"
expect "          sub.0  subtract f32[8,128] [5,53]  kernels.py:86"
expect "          mul.3  broadcast f32[8,128] [5,53]  kernels.py:86"
expect "    add.1  add f32[8,128] [5,53]  kernels.py:87"
exit $fail
