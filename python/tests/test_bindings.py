"""The bindings themselves: loading, errors, arrays in and out, the GIL."""
from __future__ import annotations

import subprocess
import threading
import time

import ml_dtypes
import numpy as np
import pytest

import ulpscope
from ulpscope import _ffi

# A kernel small enough to work out by hand: x * y + 1 in f32.
FMA_HLO = """HloModule fma

ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  m = f32[4] multiply(x, y)
  one = f32[] constant(1)
  b = f32[4] broadcast(one), dimensions={}
  ROOT r = f32[4] add(m, b)
}
"""

BF16_HLO = """HloModule cvt

ENTRY main {
  x = f32[3] parameter(0)
  ROOT c = bf16[3] convert(x)
}
"""


def test_library_exports_public_api_only(root):
    """The shared library's dynamic symbols are usc_ names, none usc__."""
    out = subprocess.run(["nm", "-D", "--defined-only", _ffi.LIBRARY_PATH],
                         check=True, capture_output=True, text=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert "usc_check_run" in names
    assert "usc_version" in names
    assert not [n for n in names if n.startswith("usc__")]
    assert not [n for n in names if not n.startswith("usc_")]


def test_version_and_profiles():
    assert ulpscope.version() == ulpscope.__version__
    assert ulpscope.version().count(".") == 2
    assert "xla-tpu" in ulpscope.profiles()
    assert ulpscope.CLASS_NAMES[0] == "exact"
    assert ulpscope.CLASS_NAMES[4] == "defect"


def test_exact_output_has_zero_error():
    """Device values computed in f64 and rounded once: the oracle error is
    what numpy says, and equal to the reference's bit for bit."""
    x = np.array([1.5, -2.0, 3.25, 0.1], dtype=np.float32)
    y = np.array([2.0, 0.5, -1.0, 3.0], dtype=np.float32)
    # x*y rounded to f32, then +1 rounded: the reference, by numpy in f32.
    dev = (x * y) + np.float32(1)
    r = ulpscope.check(FMA_HLO, [x, y], [dev])
    assert r.verdict is None and r.profile is None
    o = r.outputs[0]
    assert o.dtype == "f32" and o.shape == (4,) and o.count == 4
    np.testing.assert_array_equal(o.device, dev)
    np.testing.assert_array_equal(o.reference, dev)
    assert o.ulp_reference.tolist() == [0.0] * 4
    assert o.bit_exact == 4
    # The oracle's midpoint is the exact x*y+1, computed here in f64
    # (exact: products of these f32 values fit in a double).
    exact = x.astype(np.float64) * y.astype(np.float64) + 1.0
    np.testing.assert_allclose(o.oracle_mid, exact, rtol=0, atol=1e-15)
    assert o.classes is None and o.envelope_lo is None


def test_device_error_in_ulps_and_defect():
    """One element moved 3 f32 codes: 3 ulp against the reference, and a
    defect under the strict profile; the worst element is that one."""
    x = np.array([1.5, -2.0, 3.25, 0.5], dtype=np.float32)
    y = np.array([2.0, 0.5, -1.0, 3.0], dtype=np.float32)
    ref = (x * y) + np.float32(1)
    dev = ref.copy()
    dev[2] = np.nextafter(np.nextafter(np.nextafter(
        dev[2], np.float32(np.inf)), np.float32(np.inf)), np.float32(np.inf))
    r = ulpscope.check(FMA_HLO, [x, y], dev, profile="strict", worst=2)
    assert r.verdict == "defect" and r.defect
    o = r.outputs[0]
    assert o.ulp_reference[2] == 3.0
    assert o.class_names()[2] == "defect"
    assert o.class_counts["defect"] == 1
    assert o.worst[0].index == 2 and o.worst[0].cls == "defect"
    assert o.worst[0].device == float(dev[2])


def test_bf16_arrays_as_they_are():
    """ml_dtypes bf16 device arrays go in as they are; ulps against the
    reference (round to nearest of the f32 input) are ordinal steps."""
    x = np.array([1.0, 1.00390625, 3.0], dtype=np.float32)
    ref = x.astype(ml_dtypes.bfloat16)
    dev = ref.copy()
    dev[0] = np.array([0x3F81], dtype=np.uint16).view(ml_dtypes.bfloat16)[0]
    r = ulpscope.check(BF16_HLO, [x], [dev])
    o = r.outputs[0]
    assert o.device.dtype == np.dtype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(o.reference.view(np.uint16),
                                  ref.view(np.uint16))
    assert o.ulp_reference.tolist() == [1.0, 0.0, 0.0]


def test_errors_carry_library_messages(tmp_path):
    x = np.zeros(4, np.float32)
    with pytest.raises(ulpscope.UlpscopeError) as e:
        ulpscope.check("HloModule m\n\nENTRY main {\n  x = f32[4] paramter(0)\n}\n",
                       [x], [x])
    assert e.value.code == "EPARSE"
    assert "4:" in e.value.message  # line 4 of the HLO text
    with pytest.raises(ulpscope.UlpscopeError) as e:
        ulpscope.check(FMA_HLO, [x], [x])
    assert e.value.code == "EINVAL" and "2 parameters" in e.value.message
    with pytest.raises(ulpscope.UlpscopeError) as e:
        ulpscope.check(FMA_HLO, [x, np.zeros(5, np.float32)], [x])
    assert "input_1.npy" in e.value.message and "(5,)" in e.value.message
    with pytest.raises(ulpscope.UlpscopeError) as e:
        ulpscope.check(FMA_HLO, [x, x], [x], profile="no-such-profile")
    assert "no-such-profile" in e.value.message
    with pytest.raises(ulpscope.UlpscopeError) as e:
        ulpscope.check(tmp_path / "missing.hlo", [x, x], [x])
    assert "missing.hlo" in e.value.message


def test_gil_released_during_check(root):
    """A Python thread keeps running while the library checks.  Were the
    GIL held for the call, the other thread could run only at its edges;
    it must have run in the middle half of the call."""
    case = root / "data" / "examples" / "gelu_erf_f16" / "normal_s0"
    ticks: list[float] = []
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.perf_counter()
    report = ulpscope.check_case(case)
    t1 = time.perf_counter()
    done.set()
    t.join()
    assert report.outputs
    quarter = (t1 - t0) / 4
    middle = [x for x in ticks if t0 + quarter < x < t1 - quarter]
    assert middle, "no Python bytecode ran while the library worked"


def test_write_and_streamed(tmp_path):
    x = np.array([1.5, -2.0, 3.25, 0.1], dtype=np.float32)
    y = np.array([2.0, 0.5, -1.0, 3.0], dtype=np.float32)
    dev = (x * y) + np.float32(1)
    r = ulpscope.check(FMA_HLO, [x, y], [dev], profile="xla-cpu")
    r.write(tmp_path / "r.h5")
    with ulpscope.open(tmp_path / "r.h5") as f:
        assert f.kernels()["verdict"].tolist() == [r.verdict]
    s = ulpscope.check(FMA_HLO, [x, y], [dev], profile="xla-cpu", stream=True)
    assert s.outputs[0].oracle == r.outputs[0].oracle
    if s.streamed:
        assert s.outputs[0].ulp_oracle is None


CONVERT_TYPES = ["f16", "bf16", "f8e5m2", "f8e4m3", "f8e4m3fn", "f8e4m3fnuz",
                 "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e3m4", "f8e8m0fnu",
                 "f6e2m3fn", "f6e3m2fn", "f4e2m1fn"]


@pytest.mark.parametrize("hlo_type", CONVERT_TYPES)
def test_every_float_type_in_and_out(hlo_type):
    """Values every one of these types holds exactly, converted by
    ml_dtypes: the device array comes back as the same ml_dtypes array,
    equal to the reference bit for bit."""
    from ulpscope._dtypes import numpy_dtype
    hlo = ("HloModule cvt\n\nENTRY main {\n  x = f32[4] parameter(0)\n"
           f"  ROOT c = {hlo_type}[4] convert(x)\n}}\n")
    x = np.array([1.0, 2.0, 0.5, 4.0], dtype=np.float32)
    dev = x.astype(numpy_dtype(hlo_type))
    r = ulpscope.check(hlo, [x], dev)
    o = r.outputs[0]
    assert o.dtype == hlo_type
    assert o.device.dtype == dev.dtype
    bits = f"u{dev.dtype.itemsize}"
    np.testing.assert_array_equal(o.device.view(bits), dev.view(bits))
    np.testing.assert_array_equal(o.reference.view(bits), dev.view(bits))
    assert o.bit_exact == 4


def test_jax_array_as_the_one_device_output():
    """A single (jax) array for a kernel with one output is that output,
    not a list of its rows."""
    import jax.numpy as jnp
    x = np.array([1.5, -2.0, 3.25, 0.1], dtype=np.float32)
    y = np.array([2.0, 0.5, -1.0, 3.0], dtype=np.float32)
    dev = jnp.asarray((x * y) + np.float32(1))
    r = ulpscope.check(FMA_HLO, [jnp.asarray(x), jnp.asarray(y)], dev)
    assert r.outputs[0].bit_exact == 4


def _header_fields(root, header: str, name: str) -> list[str]:
    """The field names of struct name as the header's text spells them."""
    import re
    text = (root / "include" / "ulpscope" / header).read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    body = re.search(r"typedef struct %s \{(.*?)\} %s;" % (name, name),
                     text, flags=re.S).group(1)
    fields = []
    for decl in body.split(";"):
        decl = re.sub(r"\[[^\]]*\]", "", decl).strip()
        if not decl:
            continue
        for part in decl.split(","):
            fields.append(re.findall(r"[A-Za-z_]\w*", part)[-1])
    return fields


@pytest.mark.parametrize("header,name", [
    ("check.h", "usc_check_request"), ("bisect.h", "usc_bisect_request"),
    ("signature.h", "usc_signature_request"),
    ("explain.h", "usc_explain_request"),
    ("attribution.h", "usc_attr_options"), ("audit.h", "usc_audit_request"),
    ("batch.h", "usc_batch_options"), ("check.h", "usc_check_element"),
])
def test_declarations_are_the_headers(root, header, name):
    """The request structs cffi knows have the header's fields, in order:
    the declarations come from the headers, not from a copy that a change
    to a header leaves behind."""
    ours = [f for f, _ in _ffi.ffi.typeof(name).fields]
    assert ours == _header_fields(root, header, name)


def test_package_declares_no_struct(root):
    """No C struct is written by hand in the package (usc_bind_cdef)."""
    for py in (root / "python" / "ulpscope").glob("*.py"):
        assert "typedef struct" not in py.read_text(), py


def test_every_named_struct_has_the_library_size():
    """cffi lays out every struct the library names at the C compiler's
    size (the load-time guard, run here over the whole list)."""
    lib, ffi = _ffi.lib, _ffi.ffi
    names = []
    while (p := lib.usc_bind_struct_name(len(names))) != ffi.NULL:
        names.append(ffi.string(p).decode())
    assert "usc_check_request" in names and "usc_audit_report" in names
    for n in names:
        assert ffi.sizeof(n) == lib.usc_bind_sizeof(n.encode()), n
