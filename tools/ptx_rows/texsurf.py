"""Texture and surface instructions (PTX ISA 9.7.10 and 9.7.11): tex, tld4, txq, istypep, suld,
sust, sured, suq. Their operands: `[tex, {coords}]` (unified mode) or `[tex, sampler, {coords}]`
(the explicit sampler), `[surf, {x, y}]`, `[tex]` for the queries; a texture, sampler or
surface is a .texref / .samplerref / .surfref variable or a .b64 register holding its handle.
No texture or surface unit is modelled: the forms validate, and Kernel() refuses them by name
(text/notyet.c). The sem field is empty (no PI_SEM operation runs them).
"""
_SGEOM = ".geom = { .1d, .2d, .3d, .a1d, .a2d }"
_CLAMP = ".clamp = { .trap, .clamp, .zero }"
_RGEOM = ".geom = { .1d, .2d, .3d }"
# the geometries by coordinate type: multi-sample ones take integer coordinates, cube maps floats;
# with an explicit sampler (in the unified mode) ptxas 13.0 takes no cube map
_GEOMS = [(".geom = { .1d, .2d, .3d, .a1d, .a2d }", ".ctype = { .s32, .f32 }"),
          (".geom = { .cube, .acube }", ".ctype = { .f32 }"), (".geom = { .2dms, .a2dms }", ".ctype = { .s32 }")]
_SGEOMS = [_GEOMS[0], _GEOMS[2]]
_DT = ".dtype = { .u32, .s32, .f16, .f32 }"
# "offset" and the gradients are vectors
_OPT = " {, offset} {, depth}"


def _tex(mid, ops, v, sm, geoms=_GEOMS):
    return [(f"tex{mid}.geom.v4.dtype.ctype d, {ops};  {g}  {_DT}  {c}", v, sm, "") for g, c in geoms]


ROWS = [
    # tex (9.7.10.3): implicit (unified) and explicit sampler; mipmap level / gradients right after
    # the name (ptxas: "Unknown modifier '.level'" elsewhere); f16x2
    *_tex("", "[a, c]" + _OPT, "1.0", 20),
    *_tex("", "[a, b, c]" + _OPT, "1.5", 20, _SGEOMS),
    *[(f"tex.geom.v2.f16x2.ctype d, {ops};  {g}  {c}", "4.2", 53, "") for g, c in _GEOMS
      for ops in ("[a, c]" + _OPT, "[a, b, c]" + _OPT) if "b" not in ops or (g, c) in _SGEOMS],
    # (with an explicit sampler ptxas 13.0 and 13.5 take .level's .cube; they die on its .acube)
    *[r for mid, rest in ((".base", ""), (".level", ", lod"), (".grad", ", dPdx, dPdy"))
      for ops, geoms in (("[a, c]", _GEOMS[:2]), ("[a, b, c]", [(".geom = { .1d, .2d, .a1d, .a2d }",
                                                                  ".ctype = { .s32, .f32 }")] +
                                                 ([(".geom = { .cube }", ".ctype = { .f32 }")]
                                                  if mid == ".level" else [])))
      for r in _tex(mid, ops + rest + _OPT, "3.1", 30, geoms)],
    # tld4 (9.7.10.4): a 2x2 footprint's one component
    ("tld4.comp.geom.v4.dtype.f32 d, [a, c] {, offset} {, depth};  .comp = { .r, .g, .b, .a }  "
     ".geom = { .2d, .a2d }  .dtype = { .u32, .s32, .f32 }", "2.2", 20, ""),
    ("tld4.comp.geom.v4.dtype.f32 d, [a, b, c] {, offset} {, depth};  .comp = { .r, .g, .b, .a }  "
     ".geom = { .2d, .a2d }  .dtype = { .u32, .s32, .f32 }", "2.2", 20, ""),
    # txq (9.7.10.5)
    ("txq.tquery.b32 d, [a];  .tquery = { .width, .height, .depth, .channel_data_type, .channel_order, "
     ".normalized_coords, .array_size, .num_mipmap_levels, .num_samples }", "1.5", 20, ""),
    ("txq.level.tlquery.b32 d, [a], lod;  .tlquery = { .width, .height, .depth }", "3.1", 30, ""),
    ("txq.squery.b32 d, [a];  .squery = { .force_unnormalized_coords, .filter_mode, .addr_mode_0, "
     ".addr_mode_1, .addr_mode_2 }", "1.5", 20, ""),
    # istypep (9.7.10.6)
    ("istypep.type p, a;  .type = { .texref, .samplerref, .surfref }", "4.0", 20, ""),
    # suld (9.7.11.1), sust (9.7.11.2), sured (9.7.11.3), suq (9.7.11.4)
    (f"suld.b.geom{{.cop}}{{.vec}}.dtype.clamp d, [a, b];  {_SGEOM}  .cop = {{ .ca, .cg, .cs, .cv }}  "
     f".vec = {{ .v2, .v4 }}  .dtype = {{ .b8, .b16, .b32, .b64 }}  {_CLAMP}", "1.5", 20, ""),
    (f"sust.b.geom{{.cop}}{{.vec}}.ctype.clamp [a, b], c;  {_SGEOM}  .cop = {{ .wb, .cg, .cs, .wt }}  "
     f".vec = {{ .v2, .v4 }}  .ctype = {{ .b8, .b16, .b32, .b64 }}  {_CLAMP}", "1.5", 20, ""),
    (f"sust.p.geom{{.vec}}.b32.clamp [a, b], c;  {_SGEOM}  .vec = {{ .v2, .v4 }}  {_CLAMP}", "1.5", 20, ""),
    # sured's operation / type pairs as ptxas 13.0 takes them (64-bit min/max and sured.p .b64 from 8.1)
    (f"sured.b.op.geom.ctype.clamp [a, b], c;  .op = {{ .add }}  {_RGEOM}  .ctype = {{ .u32, .s32, .u64 }}  {_CLAMP}",
     "1.5", 20, ""),
    (f"sured.b.op.geom.ctype.clamp [a, b], c;  .op = {{ .min, .max }}  {_RGEOM}  .ctype = {{ .u32, .s32 }}  {_CLAMP}",
     "1.5", 20, ""),
    (f"sured.b.op.geom.ctype.clamp [a, b], c;  .op = {{ .min, .max }}  {_RGEOM}  .ctype = {{ .u64, .s64 }}  {_CLAMP}",
     "8.1", 20, ""),
    # .and / .or on .b64: "Unexpected instruction types specified for 'sured.b'" at every version and target
    (f"sured.b.op.geom.ctype.clamp [a, b], c;  .op = {{ .and, .or }}  {_RGEOM}  .ctype = {{ .b32 }}  {_CLAMP}",
     "1.5", 20, ""),
    (f"sured.p.op.geom.ctype.clamp [a, b], c;  .op = {{ .min, .max }}  {_RGEOM}  .ctype = {{ .b32, .b64 }}  "
     f"{_CLAMP}", "1.5", 20, "", [(".b64", 81, 20)]),
    (f"sured.p.op.geom.ctype.clamp [a, b], c;  .op = {{ .add, .and, .or }}  {_RGEOM}  .ctype = {{ .b32 }}  {_CLAMP}",
     "1.5", 20, ""),
    ("suq.query.b32 d, [a];  .query = { .width, .height, .depth, .channel_data_type, .channel_order, "
     ".array_size, .memory_layout }", "1.5", 20, ""),
]
