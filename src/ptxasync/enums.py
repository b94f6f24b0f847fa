"""CUDA driver enums with the driver's numeric values, and readable-name parsing.

Every enum accepts its value, its member, the driver name
(``CU_TENSOR_MAP_SWIZZLE_128B``), the short name (``SWIZZLE_128B`` / ``128B``)
and, for data types, PTX names (``bf16``) and NumPy dtypes.
"""
from enum import IntEnum

import numpy as np

__all__ = ["DataType", "Interleave", "Swizzle", "L2Promotion", "OOBFill", "RedOp",
           "ReduceType", "Policy", "LoadMode", "TensorMapField", "parse", "parse_redop", "parse_reduce_type"]


class DataType(IntEnum):
    """CUtensorMapDataType."""
    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    U4x16_ALIGN8B = 13      # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B
    U4x16_ALIGN16B = 14     # CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B
    U6x16_ALIGN16B = 15     # CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B


class Interleave(IntEnum):
    """CUtensorMapInterleave."""
    NONE = 0
    B16 = 1     # CU_TENSOR_MAP_INTERLEAVE_16B
    B32 = 2     # CU_TENSOR_MAP_INTERLEAVE_32B


class Swizzle(IntEnum):
    """CUtensorMapSwizzle."""
    NONE = 0
    B32 = 1     # CU_TENSOR_MAP_SWIZZLE_32B
    B64 = 2
    B128 = 3
    B128_ATOM_32B = 4
    B128_ATOM_32B_FLIP_8B = 5
    B128_ATOM_64B = 6
    # CU_TENSOR_MAP_SWIZZLE_96B: the driver documents no value; 96 is the model's own,
    # outside the documented 0..6 (cuTensorMapEncodeIm2colWide mode W, sm_103a only).
    B96 = 96


class L2Promotion(IntEnum):
    """CUtensorMapL2promotion (a cache hint; no effect on the bytes)."""
    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class OOBFill(IntEnum):
    """CUtensorMapFloatOOBfill."""
    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1


class RedOp(IntEnum):
    """PTX .redOp of cp.reduce.async.bulk{.tensor}."""
    ADD = 0
    MIN = 1
    MAX = 2
    INC = 3
    DEC = 4
    AND = 5
    OR = 6
    XOR = 7


class ReduceType(IntEnum):
    """PTX .type of the non-tensor cp.reduce.async.bulk."""
    B32 = 0
    B64 = 1
    U32 = 2
    S32 = 3
    U64 = 4
    S64 = 5
    F16 = 6
    BF16 = 7
    F32 = 8
    F64 = 9


class Policy(IntEnum):
    """Order in which pending asynchronous operations complete."""
    IMMEDIATE = 0
    IN_ORDER = 1
    REVERSE = 2
    RANDOM = 3
    ADVERSARIAL = 4   # seeded like RANDOM; poisons pending destinations, checks memory


class LoadMode(IntEnum):
    """The .load_mode qualifier of cp{.reduce}.async.bulk.tensor (PTX names
    accepted: ``"tile"``, ``".im2col"``, ``"im2col_no_offs"``)."""
    TILE = 0
    IM2COL = 1             # loads: global -> shared, with im2col offsets
    IM2COL_NO_OFFS = 2     # stores and reductions: shared::cta -> global
    TILE_GATHER4 = 3       # loads (sm_100): four rows of a 2D tensor
    TILE_SCATTER4 = 4      # stores (sm_100): the inverse of gather4
    IM2COL_W = 5           # loads (sm_100): pixels along W, im2colInfo {wHalo, wOffset}
    IM2COL_W128 = 6        # loads (sm_100): 128 pixels along W, a halo after every 32


class TensorMapField(IntEnum):
    """Fields of tensormap.replace.tile."""
    GLOBAL_ADDRESS = 0
    RANK = 1
    BOX_DIM = 2
    GLOBAL_DIM = 3
    GLOBAL_STRIDE = 4
    ELEMENT_STRIDE = 5
    ELEMTYPE = 6
    INTERLEAVE_LAYOUT = 7
    SWIZZLE_MODE = 8
    SWIZZLE_ATOMICITY = 9
    FILL_MODE = 10


_PREFIX = {
    DataType: "CU_TENSOR_MAP_DATA_TYPE_",
    Interleave: "CU_TENSOR_MAP_INTERLEAVE_",
    Swizzle: "CU_TENSOR_MAP_SWIZZLE_",
    L2Promotion: "CU_TENSOR_MAP_L2_PROMOTION_",
    OOBFill: "CU_TENSOR_MAP_FLOAT_OOB_FILL_",
}

_SHORT_PREFIX = {
    DataType: "DATA_TYPE_",
    Interleave: "INTERLEAVE_",
    Swizzle: "SWIZZLE_",
    L2Promotion: "L2_PROMOTION_",
    OOBFill: "FLOAT_OOB_FILL_",
}

_ALIASES = {
    DataType: {
        "U8": 0, "U16": 1, "U32": 2, "S32": 3, "I32": 3, "U64": 4, "S64": 5, "I64": 5,
        "F16": 6, "HALF": 6, "F32": 7, "FLOAT": 7, "F64": 8, "DOUBLE": 8, "BF16": 9,
        "F32.FTZ": 10, "F32_FTZ": 10, "TF32": 11, "TF32.FTZ": 12, "TF32_FTZ": 12,
        "16U4_ALIGN8B": 13, "B4X16": 13, "16U4_ALIGN16B": 14, "B4X16_P64": 14,
        "16U6_ALIGN16B": 15, "B6X16_P32": 15, "B6P2X16": 15,
        # NumPy / PyTorch names and the fp* spellings; 1-byte types (int8, fp8)
        # move as UINT8 and int16 as UINT16, as CUTLASS and Triton map them
        # (ptxasync.arrays): a copy moves bits
        "UINT8": 0, "INT8": 0, "S8": 0, "I8": 0, "FP8": 0, "E4M3": 0, "E5M2": 0,
        "FLOAT8_E4M3FN": 0, "FLOAT8_E5M2": 0, "UINT16": 1, "INT16": 1, "S16": 1, "I16": 1,
        "UINT32": 2, "INT32": 3, "UINT64": 4, "INT64": 5, "FP16": 6, "FLOAT16": 6, "FP32": 7,
        "FLOAT32": 7, "FP64": 8, "FLOAT64": 8, "BFLOAT16": 9,
    },
    Interleave: {"16B": 1, "32B": 2},
    Swizzle: {"32B": 1, "64B": 2, "128B": 3, "128B_ATOM_32B": 4, "128B_ATOM_32B_FLIP_8B": 5,
              "128B_ATOM_64B": 6, "96B": 96},
    L2Promotion: {"64B": 1, "128B": 2, "256B": 3},
    OOBFill: {"ZERO": 0, "NAN": 1, "OOB_NAN": 1},
    LoadMode: {"TILE::GATHER4": 3, "TILE::SCATTER4": 4, "IM2COL::W": 5, "IM2COL::W::128": 6},
}

_NUMPY = {
    np.dtype(np.uint8): DataType.UINT8, np.dtype(np.uint16): DataType.UINT16,
    np.dtype(np.uint32): DataType.UINT32, np.dtype(np.int32): DataType.INT32,
    np.dtype(np.uint64): DataType.UINT64, np.dtype(np.int64): DataType.INT64,
    np.dtype(np.float16): DataType.FLOAT16, np.dtype(np.float32): DataType.FLOAT32,
    np.dtype(np.float64): DataType.FLOAT64,
}


_PARSED = {}   # (enum, name) -> member: names repeat on every call of a hot path


def parse(enum_cls, value):
    """Turn an int, member, name or (data types) NumPy dtype into enum_cls."""
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, str):
        hit = _PARSED.get((enum_cls, value))
        if hit is None:
            hit = _PARSED[(enum_cls, value)] = _parse(enum_cls, value)
        return hit
    return _parse(enum_cls, value)


def _parse(enum_cls, value):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        try:
            return enum_cls(int(value))
        except ValueError:
            raise ValueError(f"{int(value)} is not a valid {enum_cls.__name__} value "
                             f"(valid: {', '.join(f'{m.name}={m.value}' for m in enum_cls)})") from None
    if enum_cls is DataType and not isinstance(value, str):
        try:
            dt = np.dtype(value)
        except TypeError:
            dt = None
        if dt is not None:
            if dt in _NUMPY:
                return _NUMPY[dt]
            from .arrays import tensor_map_dtype     # int8, int16, bool, fp8, bfloat16: as arrays map them
            try:
                return tensor_map_dtype(dt)
            except ValueError:
                raise ValueError(f"NumPy dtype {dt} has no CUtensorMapDataType") from None
    if isinstance(value, str):
        key = value.strip().lstrip(".").upper()
        for prefix in ("CU_TENSOR_MAP_", _SHORT_PREFIX.get(enum_cls, "")):
            if prefix and key.startswith(prefix):
                key = key[len(prefix):]
        aliases = _ALIASES.get(enum_cls, {})
        if key in aliases:
            return enum_cls(aliases[key])
        for m in enum_cls:
            if m.name == key:
                return m
    if enum_cls is DataType:        # the spellings the docs and --help use
        raise ValueError(f"{value!r} is not a valid data type (valid: {DTYPE_SPELLINGS}, a "
                         "CU_TENSOR_MAP_DATA_TYPE_* name, a NumPy dtype or a number 0-15)")
    raise ValueError(f"{value!r} is not a valid {enum_cls.__name__} "
                     f"(valid: {', '.join(spelling(m) for m in enum_cls)})")


def spelling(member):
    """How the docs write a member: the driver name without its prefix (128B,
    128B_ATOM_32B, ZERO)."""
    return driver_name(member)[len(_PREFIX.get(type(member), "")):]


DTYPE_SPELLINGS = ("u8 u16 u32 s32 u64 s64 f16 bf16 f32 f64 f32.ftz tf32 tf32.ftz "
                   "16u4_align8b 16u4_align16b 16u6_align16b; int8 / fp8 / e4m3 / e5m2 move as u8, "
                   "int16 as u16; fp16 fp32 fp64 and the NumPy names")


def driver_name(member):
    """The CUDA driver spelling of an enum member, e.g. CU_TENSOR_MAP_SWIZZLE_128B."""
    name = member.name
    if type(member) in (Interleave, Swizzle) and name.startswith("B") and name[1].isdigit():
        head, _, tail = name[1:].partition("_")          # B128_ATOM_32B -> 128B_ATOM_32B
        name = head + "B" + ("_" + tail if tail else "")
    elif type(member) is DataType and "x16" in name:
        name = "16" + name[:2] + name[5:]                # U4x16_ALIGN8B -> 16U4_ALIGN8B
    return _PREFIX.get(type(member), "") + name


def parse_redop(op):
    """RedOp from a member, value or PTX name (``"add"``, ``".add"``)."""
    if isinstance(op, str):
        op = op.strip().lstrip(".")
    return parse(RedOp, op)


def parse_reduce_type(t):
    """(ReduceType, noftz) from a member, value or PTX name (``"u32"``, ``".u32"``,
    ``".noftz.f16"``)."""
    if isinstance(t, str):
        key = t.strip().lstrip(".").upper()
        noftz = key.startswith("NOFTZ.")
        if noftz:
            key = key[len("NOFTZ."):]
        try:
            return ReduceType[key], noftz
        except KeyError:
            raise ValueError(f"{t!r} is not a cp.reduce.async.bulk type "
                             f"(valid: {', '.join(m.name.lower() for m in ReduceType)})") from None
    return ReduceType(int(t)), False
