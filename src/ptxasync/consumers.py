"""Consumer views of shared memory: what a wgmma descriptor, ldmatrix or a
plain load reads, and whether it is what the producer (a TMA load) wrote.

The rules are the recorded hardware's (tests/data/README.md, "Shared-memory
read families" W1-W8 / L1-L2, "TMA load consumed by wgmma" T1-T5,
"Shared-memory bank conflicts" K1-K5); docs/consumers.md explains them.

- :class:`WgmmaDescriptor`: the 64-bit wgmma shared-memory matrix descriptor:
  build, decode, explain, the shared address of every operand element, and the
  operand a wgmma reads from the model's shared memory.
- :func:`ldmatrix`, :func:`stmatrix`, :func:`ldmatrix_map`: the m8n8 .b16
  fragment map over 32 per-thread row addresses.
- :func:`bank_conflicts`, :func:`compare_swizzles`: wavefronts of one
  warp-wide access, exactly as the hardware counts them.
- :func:`check_wgmma`, :func:`check_ldmatrix`: producer (TMA loads, or shared
  memory plus what it holds) against consumer, with the likely cause and a
  descriptor (row addresses) that works;
  :func:`descriptor_for_tile`: the matching descriptor of a tiled tensor map
  per k-slice (W8).
"""
import operator
from dataclasses import dataclass, field

import numpy as np

from . import _core
from .enums import Swizzle

__all__ = ["WgmmaDescriptor", "WGMMA_TYPES", "ldmatrix", "stmatrix", "ldmatrix_map", "ldmatrix_fragments",
           "bank_conflicts", "BankReport", "tile_access_addresses", "box_access_addresses", "box_ldmatrix_addresses", "compare_swizzles",
           "TmaProducer", "SmemProducer", "check_wgmma", "ConsumerReport", "fit_descriptor", "descriptor_for_tile",
           "check_ldmatrix", "LdmatrixReport"]

# name -> (core type code, bytes, K per instruction, recorded on hardware)
WGMMA_TYPES = {"f16": (0, 2, 16, True), "bf16": (1, 2, 16, False), "tf32": (2, 4, 8, False),
               "e4m3": (3, 1, 32, False), "e5m2": (4, 1, 32, False), "s8": (5, 1, 32, False),
               "u8": (6, 1, 32, False)}

_SPAN_OF_FIELD = {0: 0, 1: 128, 2: 64, 3: 32}
_FIELD_OF_SPAN = {v: k for k, v in _SPAN_OF_FIELD.items()}
_SWIZZLE_NAME = {0: "none", 32: "32B", 64: "64B", 128: "128B"}
_OTHER_BITS = 0x3FF1C000C000C000
_INERT_BITS = 0x3FF0C000C000C000     # recorded with no effect (W6); bit 48 was never set


def _swizzle_span(sw):
    """Swizzle span in bytes (0, 32, 64, 128) from 'none' / '32B' / ..., a Swizzle
    member, or the span itself as an int."""
    if isinstance(sw, Swizzle):
        if sw > Swizzle.B128:
            raise ValueError(f"{sw.name}: wgmma descriptors have swizzle none, 32B, 64B or 128B")
        return {0: 0, 1: 32, 2: 64, 3: 128}[int(sw)]
    if isinstance(sw, str):
        key = sw.strip().upper().replace("CU_TENSOR_MAP_", "").replace("SWIZZLE_", "")
        table = {"NONE": 0, "0": 0, "32B": 32, "64B": 64, "128B": 128, "32": 32, "64": 64, "128": 128}
        if key not in table:
            raise ValueError(f"swizzle {sw!r}: 'none', '32B', '64B' or '128B'")
        return table[key]
    v = operator.index(sw)
    if v not in _FIELD_OF_SPAN:
        raise ValueError(f"swizzle {v}: give the span in bytes (0, 32, 64, 128) or a name ('128B')")
    return v


def _major(m):
    key = str(m).strip().upper()
    if key in ("K", "K-MAJOR", "0"):
        return 0
    if key in ("MN", "M", "N", "MN-MAJOR", "1"):
        return 1
    raise ValueError(f"major {m!r}: 'K' (imm-trans 0) or 'MN' (imm-trans 1)")


def _operand(op):
    key = str(op).strip().upper()
    if key not in ("A", "B"):
        raise ValueError(f"operand {op!r}: 'A' (M = 64 rows) or 'B' (N rows)")
    return key


def _dtype(t):
    key = str(t).strip().lower().lstrip(".")
    if key not in WGMMA_TYPES:
        raise ValueError(f"wgmma input type {t!r}: one of {', '.join(WGMMA_TYPES)}")
    return key


def _smem_of(smem):
    """The bytes of shared memory: a Machine (CTA 0), a CTA, or any buffer / array
    (taken as its raw bytes, never converted value by value)."""
    if hasattr(smem, "smem") and (hasattr(smem, "ctas") or hasattr(smem, "rank")):
        return smem.smem
    if isinstance(smem, (bytes, bytearray, memoryview)):
        return np.frombuffer(smem, dtype=np.uint8)
    a = np.asarray(smem)
    if a.dtype == np.uint8 and a.ndim == 1:
        return a
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


@dataclass(frozen=True)
class WgmmaDescriptor:
    """The wgmma shared-memory matrix descriptor (64 bits).

    Fields in bytes: ``start`` (shared address), ``lbo`` / ``sbo`` (leading /
    stride dimension byte offsets), ``base_offset`` (0..7), ``swizzle`` (its
    span: 0, 32, 64, 128, or the name 'none' / '32B' / '64B' / '128B', kept as
    the span), and ``other_bits`` (bits outside the fields, kept as given).
    Printed, a descriptor is the call that builds it."""
    start: int
    lbo: int
    sbo: int
    base_offset: int = 0
    swizzle: int = 0
    other_bits: int = 0

    def __post_init__(self):
        if isinstance(self.swizzle, (str, Swizzle)):
            object.__setattr__(self, "swizzle", _swizzle_span(self.swizzle))

    @classmethod
    def from_fields(cls, start, lbo=16, sbo=0, base_offset=0, swizzle="none", other_bits=0):
        """Build from named fields; ``swizzle`` as 'none' / '32B' / '64B' / '128B'.
        Raises InvalidValue naming a field the 64 bits cannot hold."""
        d = cls(operator.index(start), operator.index(lbo), operator.index(sbo), operator.index(base_offset),
                _swizzle_span(swizzle), operator.index(other_bits))
        d.value   # validates
        return d

    @classmethod
    def from_value(cls, value):
        """Decode a 64-bit descriptor (every value decodes: unknown bits are kept)."""
        v = operator.index(value)
        if not 0 <= v < 1 << 64:
            raise ValueError(f"descriptor {v:#x} does not fit in 64 bits")
        f = _core.wgmma_desc_decode(v)
        return cls(f["start"], f["lbo"], f["sbo"], f["base_offset"], _SPAN_OF_FIELD[f["swizzle"]],
                   f["other_bits"])

    @property
    def value(self):
        """The 64-bit value the instruction takes."""
        for name in ("start", "lbo", "sbo", "base_offset", "other_bits"):
            v = getattr(self, name)
            if v < 0 or v >= (1 << 64 if name == "other_bits" else 1 << 32):
                raise _core.InvalidValue(f"descriptor {name} {v} is outside what the 64 bits can hold")
        if self.swizzle not in _FIELD_OF_SPAN:
            raise _core.InvalidValue(f"descriptor swizzle span {self.swizzle}: 0, 32, 64 or 128")
        return _core.wgmma_desc_encode(self.start, self.lbo, self.sbo, self.base_offset,
                                       _FIELD_OF_SPAN[self.swizzle], self.other_bits)

    def __int__(self):
        return self.value

    @property
    def swizzle_name(self):
        return _SWIZZLE_NAME[self.swizzle]

    @property
    def unknown_bits(self):
        """[(bit, note)] for every set bit outside the five fields."""
        out = []
        for b in range(64):
            if self.other_bits >> b & 1:
                note = ("recorded with no effect (W6)" if _INERT_BITS >> b & 1
                        else "not a field on sm_90; never set in a recording (effect unknown)")
                out.append((b, note))
        return out

    def replace(self, **kw):
        """A copy with some fields changed (swizzle by name or span)."""
        if "swizzle" in kw:
            kw["swizzle"] = _swizzle_span(kw["swizzle"])
        f = dict(start=self.start, lbo=self.lbo, sbo=self.sbo, base_offset=self.base_offset,
                 swizzle=self.swizzle, other_bits=self.other_bits)
        f.update(kw)
        return WgmmaDescriptor.from_fields(**f)

    # --- the read --------------------------------------------------------------
    def _args(self, operand, n, major, dtype):
        operand, dtype = _operand(operand), _dtype(dtype)
        rows = 64 if operand == "A" else n
        if rows is None:
            raise ValueError("operand B needs n (the N of m64nNk*)")
        return (self.value, WGMMA_TYPES[dtype][0], _major(major), operand == "B", operator.index(rows))

    def addresses(self, operand="B", n=None, major="K", dtype="f16"):
        """Shared address of every operand element, [rows, K] (rows = M = 64 for A,
        N for B; element (i, k) with i = m or n). Rule W2 with W4 / W5."""
        return _core.wgmma_addresses(*self._args(operand, n, major, dtype)).astype(np.int64)

    def read(self, smem, operand="B", n=None, major="K", dtype="f16", raw=False):
        """The operand matrix a wgmma reads from shared memory (a Machine, a CTA or
        a uint8 array), [rows, K]: float16 for f16, int8 / uint8 for s8 / u8, the
        bit patterns (uint16 / uint32 / uint8) for bf16, tf32 and fp8 (or with
        ``raw=True``). An element outside shared memory raises IllegalAddress (W7)."""
        args = self._args(operand, n, major, dtype)
        b = _core.wgmma_read(*args, _smem_of(smem))
        name = _dtype(dtype)
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[WGMMA_TYPES[name][1]]
        out = b.view(bits)
        if raw:
            return out
        return out.view({"f16": np.float16, "s8": np.int8}.get(name, bits))

    def explain(self, operand="B", n=None, major="K", dtype="f16"):
        """The descriptor in words: fields, how the operand is laid out, unknown bits."""
        operand, dtype, mj = _operand(operand), _dtype(dtype), _major(major)
        esize, K = WGMMA_TYPES[dtype][1], WGMMA_TYPES[dtype][2]
        S = self.swizzle
        lines = [f"wgmma descriptor 0x{self.value:016x}: start 0x{self.start:x}, LBO {self.lbo}, SBO {self.sbo}, "
                 f"base offset {self.base_offset}, swizzle {self.swizzle_name}"]
        who = "m (64 rows)" if operand == "A" else "n"
        if mj == 0 and not S:
            lines.append(f"K-major, no swizzle: 8x16-byte core matrices; row {who} % 8 is 16 bytes apart, "
                         f"each group of 8 rows SBO = {self.sbo} bytes further, the second 16 bytes of K "
                         f"LBO = {self.lbo} bytes further (W1, W2).")
        elif mj == 0:
            lines.append(f"K-major, swizzle {self.swizzle_name}: rows {S} bytes apart holding the {K} elements of K "
                         f"contiguously, each group of 8 rows SBO = {self.sbo} bytes further; LBO is not used "
                         f"(W3).")
        elif not S:
            lines.append(f"MN-major, no swizzle: 8 consecutive {who} elements per 16-byte row, k rows 16 bytes apart; "
                         f"groups of 8 along M/N SBO = {self.sbo} apart, k 8..15 LBO = {self.lbo} further (W2).")
        else:
            lines.append(f"MN-major, swizzle {self.swizzle_name}: {S // esize} consecutive {who} elements per "
                         f"{S}-byte row, k rows {S} bytes apart; blocks of {S // esize} along M/N LBO = "
                         f"{self.lbo} apart, k 8..15 SBO = {self.sbo} further (W2, roles of LBO/SBO swapped "
                         f"from the no-swizzle form).")
        if S:
            rep = 8 * S
            lines.append(f"Swizzle: the 16-byte chunk index (address bits 4-6) is XOR-ed with "
                         f"((address >> 7) - {self.base_offset}) & {S // 16 - 1}, from the ABSOLUTE shared address "
                         f"(W4), the same XOR a TMA load applies; the pattern repeats every {rep} bytes"
                         + ("." if self.start % rep == 0 else
                            f" and the start is {self.start % rep} bytes into a repeat (fine for a TMA tile "
                            f"loaded there with base offset 0, T3)."))
            if self.base_offset:
                lines.append(f"Base offset {self.base_offset} shifts the pattern (W5): a tile a TMA load wrote "
                             "is read with base offset 0 wherever it lies (T3, T4).")
        if not WGMMA_TYPES[dtype][3]:
            lines.append(f".{dtype}: {esize}-byte elements, K = {K}: the same 8x16-byte core matrices "
                         "(PTX ISA); derived, not recorded on hardware.")
        for b, note in self.unknown_bits:
            lines.append(f"bit {b} is set: {note}.")
        return "\n".join(lines)

    def __repr__(self):
        return (f"WgmmaDescriptor(start=0x{self.start:x}, lbo={self.lbo}, sbo={self.sbo}, "
                f"base_offset={self.base_offset}, swizzle='{self.swizzle_name}'"
                + (f", other_bits=0x{self.other_bits:x}" if self.other_bits else "") + ")")


# --- ldmatrix / stmatrix ------------------------------------------------------------
def _addrs32(addresses):
    a = [operator.index(x) for x in np.asarray(addresses).reshape(-1).tolist()]
    if len(a) != 32:
        raise ValueError(f"a warp gives 32 thread addresses, not {len(a)}")
    return a


def ldmatrix_map(addresses, num=4, trans=False):
    """[32, num, 2]: the shared address of the low / high b16 of register j of
    thread t for ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16 (L1).
    A used row address not 16-byte aligned raises MisalignedAddress (L2)."""
    return _core.ldmatrix_map(operator.index(num), bool(trans), _addrs32(addresses)).astype(np.int64)


def ldmatrix(smem, addresses, num=4, trans=False):
    """The registers ldmatrix returns, uint32 [32, num] (thread t's register j)."""
    return _core.ldmatrix(_smem_of(smem), operator.index(num), bool(trans), _addrs32(addresses))


def stmatrix(smem, addresses, regs, num=4, trans=False):
    """stmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16: writes thread t's
    register j (uint32 [32, num]) where ldmatrix would read it (the ISA's mirror;
    not recorded on hardware)."""
    mem = _smem_of(smem)
    if not mem.flags.writeable:
        raise ValueError("stmatrix needs writable shared memory")
    _core.stmatrix(mem, operator.index(num), bool(trans), _addrs32(addresses), _regs(regs))


def _regs(regs):
    r = np.asarray(regs)
    if r.dtype.kind not in "iu" or (r.size and (r.min() < 0 or r.max() > 0xFFFFFFFF)):
        raise ValueError("stmatrix registers are 32-bit unsigned integers")
    return r.astype(np.uint32)


def ldmatrix_fragments(smem, addresses, num=4, trans=False):
    """The num 8x8 b16 matrices as the registers hold them, uint16 [num, 8, 8]:
    entry [j, r, c] is in register j of thread 4r + c // 2 (half c % 2)."""
    regs = ldmatrix(smem, addresses, num, trans)
    out = np.empty((num, 8, 8), dtype=np.uint16)
    for t in range(32):
        for j in range(num):
            out[j, t // 4, 2 * (t % 4)] = regs[t, j] & 0xFFFF
            out[j, t // 4, 2 * (t % 4) + 1] = regs[t, j] >> 16
    return out


# --- bank conflicts -------------------------------------------------------------------
@dataclass
class BankReport:
    """Wavefronts of one warp-wide shared-memory access."""
    op: str
    width: int
    wavefronts: int
    phases: int
    phase_threads: int
    packed: bool
    per_phase: list
    banks: list = field(repr=False)   # banks[t]: the banks thread t touches

    @property
    def conflicts(self):
        """Wavefronts beyond the minimum (one per phase)."""
        return self.wavefronts - self.phases

    def __str__(self):
        how = (f"{self.phases} phase(s) of {self.phase_threads} threads"
               + (" (equal address pairs: packed, K4)" if self.packed else ""))
        return (f"{self.op} {self.width} B: {self.wavefronts} wavefront(s), {how}, per phase {self.per_phase}; "
                f"{self.conflicts} beyond the minimum")


_OPS = {"ld": 0, "st": 1, "ldmatrix": 2, "ldsm": 2, "stmatrix": 3, "stsm": 3}


def bank_conflicts(addresses, width=4, op="ld", num=4):
    """How many wavefronts one warp-wide access takes (K1-K4): ``addresses`` are
    the 32 per-thread shared addresses, ``width`` 4, 8 or 16 bytes; ``op`` 'ld',
    'st', or 'ldmatrix' / 'stmatrix' (addresses = row addresses, ``num``
    matrices)."""
    key = str(op).strip().lower()
    if key not in _OPS:
        raise ValueError(f"op {op!r}: one of 'ld', 'st', 'ldmatrix', 'stmatrix'")
    a = _addrs32(addresses)
    code = _OPS[key]
    width, num = operator.index(width), operator.index(num)
    r = _core.bank_wavefronts(code, width, num if code >= 2 else 0, a)
    w = 16 if code >= 2 else width
    used = 8 * num if code >= 2 else 32
    banks = [sorted({(x // 4 + i) % 32 for i in range(w // 4)}) if t < used else [] for t, x in enumerate(a)]
    return BankReport(key, w, r["wavefronts"], r["phases"], r["phase_threads"], r["packed"], r["per_phase"],
                      banks)


def tile_access_addresses(rows, row_bytes, swizzle="none", order="row", width=16, dst=0, first=(0, 0)):
    """32 per-thread addresses reading a tile whose row r starts at
    dst + r * max(row_bytes, span), every address swizzled on its absolute value
    with the TMA XOR (observation 2): exactly one TMA box when row_bytes is the
    span (the recorded 'tile' bank-conflict cases use this form for every swizzle). ``order='row'``: consecutive threads read consecutive
    ``width``-byte pieces along the rows (wrapping to the next row);
    ``'column'``: thread t reads the same piece of row first[0] + t.
    ``first`` = (row, byte) of thread 0."""
    S = _swizzle_span(swizzle)
    pitch = max(int(row_bytes), S)
    r0, c0 = first
    per_row = int(row_bytes) // int(width)
    if per_row < 1 or int(row_bytes) % int(width):
        raise ValueError(f"row of {row_bytes} bytes is not a whole number of {width}-byte pieces")
    out = []
    for t in range(32):
        if order == "row":
            piece = c0 // width + t
            r, c = r0 + piece // per_row, (piece % per_row) * width
        elif order == "column":
            r, c = r0 + t, c0
        else:
            raise ValueError(f"order {order!r}: 'row' or 'column'")
        if r >= rows:
            raise ValueError(f"thread {t} would read row {r} of a {rows}-row tile")
        a = int(dst) + r * pitch + c
        out.append(a ^ ((((a >> 7) & (S // 16 - 1)) << 4) if S else 0))
    return out


def box_access_addresses(tmap, dst, order="row", width=16, first=(0, 0)):
    """32 per-thread addresses reading a box of a rank-2 tiled map exactly where a
    load to ``dst`` put it (``tmap.smem_addresses``): 'row' = consecutive
    ``width``-byte pieces along the rows, 'column' = the same piece of rows
    first[0], first[0] + 1, ...; ``first`` = (row, element) of thread 0."""
    table = tmap.smem_addresses(int(dst))
    if table.ndim != 2:
        raise ValueError("box_access_addresses takes a rank-2 tiled map")
    esize = tmap.box_layout["esize"]
    per = int(width) // esize
    if per < 1 or int(width) % esize:
        raise ValueError(f"a {width}-byte access is not a whole number of {esize}-byte elements")
    rows, cols = table.shape
    out = []
    for t in range(32):
        if order == "row":
            e = first[1] + t * per
            r, c = first[0] + e // cols, e % cols
        elif order == "column":
            r, c = first[0] + t, first[1]
        else:
            raise ValueError(f"order {order!r}: 'row' or 'column'")
        if r >= rows or c + per > cols:
            raise ValueError(f"thread {t} would read past the {rows}x{cols} box")
        out.append(int(table[r, c]))
    return out


def box_ldmatrix_addresses(tmap, dst, first=(0, 0), num=4):
    """The 32 row addresses of an ldmatrix .x{num} reading the 16x16 (x4), 16x8
    (x2) or 8x8 (x1) block of 2-byte elements at (row, col) = ``first`` of a box a
    rank-2 tiled map loaded at ``dst``: matrix j = rows first + 8 (j % 2), columns
    first + 8 (j // 2) (the usual A-fragment order); threads past 8*num repeat
    matrix 0. The same addresses serve check_ldmatrix and bank_conflicts."""
    table = tmap.smem_addresses(int(dst))
    if table.ndim != 2 or tmap.box_layout["esize"] != 2:
        raise ValueError("box_ldmatrix_addresses takes a rank-2 tiled map of 2-byte elements")
    r0, c0 = first
    out = []
    for t in range(32):
        j = (t // 8) % int(num)
        r, c = r0 + 8 * (j % 2) + t % 8, c0 + 8 * (j // 2)
        if r >= table.shape[0] or c + 8 > table.shape[1]:
            raise ValueError(f"matrix {j} row {t % 8} would read past the {table.shape[0]}x{table.shape[1]} box")
        out.append(int(table[r, c]))
    return out


def compare_swizzles(rows, row_bytes, order="row", width=16, op="ld", dst=0, first=(0, 0)):
    """{swizzle name: BankReport} for the same access under each swizzle mode."""
    return {_SWIZZLE_NAME[S]: bank_conflicts(tile_access_addresses(rows, row_bytes, S, order, width, dst, first),
                                             width, op)
            for S in (0, 32, 64, 128)}


# --- producers ------------------------------------------------------------------------
class TmaProducer:
    """Shared memory as tile loads of a 2D tiled tensor map wrote it.

    ``loads`` = [(coords, dst), ...] in issue order (coords driver order: (col,
    row)). ``what(addr)`` says what a shared address holds: ('tile', (row, col))
    a global element, ('oob', (row, col)) an out-of-bounds element (zero or the
    NaN fill), or ('fill', None) a slot no load wrote."""

    def __init__(self, tmap, loads):
        f = tmap.fields
        if f["kind"] != "tiled" or f["rank"] != 2:
            raise ValueError("TmaProducer takes a rank-2 tiled tensor map")
        self.tmap = tmap
        self.loads = [(tuple(int(c) for c in coords), int(dst)) for coords, dst in loads]
        self.gdim = f["global_dim"]
        self.box = f["box_dim"]
        self.esize = tmap.box_layout["esize"]
        self._tables = [tmap.smem_addresses(dst).astype(np.int64) for _, dst in self.loads]   # [rows, cols]
        # An image of the shared bytes the loads wrote: kind 1 = first byte of an
        # element (its global row, col), 2 = a later byte of one, 0 = not written.
        self._lo = min(int(t.min()) for t in self._tables)
        span = max(int(t.max()) for t in self._tables) + self.esize - self._lo
        self._kind = np.zeros(span, dtype=np.int8)
        self._row = np.zeros(span, dtype=np.int64)
        self._col = np.zeros(span, dtype=np.int64)
        for (coords, _), t in zip(self.loads, self._tables):   # issue order: later loads win
            a = t.reshape(-1) - self._lo
            for b in range(1, self.esize):
                self._kind[a + b] = 2
            self._kind[a] = 1
            rr, cc = np.meshgrid(np.arange(t.shape[0]), np.arange(t.shape[1]), indexing="ij")
            self._row[a] = coords[1] + rr.reshape(-1)
            self._col[a] = coords[0] + cc.reshape(-1)

    def what_many(self, addrs):
        """Vectorised what(): (kind, row, col) arrays; kind 0 fill, 1 tile, 2 partial, 3 oob."""
        a = np.asarray(addrs, dtype=np.int64) - self._lo
        inside = (a >= 0) & (a < self._kind.size)
        ai = np.where(inside, a, 0)
        kind = np.where(inside, self._kind[ai], 0).astype(np.int8)
        row, col = self._row[ai], self._col[ai]
        oob = (kind == 1) & ((row < 0) | (row >= self.gdim[1]) | (col < 0) | (col >= self.gdim[0]))
        kind[oob] = 3
        return kind, row, col

    def what(self, addr):
        kind, row, col = self.what_many([int(addr)])
        k = int(kind[0])
        if k == 0:
            return ("fill", None)
        if k == 2:
            return ("partial", None)
        return ("tile" if k == 1 else "oob", (int(row[0]), int(col[0])))

    def where_many(self, rows, cols):
        """Vectorised where(): shared addresses, -1 where no load wrote the element."""
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        out = np.full(rows.shape, -1, dtype=np.int64)
        for (coords, _), t in zip(self.loads, self._tables):   # later loads overwrite
            r, c = rows - coords[1], cols - coords[0]
            hit = (r >= 0) & (r < t.shape[0]) & (c >= 0) & (c < t.shape[1])
            out[hit] = t[r[hit], c[hit]]
        return out

    def where(self, element):
        """Shared address of global element (row, col), or None if no load wrote it."""
        a = int(self.where_many([element[0]], [element[1]])[0])
        return None if a < 0 else a

    def region(self):
        """(first row, first col, rows, cols) the loads cover together."""
        r0 = min(c[1] for c, _ in self.loads)
        c0 = min(c[0] for c, _ in self.loads)
        r1 = max(c[1] + self.box[1] for c, _ in self.loads)
        c1 = max(c[0] + self.box[0] for c, _ in self.loads)
        return r0, c0, r1 - r0, c1 - c0

    def intended(self, operand="B", n=None, major="K", k_slice=0, dtype="f16"):
        """The natural intent: K-major, operand row i = tile row i, k = column
        16 * k_slice + k; MN-major, k = tile row 16 * k_slice + k, i = column i."""
        rows = 64 if _operand(operand) == "A" else n
        K = WGMMA_TYPES[_dtype(dtype)][2]
        r0, c0, _, _ = self.region()
        ii, kk = np.meshgrid(np.arange(rows), np.arange(K), indexing="ij")
        if _major(major) == 0:
            return np.stack([r0 + ii, c0 + K * k_slice + kk], axis=-1)
        return np.stack([r0 + K * k_slice + kk, c0 + ii], axis=-1)


class SmemProducer:
    """Shared memory described by the user: ``holds`` maps a label (any hashable,
    e.g. (row, col)) to the shared address holding it."""

    def __init__(self, holds):
        self._where = {k: int(v) for k, v in dict(holds).items()}
        self._what = {v: k for k, v in self._where.items()}

    def what(self, addr):
        lab = self._what.get(int(addr))
        return ("fill", None) if lab is None else ("tile", lab)

    def where(self, element):
        return self._where.get(tuple(element) if isinstance(element, (list, np.ndarray)) else element)


# --- descriptor fitting ---------------------------------------------------------------
def _fit_one(T, mj, S, bo, esize, K, user):
    """The descriptor (start, lbo, sbo) of major mj / span S / base offset bo that
    reads addresses T [rows, K], or None; unused fields keep the user's values."""
    msk = S // 16 - 1 if S else 0
    L = T ^ ((((T >> 7) - bo) & msk) << 4)      # the XOR leaves bits >= 7 alone: invert it
    start = int(L[0, 0])
    rows = T.shape[0]
    lbo, sbo = user.lbo, user.sbo
    half = 16 // esize                          # elements of K in 16 bytes
    if mj == 0:
        lbo_used, sbo_used = not S and K > half, rows > 8
        if lbo_used:
            lbo = int(L[0, half]) - start
        elif S:
            lbo = 16                            # unused (W3): the customary field value 1
        if sbo_used:
            sbo = int(L[8, 0]) - start
    else:
        per = (S or 16) // esize
        k_step = int(L[0, 8]) - start if K > 8 else None
        i_step = int(L[per, 0]) - start if rows > per else None
        if S:
            sbo = k_step if k_step is not None else sbo
            lbo = i_step if i_step is not None else lbo
            lbo_used, sbo_used = i_step is not None, k_step is not None
        else:
            lbo = k_step if k_step is not None else lbo
            sbo = i_step if i_step is not None else sbo
            lbo_used, sbo_used = k_step is not None, i_step is not None
    for v in (start, lbo, sbo):
        if v < 0 or v % 16 or v >= 1 << 18:
            return None
    d = WgmmaDescriptor(start, lbo, sbo, bo, S, user.other_bits)
    code = next(v[0] for v in WGMMA_TYPES.values() if v[1] == esize and v[2] == K)
    got = _core.wgmma_addresses(d.value, code, mj, rows != 64, rows).astype(np.int64)
    return (d, lbo_used, sbo_used) if np.array_equal(got, T) else None


def _fits(T, major, dtype, like, prefer=None):
    """[(descriptor, 'K' | 'MN', lbo_used, sbo_used)], closest to ``like`` (and
    the major-ness ``prefer``) first."""
    _, esize, K, _ = WGMMA_TYPES[dtype]
    majors = [0, 1] if major is None else [_major(major)]
    fits = []
    for mj in majors:
        if mj == 1 and esize != 2:
            continue
        for S in (0, 32, 64, 128):
            for bo in (range(8) if S else [0]):
                hit = _fit_one(T, mj, S, bo, esize, K, like)
                if hit is not None:
                    fits.append((hit[0], "K" if mj == 0 else "MN", hit[1], hit[2]))

    def distance(item):
        d, mj, lu, su = item
        used = {"lbo": lu, "sbo": su}
        return (sum(getattr(d, f) != getattr(like, f) for f in ("swizzle", "start", "lbo", "sbo", "base_offset")
                    if used.get(f, True)) + (prefer is not None and mj != prefer), d.base_offset)
    return sorted(fits, key=distance)


def fit_descriptor(targets, major=None, dtype="f16", like=None):
    """Every (descriptor, major) that reads element (i, k) from ``targets[i, k]``
    (shared addresses, [rows, K]), closest to ``like`` (a WgmmaDescriptor) first.
    ``major`` None tries both. Fields the layout does not use keep ``like``'s
    values (K-major swizzled LBO: 16)."""
    dtype = _dtype(dtype)
    K = WGMMA_TYPES[dtype][2]
    T = np.asarray(targets, dtype=np.int64)
    if T.ndim != 2 or T.shape[1] != K:
        raise ValueError(f"targets must be [rows, {K}] shared addresses for .{dtype}")
    return [(d, mj) for d, mj, _, _ in _fits(T, major, dtype, like or WgmmaDescriptor(0, 16, 0))]


# --- the check ---------------------------------------------------------------------------
CAUSES = {
    "major": "wrong major-ness",
    "swizzle": "wrong swizzle mode",
    "lbo_sbo_swapped": "LBO and SBO swapped",
    "base_offset": "non-zero base offset",
    "base_not_aligned": "base not aligned to the swizzle repeat",
    "start": "wrong start address",
    "lbo": "wrong LBO",
    "sbo": "wrong SBO",
    "dense_rows": "dense rows read as core matrices",
    "missing": "elements the producer never wrote",
    "no_descriptor": "no descriptor reads this layout",
}


@dataclass
class ConsumerReport:
    """Result of :func:`check_wgmma`."""
    total: int
    mismatched: int
    mismatches: list                    # first ones: dict(element, address, expected, holds)
    causes: list                        # codes (keys of CAUSES), most likely first
    explanation: list                   # one sentence per cause
    suggestion: object = None           # WgmmaDescriptor reading the tile as intended, or None
    suggested_major: str = None

    @property
    def ok(self):
        return self.mismatched == 0

    def __str__(self):
        if self.ok:
            return f"all {self.total} operand elements are the intended ones"
        lines = [f"{self.mismatched} of {self.total} operand elements differ from the intended ones"]
        for m in self.mismatches:
            kind, lab = m["holds"]
            what = {"tile": f"tile element {lab}", "oob": f"out-of-bounds element {lab} (fill value)",
                    "fill": "a slot no load wrote", "partial": "part of another element",
                    "outside": "nothing: outside shared memory"}[kind]
            lines.append(f"  element (i={m['element'][0]}, k={m['element'][1]}): reads 0x{m['address']:x}, "
                         f"which holds {what}; intended {m['expected']}")
        for code, text in zip(self.causes, self.explanation):
            lines.append(f"likely cause: {CAUSES[code]}: {text}")
        if self.suggestion is not None:
            d = self.suggestion
            lines.append(f"use swizzle {d.swizzle_name}, start 0x{d.start:x}, LBO {d.lbo}, SBO {d.sbo}, "
                         f"base offset {d.base_offset}, {self.suggested_major}-major "
                         f"(descriptor 0x{d.value:016x})")
        return "\n".join(lines)


def _same(a, b):
    """Two labels hold the same value: equal, or both out of bounds (zero fill)."""
    return a == b or (a[0] == "oob" and b[0] == "oob")


def check_wgmma(desc, producer, operand="B", n=None, major="K", dtype="f16", intended=None, k_slice=0,
                tile_major=None, smem_bytes=None, show=8):
    """Does the wgmma reading through ``desc`` get the elements the producer
    meant? ``intended[i, k]`` is the label (for a TmaProducer: the global
    (row, col)) element (i, k) should be; by default the producer's natural
    intent for ``k_slice`` (TmaProducer.intended) with the tile's rows along
    M/N (``tile_major`` 'K', the default when ``major`` is 'K') or along K
    ('MN'). Returns a ConsumerReport."""
    if not isinstance(desc, WgmmaDescriptor):
        desc = WgmmaDescriptor.from_value(desc)
    mj = _major(major)
    addrs = desc.addresses(operand, n, major, dtype)
    if intended is None:
        intended = producer.intended(operand, n, major if tile_major is None else tile_major, k_slice, dtype)
    rows, K = addrs.shape

    def label(x):
        return tuple(int(v) for v in x) if isinstance(x, (tuple, list, np.ndarray)) else x

    exp = None
    if hasattr(producer, "what_many"):
        try:
            exp = np.asarray(intended, dtype=np.int64)       # [rows, K, 2]: (row, col)
        except (TypeError, ValueError):
            exp = None
        if exp is not None and exp.shape != (rows, K, 2):
            raise ValueError(f"intended must be [{rows}, {K}] (row, col) pairs, got shape {exp.shape}")
    if exp is not None:
        kind, r, c = producer.what_many(addrs.reshape(-1))
        er, ec = exp[..., 0].reshape(-1), exp[..., 1].reshape(-1)
        g = producer.gdim
        exp_oob = (er < 0) | (er >= g[1]) | (ec < 0) | (ec >= g[0])
        if smem_bytes is not None:
            kind = np.where(addrs.reshape(-1) >= smem_bytes, -1, kind)
        good = np.where(exp_oob, kind == 3, (kind == 1) & (r == er) & (c == ec))
        bad_idx = np.nonzero(~good)[0]
        count = len(bad_idx)
        mism = []
        for idx in bad_idx[:show]:
            i, k = divmod(int(idx), K)
            a = int(addrs[i, k])
            holds = ("outside", None) if kind[idx] == -1 else producer.what(a)
            mism.append(dict(element=(i, k), address=a, expected=(int(exp[i, k, 0]), int(exp[i, k, 1])),
                             holds=holds))
    else:
        exp_lab = [[label(intended[i][k]) for k in range(K)] for i in range(rows)]
        inside = getattr(producer, "gdim", None)

        def expected_kind(lab):
            if inside is not None:
                r, c = lab
                return ("tile" if 0 <= r < inside[1] and 0 <= c < inside[0] else "oob", lab)
            return ("tile", lab)

        mism, count = [], 0
        for i in range(rows):
            for k in range(K):
                a = int(addrs[i, k])
                holds = ("outside", None) if smem_bytes is not None and a >= smem_bytes else producer.what(a)
                want = expected_kind(exp_lab[i][k])
                if not _same(holds, want):
                    count += 1
                    if len(mism) < show:
                        mism.append(dict(element=(i, k), address=a, expected=exp_lab[i][k], holds=holds))
    report = ConsumerReport(rows * K, count, mism, [], [])
    if count == 0:
        return report
    # What would read the intended elements?
    if exp is not None:
        targets = producer.where_many(exp[..., 0], exp[..., 1])
        missing = int((targets < 0).sum())
    else:
        targets = np.zeros((rows, K), dtype=np.int64)
        missing = 0
        for i in range(rows):
            for k in range(K):
                w = producer.where(exp_lab[i][k])
                if w is None:
                    missing += 1
                else:
                    targets[i, k] = w
    if missing:
        report.causes.append("missing")
        report.explanation.append(f"{missing} intended elements are in no load's box; load them first")
        return report
    fits = _fits(targets, None, _dtype(dtype), desc, "K" if mj == 0 else "MN")
    if fits:
        best, bmj, lbo_used, sbo_used = fits[0]
        report.suggestion, report.suggested_major = best, bmj
        _explain_difference(report, desc, "K" if mj == 0 else "MN", best, bmj, operand, lbo_used, sbo_used)
    else:
        _explain_no_fit(report, targets, desc, dtype)
    return report


def _explain_difference(report, d, mj, f, fmj, operand, lbo_used=True, sbo_used=True):
    c, e = report.causes, report.explanation
    trans = "imm-trans-" + ("a" if _operand(operand) == "A" else "b")
    if mj != fmj:
        c.append("major")
        e.append(f"the tile is {fmj}-major in shared memory; the instruction reads it {mj}-major "
                 f"({trans} {0 if mj == 'K' else 1}); use {trans} {0 if fmj == 'K' else 1}")
    if d.swizzle != f.swizzle:
        c.append("swizzle")
        e.append(f"the tile was written with the {f.swizzle_name} swizzle; the descriptor reads it as "
                 f"{d.swizzle_name} (the swizzle field must equal the tensor map's)")
    # swapped: each given value is what the other field needs (or that field is unused)
    swapped = (d.lbo != d.sbo and (d.lbo == f.sbo or not sbo_used) and (d.sbo == f.lbo or not lbo_used)
               and (d.lbo != f.lbo or d.sbo != f.sbo) and (lbo_used or sbo_used))
    if swapped:
        c.append("lbo_sbo_swapped")
        e.append(f"LBO {d.lbo} and SBO {d.sbo} are the other way round: this layout needs LBO {f.lbo}, "
                 f"SBO {f.sbo}" + (" (for MN-major with a swizzle LBO steps between M/N blocks and SBO "
                                    "between the k halves, W2)" if fmj == "MN" and f.swizzle else ""))
    if d.base_offset != f.base_offset:
        rep = 8 * f.swizzle if f.swizzle else 0
        if f.base_offset == 0:
            c.append("base_offset")
            formula = d.swizzle and d.base_offset == (d.start >> 7) & 7
            e.append(f"base offset {d.base_offset}" + (" = (start >> 7) & 7" if formula else "") +
                     " shifts the swizzle pattern (W5), but a TMA load swizzles on the absolute address, so its "
                     "tile is read with base offset 0 wherever it lies (T3, T4)")
        else:
            c.append("base_not_aligned")
            e.append(f"the data was swizzled relative to a base that is not a multiple of the {rep}-byte repeat; "
                     f"the hardware XORs absolute address bits [7, 10) (W4): base offset {f.base_offset} "
                     f"compensates (W5), or place the tile at a multiple of {rep}")
    if d.start != f.start:
        c.append("start")
        e.append(f"the intended slice begins at 0x{f.start:x}; the descriptor starts at 0x{d.start:x}"
                 + (" (k-slice j of a swizzled K-major tile starts 32*j bytes into the row, W8)"
                    if fmj == "K" and f.swizzle else ""))
    if not swapped:
        if d.lbo != f.lbo and lbo_used:
            c.append("lbo")
            e.append(f"LBO {d.lbo}: this layout needs {f.lbo}")
        if d.sbo != f.sbo and sbo_used:
            c.append("sbo")
            e.append(f"SBO {d.sbo}: this layout needs {f.sbo}")


def _explain_no_fit(report, T, d, dtype):
    esize = WGMMA_TYPES[dtype][1]
    half = 16 // esize
    rows = T.shape[0]
    # K-major rows stored densely: each row's K bytes contiguous, rows p > 16 apart, no swizzle.
    row_contig = all(int(T[i, k]) == int(T[i, 0]) + k * esize for i in range(rows) for k in range(T.shape[1]))
    pitch = int(T[1, 0] - T[0, 0]) if rows > 1 else 0
    if row_contig and pitch > 16 and all(int(T[i, 0] - T[0, 0]) == i * pitch for i in range(rows)):
        text = (f"the rows are {pitch} bytes apart with their {T.shape[1]} elements contiguous and no swizzle; "
                f"a no-swizzle descriptor reads 8 x 16-byte core matrices (rows 16 bytes apart, the second "
                f"{half} elements of K LBO away, W1), so no descriptor reads this layout: load boxes {half} "
                "elements (16 bytes) wide, two per k-slice")
        if pitch in (32, 64, 128):
            text += f", or write the tile with the {pitch}B swizzle (its span is the row)"
        report.causes.append("dense_rows")
        report.explanation.append(text)
    else:
        report.causes.append("no_descriptor")
        report.explanation.append("no descriptor (either major-ness, any swizzle and base offset) reads the "
                                  "intended elements from where the producer put them")


def descriptor_for_tile(tmap, dst, k_slice=0, operand="B", major="K", dtype="f16", loads=None):
    """The descriptor that reads k-slice ``k_slice`` of a tile a tiled 2D tensor
    map loaded at ``dst`` (W8: K-major with the map's swizzle S, SBO 8*S, base
    offset 0, start dst + 32 * k_slice, whatever dst mod 1024 is). ``loads``
    (default: one load at (0, 0) to dst) may give several [(coords, dst)].
    Raises ValueError explaining why when no descriptor reads the tile."""
    if loads is None:
        loads = [((0, 0), dst)]
    prod = TmaProducer(tmap, loads)
    rows_needed = 64 if _operand(operand) == "A" else None
    r0, c0, R, C = prod.region()
    K = WGMMA_TYPES[_dtype(dtype)][2]
    mj = _major(major)
    n = rows_needed or (R if mj == 0 else C)
    if n % 8 or not 8 <= n <= 256:
        raise ValueError(f"the tile gives operand {_operand(operand)} {n} rows; wgmma needs a multiple of 8 "
                         "from 8 to 256")
    span_k = C if mj == 0 else R
    if (k_slice + 1) * K > span_k:
        raise ValueError(f"k-slice {k_slice} needs {'columns' if mj == 0 else 'rows'} {k_slice * K}.."
                         f"{(k_slice + 1) * K - 1}; the loaded tile has {span_k} (a no-swizzle tile needs a "
                         f"second {K // 2}-wide load for the upper half of K, at the LBO)")
    if n > (R if mj == 0 else C):
        raise ValueError(f"the operand needs {n} rows of M/N; the tile has {R if mj == 0 else C}")
    want = prod.intended(operand, n, major, k_slice, dtype)
    T = prod.where_many(want[..., 0], want[..., 1])
    fits = fit_descriptor(T, major, dtype, like=WgmmaDescriptor(0, 16, 0))
    if fits:
        return fits[0][0]
    rep = ConsumerReport(0, 0, [], [], [])
    _explain_no_fit(rep, T, WgmmaDescriptor(0, 16, 0), _dtype(dtype))
    raise ValueError(f"no {('K' if mj == 0 else 'MN')}-major descriptor reads this tile: "
                     f"{CAUSES[rep.causes[0]]}: {rep.explanation[0]}")


# --- the check for ldmatrix ----------------------------------------------------------------
@dataclass
class LdmatrixReport:
    """Result of :func:`check_ldmatrix`."""
    total: int
    mismatched: int
    mismatches: list                 # dict(element=(j, r, c), address, expected, holds)
    causes: list
    explanation: list
    suggestion: list = None          # 32 row addresses that read the intended elements
    suggested_trans: bool = None

    @property
    def ok(self):
        return self.mismatched == 0

    def __str__(self):
        if self.ok:
            return f"all {self.total} fragment elements are the intended ones"
        lines = [f"{self.mismatched} of {self.total} fragment elements differ from the intended ones"]
        for m in self.mismatches:
            lines.append(f"  matrix {m['element'][0]} (r={m['element'][1]}, c={m['element'][2]}): reads "
                         f"0x{m['address']:x}, which holds {m['holds'][0]} {m['holds'][1]}; intended {m['expected']}")
        for text in self.explanation:
            lines.append(f"likely cause: {text}")
        if self.suggestion is not None:
            used = self.suggestion[:8 * (len(self.suggestion) // 8)]
            lines.append(f"use .trans={self.suggested_trans} with row addresses "
                         + ", ".join(f"0x{a:x}" for a in used[:8]) + (" ..." if len(used) > 8 else ""))
        return "\n".join(lines)


def check_ldmatrix(addresses, producer, intended, num=4, trans=False, show=8):
    """Does ldmatrix with these 32 row addresses deliver the intended elements?
    ``intended[j][r][c]`` is the label fragment element (j, r, c) should hold, in
    the layout :func:`ldmatrix_fragments` returns (row r = thread / 4, column c =
    2 * (thread % 4) + half). Names the cause (row addresses not swizzled, wrong
    .trans, wrong rows) and row addresses that work when some exist (L1)."""
    num = int(num)
    amap = ldmatrix_map(addresses, num, trans)      # [32, num, 2]

    def label(x):
        return tuple(int(v) for v in x) if isinstance(x, (tuple, list, np.ndarray)) else x

    inside = getattr(producer, "gdim", None)

    def kind(lab):
        if inside is not None:
            r, c = lab
            return ("tile" if 0 <= r < inside[1] and 0 <= c < inside[0] else "oob", lab)
        return ("tile", lab)

    mism, count = [], 0
    for t in range(32):
        for j in range(num):
            for h in range(2):
                r, c = t // 4, 2 * (t % 4) + h
                want = kind(label(intended[j][r][c]))
                holds = producer.what(int(amap[t, j, h]))
                if not _same(holds, want):
                    count += 1
                    if len(mism) < show:
                        mism.append(dict(element=(j, r, c), address=int(amap[t, j, h]), expected=want[1],
                                         holds=holds))
    rep = LdmatrixReport(32 * num * 2, count, mism, [], [])
    if not count:
        return rep
    where = [[[producer.where(label(intended[j][r][c])) for c in range(8)] for r in range(8)] for j in range(num)]
    if any(w is None for mat in where for row in mat for w in row):
        rep.causes.append("missing")
        rep.explanation.append("some intended elements are not in shared memory")
        return rep
    user = _addrs32(addresses)
    for tr in (bool(trans), not trans):
        rows = []
        for j in range(num):
            for u in range(8):
                # no .trans: row u of matrix j is fragment row u; .trans: fragment column u
                rows.append(where[j][u][0] if not tr else where[j][0][u])
        ok = all((where[j][r][c] == rows[8 * j + r] + 2 * c) if not tr else
                 (where[j][r][c] == rows[8 * j + c] + 2 * r)
                 for j in range(num) for r in range(8) for c in range(8))
        if ok and all(a % 16 == 0 for a in rows):
            rows = rows + user[len(rows):]
            rep.suggestion, rep.suggested_trans = rows, tr
            break
    if rep.suggestion is None:
        rep.causes.append("no_rows")
        rep.explanation.append("no row addresses read this layout: each 8x8 matrix row must be 16 contiguous "
                               "bytes in shared memory (L1)")
        return rep
    if rep.suggested_trans != bool(trans):
        rep.causes.append("trans")
        rep.explanation.append(f"wrong .trans: the tile holds the matrices "
                               f"{'transposed' if rep.suggested_trans else 'as rows'}; use "
                               f"{'.trans' if rep.suggested_trans else 'no .trans'}")
    used = 8 * num
    fixed = rep.suggestion[:used]
    for name, S in (("32B", 32), ("64B", 64), ("128B", 128)):
        if fixed == [a ^ (((a >> 7) & (S // 16 - 1)) << 4) for a in user[:used]]:
            rep.causes.append("rows_not_swizzled")
            rep.explanation.append(f"the row addresses are not swizzled: the tile was written with the {name} "
                                   "swizzle and ldmatrix adds none (L1); XOR each row address with its line's "
                                   "pattern, as the TMA load did")
            break
    else:
        if fixed != user[:used]:
            rep.causes.append("rows")
            rep.explanation.append("the row addresses point at other rows of the tile")
    return rep
