"""Slow, obvious references for the consumer views, written from the rule text
of tests/data/README.md (W2, W4, W5, L1, K1-K4), not from the model's code.

Addresses are worked out by building the layout the text describes: core
matrices / swizzle atoms placed one by one, then the 16-byte chunk moved
within its 128-byte line by the XOR pattern."""


def _line_xor(addr, base_offset, span):
    """W2/W4/W5: the chunk (bits 4-6) of a byte address is XOR-ed with the
    128-byte line number (absolute, bits 7+) less the base offset, masked to the
    span's pattern: 32B 1 bit, 64B 2 bits, 128B 3 bits."""
    if span == 0:
        return addr
    bits = {32: 1, 64: 2, 128: 3}[span]
    line, rest = divmod(addr, 128)
    chunk, byte = divmod(rest, 16)
    pattern = (line - base_offset) % (1 << bits)
    return line * 128 + (chunk ^ pattern) * 16 + byte


def wgmma_element_address(start, lbo, sbo, base_offset, span, major, esize, i, k):
    """The shared address of operand element (i, k) (i along M/N, k along K)."""
    if major == "K":
        kbyte = k * esize
        if span == 0:
            # core matrix (i // 8, kbyte // 16): 8 rows of 16 bytes
            cm_base = start + (i // 8) * sbo + (kbyte // 16) * lbo
            a = cm_base + (i % 8) * 16 + kbyte % 16
        else:
            # swizzle atom: 8 rows of `span` bytes; atoms stacked along M/N by SBO
            atom = start + (i // 8) * sbo
            a = atom + (i % 8) * span + kbyte
    else:
        if span == 0:
            per_row = 16 // esize            # M/N elements in one 16-byte core-matrix row
            cm_base = start + (i // per_row) * sbo + (k // 8) * lbo
            a = cm_base + (k % 8) * 16 + (i % per_row) * esize
        else:
            per_row = span // esize
            atom = start + (i // per_row) * lbo + (k // 8) * sbo
            a = atom + (k % 8) * span + (i % per_row) * esize
    return _line_xor(a, base_offset, span)


def ldmatrix_halves(addrs, num, trans):
    """L1: {(thread, register, half): address}."""
    out = {}
    for j in range(num):
        rows = addrs[8 * j:8 * j + 8]
        for t in range(32):
            group, lane = divmod(t, 4)
            for h in range(2):
                if not trans:
                    out[(t, j, h)] = rows[group] + 4 * lane + 2 * h
                else:
                    out[(t, j, h)] = rows[2 * lane + h] + 2 * group
    return out


def wavefronts_by_simulation(addrs, width, op, num=4):
    """K1-K4 by simulating the banks: each wavefront, every bank delivers one
    still-wanted word to every thread of the phase that wants it; count rounds."""
    if op in ("ldmatrix", "stmatrix"):
        phases = [list(range(8 * j, 8 * j + 8)) for j in range(num)]
        width = 16
    else:
        size = 128 // width
        if op == "ld" and width > 4 and (all(addrs[t] == addrs[t ^ 1] for t in range(32))
                                         or all(addrs[t] == addrs[t ^ 2] for t in range(32))):
            size *= 2
        phases = [list(range(s, s + size)) for s in range(0, 32, size)]
    total = 0
    for threads in phases:
        wanted = {addrs[t] // 4 + w for t in threads for w in range(width // 4)}
        while wanted:
            served = {}
            for word in sorted(wanted):
                served.setdefault(word % 32, word)   # one word per bank per wavefront
            wanted -= set(served.values())
            total += 1
    return total
