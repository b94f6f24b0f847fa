"""Triton's arguments as the PTX ``.entry`` takes them: what Triton's CUDA launcher (driver.c,
``launch``; driver.py, ``make_tensordesc_arg``) does, written for the model.

A kernel's bound arguments follow its signature (``src.signature``): ``constexpr`` ones are
compiled in and dropped, tuples are flattened, a host ``TensorDescriptor`` becomes its tensor map
(encoded by ``ptxasync.tensormap`` from what the compiler chose: ``metadata.tensordesc_meta``)
then its shape and strides, or, where the compiler lowered it to pointer arithmetic (no metadata),
its base, shape, strides, padding flag and tf32 flag then shape and strides again. Each scalar is
packed as the CUDA launcher packs it: fp16 by IEEE rounding, bf16 by truncating the f32 (as
``extractBF16`` does), fp32 through a C float.
"""
from __future__ import annotations

import struct

import numpy as np

from ._memory import address_of

# Triton's device-side TMA element types -> CUtensorMapDataType (driver.py's table)
_DEVICE_TO_HOST = {i: i for i in range(16)}
_DEVICE_TO_HOST.update({8: 10, 9: 8, 10: 9})
_TMA_TF32 = 11
_INT_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "u1": 1, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


def _is_descriptor(ty):
    return isinstance(ty, str) and ty.startswith("tensordesc")


def flatten(signature, args, tensordesc_meta, encode_map):
    """[(Triton type, value)] in the .entry's order (before the two scratch pointers).
    ``encode_map(desc, meta)`` gives the TensorMap of a host descriptor."""
    from triton.backends.driver import _expand_descriptor, decompose_descriptor
    meta = list(tensordesc_meta or [])
    has_meta = bool(meta)
    ndesc = [0]
    out = []

    def visit(ty, arg):
        if isinstance(ty, tuple):
            if not isinstance(arg, (tuple, list)) or len(arg) != len(ty):
                raise TypeError(f"a tuple argument of {len(ty)} elements was expected, got {arg!r}")
            for t, a in zip(ty, arg):
                visit(t, a)
        elif ty == "constexpr":
            return
        elif _is_descriptor(ty):
            m = meta[ndesc[0]] if has_meta else None
            ndesc[0] += 1
            types = _expand_descriptor(ty, has_meta, "nvTmaDesc")
            if m is None:
                vals = decompose_descriptor(arg)
            else:
                vals = [encode_map(arg, m), *arg.shape, *arg.strides]
            if len(types) != len(vals):
                raise ValueError(f"tensor descriptor {ty}: {len(vals)} values for {len(types)} parameters "
                                 "(the descriptor's rank differs from the kernel's)")
            out.extend(zip(types, vals))
        else:
            out.append((ty, arg))

    sig = list(signature.values())
    if len(sig) != len(args):
        raise TypeError(f"the kernel takes {len(sig)} arguments, {len(args)} were bound")
    for ty, arg in zip(sig, args):
        visit(ty, arg)
    return out


def encode_tensor_map(desc, meta, target):
    """What ``fill_tma_descriptor_tiled`` / ``_im2col`` encode for a host TensorDescriptor."""
    from ..tensormap import TensorMap
    shape = [int(s) for s in desc.shape]
    strides = [int(s) for s in desc.strides]
    if strides[-1] != 1:
        raise ValueError(f"a TensorDescriptor's last dimension must be contiguous (stride 1); strides {strides}")
    elem_size = int(meta["elem_size"])
    elem_type = _TMA_TF32 if desc.round_f32_to_tf32 else int(meta["elem_type"])
    if meta.get("fp4_padded"):
        shape[-1] *= 2
    rank = len(shape)
    dims = shape[::-1]
    byte_strides = [elem_size * s for s in strides[:-1]][::-1]
    oob = "NAN_REQUEST_ZERO_FMA" if desc.padding == "nan" else "NONE"
    base = address_of(desc.base)
    common = dict(interleave="NONE", swizzle=int(meta["swizzle"]), l2_promotion="L2_128B", oob_fill=oob,
                  target=target)
    if meta.get("is_im2col", False):
        block = list(meta["block_size"])          # [pixelsPerColumn, channelsPerPixel]
        es = desc.element_strides if getattr(desc, "element_strides", None) is not None else [1] * rank
        return TensorMap.im2col(_DEVICE_TO_HOST[elem_type], base, dims, byte_strides,
                                list(desc.pixel_box_lower_corner)[::-1], list(desc.pixel_box_upper_corner)[::-1],
                                block[1], block[0], element_strides=list(es)[::-1], **common)
    box = [int(b) for b in meta["block_size"]][::-1]
    return TensorMap.tiled(_DEVICE_TO_HOST[elem_type], base, dims, byte_strides, box, [1] * rank, **common)


def pack(name, ty, value, size):
    """The bytes (or int) of one parameter of ``size`` bytes, from Triton type ``ty``."""
    from ..tensormap import TensorMap
    if ty.startswith("*"):
        return address_of(value)
    if ty == "nvTmaDesc":
        if not isinstance(value, TensorMap):
            raise TypeError(f"parameter {name}: a tensor map was expected, got {type(value).__name__}")
        return value
    if ty in _INT_BITS:
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if not isinstance(value, (int, np.integer)):
            raise TypeError(f"parameter {name} ({ty}): an int was expected, got {type(value).__name__}")
        v, bits = int(value), _INT_BITS[ty]
        lo, hi = (0, (1 << bits) - 1) if ty[0] == "u" or bits == 1 else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        if not lo <= v <= hi:
            raise OverflowError(f"parameter {name} ({ty}) cannot hold {v}")
        return v                          # ptx.Kernel writes it in the parameter's width
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"parameter {name} ({ty}): a float was expected, got {type(value).__name__}") from None
    if ty == "fp16":
        raw = struct.pack("<e", f)
    elif ty == "bf16":
        with np.errstate(over="ignore"):          # (float)double: out of range is inf, as in C
            raw = struct.pack("<H", int(np.float32(f).view(np.uint32)) >> 16)
    elif ty in ("fp32", "f32"):
        with np.errstate(over="ignore"):
            raw = np.float32(f).tobytes()
    elif ty == "fp64":
        raw = struct.pack("<d", f)
    else:
        raise TypeError(f"parameter {name}: Triton type {ty!r} is not one the driver packs")
    if len(raw) != size:
        raise ValueError(f"parameter {name} ({ty}) is {len(raw)} bytes; the PTX parameter is {size}")
    return raw
