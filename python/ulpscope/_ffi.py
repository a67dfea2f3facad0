"""The door to libulpscope.so: cffi in ABI mode.

The declarations below are the part of the public C API (include/ulpscope/)
the package calls, written as in the headers.  cffi's ABI mode needs no C
compiler at install time; it releases the GIL around every call into the
library, so a long check does not stop the Python threads around it.

Structs the package reads field by field are declared here too; at load
time their sizes are compared with what the library reports
(usc_bind_sizeof), so a library whose structs changed is refused with a
clear message instead of being read wrongly.
"""
from __future__ import annotations

import ctypes.util
import os
from pathlib import Path
from typing import Any

import cffi

from .errors import UlpscopeError

CDEF = r"""
typedef int usc_status;
typedef struct usc_error {
    usc_status code;
    char message[1024];
} usc_error;
const char *usc_status_name(usc_status code);
const char *usc_version(void);

typedef struct usc_tensor usc_tensor;
int usc_tensor_dtype(const usc_tensor *t);
size_t usc_tensor_rank(const usc_tensor *t);
const int64_t *usc_tensor_dims(const usc_tensor *t);
uint64_t usc_tensor_count(const usc_tensor *t);
size_t usc_tensor_nbytes(const usc_tensor *t);
const void *usc_tensor_cdata(const usc_tensor *t);
const char *usc_dtype_name(int t);

const char *usc_class_name(int c);
const char *usc_verdict_name(int v);

typedef struct usc_profile usc_profile;
usc_status usc_profile_new(const char *name_or_path, usc_profile **out,
                           usc_error *err);
void usc_profile_free(usc_profile *p);
const char *usc_profile_name_of(const usc_profile *p);
const char *const *usc_profile_builtin_names(void);

typedef struct usc_envelope {
    double lo, hi;
    unsigned flags;
    double roundings;
} usc_envelope;

typedef struct usc_results_stats {
    uint64_t count;
    uint64_t nan_count;
    double max_abs;
    double median_abs;
    double p99_abs;
} usc_results_stats;

typedef struct usc_results_summary {
    uint64_t count;
    usc_results_stats oracle;
    usc_results_stats reference;
    uint64_t bit_exact_count;
    uint64_t undecided_count;
} usc_results_summary;

typedef struct usc_classify_counts {
    uint64_t n[9];
} usc_classify_counts;

typedef struct usc_check_element {
    uint64_t index;
    uint64_t device_bits;
    uint64_t reference_bits;
    double oracle_mid;
    double oracle_rad;
    double ulp_oracle;
    double ulp_reference;
    bool undecided;
    usc_envelope envelope;
    int cls;
    double outside_ulps;
} usc_check_element;

typedef struct usc_check_request {
    const char *hlo_path;
    const char *fusion;
    size_t input_count;
    const char *const *inputs;
    size_t device_count;
    const char *const *devices;
    bool raw;
    int reduce_order;
    unsigned long oracle_precision_max;
    bool quantize;
    bool strict_oracle;
    size_t worst;
    const usc_profile *profile;
    bool no_profile;
    double lambda;
    const char *results_path;
    bool results_append;
    bool results_force;
    bool stream;
    size_t stream_piece;
    size_t tile_elements;
} usc_check_request;

typedef struct usc_check_report usc_check_report;
typedef struct usc_check_output usc_check_output;
usc_check_request usc_check_request_default(void);
usc_status usc_check_run(const usc_check_request *req,
                         usc_check_report **out, usc_error *err);
usc_status usc_check_case(const char *dir, const usc_check_request *base,
                          usc_check_report **out, usc_error *err);
usc_status usc_check_write(const usc_check_report *r, const char *path,
                           bool append, usc_error *err);
void usc_check_report_destroy(usc_check_report *r);

size_t usc_bind_sizeof(const char *type);
const char *usc_check_report_kernel_name(const usc_check_report *r);
size_t usc_check_report_output_count(const usc_check_report *r);
int usc_check_report_verdict(const usc_check_report *r);
const char *usc_check_report_reason(const usc_check_report *r);
const char *usc_check_report_profile_name(const usc_check_report *r);
unsigned long usc_check_report_oracle_precision(const usc_check_report *r);
bool usc_check_report_streamed(const usc_check_report *r);
const usc_check_output *usc_check_report_output(const usc_check_report *r,
                                                size_t i);
const usc_tensor *usc_check_output_device(const usc_check_output *o);
const usc_tensor *usc_check_output_reference(const usc_check_output *o);
const usc_results_summary *usc_check_output_summary(const usc_check_output *o);
const usc_classify_counts *usc_check_output_counts(const usc_check_output *o);
uint64_t usc_check_output_tier_decided(const usc_check_output *o);
uint64_t usc_check_output_oracle_elements(const usc_check_output *o);
size_t usc_check_output_worst(const usc_check_output *o,
                              const usc_check_element **worst);
usc_status usc_check_output_column(const usc_check_output *o,
                                   const char *name, void *out,
                                   uint64_t count, usc_error *err);

typedef struct usc_results_reader usc_results_reader;
typedef struct usc_results_op usc_results_op;
typedef struct usc_results_attribution usc_results_attribution;
typedef struct usc_results_kernel_info {
    char *name;
    char *hlo_file;
    char *fusion;
    char *verdict;
    char *verdict_reason;
    char *profile;
    char *hlo_text;
    size_t hlo_text_len;
    int64_t oracle_precision_max;
    uint64_t element_count;
    size_t output_count;
    size_t op_count;
    usc_results_op *ops;
    usc_results_attribution *attribution;
} usc_results_kernel_info;
typedef struct usc_results_output_data {
    int dtype;
    usc_tensor *device;
    usc_tensor *reference;
    uint64_t count;
    double *oracle_mid;
    double *oracle_rad;
    double *ulp_error_oracle;
    double *ulp_error_reference;
    uint8_t *undecided;
    double *envelope_lo;
    double *envelope_hi;
    uint8_t *envelope_flags;
    uint8_t *cls;
    size_t top_k;
    uint32_t *top_ops;
    double *top_contrib;
    double *attr_total;
    double *attr_residual;
    usc_results_summary summary;
} usc_results_output_data;
usc_status usc_results_open(const char *path, usc_results_reader **out,
                            usc_error *err);
void usc_results_reader_close(usc_results_reader *r);
size_t usc_results_kernel_count(const usc_results_reader *r);
const char *usc_results_kernel_name(const usc_results_reader *r, size_t i);
usc_status usc_results_read_kernel(usc_results_reader *r, const char *name,
                                   usc_results_kernel_info **out,
                                   usc_error *err);
void usc_results_kernel_info_free(usc_results_kernel_info *k);
usc_status usc_results_read_output(usc_results_reader *r, const char *kernel,
                                   size_t i, usc_results_output_data **out,
                                   usc_error *err);
void usc_results_output_data_free(usc_results_output_data *o);
"""

# The structs declared above whose layout the package relies on.
CHECKED_STRUCTS = (
    "usc_error", "usc_envelope", "usc_results_stats", "usc_results_summary",
    "usc_classify_counts", "usc_check_element", "usc_check_request",
    "usc_results_kernel_info", "usc_results_output_data",
)

ffi = cffi.FFI()
ffi.cdef(CDEF)


def library_candidates() -> list[str]:
    """The places the package looks for libulpscope.so, in order.

    ULPSCOPE_LIB (a file), then the copy bundled into the installed package
    by ``pip install ./python``, then a build folder of the checkout the
    package sits in (``build/``), then the system's library path.
    """
    here = Path(__file__).resolve().parent
    found: list[str] = []
    env = os.environ.get("ULPSCOPE_LIB")
    if env:
        return [env]
    bundled = here / "_lib" / "libulpscope.so"
    if bundled.exists():
        found.append(str(bundled))
    checkout = here.parent.parent / "build" / "libulpscope.so"
    if checkout.exists():
        found.append(str(checkout))
    system = ctypes.util.find_library("ulpscope")
    if system:
        found.append(system)
    return found


def _load() -> Any:
    candidates = library_candidates()
    if not candidates:
        raise ImportError(
            "ulpscope: libulpscope.so not found: set ULPSCOPE_LIB to the "
            "library built by CMake (build/libulpscope.so), or install the "
            "package with pip install ./python from a checkout "
            "(docs/python.md)")
    errors = []
    for path in candidates:
        try:
            lib = ffi.dlopen(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        for name in CHECKED_STRUCTS:
            theirs = lib.usc_bind_sizeof(name.encode())
            ours = ffi.sizeof(name)
            if theirs != ours:
                raise ImportError(
                    f"ulpscope: {path}: struct {name} is {theirs} bytes in "
                    f"the library but {ours} in the package's declarations: "
                    "the library and the package come from different "
                    "versions")
        return lib, path
    raise ImportError("ulpscope: cannot load libulpscope.so: "
                      + "; ".join(errors))


lib, LIBRARY_PATH = _load()


def new_error() -> Any:
    """A zeroed usc_error for one call."""
    return ffi.new("usc_error *")


def raise_for(status: int, err: Any) -> None:
    """Raises UlpscopeError for a failed status, with the library's message."""
    if status != 0:
        name = ffi.string(lib.usc_status_name(status)).decode()
        message = ffi.string(err.message).decode("utf-8", "replace")
        raise UlpscopeError(status, name, message)


def string(p: Any) -> str | None:
    """A C string as str; None for NULL."""
    if p == ffi.NULL:
        return None
    return ffi.string(p).decode("utf-8", "replace")
