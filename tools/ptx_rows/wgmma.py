"""wgmma.mma_async (PTX ISA 9.7.15.5.2; PTX 8.0, sm_90a only): every shape and type of the
Syntax block, A from a shared-memory descriptor or from registers. The operation is a
warpgroup collective: csrc/core/ptx/exec/lower_coll.c lowers it, sem/mma.c computes each
element (no PI_SEM row). The sparse form is ptx_rows/sync.py's. The register counts of d and a,
the immediates' values and mixed integer types are rules.c's (PTX_RULE_WGMMA).
"""
_N_ALL = [8 * i for i in range(1, 33)]                         # n8 .. n256, every multiple of 8
_N_INT = [8, 16, 24] + [16 * i for i in range(2, 17)]         # integer and b1: n8, n16, n24, then by 16


def _shapes(k, ns):
    return ".shape = { " + ", ".join(".m64n%dk%d" % (n, k) for n in ns) + " }"


_F16 = ".dtype = { .f16, .f32 }"
_F8 = ".atype = { .e4m3, .e5m2 }  .btype = { .e4m3, .e5m2 }"
_I8 = ".atype = { .s8, .u8 }  .btype = { .s8, .u8 }"
_A90 = "sm_90a"


def _rows():
    name = "wgmma.mma_async"
    rows = []
    for a in ("a-desc", "va"):
        ta = ", imm-trans-a" if a == "a-desc" else ""          # the transpose of A only from shared memory
        rows += [
            (f"{name}.sync{{.aligned}}.shape.dtype.f16.f16 vd, {a}, b-desc, scale-d, imm-scale-a, imm-scale-b{ta}, "
             f"imm-trans-b;  {_shapes(16, _N_ALL)}  {_F16}", "8.0", 90, "", [], _A90),
            (f"{name}.sync{{.aligned}}.shape.f32.bf16.bf16 vd, {a}, b-desc, scale-d, imm-scale-a, imm-scale-b{ta}, "
             f"imm-trans-b;  {_shapes(16, _N_ALL)}", "8.0", 90, "", [], _A90),
            (f"{name}.sync{{.aligned}}.shape.f32.tf32.tf32 vd, {a}, b-desc, scale-d, imm-scale-a, imm-scale-b;  "
             f"{_shapes(8, _N_ALL)}", "8.0", 90, "", [], _A90),
            (f"{name}.sync{{.aligned}}.shape.dtype.atype.btype vd, {a}, b-desc, scale-d, imm-scale-a, imm-scale-b;  "
             f"{_shapes(32, _N_ALL)}  {_F16}  {_F8}", "8.0", 90, "", [], _A90),
            (f"{name}.sync{{.aligned}}.shape{{.satfinite}}.s32.atype.btype vd, {a}, b-desc, scale-d;  "
             f"{_shapes(32, _N_INT)}  {_I8}", "8.0", 90, "", [], _A90),
        ]
        rows.append((f"{name}.sync{{.aligned}}.shape.s32.b1.b1.op.popc vd, {a}, b-desc, scale-d;  "
                     f"{_shapes(256, _N_INT)}  .op = {{ .and }}", "8.0", 90, "", [], _A90))
    return rows


ROWS = _rows()
