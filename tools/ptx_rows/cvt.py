"""cvt and cvt.pack (PTX ISA 9.7.9.21, 9.7.9.22): every type pair with the qualifiers ptxas takes.

The scalar rows follow what ptxas 13.0 assembles for sm_90a (golden/isa/cvt_forms.json holds the
852 forms): a rounding is required where a value can lose precision (.irnd float to integer or
float to the same float type's integers, .frnd narrowing or integer to float), .ftz only where
an f32 is involved, .sat not with bf16, the .bf16 pairs other than from .f32 from sm_90.
"""
_I = "{ .u8, .u16, .u32, .u64, .s8, .s16, .s32, .s64 }"
_IRND = ".irnd = { .rni, .rzi, .rmi, .rpi }"
_FRND = ".frnd = { .rn, .rz, .rm, .rp }"
_FRND2 = ".frnd2 = { .rn, .rz }"
_I16UP = "{ .u16, .u32, .u64, .s16, .s32, .s64 }"
_INTS = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64"]
# ptxas 13.0 and 13.5: .rs "not supported on .target 'sm_100f'" (nor sm_100, sm_110a, sm_120a ...);
# the fp4 / fp6 / ue8m0 pairs on the architecture-specific and family targets of sm_100 up
# ("Instruction 'cvt with .e2m1x2' not supported on .target 'sm_100'", nor on sm_120)
_RS = "sm_100a sm_103a"
_NARROW = "sm_100f+ sm_110f+ sm_120f+"


def _can_overflow(d):
    """The integer types whose values do not all fit d (a cvt.sat.d.a that can saturate)."""
    bits = lambda t: int(t[1:])
    out = []
    for a in _INTS:
        fits = (a[0] == d[0] and bits(d) >= bits(a)) or (d[0] == "s" and a[0] == "u" and bits(d) > bits(a))
        if not fits:
            out.append(a)
    return out


ROWS = [
    # integer <-> integer; .sat only where the source can overflow the destination (ptxas 13.0 refuses
    # cvt.sat.s32.s16)
    (f"cvt.dtype.atype d, a;  .dtype = {_I}  .atype = {_I}", "1.0", 20, "cvt"),
    *[(f"cvt.sat.{d}.atype d, a;  .atype = {{ {', '.join('.' + a for a in _can_overflow(d))} }}", "1.0", 20, "cvt")
      for d in _INTS],
    # float -> integer
    (f"cvt.irnd{{.ftz}}{{.sat}}.dtype.f32 d, a;  {_IRND}  .dtype = {_I}", "1.0", 20, "cvt"),
    (f"cvt.irnd{{.sat}}.dtype.atype d, a;  {_IRND}  .dtype = {_I}  .atype = {{ .f16, .f64 }}", "1.0", 20, "cvt"),
    (f"cvt.irnd.dtype.bf16 d, a;  {_IRND}  .dtype = {_I16UP}", "7.8", 90, "cvt"),       # (no 8-bit integers)
    # integer -> float
    (f"cvt.frnd{{.ftz}}{{.sat}}.f32.atype d, a;  {_FRND}  .atype = {_I}", "1.0", 20, "cvt"),
    (f"cvt.frnd{{.sat}}.dtype.atype d, a;  {_FRND}  .dtype = {{ .f16, .f64 }}  .atype = {_I}", "1.0", 20, "cvt"),
    (f"cvt.frnd.bf16.atype d, a;  {_FRND}  .atype = {_I16UP}", "7.8", 90, "cvt"),
    # float -> the same type, rounded to an integer value (or not)
    (f"cvt{{.irnd}}{{.ftz}}{{.sat}}.f32.f32 d, a;  {_IRND}", "1.0", 20, "cvt"),
    (f"cvt{{.irnd}}{{.sat}}.f16.f16 d, a;  {_IRND}", "1.0", 20, "cvt"),
    (f"cvt{{.irnd}}{{.sat}}.f64.f64 d, a;  {_IRND}", "1.0", 20, "cvt"),
    (f"cvt{{.irnd}}.bf16.bf16 d, a;  {_IRND}", "7.8", 90, "cvt"),
    # float -> a narrower float
    (f"cvt.frnd{{.ftz}}{{.sat}}.f16.f32 d, a;  {_FRND}", "1.0", 20, "cvt"),
    (f"cvt.frnd{{.ftz}}{{.sat}}.f32.f64 d, a;  {_FRND}", "1.0", 20, "cvt"),
    (f"cvt.frnd{{.sat}}.f16.f64 d, a;  {_FRND}", "1.0", 20, "cvt"),
    (f"cvt.frnd{{.ftz}}.bf16.f32 d, a;  {_FRND}", "7.8", 90, "cvt"),
    (f"cvt.frnd.bf16.f64 d, a;  {_FRND}", "7.8", 90, "cvt"),
    (f"cvt{{.frnd}}.bf16.f16 d, a;  {_FRND}", "7.8", 90, "cvt"),
    (f"cvt{{.frnd}}.f16.bf16 d, a;  {_FRND}", "7.8", 90, "cvt"),
    # float -> a wider float
    ("cvt{.ftz}{.sat}.f32.f16 d, a;", "1.0", 20, "cvt"),
    ("cvt{.ftz}{.sat}.f64.f32 d, a;", "1.0", 20, "cvt"),
    ("cvt{.sat}.f64.f16 d, a;", "1.0", 20, "cvt"),
    (f"cvt{{.frnd}}{{.ftz}}.f32.bf16 d, a;  {_FRND}", "7.8", 90, "cvt"),
    (f"cvt{{.frnd}}.f64.bf16 d, a;  {_FRND}", "7.8", 90, "cvt"),
    # the 16-bit results of an f32 with .relu / .satfinite, one or a pair
    (f"cvt.frnd2{{.relu}}{{.satfinite}}.dtype.f32 d, a;  {_FRND2}  .dtype = {{ .f16, .bf16 }}", "7.0", 80, "cvt",
     [(".satfinite", 81, 80)]),
    (f"cvt.frnd2{{.relu}}{{.satfinite}}.dtype.f32 d, a, b;  {_FRND2}  .dtype = {{ .f16x2, .bf16x2 }}", "7.0", 80,
     "cvt", [(".satfinite", 81, 80)]),
    ("cvt.rs{.relu}{.satfinite}.dtype.f32 d, a, b, rbits;  .dtype = { .f16x2, .bf16x2 }", "8.7", 100, "cvt", [], _RS),
    # tf32
    ("cvt.rna{.satfinite}.tf32.f32 d, a;", "7.0", 80, "cvt", [(".satfinite", 81, 80)]),
    (f"cvt.frnd2{{.satfinite}}{{.relu}}.tf32.f32 d, a;  {_FRND2}", "7.8", 90, "cvt", [(".satfinite", 86, 100)]),
    # fp8 pairs
    ("cvt.rn.satfinite{.relu}.f8x2type.f32 d, a, b;  .f8x2type = { .e4m3x2, .e5m2x2 }", "7.8", 89, "cvt"),
    ("cvt.rn.satfinite{.relu}.f8x2type.f16x2 d, a;  .f8x2type = { .e4m3x2, .e5m2x2 }", "7.8", 89, "cvt"),
    ("cvt.rn{.relu}.f16x2.f8x2type d, a;  .f8x2type = { .e4m3x2, .e5m2x2 }", "7.8", 89, "cvt"),
    # the sm_100 narrow formats
    ("cvt.rs{.relu}.satfinite.f8x4type.f32 d, r, rbits;  .f8x4type = { .e4m3x4, .e5m2x4 }", "8.7", 100, "cvt", [], _RS),
    ("cvt.rn.satfinite{.relu}.f4x2type.f32 d, a, b;  .f4x2type = { .e2m1x2 }", "8.6", 100, "cvt", [], _NARROW),
    ("cvt.rn{.relu}.f16x2.f4x2type d, a;  .f4x2type = { .e2m1x2 }", "8.6", 100, "cvt", [], _NARROW),
    ("cvt.rs{.relu}.satfinite.f4x4type.f32 d, r, rbits;  .f4x4type = { .e2m1x4 }", "8.7", 100, "cvt", [], _RS),
    ("cvt.rn.satfinite{.relu}.f6x2type.f32 d, a, b;  .f6x2type = { .e2m3x2, .e3m2x2 }", "8.6", 100, "cvt", [], _NARROW),
    ("cvt.rn{.relu}.f16x2.f6x2type d, a;  .f6x2type = { .e2m3x2, .e3m2x2 }", "8.6", 100, "cvt", [], _NARROW),
    ("cvt.rs{.relu}.satfinite.f6x4type.f32 d, r, rbits;  .f6x4type = { .e2m3x4, .e3m2x4 }", "8.7", 100, "cvt", [], _RS),
    ("cvt.frnd3{.satfinite}.ue8m0x2.f32 d, a, b;  .frnd3 = { .rz, .rp }", "8.6", 100, "cvt", [], _NARROW),
    ("cvt.frnd3{.satfinite}.ue8m0x2.bf16x2 d, a;  .frnd3 = { .rz, .rp }", "8.6", 100, "cvt", [], _NARROW),
    ("cvt.rn.bf16x2.ue8m0x2 d, a;", "8.6", 100, "cvt", [], _NARROW),
    # cvt.pack
    ("cvt.pack.sat.convertType.s32 d, a, b;  .convertType = { .u16, .s16 }", "6.5", 72, "cvt.pack"),
    ("cvt.pack.sat.convertType.s32.b32 d, a, b, c;  .convertType = { .u2, .s2, .u4, .s4, .u8, .s8 }", "6.5", 72,
     "cvt.pack"),
]
