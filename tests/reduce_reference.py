"""Independent reference for the element arithmetic of cp.reduce.async.bulk{.tensor}.

Written separately from csrc/core/reduce.c and deliberately simple: every float
value is decoded to an exact ``fractions.Fraction``, the operation is done
exactly, and the result is narrowed to the destination format by an explicit
round-to-nearest-even on the exact rational value.  No host float arithmetic is
involved, so the result does not depend on the machine running it.

The rules (rounding, NaN results, subnormals, signs of zero, FTZ map types) are
those recorded on sm_90 and documented in docs/reductions.md.

    reduce_ref(op, type, dst, src)            # bulk .type names: "u32", "f16", ...
    reduce_tensor_ref(op, dtype_value, dst, src)  # CUtensorMapDataType numbers

dst and src are NumPy arrays of the element size (any integer dtype of that
width, or the matching float dtype); the result has dst's dtype and holds the
bit patterns the hardware writes.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

# ---------------------------------------------------------------- formats
# (exponent bits, mantissa bits)
FMT = {
    "f16": (5, 10),
    "bf16": (8, 7),
    "f32": (8, 23),
    "f64": (11, 52),
}
WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}

CANON_NAN = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF}
F64_DEFAULT_NAN = 0xFFF8000000000000


class _F:
    """A decoded float: kind in {'zero', 'num', 'inf', 'nan'}, sign 0/1, exact value."""

    __slots__ = ("kind", "sign", "value", "bits")

    def __init__(self, kind, sign, value, bits):
        self.kind, self.sign, self.value, self.bits = kind, sign, value, bits


def _decode(bits: int, fmt: str) -> _F:
    e_bits, m_bits = FMT[fmt]
    w = WIDTH[fmt]
    sign = (bits >> (w - 1)) & 1
    exp = (bits >> m_bits) & ((1 << e_bits) - 1)
    man = bits & ((1 << m_bits) - 1)
    bias = (1 << (e_bits - 1)) - 1
    if exp == (1 << e_bits) - 1:
        return _F("nan" if man else "inf", sign, None, bits)
    if exp == 0:
        if man == 0:
            return _F("zero", sign, Fraction(0), bits)
        v = Fraction(man, 1 << (m_bits + bias - 1))
    else:
        v = Fraction((1 << m_bits) | man) * Fraction(2) ** (exp - bias - m_bits)
    return _F("num", sign, -v if sign else v, bits)


def _is_subnormal(bits: int, fmt: str) -> bool:
    e_bits, m_bits = FMT[fmt]
    exp = (bits >> m_bits) & ((1 << e_bits) - 1)
    man = bits & ((1 << m_bits) - 1)
    return exp == 0 and man != 0


def _round_rne(v: Fraction, fmt: str) -> int:
    """Exact non-zero rational -> nearest-even bit pattern of fmt (overflow -> inf)."""
    e_bits, m_bits = FMT[fmt]
    w = WIDTH[fmt]
    bias = (1 << (e_bits - 1)) - 1
    sign = 1 if v < 0 else 0
    a = -v if sign else v
    # find e with 2^e <= a < 2^(e+1)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    assert Fraction(2) ** e <= a < Fraction(2) ** (e + 1)
    emin = 1 - bias
    q = max(e, emin) - m_bits          # quantum (ulp exponent)
    scaled = a / (Fraction(2) ** q)    # value in ulps
    n = scaled.numerator // scaled.denominator
    rem = scaled - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    # n * 2^q ; encode
    if n == 0:
        return sign << (w - 1)
    if n >= (1 << (m_bits + 1)):       # carried into the next binade
        n >>= 1
        q += 1
    if n < (1 << m_bits):               # subnormal
        exp_field = 0
        man = n
    else:
        exp_field = q + m_bits + bias
        man = n - (1 << m_bits)
    if exp_field >= (1 << e_bits) - 1:  # overflow
        return (sign << (w - 1)) | (((1 << e_bits) - 1) << m_bits)
    return (sign << (w - 1)) | (exp_field << m_bits) | man


def _zero(sign: int, fmt: str) -> int:
    return sign << (WIDTH[fmt] - 1)


def _inf(sign: int, fmt: str) -> int:
    e_bits, m_bits = FMT[fmt]
    return (sign << (WIDTH[fmt] - 1)) | (((1 << e_bits) - 1) << m_bits)


def float_add(d: int, s: int, fmt: str, ftz: bool = False) -> int:
    """dst + src in fmt; rules of docs/reductions.md."""
    if ftz:
        # FTZ map types: subnormal inputs and results become zero of the same sign
        if _is_subnormal(d, fmt):
            d &= 1 << (WIDTH[fmt] - 1)
        if _is_subnormal(s, fmt):
            s &= 1 << (WIDTH[fmt] - 1)
    a, b = _decode(d, fmt), _decode(s, fmt)
    if a.kind == "nan" or b.kind == "nan":
        if fmt == "f64":
            return s if b.kind == "nan" else d
        return CANON_NAN[fmt]
    if a.kind == "inf" or b.kind == "inf":
        if a.kind == "inf" and b.kind == "inf" and a.sign != b.sign:
            return F64_DEFAULT_NAN if fmt == "f64" else CANON_NAN[fmt]
        return _inf(a.sign if a.kind == "inf" else b.sign, fmt)
    total = a.value + b.value
    if total == 0:
        # exact zero: -0 only if both operands are -0 (IEEE, round-to-nearest)
        both_neg = a.kind == "zero" and b.kind == "zero" and a.sign and b.sign
        return _zero(1 if both_neg else 0, fmt)
    r = _round_rne(total, fmt)
    if ftz and _is_subnormal(r, fmt):
        r &= 1 << (WIDTH[fmt] - 1)
    return r


def _float_key(f: _F):
    """Total order for non-NaN values with -0 < +0."""
    if f.kind == "inf":
        return (Fraction(-1 if f.sign else 1) * 10 ** 400, 0)
    if f.kind == "zero":
        return (Fraction(0), -1 if f.sign else 0)
    return (f.value, 0)


def float_minmax(d: int, s: int, fmt: str, is_max: bool) -> int:
    a, b = _decode(d, fmt), _decode(s, fmt)
    if a.kind == "nan" and b.kind == "nan":
        return CANON_NAN[fmt]
    if a.kind == "nan":
        return s
    if b.kind == "nan":
        return d
    ka, kb = _float_key(a), _float_key(b)
    if is_max:
        return d if ka >= kb else s
    return d if ka <= kb else s


# ---------------------------------------------------------------- integers
INT_TYPES = {  # name -> (bits, signed)
    "b32": (32, False), "u32": (32, False), "s32": (32, True),
    "b64": (64, False), "u64": (64, False), "s64": (64, True),
}


def _signed(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) else x


def int_op(op: str, d: int, s: int, bits: int, signed: bool) -> int:
    mask = (1 << bits) - 1
    if op == "add":
        return (d + s) & mask
    if op in ("min", "max"):
        kd, ks = (_signed(d, bits), _signed(s, bits)) if signed else (d, s)
        if op == "min":
            return d if kd <= ks else s
        return d if kd >= ks else s
    if op == "inc":
        return 0 if d >= s else d + 1
    if op == "dec":
        return s if (d == 0 or d > s) else d - 1
    if op == "and":
        return d & s
    if op == "or":
        return d | s
    if op == "xor":
        return d ^ s
    raise ValueError(op)


# ---------------------------------------------------------------- element types
# element type -> (kind, width bits, extra)
def _elem_fn(op: str, typ: str):
    if typ in INT_TYPES:
        bits, signed = INT_TYPES[typ]
        return bits, lambda d, s: int_op(op, d, s, bits, signed)
    if typ in ("f16", "bf16", "f32", "f64", "f32.ftz"):
        fmt = "f32" if typ == "f32.ftz" else typ
        ftz = typ == "f32.ftz"
        if op == "add":
            return WIDTH[fmt], lambda d, s: float_add(d, s, fmt, ftz)
        if op in ("min", "max"):
            return WIDTH[fmt], lambda d, s: float_minmax(d, s, fmt, op == "max")
    raise ValueError(f"no reference for {op}.{typ}")


def _apply(op: str, typ: str, dst, src) -> np.ndarray:
    dst = np.asarray(dst)
    src = np.asarray(src)
    bits, fn = _elem_fn(op, typ)
    ut = {16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    if dst.dtype.itemsize * 8 != bits or src.dtype.itemsize * 8 != bits:
        raise ValueError(f"{typ} needs {bits}-bit elements")
    if dst.shape != src.shape:
        raise ValueError("dst and src shapes differ")
    du = dst.view(ut).ravel()
    su = src.view(ut).ravel()
    out = np.array([fn(int(a), int(b)) for a, b in zip(du, su)], dtype=ut)
    return out.reshape(dst.shape).view(dst.dtype)


# (redOp, .type) pairs of cp.reduce.async.bulk to .global (the PTX ISA table;
# the .shared::cluster table is a subset)
BULK_VALID = {
    "add": {"u32", "s32", "u64", "f32", "f64", "f16", "bf16"},
    "min": {"u32", "s32", "u64", "s64", "f16", "bf16"},
    "max": {"u32", "s32", "u64", "s64", "f16", "bf16"},
    "inc": {"u32"},
    "dec": {"u32"},
    "and": {"b32", "b64"},
    "or": {"b32", "b64"},
    "xor": {"b32", "b64"},
}


def reduce_ref(op: str, type: str, dst, src) -> np.ndarray:  # noqa: A002
    """Non-tensor cp.reduce.async.bulk: type is the PTX .type ("u32", "f16", ...).

    Raises ValueError for a pair outside the ISA table."""
    if type not in BULK_VALID.get(op, ()):
        raise ValueError(f"{op}.{type} is not a cp.reduce.async.bulk form")
    return _apply(op, type, dst, src)


# CUtensorMapDataType -> element arithmetic used by the tensor reduction
TENSOR_TYPES = {
    2: "u32", 3: "s32", 4: "u64", 5: "s64",
    6: "f16", 7: "f32", 8: "f64", 9: "bf16",
    10: "f32.ftz", 11: "f32", 12: "f32.ftz",
}
# bitwise ops on signed maps are plain bit operations
_BITWISE = {"s32": "b32", "u32": "b32", "u64": "b64", "s64": "b64"}

# (op, dtype value) pairs that execute on sm_90 (golden observation 11)
TENSOR_EXECUTES = set()
for _t in (2, 3, 4, 6, 7, 9):
    TENSOR_EXECUTES.add(("add", _t))
for _t in (8, 10, 11, 12):
    TENSOR_EXECUTES.add(("add", _t))
for _t in (2, 3, 4, 5, 6, 9):
    TENSOR_EXECUTES.add(("min", _t))
    TENSOR_EXECUTES.add(("max", _t))
TENSOR_EXECUTES.add(("inc", 2))
TENSOR_EXECUTES.add(("dec", 2))
for _t in (2, 3, 4):
    for _o in ("and", "or", "xor"):
        TENSOR_EXECUTES.add((_o, _t))


def reduce_tensor_ref(op: str, dtype_value: int, dst, src) -> np.ndarray:
    """cp.reduce.async.bulk.tensor element arithmetic for a map of this data type."""
    if (op, int(dtype_value)) not in TENSOR_EXECUTES:
        raise ValueError(f"{op} on data type {dtype_value} does not execute on sm_90")
    typ = TENSOR_TYPES[int(dtype_value)]
    if op in ("and", "or", "xor"):
        typ = _BITWISE[typ]
    return _apply(op, typ, dst, src)
