"""The rest of the synchronisation and warp-matrix instructions (PTX ISA 9.7.13, 9.7.14.6,
9.7.15.6): red.async; the fences restricted to one state space (.sync_restrict; fence.op_restrict
is fence.mbarrier_init, a BODY row); the legacy vote and shfl without .sync (rules.c refuses them where ptxas
does: sm_70 and later from PTX 6.4); mma.sp; wgmma.mma_async.sp. mma.sp and wgmma.mma_async.sp
run (docs/tensor-cores.md, Finding 9); what does not is on text/notyet.c's list. bar / barrier are BODY rows of tools/ptx_tables.py, the dense wgmma.mma_async
is ptx_rows/wgmma.py.
"""
_RED = ".op = { .and, .or }"
_N8 = ".shape = { %s }" % ", ".join(".m64n%dk{K}" % n for n in range(8, 257, 8))
_N16 = ".shape = { %s }" % ", ".join(".m64n%dk{K}" % n for n in [8, 16, 24] + list(range(32, 257, 16)))


def _sh(tpl, k):
    return tpl.replace("{K}", str(k))


_WG = "wgmma.mma_async.sync.aligned.shape"
_WGS = "wgmma.mma_async.sp.sync{.aligned}.shape"  # ptxas 13.0 takes it without .aligned
_IMM = "imm-scale-a, imm-scale-b"
_ARCH = "sm_90a"
ROWS = [
    # red.async (9.7.13.6)
    ("red.async.relaxed.cluster{.ss}.completion_mechanism.op.type [a], b, [mbar];  .ss = { .shared::cluster }  "
     ".completion_mechanism = { .mbarrier::complete_tx::bytes }  .op = { .inc, .dec }  .type = { .u32 }",
     "8.1", 90, ""),
    ("red.async.relaxed.cluster{.ss}.completion_mechanism.op.type [a], b, [mbar];  .ss = { .shared::cluster }  "
     ".completion_mechanism = { .mbarrier::complete_tx::bytes }  .op = { .add }  .type = { .u32, .s32, .u64 }",
     "8.1", 90, ""),
    # ptxas 13.0 and 13.5 also take .add.s64 (REDAS.ADD.64, as .u64), which the Syntax block leaves out
    ("red.async.relaxed.cluster{.ss}.completion_mechanism.op.type [a], b, [mbar];  .ss = { .shared::cluster }  "
     ".completion_mechanism = { .mbarrier::complete_tx::bytes }  .op = { .add }  .type = { .s64 }",
     "8.1", 90, ""),
    ("red.async.relaxed.cluster{.ss}.completion_mechanism.op.type [a], b, [mbar];  .ss = { .shared::cluster }  "
     ".completion_mechanism = { .mbarrier::complete_tx::bytes }  .op = { .min, .max }  .type = { .u32, .s32 }",
     "8.1", 90, ""),
    ("red.async.relaxed.cluster{.ss}.completion_mechanism.op.type [a], b, [mbar];  .ss = { .shared::cluster }  "
     ".completion_mechanism = { .mbarrier::complete_tx::bytes }  .op = { .and, .or, .xor }  .type = { .b32 }",
     "8.1", 90, ""),
    # fences restricted to one state space (9.7.13.4: .sync_restrict, PTX 8.6, sm_90; ptxas 13.0 takes only these
    # pairings: "Modifier '.sync_restrict::shared::cluster' cannot be combined with modifier '.release'")
    ("fence.acquire.sync_restrict::shared::cluster.cluster;", "8.6", 90, ""),
    ("fence.release.sync_restrict::shared::cta.cluster;", "8.6", 90, ""),
    ("fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster;", "8.6", 90, ""),
    ("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;", "8.6", 90, ""),
    # the legacy warp votes and shuffles (rules.c: refused from sm_70 at PTX 6.4)
    ("vote.mode.pred d, a;  .mode = { .all, .any, .uni }", "1.2", 20, ""),
    ("vote.ballot.b32 d, a;", "2.0", 20, ""),
    ("shfl.mode.b32 d, a, b, c;  .mode = { .up, .down, .bfly, .idx }", "3.0", 30, ""),
    # mma.sp (9.7.14.6): metadata e, selector f
    *[(f"mma.{sp}.sync.aligned.shape.row.col.dtype.f16.f16.ctype vd, va, vb, vc, e, f;  .shape = {{ .m16n8k16, "
       ".m16n8k32 }  .dtype = { .f16, .f32 }  .ctype = { .f16, .f32 }", v, 80, "") for sp, v in
      (("sp", "7.1"), ("sp::ordered_metadata", "8.5"))],
    *[(f"mma.{sp}.sync.aligned.shape.row.col.f32.bf16.bf16.f32 vd, va, vb, vc, e, f;  .shape = {{ .m16n8k16, "
       ".m16n8k32 }", v, 80, "") for sp, v in (("sp", "7.1"), ("sp::ordered_metadata", "8.5"))],
    *[(f"mma.{sp}.sync.aligned.shape.row.col.f32.tf32.tf32.f32 vd, va, vb, vc, e, f;  .shape = {{ .m16n8k8, "
       ".m16n8k16 }", v, 80, "") for sp, v in (("sp", "7.1"), ("sp::ordered_metadata", "8.5"))],
    *[(f"mma.{sp}.sync.aligned.shape.row.col{{.satfinite}}.s32.atype.btype.s32 vd, va, vb, vc, e, f;  .shape = {{ "
       ".m16n8k32, .m16n8k64 }  .atype = { .u8, .s8 }  .btype = { .u8, .s8 }", v, 80, "") for sp, v in
      (("sp", "7.1"), ("sp::ordered_metadata", "8.5"))],
    *[(f"mma.{sp}.sync.aligned.shape.row.col{{.satfinite}}.s32.atype.btype.s32 vd, va, vb, vc, e, f;  .shape = {{ "
       ".m16n8k64, .m16n8k128 }  .atype = { .u4, .s4 }  .btype = { .u4, .s4 }", v, 80, "") for sp, v in
      (("sp", "7.1"), ("sp::ordered_metadata", "8.5"))],
    ("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.dtype.f8type.f8type.ctype vd, va, vb, vc, e, f;  "
     ".f8type = { .e4m3, .e5m2 }  .dtype = { .f16, .f32 }  .ctype = { .f16, .f32 }", "8.5", 89, "",
     [(".f16", 87, 89, "sm_120f+")]),    # ptxas 13.0: an f16 accumulator with f8 only on sm_120f / sm_121f
    # wgmma.mma_async.sp (9.7.15.6): the sparse A, its metadata and selector
    (f"{_WGS}.dtype.f16.f16 vd, a-desc, b-desc, sp-meta, sp-sel, scale-d, {_IMM}, imm-trans-a, imm-trans-b;  "
     f"{_sh(_N8, 32)}  .dtype = {{ .f16, .f32 }}", "8.2", 90, "", [], _ARCH),
    (f"{_WGS}.dtype.f16.f16 vd, va, b-desc, sp-meta, sp-sel, scale-d, {_IMM}, imm-trans-b;  {_sh(_N8, 32)}  "
     ".dtype = { .f16, .f32 }", "8.2", 90, "", [], _ARCH),
    (f"{_WGS}.f32.bf16.bf16 vd, a-desc, b-desc, sp-meta, sp-sel, scale-d, {_IMM}, imm-trans-a, imm-trans-b;  "
     f"{_sh(_N8, 32)}", "8.2", 90, "", [], _ARCH),
    (f"{_WGS}.f32.bf16.bf16 vd, va, b-desc, sp-meta, sp-sel, scale-d, {_IMM}, imm-trans-b;  {_sh(_N8, 32)}",
     "8.2", 90, "", [], _ARCH),
    (f"{_WGS}.f32.tf32.tf32 vd, a-desc, b-desc, sp-meta, sp-sel, scale-d, {_IMM};  {_sh(_N8, 16)}",
     "8.2", 90, "", [], _ARCH),
    (f"{_WGS}.f32.tf32.tf32 vd, va, b-desc, sp-meta, sp-sel, scale-d, {_IMM};  {_sh(_N8, 16)}", "8.2", 90, "", [], _ARCH),
    (f"{_WGS}.dtype.atype.btype vd, a-desc, b-desc, sp-meta, sp-sel, scale-d, {_IMM};  {_sh(_N8, 64)}  "
     ".dtype = { .f16, .f32 }  .atype = { .e4m3, .e5m2 }  .btype = { .e4m3, .e5m2 }", "8.2", 90, "", [], _ARCH),
    (f"{_WGS}.dtype.atype.btype vd, va, b-desc, sp-meta, sp-sel, scale-d, {_IMM};  {_sh(_N8, 64)}  "
     ".dtype = { .f16, .f32 }  .atype = { .e4m3, .e5m2 }  .btype = { .e4m3, .e5m2 }", "8.2", 90, "", [], _ARCH),
    (f"{_WGS}{{.satfinite}}.s32.atype.btype vd, a-desc, b-desc, sp-meta, sp-sel, scale-d;  {_sh(_N16, 64)}  "
     ".atype = { .s8, .u8 }  .btype = { .s8, .u8 }", "8.2", 90, "", [], _ARCH),
    (f"{_WGS}{{.satfinite}}.s32.atype.btype vd, va, b-desc, sp-meta, sp-sel, scale-d;  {_sh(_N16, 64)}  "
     ".atype = { .s8, .u8 }  .btype = { .s8, .u8 }", "8.2", 90, "", [], _ARCH),
]
