# hand-derived unit tests of the formats
usc_add_test(test_dtype dtype/test_dtype.c)

# format tables, emulation, stochastic
usc_add_test(test_format_tables dtype/test_format_tables.c)
usc_add_test(test_mpfr_emulation dtype/test_mpfr_emulation.c)
usc_add_test(test_stochastic dtype/test_stochastic.c)

# the f32 / f64 / bf16 fast paths of encode and decode against MPFR and
# values built by hand from the fields
usc_add_test(test_encode_fast dtype/test_encode_fast.c)

# The ULP error of one encoding against another in double (the check's
# figures against the strict reference) against the exact MPFR figure.
usc_add_test(test_ulp_fast dtype/test_ulp_fast.c)

# The inline nearest-even encode, decode and ULP of the narrow formats
# (src/dtype/rn_fast.h) against the library's general functions.
usc_add_test(test_rn_fast dtype/test_rn_fast.c)
# Their branch-free array rounding (usc__rn_encode_array) against MPFR
# called directly, every neighbour pair of the formats of at most 16 bits,
# the elements it must leave to the caller, and hand-derived boundaries.
usc_add_test(test_rn_fast_array dtype/test_rn_fast_array.c)
target_link_libraries(test_rn_fast_array PRIVATE PkgConfig::MPFR)
