"""IEEE arithmetic, compares and tests of f64 / f32 / f16 / bf16 (PTX ISA 9.7.3, 9.7.4, 9.7.5)."""
_RND = ".rnd = { .rn, .rz, .rm, .rp }"
_H = ".type = { .f16, .f16x2 }"
_B = ".type = { .bf16, .bf16x2 }"

ROWS = []
for op in ("add", "sub", "mul"):
    ROWS += [
        (f"{op}{{.rnd}}{{.ftz}}{{.sat}}.f32 d, a, b;  {_RND}", "1.0", 20, op),
        (f"{op}{{.rnd}}.f64 d, a, b;  {_RND}", "1.0", 20, op),
        (f"{op}{{.rnd}}{{.ftz}}{{.sat}}.type d, a, b;  .rnd = {{ .rn }}  {_H}", "4.2", 53, op),
        (f"{op}{{.rnd}}.type d, a, b;  .rnd = {{ .rn }}  {_B}", "7.8", 90, op),
    ]
ROWS += [
    (f"fma.rnd{{.ftz}}{{.sat}}.f32 d, a, b, c;  {_RND}", "2.0", 20, "fma"),
    (f"fma.rnd.f64 d, a, b, c;  {_RND}", "1.4", 20, "fma"),
    (f"mad.rnd{{.ftz}}{{.sat}}.f32 d, a, b, c;  {_RND}", "2.0", 20, "mad"),
    (f"mad.rnd.f64 d, a, b, c;  {_RND}", "1.4", 20, "mad"),
    (f"fma.rnd{{.ftz}}{{.sat}}.type d, a, b, c;  .rnd = {{ .rn }}  {_H}", "4.2", 53, "fma"),
    (f"fma.rnd{{.ftz}}.relu.type d, a, b, c;  .rnd = {{ .rn }}  {_H}", "7.0", 80, "fma"),
    (f"fma.rnd{{.relu}}.type d, a, b, c;  .rnd = {{ .rn }}  {_B}", "7.0", 80, "fma"),
    (f"div.rnd{{.ftz}}.f32 d, a, b;  {_RND}", "2.0", 20, "div"),
    (f"div.rnd.f64 d, a, b;  {_RND}", "1.4", 20, "div"),
    ("div.approx{.ftz}.f32 d, a, b;", "1.4", 20, "div"),
    ("div.full{.ftz}.f32 d, a, b;", "1.4", 20, "div"),
    (f"rcp.rnd{{.ftz}}.f32 d, a;  {_RND}", "2.0", 20, "rcp"),
    (f"rcp.rnd.f64 d, a;  {_RND}", "1.4", 20, "rcp"),
    ("rcp.approx{.ftz}.f32 d, a;", "1.0", 20, "rcp"),
    ("rcp.approx.ftz.f64 d, a;", "2.1", 20, "rcp"),
    (f"sqrt.rnd{{.ftz}}.f32 d, a;  {_RND}", "2.0", 20, "sqrt"),
    (f"sqrt.rnd.f64 d, a;  {_RND}", "1.4", 20, "sqrt"),
    ("sqrt.approx{.ftz}.f32 d, a;", "1.0", 20, "sqrt"),
    ("rsqrt.approx{.ftz}.f32 d, a;", "1.0", 20, "rsqrt"),
    ("rsqrt.approx.f64 d, a;", "1.0", 20, "rsqrt"),
    ("rsqrt.approx.ftz.f64 d, a;", "4.0", 20, "rsqrt"),
    ("copysign.type d, a, b;  .type = { .f32, .f64 }", "2.0", 20, "copysign"),
    ("testp.op.type p, a;  .op = { .finite, .infinite, .number, .notanumber, .normal, .subnormal }  "
     ".type = { .f32, .f64 }", "2.0", 20, "testp"),
]
for op in ("min", "max"):
    ROWS += [
        (f"{op}{{.ftz}}{{.NaN}}{{.xorsign.abs}}.f32 d, a, b;", "1.0", 20, op),
        (f"{op}.f64 d, a, b;", "1.0", 20, op),
        (f"{op}{{.ftz}}{{.NaN}}{{.xorsign.abs}}.type d, a, b;  {_H}", "7.0", 80, op),
        (f"{op}{{.NaN}}{{.xorsign.abs}}.type d, a, b;  {_B}", "7.0", 80, op),
    ]
for op in ("neg", "abs"):
    ROWS += [
        (f"{op}{{.ftz}}.f32 d, a;", "1.0", 20, op),
        (f"{op}.f64 d, a;", "1.0", 20, op),
        (f"{op}{{.ftz}}.type d, a;  {_H}", "6.0", 53, op),
        (f"{op}.type d, a;  {_B}", "7.0", 80, op),
    ]
_CMPF = (".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .equ, .neu, .ltu, .leu, .gtu, .geu, .num, .nan }")
ROWS += [
    # .ftz on f32 compares only (ptxas 13.0 refuses setp.lt.ftz.f64)
    (f"setp.CmpOp{{.ftz}}.f32 p|q, a, b;  {_CMPF}", "1.0", 20, "setp"),
    (f"setp.CmpOp.f64 p|q, a, b;  {_CMPF}", "1.0", 20, "setp"),
    (f"setp.CmpOp.BoolOp{{.ftz}}.f32 p|q, a, b, c;  {_CMPF}  .BoolOp = {{ .and, .or, .xor }}", "1.0", 20, "setp"),
    (f"setp.CmpOp.BoolOp.f64 p|q, a, b, c;  {_CMPF}  .BoolOp = {{ .and, .or, .xor }}", "1.0", 20, "setp"),
    (f"set.CmpOp{{.ftz}}.dtype.f32 d, a, b;  {_CMPF}  .dtype = {{ .u32, .s32, .f32 }}", "1.0", 20, "set"),
    (f"set.CmpOp.dtype.f64 d, a, b;  {_CMPF}  .dtype = {{ .u32, .s32, .f32 }}", "1.0", 20, "set"),
    (f"set.CmpOp.BoolOp{{.ftz}}.dtype.f32 d, a, b, c;  {_CMPF}  .BoolOp = {{ .and, .or, .xor }}  "
     ".dtype = { .u32, .s32, .f32 }", "1.0", 20, "set"),
    (f"set.CmpOp.BoolOp.dtype.f64 d, a, b, c;  {_CMPF}  .BoolOp = {{ .and, .or, .xor }}  "
     ".dtype = { .u32, .s32, .f32 }", "1.0", 20, "set"),
]

# The half precision comparisons (PTX ISA 9.7.4.x, set / setp). What ptxas 13.0 and 13.5 assemble:
# .ftz with an f16 or f16x2 source (and set.f16.f32); none with a bf16 one; setp of a scalar writes
# p alone ("Predicate output not allowed"), of an x2 p or p|q; set's .f16 / .bf16 destination
# takes any source type but set.f16.bf16; .dtype.f16 (u16 s16 u32 s32) and .u32/.s32 of an x2 are
# PTX 6.5's, the .f16 forms before them 4.2's; every bf16 form is PTX 7.8's, sm_90's.
_BOOL = ".BoolOp = { .and, .or, .xor }"
from .intalu import INT_COMPARES  # noqa: E402


def _with_bool(syntax, v, sm):
    """A form and its BoolOp twin (one more source, c)."""
    head, rest = syntax.split(";", 1)
    twin = head.replace("CmpOp", "CmpOp.BoolOp", 1) + ", c;" + rest + f"  {_BOOL}"
    op = syntax.split(".", 1)[0]
    return [(syntax, v, sm, op), (twin, v, sm, op)]


for _ftz, _v, _sm, _h in (("{.ftz}", "4.2", 53, "f16"), ("", "7.8", 90, "bf16")):
    _v65 = "6.5" if _h == "f16" else _v
    ROWS += _with_bool(f"setp.CmpOp{_ftz}.{_h} p, a, b;  {_CMPF}", _v, _sm)
    ROWS += _with_bool(f"setp.CmpOp{_ftz}.{_h}x2 p|q, a, b;  {_CMPF}", _v, _sm)
    # a .f16 / .bf16 destination: 1.0 or 0.0
    _fs = ".stype = { .f16, .f32 }" if _h == "f16" else ".stype = { .bf16, .f16, .f32 }"
    ROWS += _with_bool(f"set.CmpOp{_ftz}.{_h}.stype d, a, b;  {_CMPF}  {_fs}", _v, _sm)
    ROWS += _with_bool(f"set.CmpOp.{_h}.f64 d, a, b;  {_CMPF}", _v, _sm)
    for _cmp, _t in INT_COMPARES:
        ROWS += _with_bool(f"set.CmpOp.{_h}.stype d, a, b;  {_cmp}  {_t.replace('.type', '.stype')}", _v, _sm)
    # an integer destination of a scalar source; of an x2 source, .u32 / .s32 or the x2 type
    ROWS += _with_bool(f"set.CmpOp{_ftz}.dtype.{_h} d, a, b;  {_CMPF}  .dtype = {{ .u16, .s16, .u32, .s32 }}",
                       _v65, _sm)
    ROWS += _with_bool(f"set.CmpOp{_ftz}.dtype.{_h}x2 d, a, b;  {_CMPF}  .dtype = {{ .{_h}x2 }}", _v, _sm)
    ROWS += _with_bool(f"set.CmpOp{_ftz}.dtype.{_h}x2 d, a, b;  {_CMPF}  .dtype = {{ .u32, .s32 }}", _v65, _sm)
