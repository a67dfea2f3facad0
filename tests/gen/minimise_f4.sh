#!/usr/bin/env bash
# The minimiser of tools/fuzz_xla on a finding whose answer is known: F4 of
# docs/findings.md (XLA:CPU's cbrt of a subnormal f32 gives -5.6e-16),
# hidden in a module of two outputs, a dead add, a minimum with a
# constant and a sine, on a 4x8 shape.  The defect needs only the cbrt,
# so the minimal module must be one parameter and one cbrt of a single
# element, still a defect, with signature.txt and explain.txt written.
# Needs jax: skipped (77) without USC_PYTHON.
# usage: minimise_f4.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
if [ -z "${USC_PYTHON:-}" ]; then
	echo "skipped: USC_PYTHON is unset (export USC_PYTHON=\$(tools/pyenv.sh); the minimiser needs jax)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat > "$tmp/f4.hlo" <<'HLO'
HloModule f4

ENTRY %main (x: f32[4,8], y: f32[4,8]) -> (f32[4,8], f32[4,8]) {
  %x = f32[4,8] parameter(0)
  %y = f32[4,8] parameter(1)
  %c = f32[4,8] cbrt(f32[4,8] %x)
  %k = f32[] constant(0.25)
  %kb = f32[4,8] broadcast(f32[] %k), dimensions={}
  %m = f32[4,8] minimum(f32[4,8] %c, f32[4,8] %kb)
  %s = f32[4,8] sine(f32[4,8] %m)
  %e = f32[4,8] exponential(f32[4,8] %y)
  %dead = f32[4,8] add(f32[4,8] %e, f32[4,8] %x)
  ROOT %t = (f32[4,8], f32[4,8]) tuple(f32[4,8] %s, f32[4,8] %e)
}
HLO
"$USC_PYTHON" "$src/tools/fuzz_xla/case_from_hlo.py" "$tmp/f4.hlo" "$tmp/case" \
	--values=0,-0.0,1.5,1.2e-38,2,8,0.5,3,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,5.79766921e-39 \
	--values=0.5,1,2,-1 > /dev/null || fail "case_from_hlo.py"
v=$("$cli" check "$tmp/case" --profile xla-cpu --json | "$USC_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
[ "$v" = defect ] || fail "the starting case is $v, not defect (has XLA:CPU's cbrt been fixed? see F4)"
"$USC_PYTHON" "$src/tools/fuzz_xla/minimise.py" "$tmp/case" "$tmp/min" --ulpscope "$cli" \
	> "$tmp/log" 2>&1 || { cat "$tmp/log"; fail "minimise.py"; }
min=$tmp/min/minimal.hlo
cat "$min"
n=$(grep -cE '^ *(ROOT )?%[^ ]+ = ' "$min")
[ "$n" = 2 ] || fail "the minimal module has $n instructions, expected 2 (parameter, cbrt)"
grep -Eq 'ROOT %[^ ]+ = f32\[1,1\] cbrt\(f32\[1,1\] %x\)' "$min" || fail "the root is not cbrt of x on one element"
v=$("$cli" check "$tmp/min/minimal" --profile xla-cpu --json | "$USC_PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
[ "$v" = defect ] || fail "the minimal case is $v"
grep -q "kernel f4" "$tmp/min/signature.txt" || fail "no signature.txt"
grep -q "cbrt" "$tmp/min/explain.txt" || fail "explain.txt does not show the cbrt"
echo ok
