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
