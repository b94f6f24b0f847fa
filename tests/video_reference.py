"""A slow reference of the video instructions (PTX ISA 9.7.18), written from the ISA's pseudocode
in Python integers, apart from the model's C code: what tests/ptx/test_ptx_video.py and
tests/sem/test_video.py hold the model to, instruction by instruction, over random operands."""

M32 = 0xFFFFFFFF


def _ext(v, bits, signed):
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def part_select(v, signed, sel):
    """partSelectSignExtend (9.7.18.1): sel None (the word), 'b0'-'b3', 'h0'-'h1'."""
    if sel is None:
        return _ext(v, 32, signed)
    n = int(sel[1])
    return _ext(v >> (8 * n if sel[0] == "b" else 16 * n), 8 if sel[0] == "b" else 16, signed)


def _clamp(x, lo, hi):
    return max(lo, min(hi, x))


def opt_saturate(t, sat, signed, dsel):
    if not sat:
        return t
    bits = 32 if dsel is None else 8 if dsel[0] == "b" else 16
    if signed:
        return _clamp(t, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return _clamp(t, 0, (1 << bits) - 1)


def opt_secop_merge(op2, dsel, t, c, c_signed):
    c33 = _ext(c, 32, c_signed)
    if op2 == "add":
        r = t + c33
    elif op2 == "min":
        r = min(t, c33)
    elif op2 == "max":
        r = max(t, c33)
    elif dsel is None:
        r = t
    else:
        n = int(dsel[1])
        w, sh = (0xFF, 8 * n) if dsel[0] == "b" else (0xFFFF, 16 * n)
        r = ((t & w) << sh) | (c & ~(w << sh) & M32)
    return r & M32


def scalar(op, dt, at, bt, a, b, c=0, asel=None, bsel=None, dsel=None, sat=False, op2=None, mode=None,
           cmp=None):
    """vadd vsub vabsdiff vmin vmax vshl vshr vset: dt/at/bt 'u32' or 's32' (vset: dt None)."""
    ta = part_select(a, at == "s32", asel)
    tb = part_select(b, bt == "s32", bsel)
    if op == "vadd":
        t = ta + tb
    elif op == "vsub":
        t = ta - tb
    elif op == "vabsdiff":
        t = abs(ta - tb)
    elif op == "vmin":
        t = min(ta, tb)
    elif op == "vmax":
        t = max(ta, tb)
    elif op in ("vshl", "vshr"):
        tb = min(tb, 32) if mode == "clamp" else tb & 0x1F
        t = ta << tb if op == "vshl" else ta >> tb
    elif op == "vset":
        t = int({"eq": ta == tb, "ne": ta != tb, "lt": ta < tb, "le": ta <= tb, "gt": ta > tb,
                 "ge": ta >= tb}[cmp])
        return opt_secop_merge(op2, dsel, t, c, False)
    t = opt_saturate(t, sat, dt == "s32", dsel)
    return opt_secop_merge(op2, dsel, t, c, dt == "s32")


def vmad(at, bt, a, b, c, asel=None, bsel=None, neg_a=False, neg_b=False, neg_c=False, po=False,
         sat=False, scale=0):
    """vmad (9.7.18.1.3): the Semantics block's steps on a 128-bit tmp."""
    ta = part_select(a, at == "s32", asel)
    tb = part_select(b, bt == "s32", bsel)
    signed_final = at == "s32" or bt == "s32" or (neg_a != neg_b) or neg_c
    M128 = (1 << 128) - 1
    tmp = (ta * tb) & M128
    lsb = 0
    if po:
        lsb = 1
    elif neg_a != neg_b:
        tmp, lsb = ~tmp & M128, 1
    elif neg_c:
        c, lsb = ~c & M32, 1
    c128 = _ext(c, 32, True) & M128 if signed_final else c & M32
    tmp = (tmp + c128 + lsb) & M128
    if scale:
        stmp = tmp - (1 << 128) if signed_final and tmp >> 127 else tmp
        result = (stmp >> scale) & ((1 << 64) - 1)
    else:
        result = tmp & ((1 << 64) - 1)
    if sat:
        if signed_final:
            result = _clamp(_ext(result, 64, True), -(1 << 31), (1 << 31) - 1)
        else:
            result = _clamp(result, 0, M32)
    return result & M32


def simd(op, lanes, dt, at, bt, a, b, c, asel=None, bsel=None, mask=None, sat=False, add=False, cmp=None):
    """vop2 / vop4 (9.7.18.2): asel / bsel the element of {b, a} per lane (lane 0 first); mask
    the lanes written."""
    ew = 32 // lanes
    ba = (b & M32) << 32 | (a & M32)
    asel = asel if asel is not None else list(range(lanes))
    bsel = bsel if bsel is not None else list(range(lanes, 2 * lanes))
    mask = mask if mask is not None else list(range(lanes))
    t = []
    for i in range(lanes):
        va = _ext(ba >> (ew * asel[i]), ew, at == "s32")
        vb = _ext(ba >> (ew * bsel[i]), ew, bt == "s32")
        if op == "vadd":
            x = va + vb
        elif op == "vsub":
            x = va - vb
        elif op == "vavrg":
            x = (va + vb + 1) >> 1 if va + vb >= 0 else (va + vb) >> 1
        elif op == "vabsdiff":
            x = abs(va - vb)
        elif op == "vmin":
            x = min(va, vb)
        elif op == "vmax":
            x = max(va, vb)
        else:
            x = int({"eq": va == vb, "ne": va != vb, "lt": va < vb, "le": va <= vb, "gt": va > vb,
                     "ge": va >= vb}[cmp])
        if sat:
            x = _clamp(x, -(1 << (ew - 1)), (1 << (ew - 1)) - 1) if dt == "s32" else _clamp(x, 0, (1 << ew) - 1)
        t.append(x)
    if add:
        return (c + sum(t[i] for i in range(lanes) if i in mask)) & M32
    d = 0
    for i in range(lanes):
        v = t[i] if i in mask else c >> (ew * i)
        d |= (v & ((1 << ew) - 1)) << (ew * i)
    return d
