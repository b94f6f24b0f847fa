"""The small instructions outside the other families (PTX ISA 9.7.1.17, 9.7.12.4, 9.7.14.5.17,
9.7.17, 9.7.19.4-5): fns runs in the semantics library; the others (an empty operation) are
lowered by their own code: brx.idx a branch through a .branchtargets table, movmatrix a warp
transpose, alloca / stacksave / stackrestore on the thread's call-frame stack, setmaxnreg and
pmevent as no operation (lower_scalar.c says why).
"""
_SETMAXNREG_ARCH = "sm_90a sm_100a sm_110a sm_120a sm_100f+ sm_110f+ sm_120f+"

ROWS = [
    ("fns.b32 d, mask, base, offset;", "6.0", 30, "fns"),
    ("brx.idx{.uni} index, tlist;", "6.0", 30, ""),
    ("movmatrix.sync.aligned.shape.trans.type d, a;  .shape = { .m8n8 }  .type = { .b16 }", "7.8", 75, ""),
    ("alloca.type ptr, size{, immAlign};  .type = { .u32, .u64 }", "7.3", 52, ""),
    ("stacksave.type d;  .type = { .u32, .u64 }", "7.3", 52, ""),
    ("stackrestore.type a;  .type = { .u32, .u64 }", "7.3", 52, ""),
    ("setmaxnreg.action.sync.aligned.u32 imm-reg-count;  .action = { .inc, .dec }", "8.0", 90, "", [],
     _SETMAXNREG_ARCH),
    ("pmevent a;", "1.4", 20, ""),
    ("pmevent.mask a;", "3.0", 20, ""),
]
