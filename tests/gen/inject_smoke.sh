#!/usr/bin/env bash
# The smoke of the injected-defect campaign (tools/fuzz_xla/inject.py) at
# the kernel (its default: the mutation goes into XLA's optimized module,
# compiled without HLO passes): fixed seeds, two mutants per kernel,
# through XLA:CPU.  Passes when every mutant was written, every mutant XLA
# refused was refused for a known reason (fp8 arithmetic, an unused fusion
# parameter), most mutants reached the compiled kernel op for op, every
# mutant whose output left the envelope was a defect, and signature put the
# injected op and kind in its top 3 for at least one of them.  Needs jax:
# skipped (77) without USC_PYTHON.  usage: inject_smoke.sh ULPSCOPE SOURCE_DIR
set -u
cli=$1
src=$2
if [ -z "${USC_PYTHON:-}" ]; then
	echo "skipped: USC_PYTHON is unset (export USC_PYTHON=\$(tools/pyenv.sh); the campaign needs jax)"
	exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$USC_PYTHON" "$src/tools/fuzz_xla/inject.py" --ulpscope "$cli" --out "$out" \
	--seeds 0-11 --per-kernel 2 --max-seconds 3 > "$out/log" 2>&1 || { cat "$out/log"; echo "FAIL: inject.py"; exit 1; }
cat "$out/inject.json"
"$USC_PYTHON" - "$out/inject.json" "$out/mutants.jsonl" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
rows = [json.loads(l) for l in open(sys.argv[2])]
bad = [r for r in rows if r.get("outcome") == "not written" or
       (r.get("outcome") == "XLA refused" and r.get("refused_as", "other") == "other")]
assert not bad, f"mutants not written, or refused by XLA for an unknown reason: {bad}"
ran = [r for r in rows if r.get("outcome") in ("changed", "no effect")]
assert all(r.get("at") == "kernel" for r in ran), "the mutants were not injected at the kernel"
same = [r for r in ran if r.get("faithful")]
assert len(same) >= 0.9 * len(ran), f"only {len(same)} of {len(ran)} compiled op for op"
assert s["mutants"] >= 15, f"only {s['mutants']} mutants"
assert s["leaving_envelope"] >= 1, "no mutant left the envelope"
assert s["caught"] == s["leaving_envelope"], "a mutant outside the envelope was not a defect"
assert s["top3"] >= 1, "signature named no injected mutant in its top 3"
# A tied first candidate gets a second, separating run: never an error.
bad = [r for r in rows if str(r.get("sep_outcome", "")).startswith("error")]
assert not bad, f"separating runs that failed: {bad}"
print("ok")
PY
