"""Arrays people have: NumPy (any fixed item size), buffer-protocol objects and
``__dlpack__`` tensors (torch CPU tensors of every dtype, bf16 included), seen
as NumPy arrays without a copy, and the tensor-map data type each one loads as.

Data types map the way CUTLASS (``to_CUtensorMapDataType``) and Triton's TMA
descriptors do: the copy engine moves bits, so every 1-byte type (int8, uint8,
bool, the fp8 types float8_e4m3fn / float8_e5m2 / ..., and int4 / uint4 stored
two to a byte) loads as ``UINT8``; int16 as ``UINT16``; float16, bfloat16,
float32, float64, int32, uint32, int64, uint64 as their own types. A type
with no such mapping (complex, strings, structured records) needs an explicit
``dtype=`` of the same item size.
"""
import ctypes

import numpy as np

from .enums import DataType

__all__ = ["as_array", "tensor_map_dtype"]

# NumPy kind/itemsize -> CUtensorMapDataType (CUTLASS / Triton practice)
_BY_NAME = {
    "uint8": DataType.UINT8, "int8": DataType.UINT8, "bool": DataType.UINT8,
    "uint16": DataType.UINT16, "int16": DataType.UINT16,
    "uint32": DataType.UINT32, "int32": DataType.INT32,
    "uint64": DataType.UINT64, "int64": DataType.INT64,
    "float16": DataType.FLOAT16, "bfloat16": DataType.BFLOAT16,
    "float32": DataType.FLOAT32, "float64": DataType.FLOAT64,
}


def tensor_map_dtype(x):
    """The CUtensorMapDataType an array / tensor / dtype (NumPy, ml_dtypes or
    torch) loads as: see the module docstring for the table."""
    name = _dtype_name(x)
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name.startswith("float8") or name in ("int4", "uint4", "int2", "uint2", "float4_e2m1fn",
                                               "float6_e2m3fn", "float6_e3m2fn", "float8_e8m0fnu"):
        # sub-byte and 8-bit float types move as bytes (int4: two values per byte)
        return DataType.UINT8
    raise ValueError(f"{name} has no tensor-map data type (CUTLASS and Triton map only integer and "
                     "floating-point types); pass dtype= with a type of the same item size")


def _dtype_name(x):
    mod = type(x).__module__
    if mod.startswith("torch"):
        if hasattr(x, "dtype") and not _is_torch_dtype(x):
            x = x.dtype
        return str(x).replace("torch.", "")
    if hasattr(x, "dtype") and not isinstance(x, np.dtype) and not isinstance(x, type):
        x = x.dtype
    return np.dtype(x).name


def _is_torch_dtype(x):
    return type(x).__name__ == "dtype"


def as_array(obj, writable=True):
    """A NumPy array over ``obj``'s memory (no copy): a NumPy array of any fixed
    item size, an object with the buffer protocol, or one with ``__dlpack__``
    (CPU memory only). Object arrays are refused (TypeError): they hold
    pointers, not data."""
    if isinstance(obj, np.ndarray):
        a = obj
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, (bytes, bytearray, memoryview)):
        a = _from_dlpack(obj)
    else:
        try:
            a = np.asarray(memoryview(obj))
        except TypeError:
            raise TypeError(f"{type(obj).__name__} exposes no memory (a NumPy array, an object with "
                            "the buffer protocol or with __dlpack__ is needed)") from None
    if a.dtype.hasobject:
        raise TypeError(f"an array of dtype {a.dtype} holds Python object pointers, not data: "
                        "it cannot be device memory")
    if a.dtype.itemsize == 0:
        raise TypeError(f"dtype {a.dtype} has no fixed item size")
    return a


def _from_dlpack(obj):
    try:
        return np.from_dlpack(obj)
    except (BufferError, TypeError, RuntimeError, ValueError) as e:
        first = e
    # NumPy has no bf16 / fp8 / ...: read the DLPack capsule ourselves and view
    # the memory as unsigned integers of the element's size (bits kept).
    try:
        capsule = obj.__dlpack__()
    except Exception as e:
        raise TypeError(f"{type(obj).__name__}.__dlpack__() failed: {e}") from None
    return _capsule_array(capsule, obj, first)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.CFUNCTYPE(None, ctypes.c_void_p))]


class _Holder:
    """Keeps the capsule (and so the producer's memory) alive while the array lives."""

    def __init__(self, capsule, owner, ptr, nbytes):
        self.capsule, self.owner = capsule, owner
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (ptr, False),
                                    "version": 3}


def _capsule_array(capsule, owner, first_error):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    try:
        ptr = get(capsule, b"dltensor")
    except ValueError:
        raise TypeError(f"{type(owner).__name__}: not a DLPack tensor capsule ({first_error})") from None
    t = _DLManagedTensor.from_address(ptr).dl_tensor
    if t.device.device_type not in (1, 3):        # kDLCPU, kDLCUDAHost (pinned host memory)
        raise TypeError(f"{type(owner).__name__} lives on DLPack device type {t.device.device_type}, "
                        "not in CPU memory: copy it to the CPU first (e.g. tensor.cpu())")
    if t.dtype.lanes != 1 or t.dtype.bits % 8:
        raise TypeError(f"DLPack dtype (code {t.dtype.code}, {t.dtype.bits} bits, {t.dtype.lanes} lanes) "
                        "has no whole-byte element")
    esize = t.dtype.bits // 8
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides:
        strides = [t.strides[i] * esize for i in range(t.ndim)]
    else:
        strides = list(np.cumprod([1] + shape[::-1][:-1])[::-1] * esize) if shape else []
    count = int(np.prod(shape)) if shape else 1
    # the bytes the elements span: a negative stride (a flipped tensor) reaches below the data pointer
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0) if count else 0
    hi = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0) + esize if count else 0
    base = (t.data or 0) + t.byte_offset
    raw = np.asarray(_Holder(capsule, owner, base + lo, hi - lo))
    # the bits as unsigned integers of the element's size (a dtype NumPy may lack)
    item = np.dtype(f"<u{esize}") if esize in (1, 2, 4, 8) else np.dtype(f"V{esize}")
    return np.lib.stride_tricks.as_strided(np.ndarray((0,), item) if count == 0 else
                                           np.ndarray((1,), item, buffer=raw.data, offset=-lo),
                                           shape=shape, strides=strides)
