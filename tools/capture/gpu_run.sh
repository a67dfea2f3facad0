#!/usr/bin/env bash
# The one script to run on an NVIDIA GPU machine (issue 20, step 3): every
# catalogue kernel (kernels.py, 34) x 3 input draws (normal, large, ties;
# seed 0) x 2 settings, captured on XLA:GPU, checked against their HLO,
# and packed as one tarball of at most 16 MiB.
#
#   tools/capture/gpu_run.sh [--platform gpu|cpu] [OUT_DIR]
#
# OUT_DIR defaults to $OUT (the device machine's return folder).  The
# tarball is OUT_DIR/xla-<platform>-cases.tar.gz and unpacks to
#   xla-<platform>/default/<kernel>/<dist>_s0/   XLA's defaults
#   xla-<platform>/highest/<kernel>/<dist>_s0/   jax_default_matmul_precision=highest
#   xla-<platform>/ENVIRONMENT.txt               versions, nvidia-smi, flags
#   xla-<platform>/capture-*.log                 the capture logs
# which is the layout data/acceptance/xla-gpu/ takes (commit it there).
#
# Why "highest" as the second setting: it is the one numerics-changing
# setting the catalogue's inputs can show.  XLA:GPU computes f32 dots of
# DEFAULT precision with TF32 on Ampere and later (the xla-gpu profile's
# dot_f32 = tf32); HIGHEST asks for full f32 products, so the f32 dot
# kernels (attention_logits_f32) change.  --xla_gpu_enable_fast_min_max
# changes only what a maximum / minimum gives for NaN, and no draw here
# has a NaN input: its cases would equal the defaults bit for bit.
#
# --platform cpu is the dry run: the same steps on XLA:CPU (no GPU needed),
# to prove the script end to end before spending GPU time.
#
# Environment: PYTHON (default python3): a Python with jax (and, for gpu,
# its CUDA plugin), numpy and ml_dtypes.  STEP_TIMEOUT (default 240 s): a
# limit per capture process, so that the whole run ends well inside 10 min.
set -euo pipefail

platform=gpu
if [ "${1:-}" = "--platform" ]; then
	platform=${2:?--platform needs gpu or cpu}
	shift 2
fi
case $platform in
gpu | cpu) ;;
*)
	echo "gpu_run.sh: unknown platform '$platform' (expected gpu or cpu)" >&2
	exit 2
	;;
esac
out=${1:-${OUT:-}}
if [ -z "$out" ]; then
	echo "gpu_run.sh: give OUT_DIR or set OUT" >&2
	exit 2
fi
py=${PYTHON:-python3}
step_timeout=${STEP_TIMEOUT:-240}
here=$(cd "$(dirname "$0")" && pwd)
limit=$((16 * 1024 * 1024))

if ! command -v "$py" >/dev/null; then
	echo "gpu_run.sh: no Python '$py' (set PYTHON)" >&2
	exit 2
fi
if ! "$py" -c 'import jax, numpy, ml_dtypes' 2>/dev/null; then
	echo "gpu_run.sh: $py cannot import jax, numpy and ml_dtypes" >&2
	exit 2
fi

mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/xla-$platform
mkdir -p "$tree"

{
	echo "gpu_run.sh --platform $platform, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "python: $($py --version 2>&1)"
	$py -c 'import jax, jaxlib, numpy, ml_dtypes; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)'
	echo "XLA_FLAGS (inherited): ${XLA_FLAGS:-<none>}"
	jax_platforms=cpu
	[ "$platform" = gpu ] && jax_platforms=cuda
	JAX_PLATFORMS=$jax_platforms $py -c 'import jax; print("jax devices:", jax.devices())' ||
		echo "jax devices: none for JAX_PLATFORMS=$jax_platforms"
	if command -v nvidia-smi >/dev/null; then
		nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
	else
		echo "nvidia-smi: not found"
	fi
	$py -m pip list 2>/dev/null | grep -i -E '^(jax|jaxlib|nvidia-|ml.dtypes|numpy) ' || true
} >"$tree/ENVIRONMENT.txt" 2>&1

# One process per setting: XLA reads XLA_FLAGS, and jax its config, once.
capture() {
	local setting=$1
	shift
	local t0=$SECONDS
	if ! PYTHONUNBUFFERED=1 timeout "$step_timeout" "$py" "$here/capture.py" \
		--platform "$platform" --cases "$tree/$setting" --kernel all \
		--distribution normal,large,ties --seed 0 "$@" \
		>"$tree/capture-$setting.log" 2>&1; then
		echo "gpu_run.sh: the '$setting' capture failed; the end of its log:" >&2
		tail -n 30 "$tree/capture-$setting.log" >&2
		return 1
	fi
	echo "$setting: $(find "$tree/$setting" -name case.json | wc -l) cases in $((SECONDS - t0)) s"
}

status=0
capture default || status=1
capture highest --matmul-precision highest || status=1

# Each case against its own HLO (shapes, types, entry parameters); numpy only.
if ! $py "$here/check_cases.py" "$tree" >"$tree/check_cases.log" 2>&1; then
	echo "gpu_run.sh: check_cases.py found bad cases:" >&2
	grep -v '^ok ' "$tree/check_cases.log" | tail -n 30 >&2
	status=1
fi
tail -n 1 "$tree/check_cases.log"

tarball=$out/xla-$platform-cases.tar.gz
tar -czf "$tarball" -C "$work" "xla-$platform"
size=$(stat -c %s "$tarball")
echo "$tarball: $size bytes ($(find "$tree" -name case.json | wc -l) cases)"
if [ "$size" -gt "$limit" ]; then
	echo "gpu_run.sh: the tarball is over 16 MiB" >&2
	status=1
fi
exit $status
