"""Slow reference of im2col loads (docs/im2col-mode.md), element by element.

Independent of the C core: pixels are listed first, in walk order, then each
pixel's channels are copied one byte at a time. Non-interleaved maps only
(the interleaved dimension shift is checked against recorded cases).
"""
from reference import ELEM_SIZE, oob_fill_byte, swizzle_address, tf32_round

SPAN = {0: 0, 1: 32, 2: 64, 3: 128}


def pixels(gdim, es, lower, upper, coords, count):
    """The first `count` pixels (W, H, D..., N) of the walk from coords[1:]."""
    rank = len(gdim)
    spatial = list(range(1, rank - 1))
    pos = list(coords[1:])
    out = []
    while len(out) < count:
        out.append(tuple(pos))
        for j, i in enumerate(spatial):
            nxt = pos[j] + es[i]
            if nxt <= gdim[i] - 1 + upper[i - 1]:
                pos[j] = nxt
                break
            pos[j] = lower[i - 1]     # back to the box's first W (H, D) and carry
        else:
            pos[-1] += es[rank - 1]   # the next image: N steps by its traversal stride
    return out


def im2col_load(p, mem, base, coords, offsets, smem, dst):
    """Write the column into smem (dict or array indexed by shared address)."""
    dt, gdim, es = p["tensorDataType_value"], p["globalDim"], p["elementStrides"]
    e = ELEM_SIZE[dt]
    rank = len(gdim)
    cpp, ppc = p["channelsPerPixel"], p["pixelsPerColumn"]
    row_bytes = cpp * e
    pitch = max(row_bytes, SPAN[p["swizzle_value"]])
    for r, px in enumerate(pixels(gdim, es, p["pixelBoxLowerCorner"], p["pixelBoxUpperCorner"],
                                  coords, ppc)):
        at = [px[i] + (offsets[i] if i < rank - 2 else 0) for i in range(rank - 1)]
        inside_px = all(0 <= at[i] < gdim[i + 1] for i in range(rank - 1))
        for ch in range(cpp):
            c = coords[0] + ch
            inside = inside_px and 0 <= c < gdim[0]
            addr = c * e + sum(at[i] * p["globalStrides"][i] for i in range(rank - 1))
            val = bytes(mem[base + addr: base + addr + e]) if inside else None
            if inside and dt in (11, 12):
                val = tf32_round(int.from_bytes(val, "little")).to_bytes(4, "little")
            for b in range(e):
                byte = val[b] if inside else oob_fill_byte(p, b)
                smem[swizzle_address(dst + r * pitch + ch * e + b, p["swizzle_value"])] = byte
    return ppc * row_bytes
