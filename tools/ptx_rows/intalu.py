"""Integer arithmetic and logic, selp and the integer setp (PTX ISA 9.7.1, 9.7.7, 9.7.8)."""
_T = "{ .u16, .u32, .u64, .s16, .s32, .s64 }"
_B = "{ .b16, .b32, .b64 }"
# the comparisons each integer type takes (ptxas 13.0: "unexpected modifier" otherwise): .b types
# equality only, signed types no unsigned orderings, unsigned types all
INT_COMPARES = [
    (".CmpOp = { .eq, .ne }", ".type = { .b16, .b32, .b64 }"),
    (".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge, .lo, .ls, .hi, .hs }", ".type = { .u16, .u32, .u64 }"),
    (".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge }", ".type = { .s16, .s32, .s64 }"),
]
ROWS = [
    ("add.type d, a, b;  .type = { .u16, .u32, .u64, .s16, .s32, .s64 }", "1.0", 20, "add"),
    ("add.sat.s32 d, a, b;", "1.0", 20, "add"),
    ("sub.type d, a, b;  .type = { .u16, .u32, .u64, .s16, .s32, .s64 }", "1.0", 20, "sub"),
    ("sub.sat.s32 d, a, b;", "1.0", 20, "sub"),
    (f"mul.mode.type d, a, b;  .mode = {{ .hi, .lo, .wide }}  .type = {_T}", "1.0", 20, "mul"),
    (f"mad.mode.type d, a, b, c;  .mode = {{ .hi, .lo, .wide }}  .type = {_T}", "1.0", 20, "mad"),
    ("mad.hi.sat.s32 d, a, b, c;", "1.0", 20, "mad"),
    (f"div.type d, a, b;  .type = {_T}", "1.0", 20, "div"),
    (f"rem.type d, a, b;  .type = {_T}", "1.0", 20, "rem"),
    (f"and.type d, a, b;  .type = {{ .pred, .b16, .b32, .b64 }}", "1.0", 20, "and"),
    (f"or.type d, a, b;  .type = {{ .pred, .b16, .b32, .b64 }}", "1.0", 20, "or"),
    (f"xor.type d, a, b;  .type = {{ .pred, .b16, .b32, .b64 }}", "1.0", 20, "xor"),
    (f"not.type d, a;  .type = {{ .pred, .b16, .b32, .b64 }}", "1.0", 20, "not"),
    (f"shl.type d, a, b;  .type = {_B}", "1.0", 20, "shl"),
    (f"shr.type d, a, b;  .type = {{ .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64 }}", "1.0", 20, "shr"),
    ("neg.type d, a;  .type = { .s16, .s32, .s64 }", "1.0", 20, "neg"),
    ("abs.type d, a;  .type = { .s16, .s32, .s64 }", "1.0", 20, "abs"),
    (f"min.type d, a, b;  .type = {_T}", "1.0", 20, "min"),
    (f"max.type d, a, b;  .type = {_T}", "1.0", 20, "max"),
    ("selp.type d, a, b, c;  .type = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }",
     "1.0", 20, "selp"),
    *[(f"setp.CmpOp.type p|q, a, b;  {cmp}  {types}", "1.0", 20, "setp") for cmp, types in INT_COMPARES],
]
