"""ptxasync: a bit-exact CPU model of NVIDIA's asynchronous data movement (sm_90).

Tensor maps (cuTensorMapEncode*), the bulk tensor copy engine
(cp.async.bulk.tensor), bulk and tensor reductions, and mbarriers, matching a
real Hopper GPU byte for byte.

Start here
    gpu = Machine(ctas=1, smem_bytes=64 * 1024)      # global memory + a cluster of CTAs
    g = gpu.register(array)                          # NumPy, buffer protocol or torch/DLPack, no copy
    tm = TensorMap.from_array(array, (8, 64), g.address, swizzle="128B")
    bar = gpu.mbarrier(0).init(1); bar.arrive_expect_tx(tm.box_bytes)
    gpu.cp_async_bulk_tensor_load(tm, (64, 16), 1024, bar)   # coords: driver order, c0 innermost
    # the same load in NumPy order: gpu.load_box(tm, (16, 64), 1024, bar)
    bar.try_wait(0)                                  # completes the load
    read_box(gpu, tm, 1024)                          # the box in NumPy order, unswizzled

Coordinate order: dimensions, strides, boxes and coordinates follow the driver
and PTX (index 0 innermost); ``TensorMap.from_array``, ``Machine.load_box``,
``read_box`` and the pictures speak NumPy order (outermost first; each
picture's title says which order its labels use).

Rules that bite: an innermost box extent times the element size must be a
multiple of 16 bytes (and within the swizzle span); an innermost load
coordinate whose byte offset is not a multiple of 16 faults; a store also
writes the tail of the 16-byte chunk that holds a row's last element; a
swizzled destination that is not aligned to the pattern's repeat starts
mid-pattern (the XOR uses absolute address bits [7, 10)).

Where things are
    Machine, CTA, Mbarrier, GlobalBuffer    the model (ptxasync.machine)
    Multicast                               a multicast object: multimem.* addresses (ptxasync.multicast)
    TensorMap, encode_tiled, encode_im2col  descriptors (ptxasync.tensormap)
    read_box, write_box                     a box in shared memory <-> NumPy
    TensorLoad                              one load's result: pending state, then its pictures
    ptxasync.driver                         cuTensorMapEncodeTiled/Im2col drop-ins, cuda-python style
    ptxasync.arrays                         dtype mapping (int8/fp8/int4 as bytes) and array import
    ptxasync.consumers                      wgmma descriptors, ldmatrix, bank conflicts, check_wgmma
    ptxasync.testing                        assert_box_equal, assert_smem_equal for pytest
    ptxasync.viz                            pictures: layout, provenance, im2col, banks, consumer
                                            read order, timeline (matplotlib/SVG/text)
    ptxasync.golden                         replay recorded hardware results
    ptxasync.ptx                            PTX text: check as ptxas does, format, Kernel (run it)
    ptxasync.pipeline                       a 3-stage producer/consumer TMA pipeline on the model
    ptxasync.cuda                           the real GPU as a second engine (cuda-bindings)
    ptxasync.nvrtc                          CUDA C++ -> PTX -> ptx.Kernel through NVRTC, no GPU
    (ptxasync.testing, .golden, .ptx, .pipeline, .cuda and .nvrtc are imported on first use:
    ``import ptxasync as pa; pa.ptx.check(text)`` works)
    the ptxasync command                    tour, layout, explain, golden, banks, reads, ptx
                                            (ptxasync --help; each has --help with examples)

Errors: InvalidValue (a driver rejection, also a ValueError), IllegalInstruction,
IllegalAddress, MisalignedAddress, Hazard, all PtxAsyncError.
"""
try:
    from . import _core  # the compiled C core
except ImportError as _e:  # pragma: no cover - depends on how the package was obtained
    import os as _os
    _here = _os.path.dirname(_os.path.abspath(__file__))
    raise ImportError(
        f"ptxasync's compiled core (ptxasync._core) is missing from {_here}: this is the source "
        "tree, not a built package. Install it with `pip install .` (or `pip install -e .`) from "
        "the repository root, or build in place with `python setup.py build_ext --inplace`."
    ) from _e
from ._core import (Deadlock, DeviceAssert, Hazard, IllegalAddress, IllegalInstruction, InvalidValue,
                    MisalignedAddress, PtxAsyncError)
from .enums import (DataType, Interleave, L2Promotion, LoadMode, OOBFill, Policy, RedOp,
                    ReduceType, Swizzle, TensorMapField)
from .layout import swizzle_address, swizzle_info, tf32_round
from .machine import CTA, SMEM_MAX, GlobalBuffer, Machine, Mbarrier, mapa
from .multicast import Multicast
from .oplist import OpList
from .tensormap import TensorMap, encode_im2col, encode_im2col_wide, encode_tiled
from .consumers import (SmemProducer, TmaProducer, WgmmaDescriptor, bank_conflicts, check_ldmatrix,
                        check_wgmma, compare_swizzles, descriptor_for_tile, ldmatrix, stmatrix)
from .boxes import numpy_dtype, read_box, write_box
from .driver import CUresult, cuTensorMapEncodeIm2col, cuTensorMapEncodeTiled
from .results import TensorLoad
from .viz import objects as _objects   # noqa: F401  (how the model shows itself in Jupyter)

__version__ = "0.1.0"

# submodules imported on first use (pa.ptx, pa.cuda, ...): importing them all
# up front would cost every `import ptxasync` their start-up time
_LAZY = ("testing", "golden", "ptx", "pipeline", "cuda", "nvrtc")


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'ptxasync' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "Machine", "CTA", "GlobalBuffer", "Mbarrier", "Multicast", "TensorMap", "encode_tiled", "encode_im2col",
    "encode_im2col_wide",
    "mapa", "SMEM_MAX", "DataType", "Interleave", "Swizzle", "L2Promotion", "OOBFill", "RedOp",
    "ReduceType", "Policy", "LoadMode", "TensorMapField", "swizzle_address", "swizzle_info", "tf32_round",
    "PtxAsyncError", "InvalidValue", "IllegalInstruction", "IllegalAddress",
    "WgmmaDescriptor", "check_wgmma", "descriptor_for_tile", "ldmatrix", "stmatrix", "bank_conflicts",
    "compare_swizzles", "check_ldmatrix", "TmaProducer", "SmemProducer",
    "MisalignedAddress", "Hazard", "Deadlock", "DeviceAssert", "read_box", "write_box", "numpy_dtype",
    "OpList", "CUresult", "cuTensorMapEncodeTiled", "cuTensorMapEncodeIm2col", "TensorLoad",
]
