"""Registering the arrays people have (NumPy of any item size, buffer-protocol
objects, __dlpack__ tensors) without a copy, and the CUTLASS/Triton dtype mapping."""
import array

import numpy as np
import pytest

import ptxasync as pa
from ptxasync.arrays import as_array, tensor_map_dtype

DT = pa.DataType


@pytest.mark.parametrize("dtype,want", [
    (np.uint8, DT.UINT8), (np.int8, DT.UINT8), (np.bool_, DT.UINT8), (np.uint16, DT.UINT16),
    (np.int16, DT.UINT16), (np.uint32, DT.UINT32), (np.int32, DT.INT32), (np.uint64, DT.UINT64),
    (np.int64, DT.INT64), (np.float16, DT.FLOAT16), (np.float32, DT.FLOAT32), (np.float64, DT.FLOAT64)])
def test_numpy_dtype_mapping(dtype, want):
    assert tensor_map_dtype(np.dtype(dtype)) == want
    assert tensor_map_dtype(np.zeros(2, dtype)) == want


def test_ml_dtypes_mapping():
    ml = pytest.importorskip("ml_dtypes")
    assert tensor_map_dtype(ml.bfloat16) == DT.BFLOAT16
    for name in ("float8_e4m3fn", "float8_e5m2", "int4", "uint4"):
        assert tensor_map_dtype(getattr(ml, name)) == DT.UINT8, name


def test_unmappable_dtype_says_what_to_do():
    with pytest.raises(ValueError, match="pass dtype="):
        tensor_map_dtype(np.complex64)


def test_object_arrays_refused_before_any_change():
    gpu = pa.Machine(smem_bytes=1024)
    with pytest.raises(TypeError, match="object pointers"):
        gpu.register(np.array([1, 2], dtype=object))
    with pytest.raises(TypeError, match="exposes no memory"):
        gpu.register(object())
    assert gpu._buffers == []
    gpu.register(np.zeros(16, np.uint8))
    assert len(gpu._buffers) == 1


def test_buffer_protocol_objects_without_copy():
    gpu = pa.Machine(smem_bytes=4096, policy="immediate")
    buf = bytearray(range(256)) * 4
    g = gpu.register(buf)
    tm = pa.TensorMap.tiled("u8", g.address, [64, 16], [64], [32, 4])
    bar = gpu.mbarrier(2048).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (16, 2), 0, bar)
    np.testing.assert_array_equal(pa.read_box(gpu, tm, 0), np.frombuffer(buf, np.uint8).reshape(16, 64)[2:6, 16:48])
    a = array.array("f", [0.0] * 16)
    g2 = gpu.register(a)
    g2.array[3] = 7.0
    assert a[3] == 7.0                             # the same memory


def test_structured_fixed_itemsize_dtype():
    rec = np.zeros(32, dtype=[("x", "<u2"), ("y", "<u2")])
    gpu = pa.Machine(smem_bytes=1024)
    g = gpu.register(rec)
    assert g.nbytes == 128


def test_torch_tensors_every_dtype_without_copy():
    torch = pytest.importorskip("torch")
    gpu = pa.Machine(smem_bytes=16384, policy="immediate")
    t = (torch.arange(64 * 128, dtype=torch.float32) / 7).to(torch.bfloat16).reshape(64, 128)
    g = gpu.register(t)
    assert g.array.ctypes.data == t.data_ptr()     # no copy
    tm = pa.TensorMap.from_array(t, (8, 64), g.address, swizzle="128B")
    assert tm.fields["dtype"] == DT.BFLOAT16
    bar = gpu.mbarrier(8192).init(1)
    bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (64, 8), 0, bar)
    got = pa.read_box(gpu, tm, 0, dtype=np.uint16)
    want = t[8:16, 64:128].contiguous().view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(got, want)
    for dt, want_dt in [(torch.int8, DT.UINT8), (torch.float8_e4m3fn, DT.UINT8), (torch.float16, DT.FLOAT16),
                        (torch.int32, DT.INT32), (torch.float32, DT.FLOAT32), (torch.int64, DT.INT64)]:
        x = torch.zeros(4, 16, dtype=dt)
        a = as_array(x)
        assert a.ctypes.data == x.data_ptr() and a.shape == (4, 16) and a.itemsize == x.element_size()
        assert tensor_map_dtype(x) == want_dt


def test_dlpack_only_object():
    class OnlyDLPack:
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kw):
            return self._a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    a = np.arange(32, dtype=np.uint32)
    v = as_array(OnlyDLPack(a))
    assert v.ctypes.data == a.ctypes.data


def test_torch_gpu_or_unusable_refused():
    torch = pytest.importorskip("torch")
    t = torch.zeros(4, 16, dtype=torch.bfloat16)[:, ::2]       # not contiguous: refused by register
    gpu = pa.Machine(smem_bytes=1024)
    with pytest.raises(ValueError, match="C-contiguous"):
        gpu.register(t)
    assert gpu._buffers == []
