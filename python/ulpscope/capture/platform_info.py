"""What a capture records about the platform it ran on (capture.py, case.json).

gpu_info: the GPU and its CUDA stack as jax reports them; xla_flag_values:
the value of chosen XLA flags; dot_precisions: each dot's precision config
in an optimized module.  Only gpu_info needs jax (passed in: capture.py
owns when jax starts); the rest runs on the Python standard library, so the
tests run it without jax.
"""

from __future__ import annotations

import re
import subprocess

# XLA:GPU flags whose value changes numerics; recorded in case.json
# (`xla_gpu_flags`) as given in XLA_FLAGS, else as the dumped debug options
# say (they list the values that differ from XLA's defaults), else "default".
GPU_NUMERIC_FLAGS = ("xla_gpu_enable_triton_gemm", "xla_gpu_enable_fast_min_max",
                     "xla_allow_excess_precision", "xla_gpu_enable_cublaslt")


def gpu_info(jax):
    """What jax (imported, its backend chosen) reports about the GPU and its CUDA stack: the device kind and
    compute capability, the CUDA runtime / cuDNN / driver versions (jaxlib's
    cuda_versions module, where the CUDA plugin provides it) and, where the
    machine has it, nvidia-smi's name, driver and compute capability.  A
    value that cannot be had is recorded as "unavailable: why"."""
    info = {}
    try:
        dev = jax.devices()[0]
        info["platform"] = dev.platform
        info["device_kind"] = dev.device_kind
        info["compute_capability"] = getattr(dev, "compute_capability", None)
        info["platform_version"] = getattr(dev.client, "platform_version", None)
    except Exception as e:  # pragma: no cover - depends on the machine
        info["device"] = f"unavailable: {e}"
    try:
        from jax._src.lib import cuda_versions
    except Exception as e:  # pragma: no cover - private API moved
        cuda_versions = None
        info["cuda_versions"] = f"unavailable: {e}"
    if cuda_versions is None:
        info.setdefault("cuda_versions", "unavailable: jaxlib has no CUDA plugin")
    else:
        for fn in ("cuda_runtime_get_version", "cuda_runtime_build_version",
                   "cudnn_get_version", "cudnn_build_version", "cuda_driver_get_version",
                   "cublas_get_version", "cufft_get_version", "cusolver_get_version",
                   "cusparse_get_version"):
            f = getattr(cuda_versions, fn, None)
            if f is None:
                continue
            # cudnn_get_version -> cudnn, cudnn_build_version -> cudnn_build.
            key = fn[:-len("_get_version")] if fn.endswith("_get_version") else \
                fn[:-len("_version")]
            try:
                info[key] = f()
            except Exception as e:  # pragma: no cover - depends on the machine
                info[key] = f"unavailable: {e}"
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap",
                            "--format=csv,noheader"], capture_output=True, text=True,
                           timeout=30)
        info["nvidia_smi"] = q.stdout.strip() if q.returncode == 0 else \
            f"unavailable: exit {q.returncode}"
    except (OSError, ValueError) as e:
        info["nvidia_smi"] = f"unavailable: {e}"
    return info


def xla_flag_values(keys, flags, debug_options):
    """{key: value} for XLA flags: the last --key= of flags (what XLA_FLAGS
    held), else the dumped debug options, else "default"."""
    out = {}
    for k in keys:
        val = None
        for f in flags:
            if f.startswith(f"--{k}="):
                val = f.split("=", 1)[1]
        if val is None and debug_options and k in debug_options:
            val = debug_options[k]
        out[k] = val if val is not None else "default"
    return out


def dot_precisions(module):
    """Per dot / convolution of the module: its precision config as the
    optimized HLO states it (operand_precision, algorithm; absent means
    DEFAULT)."""
    out = []
    for comp in module.computations.values():
        for ins in comp.instrs:
            if ins.opcode in ("dot", "convolution"):
                # The line, not Instr.attr: operand_precision={highest,highest}
                # holds a comma.
                prec = re.search(r"operand_precision=(\{[^}]*\})", ins.line)
                alg = re.search(r"algorithm=([A-Za-z0-9_]+)", ins.line)
                out.append({"instruction": ins.name, "computation": comp.name,
                            "operand_precision": prec.group(1) if prec else "default",
                            "algorithm": alg.group(1) if alg else "default"})
    return out
