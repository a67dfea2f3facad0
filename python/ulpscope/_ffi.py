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
    const usc_tensor *const *input_tensors;
    const usc_tensor *const *device_tensors;
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
    size_t threads;
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

typedef struct usc_hlo_instr usc_hlo_instr;
const char *usc_bind_instr_name(const usc_hlo_instr *instr);

typedef struct usc_attr_options {
    size_t top_k;
    size_t max_ops;
    unsigned long precision;
    int reduce_order;
    bool quantize;
} usc_attr_options;
typedef struct usc_attr_op {
    const usc_hlo_instr *instr;
    char *name;
    const char *opcode;
    const char *op_type;
    const char *op_name;
    char *source_file;
    int64_t source_line;
    double mean_abs;
    double max_abs;
    double sum_abs;
    double share;
} usc_attr_op;
typedef struct usc_attr_output {
    int dtype;
    uint64_t count;
    double *total;
    double *residual;
    double *contrib;
    uint32_t *top_ops;
    double *top_contrib;
    double *top_share;
    uint64_t attributed;
} usc_attr_output;
typedef struct usc_attribution {
    size_t op_count;
    usc_attr_op *ops;
    size_t top_k;
    unsigned long precision;
    size_t output_count;
    usc_attr_output *outputs;
    double residual_mean_abs, residual_max_abs, residual_sum_abs;
    double residual_share;
    uint64_t attributed;
} usc_attribution;
usc_attr_options usc_attr_options_default(void);
void usc_attribution_destroy(usc_attribution *a);
usc_status usc_check_report_attribute(usc_check_report *r,
                                      const usc_attr_options *opt,
                                      usc_attribution **out, usc_error *err);

typedef struct usc_bisect_capture {
    const char *name;
    const char *source;
} usc_bisect_capture;
typedef struct usc_bisect_request {
    const char *hlo_path;
    const char *fusion;
    size_t input_count;
    const char *const *inputs;
    size_t capture_count;
    const usc_bisect_capture *captures;
    size_t device_count;
    const char *const *devices;
    bool raw;
    int reduce_order;
    const usc_profile *profile;
} usc_bisect_request;
typedef struct usc_bisect_step {
    const usc_hlo_instr *instr;
    size_t output;
    char *source;
    usc_tensor *values;
    uint64_t count;
    uint64_t outside;
    uint64_t unknown;
    uint64_t worst_index;
    uint64_t worst_bits;
    usc_envelope worst_envelope;
    double worst_outside_ulps;
    int worst_class;
    const char *op_name;
    char source_loc[256];
} usc_bisect_step;
typedef struct usc_bisect_report usc_bisect_report;
usc_bisect_request usc_bisect_request_default(void);
usc_status usc_bisect_run(const usc_bisect_request *req,
                          usc_bisect_report **out, usc_error *err);
usc_status usc_bisect_case(const char *dir, const usc_bisect_request *base,
                           usc_bisect_report **out, usc_error *err);
void usc_bisect_report_destroy(usc_bisect_report *r);
const char *usc_bisect_report_kernel_name(const usc_bisect_report *r);
size_t usc_bisect_report_step_count(const usc_bisect_report *r);
const usc_bisect_step *usc_bisect_report_step(const usc_bisect_report *r,
                                              size_t i);
long long usc_bisect_report_first_bad(const usc_bisect_report *r);
uint64_t usc_bisect_report_unknown(const usc_bisect_report *r);
const char *usc_bisect_report_reason(const usc_bisect_report *r);
const char *usc_bisect_report_profile_name(const usc_bisect_report *r);

typedef struct usc_signature_options {
    int reduce_order;
    double max_seconds;
    size_t max_candidates;
    size_t top;
    double min_fraction;
    const usc_profile *profile;
} usc_signature_options;
typedef struct usc_signature_candidate {
    char *op;
    char *computation;
    int kind;
    int variant;
    char detail[96];
    uint64_t explained;
    uint64_t broken;
    double width;
    bool envelope;
    uint64_t reproduced;
    uint64_t differing_reproduced;
    double median_ulps;
    bool tied_best;
} usc_signature_candidate;
typedef struct usc_signature_report {
    char *kernel_name;
    uint64_t elements;
    uint64_t differing;
    uint64_t defects;
    char profile[64];
    char note[320];
    int verdict;
    size_t enumerated, evaluated, no_effect, failed, skipped;
    size_t envelopes, pruned;
    double seconds;
    bool budget_exhausted;
    size_t candidate_count;
    usc_signature_candidate *candidates;
    usc_signature_candidate identity;
    double min_fraction;
} usc_signature_report;
typedef struct usc_signature_request {
    const char *hlo_path;
    const char *fusion;
    size_t input_count;
    const char *const *inputs;
    size_t device_count;
    const char *const *devices;
    size_t sets;
    bool raw;
    bool no_profile;
    usc_signature_options options;
} usc_signature_request;
usc_signature_request usc_signature_request_default(void);
usc_status usc_signature_run(const usc_signature_request *req,
                             usc_signature_report **out, usc_error *err);
usc_status usc_signature_case(const char *dir,
                              const usc_signature_request *base,
                              usc_signature_report **out, usc_error *err);
void usc_signature_report_destroy(usc_signature_report *r);
const char *usc_signature_verdict_name(int v);
const char *usc_mutation_name(int k);

typedef struct usc_explain_request {
    usc_check_request check;
    const char *case_dir;
    const char *results_path;
    const char *results_kernel;
    size_t output;
    size_t index_rank;
    int64_t index[64];
    bool flat;
    uint64_t flat_index;
    unsigned max_depth;
    bool no_attribute;
    size_t attr_max_ops;
    size_t terms;
} usc_explain_request;
typedef struct usc_explain_node {
    const usc_hlo_instr *instr;
    unsigned depth;
    int kind;
    uint64_t index;
    uint64_t count;
    uint64_t lhs_index, rhs_index;
    char set[256];
    uint64_t term, terms_of;
    bool padding;
    size_t same_as;
    bool truncated;
    const usc_hlo_instr *via;
    bool has_values;
    bool is_float;
    uint64_t ref_bits;
    double ref;
    double exact_lo, exact_hi, exact_mid;
    const char *exact_kind;
    double local_ulps;
    double ref_err_ulps;
    double contrib;
    bool has_envelope;
    usc_envelope envelope;
    double sum_abs_ref, sum_abs_exact;
    double max_abs_ref_err;
    uint64_t max_ref_err_index, max_ref_err_rhs;
    char op_name[160];
    char source[160];
} usc_explain_node;
typedef struct usc_explain_report {
    usc_check_report *check;
    usc_attribution *attribution;
    char attr_note[512];
    size_t output;
    uint64_t flat_index;
    usc_check_element root;
    double reference_ulps;
    double exact_lo, exact_hi;
    unsigned max_depth;
    size_t terms;
    size_t node_count;
    usc_explain_node *nodes;
    unsigned long oracle_precision;
} usc_explain_report;
usc_explain_request usc_explain_request_default(void);
usc_status usc_explain_run(const usc_explain_request *req,
                           usc_explain_report **out, usc_error *err);
void usc_explain_report_destroy(usc_explain_report *r);
usc_status usc_explain_text(const usc_explain_report *r, char **text,
                            usc_error *err);
void usc_bind_text_free(char *text);
"""

# The structs declared above whose layout the package relies on.
CHECKED_STRUCTS = (
    "usc_error", "usc_envelope", "usc_results_stats", "usc_results_summary",
    "usc_classify_counts", "usc_check_element", "usc_check_request",
    "usc_results_kernel_info", "usc_results_output_data",
    "usc_attr_options", "usc_attr_op", "usc_attr_output", "usc_attribution",
    "usc_bisect_capture", "usc_bisect_request", "usc_bisect_step",
    "usc_signature_options", "usc_signature_request",
    "usc_signature_candidate", "usc_signature_report",
    "usc_explain_request", "usc_explain_node", "usc_explain_report",
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
