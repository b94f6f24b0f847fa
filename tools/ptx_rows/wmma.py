"""wmma (PTX ISA 9.7.14.4): wmma.load.{a,b,c}, wmma.store.d and wmma.mma for every shape and
type of the Syntax blocks, one row per group of the ISA notes (f16 from PTX 6.0 / sm_70, the
.m8n32k16 / .m32n8k16 shapes from 6.1, integer from 6.3 / sm_72, sub-byte and single bit from
6.3 / sm_75, bf16, tf32 and f64 from 7.0 / sm_80). The fragments are register vectors. The
model does not run them (mma.sync it does): text/notyet.c names them.
"""
_SS = ".ss = { .global, .shared, .shared::cta }"
_CTA = [(".shared::cta", 78, 70)]      # ptxas 13.0: "Feature '::cta' requires PTX ISA .version 7.8"
_L = ".layout = { .row, .col }"
_F16S = ".shape = { .m16n16k16, .m8n32k16, .m32n8k16 }"
_AB = "r, [p] {, stride};"
_MMA = "vd, va, vb, vc;"   # fragments: register vectors
_LAY = ".alayout = { .row, .col }  .blayout = { .row, .col }"


def _loads(shape, atype, ctype, v, sm, sub=False):
    la = ".row" if sub else ".layout"
    lb = ".col" if sub else ".layout"
    rows = []
    if atype:
        rows += [(f"wmma.load.a.sync.aligned{la}.shape{{.ss}}.atype {_AB}  {_L}  {shape}  {_SS}  .atype = {{ {atype} }}",
                  v, sm, "", _CTA),
                 (f"wmma.load.b.sync.aligned{lb}.shape{{.ss}}.btype {_AB}  {_L}  {shape}  {_SS}  .btype = {{ {atype} }}",
                  v, sm, "", _CTA)]
    if not ctype:          # the accumulator types of this shape are another group's
        return rows
    rows += [(f"wmma.load.c.sync.aligned.layout.shape{{.ss}}.ctype {_AB}  {_L}  {shape}  {_SS}  .ctype = {{ {ctype} }}",
              v, sm, "", _CTA),
             (f"wmma.store.d.sync.aligned.layout.shape{{.ss}}.type [p], r {{, stride}};  {_L}  {shape}  {_SS}  "
              f".type = {{ {ctype} }}", v, sm, "", _CTA)]
    return rows


ROWS = [
    *_loads(".shape = { .m16n16k16 }", ".f16", ".f16, .f32", "6.0", 70),
    *_loads(".shape = { .m8n32k16, .m32n8k16 }", ".f16", ".f16, .f32", "6.1", 70),
    *_loads(_F16S, ".s8, .u8", ".s32", "6.3", 72),
    *_loads(_F16S, ".bf16", "", "7.0", 80),
    *_loads(".shape = { .m16n16k8 }", ".tf32", ".f32", "7.0", 80),
    *_loads(".shape = { .m8n8k4 }", ".f64", ".f64", "7.0", 80),
    *_loads(".shape = { .m8n8k32 }", ".s4, .u4", ".s32", "6.3", 75, sub=True),
    *_loads(".shape = { .m8n8k128 }", ".b1", ".s32", "6.3", 75, sub=True),
    # wmma.mma
    (f"wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype {_MMA}  {_LAY}  .shape = {{ .m16n16k16 }}  "
     ".dtype = { .f16, .f32 }  .ctype = { .f16, .f32 }", "6.0", 70, ""),
    (f"wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype {_MMA}  {_LAY}  .shape = {{ .m8n32k16, .m32n8k16 }}  "
     ".dtype = { .f16, .f32 }  .ctype = { .f16, .f32 }", "6.1", 70, ""),
    (f"wmma.mma.sync.aligned.alayout.blayout.shape.s32.atype.btype.s32{{.satfinite}} {_MMA}  {_LAY}  {_F16S}  "
     ".atype = { .s8, .u8 }  .btype = { .s8, .u8 }", "6.3", 72, ""),
    (f"wmma.mma.sync.aligned.alayout.blayout.shape.f32.bf16.bf16.f32 {_MMA}  {_LAY}  {_F16S}", "7.0", 80, ""),
    (f"wmma.mma.sync.aligned.alayout.blayout.m16n16k8.f32.tf32.tf32.f32 {_MMA}  {_LAY}", "7.0", 80, ""),
    (f"wmma.mma.sync.aligned.alayout.blayout.m8n8k4{{.rnd}}.f64.f64.f64.f64 {_MMA}  {_LAY}  "
     ".rnd = { .rn, .rz, .rm, .rp }", "7.0", 80, ""),
    (f"wmma.mma.sync.aligned.row.col.m8n8k32.s32.atype.btype.s32{{.satfinite}} {_MMA}  "
     ".atype = { .s4, .u4 }  .btype = { .s4, .u4 }", "6.3", 75, ""),
    (f"wmma.mma.op.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {_MMA}  .op = {{ .xor, .and }}", "6.3", 75, "",
     [(".and", 71, 80)]),
]
