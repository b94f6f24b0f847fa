"""ptxasync: a bit-exact CPU model of NVIDIA's asynchronous data movement (sm_90).

Tensor maps (cuTensorMapEncode*), the bulk tensor copy engine
(cp.async.bulk.tensor), bulk and tensor reductions, and mbarriers, matching a
real Hopper GPU byte for byte. Dimension and coordinate order follows the
driver and PTX: index 0 is the innermost (contiguous) dimension.
"""
from ._core import (Hazard, IllegalAddress, IllegalInstruction, InvalidValue,
                    MisalignedAddress, PtxAsyncError)
from .enums import (DataType, Interleave, L2Promotion, LoadMode, OOBFill, Policy, RedOp,
                    ReduceType, Swizzle, TensorMapField)
from .layout import swizzle_address, swizzle_info, tf32_round
from .machine import CTA, SMEM_MAX, GlobalBuffer, Machine, Mbarrier, mapa
from .tensormap import TensorMap, encode_im2col, encode_tiled
from .consumers import (WgmmaDescriptor, bank_conflicts, check_wgmma, compare_swizzles,
                        descriptor_for_tile, ldmatrix, stmatrix)

__version__ = "0.1.0"

__all__ = [
    "Machine", "CTA", "GlobalBuffer", "Mbarrier", "TensorMap", "encode_tiled", "encode_im2col",
    "mapa", "SMEM_MAX", "DataType", "Interleave", "Swizzle", "L2Promotion", "OOBFill", "RedOp",
    "ReduceType", "Policy", "LoadMode", "TensorMapField", "swizzle_address", "swizzle_info", "tf32_round",
    "PtxAsyncError", "InvalidValue", "IllegalInstruction", "IllegalAddress",
    "MisalignedAddress", "Hazard",
    "WgmmaDescriptor", "check_wgmma", "descriptor_for_tile", "ldmatrix", "stmatrix", "bank_conflicts",
    "compare_swizzles",
]
