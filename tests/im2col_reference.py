"""Slow reference of im2col loads (docs/im2col-mode.md), element by element.

Independent of the C core: pixels are listed first, in walk order, then each
pixel's channels are copied one byte at a time. Interleaved maps (INTERLEAVE_16B
/ 32B) follow docs/im2col-mode.md section 3: W, H, D are dims 0..r-3 (dim 0
counts slices), dim r-2 keeps its coordinate, and each pixel is one whole
16/32-byte slice whatever channelsPerPixel (3.1).
"""
from reference import ELEM_SIZE, SLICE_BYTES, oob_fill_byte, swizzle_address, tf32_round

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


def pixels_interleaved(gdim, es, lower, upper, coords, count):
    """Interleaved maps: the first `count` pixels (W, H, D..., N) of the walk;
    W, H, D are dims 0..r-3 and N is dim r-1 (dim r-2 is not walked)."""
    rank = len(gdim)
    walked = list(range(rank - 2))
    pos = [coords[i] for i in walked] + [coords[rank - 1]]
    out = []
    while len(out) < count:
        out.append(tuple(pos))
        for j in walked:
            if pos[j] + es[j] <= gdim[j] - 1 + upper[j]:
                pos[j] += es[j]
                break
            pos[j] = lower[j]
        else:
            pos[-1] += es[rank - 1]
    return out


def im2col_load_interleaved(p, mem, base, coords, offsets, smem, dst):
    """An interleaved map's column: one S-byte slice per pixel, rows packed."""
    dt, gdim, gs = p["tensorDataType_value"], p["globalDim"], p["globalStrides"]
    e = ELEM_SIZE[dt]
    S = SLICE_BYTES[p["interleave_value"]]
    rank = len(gdim)
    ppc = p["pixelsPerColumn"]
    for r, px in enumerate(pixels_interleaved(gdim, p["elementStrides"], p["pixelBoxLowerCorner"],
                                              p["pixelBoxUpperCorner"], coords, ppc)):
        x = [px[i] + offsets[i] for i in range(rank - 2)] + [coords[rank - 2], px[-1]]
        inside = all(0 <= x[i] < gdim[i] for i in range(rank))
        addr = x[0] * S + sum(x[i] * gs[i - 1] for i in range(1, rank))
        for k in range(S // e):
            val = bytes(mem[base + addr + k * e: base + addr + (k + 1) * e]) if inside else None
            if inside and dt in (11, 12):
                val = tf32_round(int.from_bytes(val, "little")).to_bytes(4, "little")
            for b in range(e):
                byte = val[b] if inside else oob_fill_byte(p, b)
                smem[swizzle_address(dst + r * S + k * e + b, p["swizzle_value"])] = byte
    return ppc * S


def im2col_store_interleaved(p, mem, base, coords, smem, src):
    """.im2col_no_offs store of an interleaved map: row r of shared memory (one
    S-byte slice, swizzled) is written to pixel r of the walk; pixels outside the
    tensor are skipped. mem is written in place."""
    gdim, gs = p["globalDim"], p["globalStrides"]
    S = SLICE_BYTES[p["interleave_value"]]
    rank = len(gdim)
    for r, px in enumerate(pixels_interleaved(gdim, p["elementStrides"], p["pixelBoxLowerCorner"],
                                              p["pixelBoxUpperCorner"], coords, p["pixelsPerColumn"])):
        x = list(px[:-1]) + [coords[rank - 2], px[-1]]
        if not all(0 <= x[i] < gdim[i] for i in range(rank)):
            continue
        addr = x[0] * S + sum(x[i] * gs[i - 1] for i in range(1, rank))
        for b in range(S):
            mem[base + addr + b] = smem[swizzle_address(src + r * S + b, p["swizzle_value"])]


def im2col_load(p, mem, base, coords, offsets, smem, dst):
    """Write the column into smem (dict or array indexed by shared address);
    returns the bytes the load credits."""
    if p.get("interleave_value", 0):
        return im2col_load_interleaved(p, mem, base, coords, offsets, smem, dst)
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
