"""Integer and bit operations the semantics library runs (PTX ISA 9.7.1, 9.7.2, 9.7.8.7)."""
from .intalu import INT_COMPARES
_IT = ".type = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64 }"
ROWS = [
    ("prmt.b32{.mode} d, a, b, c;  .mode = { .f4e, .b4e, .rc8, .ecl, .ecr, .rc16 }", "2.0", 20, "prmt"),
    ("shf.l.mode.b32 d, a, b, c;  .mode = { .clamp, .wrap }", "3.1", 32, "shf"),
    ("shf.r.mode.b32 d, a, b, c;  .mode = { .clamp, .wrap }", "3.1", 32, "shf"),
    ("lop3.b32 d, a, b, c, immLut;", "4.3", 50, "lop3"),
    ("bfind{.shiftamt}.type d, a;  .type = { .u32, .u64, .s32, .s64 }", "2.0", 20, "bfind"),
    ("dp4a.atype.btype d, a, b, c;  .atype = { .u32, .s32 }  .btype = { .u32, .s32 }", "5.0", 61, "dp4a"),
    ("dp2a.mode.atype.btype d, a, b, c;  .mode = { .lo, .hi }  .atype = { .u32, .s32 }  "
     ".btype = { .u32, .s32 }", "5.0", 61, "dp2a"),
    ("sad.type d, a, b, c;  .type = { .u16, .u32, .u64, .s16, .s32, .s64 }", "1.0", 20, "sad"),
    ("mul24.mode.type d, a, b;  .mode = { .hi, .lo }  .type = { .u32, .s32 }", "1.0", 20, "mul24"),
    ("mad24.mode.type d, a, b, c;  .mode = { .hi, .lo }  .type = { .u32, .s32 }", "1.0", 20, "mad24"),
    ("cnot.type d, a;  .type = { .b16, .b32, .b64 }", "1.0", 20, "cnot"),
    ("popc.type d, a;  .type = { .b32, .b64 }", "2.0", 20, "popc"),
    ("clz.type d, a;  .type = { .b32, .b64 }", "2.0", 20, "clz"),
    ("brev.type d, a;  .type = { .b32, .b64 }", "2.0", 20, "brev"),
    *[(f"setp.CmpOp.BoolOp.type p|q, a, b, c;  {cmp}  .BoolOp = {{ .and, .or, .xor }}  {t}", "1.0", 20, "setp")
      for cmp, t in INT_COMPARES],
    *[(f"set.CmpOp.dtype.stype d, a, b;  {cmp}  .dtype = {{ .u32, .s32, .f32 }}  {t.replace('.type', '.stype')}",
       "1.0", 20, "set") for cmp, t in INT_COMPARES],
    *[(f"set.CmpOp.BoolOp.dtype.stype d, a, b, c;  {cmp}  .BoolOp = {{ .and, .or, .xor }}  "
       f".dtype = {{ .u32, .s32, .f32 }}  {t.replace('.type', '.stype')}", "1.0", 20, "set") for cmp, t in INT_COMPARES],
]
ROWS += [
    ("bfe.type d, a, b, c;  .type = { .u32, .u64, .s32, .s64 }", "2.0", 20, "bfe"),
    ("bfi.type d, a, b, c, e;  .type = { .b32, .b64 }", "2.0", 20, "bfi"),
    ("bmsk.mode.b32 d, a, b;  .mode = { .clamp, .wrap }", "7.6", 70, "bmsk"),
    ("szext.mode.type d, a, b;  .mode = { .clamp, .wrap }  .type = { .u32, .s32 }", "7.6", 70, "szext"),
    ("slct.dtype.s32 d, a, b, c;  .dtype = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, .f64 }",
     "1.0", 20, "slct"),
    ("slct{.ftz}.dtype.f32 d, a, b, c;  .dtype = { .b16, .b32, .b64, .u16, .u32, .u64, .s16, .s32, .s64, .f32, "
     ".f64 }", "1.0", 20, "slct"),
]
