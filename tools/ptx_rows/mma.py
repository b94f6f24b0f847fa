"""mma.sync (PTX ISA 9.7.14.5.14): every shape and type of the Syntax block, one row per shape
where the shapes of one template came in different PTX versions or targets (ISA notes). The
operation is a warp collective: csrc/core/ptx/exec/lower_mma.c lowers it, mma_exec.c gathers the
fragments of all 32 lanes and sem/mma.c computes each element (no PI_SEM row: the sem field is
empty). ptxas 13.0's verdicts on every combination of shape, types, layouts, .satfinite and bit
operation for sm_80 / sm_89 / sm_90a agree with these rows (tests/ptx/test_ptx_mma.py).
"""
_FL = ".ctype = { .f16, .f32 }  .dtype = { .f16, .f32 }"
_I8 = ".atype = { .u8, .s8 }  .btype = { .u8, .s8 }"
_I4 = ".atype = { .u4, .s4 }  .btype = { .u4, .s4 }"
_F8 = ".f8type = { .e4m3, .e5m2 }"
_F8F6F4 = ".f8f6f4type = { .e4m3, .e5m2, .e3m2, .e2m3, .e2m1 }"
_D = "vd, va, vb, vc;"   # fragments: register vectors

ROWS = [
    # half precision
    (f"mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype {_D}  .alayout = {{ .row, .col }}  "
     f".blayout = {{ .row, .col }}  {_FL}", "6.4", 70, ""),
    (f"mma.sync.aligned.m16n8k8.row.col.dtype.f16.f16.ctype {_D}  {_FL}", "6.5", 75, ""),
    (f"mma.sync.aligned.m16n8k16.row.col.dtype.f16.f16.ctype {_D}  {_FL}", "7.0", 80, ""),
    # alternate floating point
    (f"mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {_D}", "7.0", 80, ""),
    (f"mma.sync.aligned.m16n8k8.row.col.f32.atype.btype.f32 {_D}  .atype = {{ .bf16, .tf32 }}  "
     ".btype = { .bf16, .tf32 }", "7.0", 80, ""),
    (f"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {_D}", "7.0", 80, ""),
    (f"mma.sync.aligned.m16n8k32.row.col.dtype.f8type.f8type.ctype {_D}  {_F8}  {_FL}", "8.4", 89, "",
     [(".f16", 87, 89)]),
    (f"mma.sync.aligned.m16n8k16.row.col.dtype.f8type.f8type.ctype {_D}  {_F8}  {_FL}", "8.7", 89, ""),
    (f"mma.sync.aligned.m16n8k32.row.col.kind.dtype.f8f6f4type.f8f6f4type.ctype {_D}  "
     f".kind = {{ .kind::f8f6f4 }}  {_F8F6F4}  {_FL}", "8.7", 120, "", [], "sm_120a sm_121a"),
    # double precision
    (f"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {_D}", "7.0", 80, ""),
    (f"mma.sync.aligned.shape.row.col.f64.f64.f64.f64 {_D}  .shape = {{ .m16n8k4, .m16n8k8, .m16n8k16 }}",
     "7.8", 90, ""),
    # integer
    (f"mma.sync.aligned.m8n8k16.row.col{{.satfinite}}.s32.atype.btype.s32 {_D}  {_I8}", "6.5", 75, ""),
    (f"mma.sync.aligned.shape.row.col{{.satfinite}}.s32.atype.btype.s32 {_D}  .shape = {{ .m16n8k16, .m16n8k32 }}  "
     f"{_I8}", "7.0", 80, ""),
    (f"mma.sync.aligned.m8n8k32.row.col{{.satfinite}}.s32.atype.btype.s32 {_D}  {_I4}", "6.5", 75, ""),
    (f"mma.sync.aligned.shape.row.col{{.satfinite}}.s32.atype.btype.s32 {_D}  .shape = {{ .m16n8k32, .m16n8k64 }}  "
     f"{_I4}", "7.0", 80, ""),
    # single bit
    (f"mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.bitOp.popc {_D}  .bitOp = {{ .xor, .and }}", "6.5", 75, "",
     [(".and", 71, 80)]),
    (f"mma.sync.aligned.shape.row.col.s32.b1.b1.s32.bitOp.popc {_D}  .shape = {{ .m16n8k128, .m16n8k256 }}  "
     ".bitOp = { .xor, .and }", "7.0", 80, "", [(".and", 71, 80)]),
]
