"""What a first session with the package runs into: one bf16 type from read_box,
the data-type names the docs use, one argument order for CTA.read / write,
reprs that say what an object is, submodules reachable from `import ptxasync`."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ptxasync as pa
from ptxasync import viz


def _loaded(tensor, **kw):
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
    g = gpu.register(tensor)
    tmap = pa.TensorMap.from_array(tensor, (8, 64), g.address, swizzle="128B", dtype="bf16", **kw)
    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(tmap.box_bytes)
    gpu.cp_async_bulk_tensor_load(tmap, (64, 16), 1024, bar)
    assert bar.try_wait(0)
    return gpu, tmap


@pytest.mark.parametrize("ml_dtypes", ["installed", "missing"])
def test_read_box_gives_bf16_bits_with_or_without_ml_dtypes(ml_dtypes, monkeypatch):
    if ml_dtypes == "missing":
        monkeypatch.setitem(sys.modules, "ml_dtypes", None)
    tensor = np.arange(128 * 256, dtype=np.uint16).reshape(128, 256)
    gpu, tmap = _loaded(tensor)
    tile = pa.read_box(gpu, tmap, 1024)
    assert tile.dtype == np.uint16 and pa.numpy_dtype(pa.DataType.BFLOAT16) == np.uint16
    assert np.array_equal(tile, tensor[16:24, 64:128])       # README's "A taste"


def test_read_box_bf16_values_on_request_and_write_box_rounds():
    ml = pytest.importorskip("ml_dtypes")
    tensor = np.arange(128 * 256, dtype=np.uint16).reshape(128, 256)
    gpu, tmap = _loaded(tensor)
    vals = pa.read_box(gpu, tmap, 1024, dtype=ml.bfloat16)
    assert vals.dtype == ml.bfloat16 and np.array_equal(vals.view(np.uint16), tensor[16:24, 64:128])
    # float values into a bf16 box: rounded to nearest even, as ml_dtypes rounds them
    f = np.linspace(-3, 3, 8 * 64, dtype=np.float32).reshape(8, 64) * np.float32(1.001)
    pa.write_box(gpu, tmap, 4096, f)
    assert np.array_equal(pa.read_box(gpu, tmap, 4096), f.astype(ml.bfloat16).view(np.uint16))


@pytest.mark.parametrize("name, member", [
    ("int8", "UINT8"), (np.int8, "UINT8"), ("fp8", "UINT8"), ("e4m3", "UINT8"), ("e5m2", "UINT8"),
    ("int16", "UINT16"), (np.int16, "UINT16"), ("fp16", "FLOAT16"), ("fp32", "FLOAT32"), ("fp64", "FLOAT64"),
    ("float32", "FLOAT32"), ("bfloat16", "BFLOAT16"), ("int32", "INT32"), (np.uint64, "UINT64"),
])
def test_data_type_names_as_from_array_and_the_docs_write_them(name, member):
    assert pa.enums.parse(pa.DataType, name) == pa.DataType[member]


def test_an_int8_map_by_name_is_the_map_from_array_makes():
    a = np.zeros((16, 64), np.int8)
    by_name = pa.TensorMap.tiled("int8", 0, [64, 16], [64], [64, 8])
    assert by_name == pa.TensorMap.from_array(a, (8, 64), 0)


def test_enum_errors_spell_members_as_the_docs_do():
    with pytest.raises(ValueError) as e:
        pa.enums.parse(pa.Swizzle, "129B")
    assert "128B, 128B_ATOM_32B" in str(e.value) and "B128" not in str(e.value)
    with pytest.raises(ValueError, match="int8 / fp8 / e4m3 / e5m2 move as u8"):
        pa.enums.parse(pa.DataType, "int9")


def test_wgmma_descriptor_repr_is_the_call_that_builds_it():
    d = pa.WgmmaDescriptor.from_fields(0x400, 16, 512, 0, "64B")
    assert repr(d) == "WgmmaDescriptor(start=0x400, lbo=16, sbo=512, base_offset=0, swizzle='64B')"
    again = eval(repr(d), {"WgmmaDescriptor": pa.WgmmaDescriptor})
    assert again == d and again.value == d.value and again.swizzle == 64
    assert pa.WgmmaDescriptor(0x400, 16, 512, swizzle=64) == d


def test_cta_read_takes_the_offset_first_like_write():
    m = pa.Machine(smem_bytes=4096)
    cta = m.cta(0)
    data = np.arange(8, dtype=np.uint16)
    cta.write(0x100, data)
    assert np.array_equal(cta.read(0x100, np.uint16, 8), data)
    assert np.array_equal(cta.read(0x100, np.uint16, (2, 4)), data.reshape(2, 4))
    assert np.array_equal(cta.read(np.uint16, 8, 0x100), data)           # view's order still works
    assert np.array_equal(cta.read(np.uint8, 4), np.zeros(4, np.uint8))   # offset 0
    with pytest.raises(TypeError, match="give the shape"):
        cta.read(0x100, np.uint16)
    for fn in (pa.CTA.read, pa.CTA.write):
        for p in ("offset", "dtype" if fn is pa.CTA.read else "data", "thread"):
            assert f"{p} " in fn.__doc__


def test_a_machine_whose_construction_failed_still_prints():
    m = pa.Machine.__new__(pa.Machine)
    with pytest.raises(OverflowError):
        m.__init__(smem_bytes=-1)
    assert "not constructed" in repr(m)


@pytest.mark.parametrize("name", ["ptx", "testing", "cuda", "pipeline", "golden"])
def test_submodules_are_attributes_of_the_package(name):
    code = f"import ptxasync as pa; m = pa.{name}; print(m.__name__, '{name}' in dir(pa))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == [f"ptxasync.{name}", "True"], r.stderr
    assert f"ptxasync.{name} " in pa.__doc__
    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        pa.nosuch


def test_reprs_say_what_the_object_is():
    tm = pa.TensorMap.tiled("bf16", 0, [256, 128], [512], [64, 8], swizzle="128B")
    assert repr(viz.layout_data(tm, 0x480)).startswith(
        "LayoutData(box (8, 64) (NumPy order) of 2-byte elements at dst 0x480, swizzle 128B")
    assert repr(viz.provenance(tm, (224, 124))) == (
        "Provenance(tile load at (224, 124) (driver order, c0 innermost): 8 x 64 box elements, "
        "384 out-of-bounds (zero fill))")


def test_assert_box_equal_failure_points_at_the_test(tmp_path):
    t = tmp_path / "test_box.py"
    t.write_text(textwrap.dedent("""
        import numpy as np
        import ptxasync as pa
        import ptxasync.testing

        def test_box():
            tensor = np.arange(64 * 64, dtype=np.uint16).reshape(64, 64)
            gpu = pa.Machine(smem_bytes=32 * 1024)
            tm = pa.TensorMap.from_array(tensor, (8, 64), gpu.register(tensor).address)
            bar = gpu.mbarrier(0).init(1)
            bar.arrive_expect_tx(tm.box_bytes)
            gpu.load_box(tm, (0, 0), 1024, bar)
            bar.try_wait(0)
            pa.testing.assert_box_equal(gpu, tm, 1024, tensor[1:9])
    """))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(t)],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 1 and "box elements differ" in r.stdout, r.stdout
    assert "pa.testing.assert_box_equal(gpu, tm, 1024, tensor[1:9])" in r.stdout
    assert "testing.py" not in r.stdout and "raise AssertionError" not in r.stdout
