#!/usr/bin/python3
"""The parts of tools/capture/capture.py and platform_info.py that
--platform relies on and that run without jax (CI has none): finding the optimized module in an XLA dump
(XLA:CPU and XLA:GPU name it differently), reading each dot's precision
config from the HLO, and the XLA flag values case.json records.

Every expectation is written out here from the names and the HLO text the
test makes, not computed by the code under test.  Exit 0 when all hold, 1
otherwise, 77 without numpy (capture.py imports it).
"""
import os
import sys
import tempfile

try:
    import numpy  # noqa: F401
except ImportError:
    sys.exit(77)

SRC = os.environ.get("USC_SOURCE_DIR",
                     os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tools", "capture"))
import capture  # noqa: E402  (imports jax only in setup())
import hlo_text  # noqa: E402
import platform_info  # noqa: E402

FAILS = []


def expect(got, want, what):
    if got != want:
        FAILS.append(what)
        print(f"FAIL {what}:\n  got  {got!r}\n  want {want!r}")


def test_dumps():
    names = [
        "module_0001.jit_softmax_f32.cpu_after_optimizations.txt",
        "module_0001.jit_softmax_f32.before_optimizations.txt",
        "module_0001.jit_softmax_f32.cpu_after_optimizations-buffer-assignment.txt",
        "module_0007.jit_softmax_f32.sm_9.0_gpu_after_optimizations.txt",
        "module_0007.jit_softmax_f32.sm_9.0_gpu_after_optimizations-memory-usage-report.txt",
        "module_0012.jit_softmax_f32.gpu_after_optimizations.txt",
        # Another module whose name starts with this one's.
        "module_0009.jit_softmax_f32__mutant.cpu_after_optimizations.txt",
        "module_0010.jit_softmax_f32_x.sm_8.0_gpu_after_optimizations.txt",
    ]
    with tempfile.TemporaryDirectory() as d:
        for n in names:
            open(os.path.join(d, n), "w").close()
        got = [(os.path.basename(p), os.path.basename(st))
               for p, st in capture._dumps_of(d, "jit_softmax_f32")]
        expect(got, [
            ("module_0001.jit_softmax_f32.cpu_after_optimizations.txt",
             "module_0001.jit_softmax_f32"),
            ("module_0007.jit_softmax_f32.sm_9.0_gpu_after_optimizations.txt",
             "module_0007.jit_softmax_f32"),
            ("module_0012.jit_softmax_f32.gpu_after_optimizations.txt",
             "module_0012.jit_softmax_f32"),
        ], "the optimized-module dumps of jit_softmax_f32, oldest first")
        expect(capture._dumps_of(d, "jit_other"), [], "no dump of another module")


HLO = """HloModule jit_t, entry_computation_layout={(f32[4,4]{1,0}, f32[4,4]{1,0})->f32[4,4]{1,0}}

%fused_computation (param_0: f32[4,4], param_1: f32[4,4]) -> f32[4,4] {
  %param_0 = f32[4,4]{1,0} parameter(0)
  %param_1 = f32[4,4]{1,0} parameter(1)
  ROOT %dot.1 = f32[4,4]{1,0} dot(%param_0, %param_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
}

ENTRY %main (x: f32[4,4], w: f32[4,4]) -> f32[4,4] {
  %x = f32[4,4]{1,0} parameter(0)
  %w = f32[4,4]{1,0} parameter(1)
  %f = f32[4,4]{1,0} fusion(%x, %w), kind=kCustom, calls=%fused_computation
  ROOT %dot.2 = f32[4,4]{1,0} dot(%f, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""


def test_dot_precisions():
    got = platform_info.dot_precisions(hlo_text.parse_module(HLO))
    got = sorted(got, key=lambda r: r["instruction"])
    expect(got, [
        {"instruction": "dot.1", "computation": "fused_computation",
         "operand_precision": "{highest,highest}", "algorithm": "default"},
        {"instruction": "dot.2", "computation": "main",
         "operand_precision": "default", "algorithm": "default"},
    ], "each dot's precision config")


def test_flag_values():
    got = platform_info.xla_flag_values(
        ("xla_gpu_enable_triton_gemm", "xla_gpu_enable_fast_min_max",
         "xla_allow_excess_precision"),
        ["--xla_dump_hlo_as_text", "--xla_gpu_enable_triton_gemm=true",
         "--xla_gpu_enable_triton_gemm=false"],
        {"xla_gpu_enable_fast_min_max": "true"})
    expect(got, {"xla_gpu_enable_triton_gemm": "false",
                 "xla_gpu_enable_fast_min_max": "true",
                 "xla_allow_excess_precision": "default"},
           "flag values: the last in XLA_FLAGS, else the debug options, else default")


def main():
    test_dumps()
    test_dot_precisions()
    test_flag_values()
    print("every expectation holds" if not FAILS else f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
