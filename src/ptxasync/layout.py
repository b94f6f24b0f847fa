"""Shared-memory layouts: swizzle address functions and pictures of a box.

The swizzle is an XOR of shared-address bits [7, 10) into the 16-byte chunk
index, applied to the absolute shared address (so a destination that is not
aligned to the pattern's repeat starts mid-pattern). It is its own inverse.
"""
import operator

import numpy as np

from . import _core
from .enums import Swizzle, driver_name, parse

__all__ = ["swizzle_address", "unswizzle_address", "swizzle_info", "tf32_round",
           "chunk_map", "render_chunks", "render_box", "plot_layout"]


def swizzle_address(mode, addr):
    """Shared address that byte ``addr`` of the unswizzled layout lands at.
    ``addr`` may be an int or an array of addresses."""
    mode = int(parse(Swizzle, mode))
    if np.isscalar(addr):
        return _core.swizzle_addr(mode, _index(addr, "addr"))   # the binding checks .u32
    a = np.asarray(addr)
    if a.dtype.kind not in "iu" or (a.size and (a.min() < 0 or a.max() > 0xFFFFFFFF)):
        what = f"{a.dtype} values" if a.dtype.kind not in "iu" else f"values in [{a.min()}, {a.max()}]"
        raise ValueError(f"shared addresses are 32-bit unsigned integers, not {what}")
    return _core.swizzle_array(mode, a.astype(np.uint32))


def unswizzle_address(mode, addr):
    """Inverse of swizzle_address (the XOR is an involution)."""
    return swizzle_address(mode, addr)


def swizzle_info(mode):
    """span (bytes of a row the pattern permutes), repeat (bytes after which it
    repeats) and atom (bytes kept whole)."""
    return _core.swizzle_info(int(parse(Swizzle, mode)))


def cute_swizzle(mode):
    """The swizzle as CuTe names it, ``(B, M, S)`` of ``Swizzle<B,M,S>`` (address
    bits [M, M+B) XORed with bits [M+S, M+S+B)), read off the core's own
    ``swizzle_address``; None for no swizzle or a pattern that is no such XOR
    (128B_ATOM_32B_FLIP_8B), and for 96B. 128B is Swizzle<3,4,3>, 64B <2,4,3>, 32B <1,4,3>."""
    mode = int(parse(Swizzle, mode))
    if mode in (Swizzle.NONE, Swizzle.B96):   # 96B: rows of 96 bytes, no CuTe counterpart
        return None
    a = np.arange(1 << 13, dtype=np.uint32)
    flips = [int(x) for x in (swizzle_address(mode, a[[1 << i for i in range(13)]]) ^ (1 << np.arange(13)))]
    src = [i for i, f in enumerate(flips) if f]
    if not src:
        return None
    b, m = len(src), flips[src[0]].bit_length() - 1     # the lowest bit the first source flips
    s = src[0] - m
    if src != list(range(src[0], src[0] + b)) or s <= 0:
        return None
    want = a ^ ((a & np.uint32(((1 << b) - 1) << (m + s))) >> np.uint32(s))
    if not (swizzle_address(mode, a) == want).all():
        return None
    return b, m, s


def swizzle_label(mode):
    """The driver name with CuTe's beside it: ``128B (CuTe Swizzle<3,4,3>)``."""
    sw = parse(Swizzle, mode)
    if sw == Swizzle.NONE:
        return "none"
    name = sw.name[1:].replace("_", "B_", 1) if sw.name.count("_") else sw.name[1:] + "B"
    bms = cute_swizzle(sw)
    return name + (f" (CuTe Swizzle<{bms[0]},{bms[1]},{bms[2]}>)" if bms else "")


def tf32_round(bits):
    """Round f32 bits as a TFLOAT32 map load does (nearest-even at bit 13)."""
    import operator
    bits = operator.index(bits)
    if not 0 <= bits < 1 << 32:
        raise ValueError(f"f32 bit pattern {bits} is outside 0..2^32-1")
    return _core.tf32_round(bits)


# chunk_map / render_chunks draw at most this many 128-byte lines (256 KiB:
# more than a CTA's shared memory; a swizzle pattern repeats every 8 lines)
MAX_LINES = 2048


def _index(v, name):
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{name} must be an integer, not {type(v).__name__}") from None


def _lines(base, lines):
    base, lines = _index(base, "base"), _index(lines, "lines")
    if not 1 <= lines <= MAX_LINES:
        raise ValueError(f"lines must be in [1, {MAX_LINES}] (the pattern repeats every 8 lines); got {lines}")
    if not 0 <= base <= (1 << 32) - 128 * lines:
        raise ValueError(f"base {base:#x} + {lines} lines of 128 bytes is not inside the 32-bit shared "
                         "address space")
    return base, lines


def chunk_map(mode, base=0, lines=8):
    """Which 16-byte chunk of the unswizzled layout each 16-byte slot of
    ``lines`` 128-byte lines starting at ``base`` holds (rows = lines;
    ``base`` a shared address, ``lines`` at most MAX_LINES)."""
    base, lines = _lines(base, lines)
    addrs = base + np.arange(lines * 8, dtype=np.int64) * 16
    src = swizzle_address(mode, addrs)   # involution: slot <- chunk
    return ((src - base) // 16 % 8).reshape(lines, 8)


def render_chunks(mode, base=0, lines=8):
    """Text picture of chunk_map, the way the PTX ISA tables draw it."""
    base, lines = _lines(base, lines)
    m = chunk_map(mode, base, lines)
    out = [f"swizzle {swizzle_label(mode)}, 128-byte lines from 0x{base:x}:"]
    for i, row in enumerate(m):
        out.append(f"  line {i}: " + " | ".join(str(int(c)) for c in row))
    return "\n".join(out)


def render_box(tmap, dst=0, max_lines=16):
    """Text picture of where a box lands: for each 128-byte line of shared memory
    from ``dst``, which box element (k1 row, k0 first element) each 16-byte chunk holds."""
    dst, max_lines = _index(dst, "dst"), _index(max_lines, "max_lines")
    if not 1 <= max_lines <= MAX_LINES:
        raise ValueError(f"max_lines must be in [1, {MAX_LINES}]; got {max_lines}")
    lay = tmap.box_layout
    lines = []
    start = dst - dst % 128
    end = min(dst + lay["rows"] * lay["pitch"], start + max_lines * 128)
    for line in range(start, end, 128):
        cells = []
        for chunk in range(line, line + 128, 16):
            hit = tmap.smem_element(chunk, dst)
            if hit is None:
                cells.append("   .   ")
            else:
                k, _ = hit
                row = sum(k[i] * int(np.prod(lay["n"][1:i])) for i in range(1, len(k)))
                cells.append(f"r{row:<3}c{k[0]:<3}"[:7])
        lines.append(f"0x{line:05x} | " + "|".join(cells))
    return "\n".join(lines)


def plot_layout(tmap, dst=0, level="chunk", compare=False, **kw):
    """The box in shared memory as a matplotlib Figure: every 16-byte chunk (or,
    with ``level="element"``, every element) where the hardware puts it, labelled
    with its logical (row, column) and coloured by its column chunk, swizzle
    repeat and span drawn; ``compare=True`` adds the unswizzled image beside it.
    Needs matplotlib (``pip install matplotlib``). See ``ptxasync.viz``."""
    from . import viz
    if compare:
        return viz.compare_figure(tmap, dst, level=level, **kw)
    return viz.layout_figure(tmap, dst, level=level, **kw)
