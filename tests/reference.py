"""Slow, element-by-element reference model of Hopper TMA tile-mode copies.

Written for clarity, not speed: every byte is moved by an explicit loop.
The rules implemented here are stated (with the recorded evidence) in
docs/tile-mode.md; section numbers below refer to that document.

Conventions
-----------
* ``params`` is a dict with the driver's names: ``tensorDataType_value``,
  ``globalDim``, ``globalStrides`` (bytes, dims 1..rank-1), ``boxDim``,
  ``elementStrides``, ``interleave_value`` (0 none, 1 16B, 2 32B),
  ``swizzle_value`` (0 none, 1 32B, 2 64B, 3 128B), ``oobFill_value``
  (0 zero, 1 NaN_REQUEST_ZERO_FMA).
* Global memory is passed as a window: ``global_window[i]`` is the byte at
  global address ``window_base_addr + i``.  The tensor's base address is
  ``params['global_address']`` (int or "0x..." string).
* Shared memory is indexed by shared-window address: ``smem[a]`` is the byte
  at shared address ``a``.
"""

import math

# CUtensorMapDataType value -> element size in bytes
ELEM_SIZE = {
    0: 1,   # UINT8
    1: 2,   # UINT16
    2: 4,   # UINT32
    3: 4,   # INT32
    4: 8,   # UINT64
    5: 8,   # INT64
    6: 2,   # FLOAT16
    7: 4,   # FLOAT32
    8: 8,   # FLOAT64
    9: 2,   # BFLOAT16
    10: 4,  # FLOAT32_FTZ
    11: 4,  # TFLOAT32
    12: 4,  # TFLOAT32_FTZ
}
FLOAT_TYPES = {6, 7, 8, 9, 10, 11, 12}
TF32_TYPES = {11, 12}

# CUtensorMapSwizzle value -> swizzle span in bytes (0 = no swizzle)
SWIZZLE_SPAN = {0: 0, 1: 32, 2: 64, 3: 128}
# CUtensorMapInterleave value -> slice size in bytes (0 = not interleaved)
SLICE_BYTES = {0: 0, 1: 16, 2: 32}


# ---------------------------------------------------------------- helpers

def _ceil_div(a, b):
    return -(-a // b)


def _int(v):
    return int(v, 16) if isinstance(v, str) else int(v)


def swizzle_address(addr, swizzle_value):
    """Section 2: XOR bits [4, 4+k) of the absolute shared address with
    bits [7, 7+k) (k = 1, 2, 3 for 32B, 64B, 128B)."""
    mask = {0: 0, 1: 1, 2: 3, 3: 7}[swizzle_value]
    return addr ^ (((addr >> 7) & mask) << 4)


def oob_fill_byte(params, byte_in_element):
    """Section 4: the byte written for an out-of-bounds element."""
    if params.get('oobFill_value', 0) == 1:
        # NAN_REQUEST_ZERO_FMA: the 16-bit pattern 0x7FF7 repeated (little endian: F7 7F)
        return 0xF7 if byte_in_element % 2 == 0 else 0x7F
    return 0x00


def tf32_round(bits):
    """Section 5: FP32 -> TF32 as the TMA does it on loads."""
    exponent = (bits >> 23) & 0xFF
    mantissa = bits & 0x7FFFFF
    if exponent == 0xFF:
        if mantissa != 0:
            return 0x7FFFE000          # every NaN
        return bits                    # +-inf kept
    # round to nearest even at bit 13; a carry may propagate into the exponent
    low = bits & 0x1FFF
    result = bits & ~0x1FFF & 0xFFFFFFFF
    half = 0x1000
    if low > half or (low == half and (bits >> 13) & 1):
        result = (result + 0x2000) & 0xFFFFFFFF
    return result


class _Geometry:
    """The traversal of one tile-mode box (sections 1 and 6).

    unit      : bytes of one dimension-0 item (element size, or the slice
                size for interleaved maps)
    counts[i] : number of items traversed along dimension i
    steps[i]  : coordinate step along dimension i (the traversal stride)
    row_bytes : counts[0] * unit
    pitch     : shared-memory distance between consecutive rows
    """

    def __init__(self, params):
        self.esize = ELEM_SIZE[params['tensorDataType_value']]
        self.rank = len(params['globalDim'])
        self.gdim = list(params['globalDim'])
        self.gstride = [0] + list(params['globalStrides'])   # bytes, index = dim
        box = list(params['boxDim'])
        es = list(params['elementStrides'])
        self.interleave = params.get('interleave_value', 0)
        self.span = SWIZZLE_SPAN[params.get('swizzle_value', 0)]
        if self.interleave == 0:
            self.unit = self.esize
            self.steps = [1] + es[1:]             # elementStrides[0] ignored
            self.counts = [box[0]] + [_ceil_div(box[i], es[i]) for i in range(1, self.rank)]
        else:
            self.unit = SLICE_BYTES[self.interleave]
            self.steps = list(es)
            self.counts = [_ceil_div(box[i], es[i]) for i in range(self.rank)]
            # section 6.2: dimension rank-2 is not traversed (one position, at its coordinate)
            self.counts[self.rank - 2] = 1
        self.row_bytes = self.counts[0] * self.unit
        if self.interleave == 0:
            self.pitch = max(self.row_bytes, self.span)   # rows padded to the swizzle span
        else:
            self.pitch = self.row_bytes                    # section 6.3: rows packed

    def rows(self):
        """Yield (row_index, k) for every row, k = per-dimension indices of dims 1..rank-1,
        dimension 1 fastest."""
        outer = self.counts[1:]
        nrows = 1
        for n in outer:
            nrows *= n
        for row in range(nrows):
            k = []
            r = row
            for n in outer:
                k.append(r % n)
                r //= n
            yield row, [0] + k

    def element_in_bounds(self, g):
        return all(0 <= g[i] < self.gdim[i] for i in range(self.rank))

    def global_offset(self, g):
        """Byte offset from the tensor base of item g (g[0] counted in units)."""
        off = g[0] * self.unit
        for i in range(1, self.rank):
            off += g[i] * self.gstride[i]
        return off


# ---------------------------------------------------------------- loads

def tile_load_tx_bytes(params):
    """Section 7: bytes the TMA completes on the mbarrier for a tile load."""
    geo = _Geometry(params)
    total = geo.row_bytes
    for n in geo.counts[1:]:
        total *= n
    return total


def slice_or_element_unit(params):
    """Bytes of one dimension-0 item: the slice size (interleaved) or the element size."""
    return _Geometry(params).unit


def tile_load(params, global_window, window_base_addr, coords, smem, smem_dst_addr):
    """Write the box at `coords` into `smem` as the hardware does.
    Returns the byte count completed on the mbarrier (section 7)."""
    geo = _Geometry(params)
    base = _int(params['global_address']) - _int(window_base_addr)
    dtype = params['tensorDataType_value']
    for row, k in geo.rows():
        for k0 in range(geo.counts[0]):
            k[0] = k0
            g = [coords[i] + k[i] * geo.steps[i] for i in range(geo.rank)]
            inb = geo.element_in_bounds(g)
            src = base + geo.global_offset(g)
            item = [0] * geo.unit
            for e in range(0, geo.unit, geo.esize):          # element by element
                for b in range(geo.esize):
                    if inb:
                        item[e + b] = global_window[src + e + b]
                    else:
                        item[e + b] = oob_fill_byte(params, b)
                if inb and dtype in TF32_TYPES:
                    v = int.from_bytes(bytes(item[e:e + 4]), 'little')
                    item[e:e + 4] = list(tf32_round(v).to_bytes(4, 'little'))
            for b in range(geo.unit):
                lin = smem_dst_addr + row * geo.pitch + k0 * geo.unit + b
                smem[swizzle_address(lin, params.get('swizzle_value', 0))] = item[b]
    return tile_load_tx_bytes(params)


# ---------------------------------------------------------------- stores

def tile_store(params, global_window, window_base_addr, coords, smem, smem_src_addr):
    """Write the box held in shared memory at `smem_src_addr` to global memory
    (section 8).  `global_window` is modified in place."""
    geo = _Geometry(params)
    base = _int(params['global_address']) - _int(window_base_addr)
    swz = params.get('swizzle_value', 0)
    for row, k in geo.rows():
        g_outer = [coords[i] + k[i] * geo.steps[i] for i in range(geo.rank)]
        if not all(0 <= g_outer[i] < geo.gdim[i] for i in range(1, geo.rank)):
            continue                                           # exact bounds in dims >= 1
        # dimension 0: bytes up to the end of the 16-byte chunk holding the
        # row's last in-bounds byte are written
        row_end = geo.gdim[0] * geo.unit                       # in bytes from the row start
        limit = _ceil_div(row_end, 16) * 16
        for k0 in range(geo.counts[0]):
            g0 = coords[0] + k0 * geo.steps[0]
            for b in range(geo.unit):
                x = g0 * geo.unit + b                          # byte position in the global row
                if x < 0 or x >= limit:
                    continue
                g = [g0] + g_outer[1:]
                dst = base + geo.global_offset(g) + b
                lin = smem_src_addr + row * geo.pitch + k0 * geo.unit + b
                global_window[dst] = smem[swizzle_address(lin, swz)]


# ---------------------------------------------------------------- faults

def tile_fault(params, coords, is_store):
    """Section 9: reason the instruction faults at issue, or None."""
    geo = _Geometry(params)
    if geo.interleave == 0 and (coords[0] * geo.esize) % 16 != 0:
        return 'c0 * elemsize not a multiple of 16 bytes'
    if is_store and any(c < 0 for c in coords):
        return 'negative coordinate in a store'
    return None
