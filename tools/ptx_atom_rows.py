"""The rows of atom and red (PTX ISA 9.7.13.5, 9.7.13.6) for tools/ptx_tables.py, in its template
language: (syntax, PTX version, sm, [(qualifier, PTX version x10, sm)]).

The type sets are those ptxas 13.0 assembles (probed form by form on sm_90a), narrower than the
Syntax block's `.type` for each operation: add takes u32, s32, u64, f32, f64 (no s64, no b32), and
f16, bf16, f16x2, bf16x2 only with .noftz; inc / dec u32 only; and / or / xor b32, b64; min / max
u32, s32, u64, s64 (a float min / max is a vector form of f16 / bf16 only); exch b32, b64, b128;
cas b16, b32, b64, b128. The vector forms (.v2 / .v4 of f32 add and of f16x2 / bf16x2, .v2 / .v4 /
.v8 of f16 / bf16 add, min, max) are .global (or generic) only, sm_90. red has no .acquire /
.acq_rel and no exch / cas. Qualifiers come in any order (Triton writes
atom.global.gpu.acq_rel.add.f32); the checker matches them so.
"""

_SEM = ".sem = { .relaxed, .acquire, .release, .acq_rel }"
_RSEM = ".sem = { .relaxed, .release }"
_SCOPE = ".scope = { .cta, .cluster, .gpu, .sys }"
_SPACE = ".space = { .global, .shared, .shared::cta, .shared::cluster }"
_HINT = ".hint = { .L2::cache_hint }"
# what a qualifier adds to its form's needs (the ISA notes of atom / red)
_Q = [(".relaxed", 60, 70), (".acquire", 60, 70), (".release", 60, 70), (".acq_rel", 60, 70),
      (".cta", 60, 70), (".gpu", 60, 70), (".sys", 60, 70), (".cluster", 78, 90),
      (".shared::cta", 78, 30), (".shared::cluster", 78, 90), (".L2::cache_hint", 74, 80)]


def _rows(kind):
    atom = kind == "atom"
    sem = _SEM if atom else _RSEM
    d = "d, " if atom else ""
    head = kind + "{.sem}{.scope}{.space}"
    vhead = kind + "{.sem}{.scope}{.global}"
    defs = f"  {sem}  {_SCOPE}  {_SPACE}  {_HINT}"
    vdefs = f"  {sem}  {_SCOPE}  {_HINT}"
    q = _Q
    out = [
        (f"{head}.op{{.hint}}.type {d}[a], b{{, cache-policy}};  .op = {{ .and, .or, .xor }}  "
         f".type = {{ .b32, .b64 }}{defs}", "1.2", 20, q),
        (f"{head}.add{{.hint}}.type {d}[a], b{{, cache-policy}};  .type = {{ .u32, .s32, .u64, .f32, .f64 }}{defs}",
         "1.2", 20, q + [(".u64", 12, 20), (".f64", 50, 60)]),
        (f"{head}.op{{.hint}}.type {d}[a], b{{, cache-policy}};  .op = {{ .inc, .dec }}  .type = {{ .u32 }}{defs}",
         "1.2", 20, q),
        (f"{head}.op{{.hint}}.type {d}[a], b{{, cache-policy}};  .op = {{ .min, .max }}  "
         f".type = {{ .u32, .s32, .u64, .s64 }}{defs}", "1.2", 20, q + [(".u64", 60, 35), (".s64", 60, 35)]),
        (f"{head}.add.noftz{{.hint}}.type {d}[a], b{{, cache-policy}};  .type = {{ .f16, .f16x2, .bf16, .bf16x2 }}{defs}",
         "6.3", 70, q + [(".bf16", 78, 90), (".bf16x2", 78, 90)]),
        (f"{vhead}.add{{.hint}}.vec.f32 {d}[a], b{{, cache-policy}};  .vec = {{ .v2, .v4 }}{vdefs}", "8.1", 90, q),
        (f"{vhead}.op.noftz{{.hint}}.vec.type {d}[a], b{{, cache-policy}};  .op = {{ .add, .min, .max }}  "
         f".vec = {{ .v2, .v4, .v8 }}  .type = {{ .f16, .bf16 }}{vdefs}", "8.1", 90, q),
        (f"{vhead}.op.noftz{{.hint}}.vec.type {d}[a], b{{, cache-policy}};  .op = {{ .add, .min, .max }}  "
         f".vec = {{ .v2, .v4 }}  .type = {{ .f16x2, .bf16x2 }}{vdefs}", "8.1", 90, q),
    ]
    if atom:
        out += [
            (f"{head}.exch{{.hint}}.type d, [a], b{{, cache-policy}};  .type = {{ .b32, .b64 }}{defs}", "1.2", 20, q),
            (f"{head}.exch{{.hint}}.b128 d, [a], b{{, cache-policy}};{defs}", "8.3", 90, q),
            (f"{head}.cas.type d, [a], b, c;  .type = {{ .b16, .b32, .b64 }}{defs}", "1.2", 20,
             q + [(".b16", 63, 70)]),
            (f"{head}.cas.b128 d, [a], b, c;{defs}", "8.3", 90, q),
        ]
    return out


ROWS = _rows("atom") + _rows("red")
