"""The video instructions (PTX ISA 9.7.18) the semantics library runs (sem/video.c, video_simd.c).

The operands name their selectors as the Syntax blocks do (a{.asel} is written a.asel here: an
optional selector joined to the register, which tools/ptx_tables.py's kind_of turns into the
video operand kinds). The scalar Syntax block's two four-operand templates are one row: ptxas
13.0 takes d, a, b, c with neither .op2 nor a destination selector (c unused), and refuses the
two together (rules_video.c); it takes .sat with .add, and .sat on vset nowhere.
"""
_T3 = ".dtype = { .u32, .s32 }  .atype = { .u32, .s32 }  .btype = { .u32, .s32 }"
_T2 = ".atype = { .u32, .s32 }  .btype = { .u32, .s32 }"
_OP2 = ".op2 = { .add, .min, .max }"
_CMP = ".CmpOp = { .eq, .ne, .lt, .le, .gt, .ge }"
_SHT = ".dtype = { .u32, .s32 }  .atype = { .u32, .s32 }  .mode = { .clamp, .wrap }"

ROWS = []
# 9.7.18.1.1: vadd, vsub, vabsdiff, vmin, vmax (PTX 2.0, sm_20)
for _op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax"):
    ROWS += [
        (f"{_op}.dtype.atype.btype{{.sat}} d, a.asel, b.bsel;  {_T3}", "2.0", 20, _op),
        (f"{_op}.dtype.atype.btype{{.sat}}{{.op2}} d.dsel, a.asel, b.bsel, c;  {_T3}  {_OP2}", "2.0", 20, _op),
    ]
# 9.7.18.1.2: vshl, vshr (b is .u32: ptxas, "Operation requires .u32 type"; .mode required)
for _op in ("vshl", "vshr"):
    ROWS += [
        (f"{_op}.dtype.atype.u32{{.sat}}.mode d, a.asel, b.bsel;  {_SHT}", "2.0", 20, _op),
        (f"{_op}.dtype.atype.u32{{.sat}}.mode{{.op2}} d.dsel, a.asel, b.bsel, c;  {_SHT}  {_OP2}", "2.0", 20, _op),
    ]
ROWS += [
    # 9.7.18.1.3: vmad, its two templates one row (.po without negation: rules_video.c)
    (f"vmad.dtype.atype.btype{{.po}}{{.sat}}{{.scale}} d, a.asel, b.bsel, c;  {_T3}  .scale = {{ .shr7, .shr15 }}",
     "2.0", 20, "vmad"),
    # 9.7.18.1.4: vset
    (f"vset.atype.btype.CmpOp d, a.asel, b.bsel;  {_T2}  {_CMP}", "2.0", 20, "vset"),
    (f"vset.atype.btype.CmpOp{{.op2}} d.dsel, a.asel, b.bsel, c;  {_T2}  {_CMP}  {_OP2}", "2.0", 20, "vset"),
]
# 9.7.18.2.1-4: the SIMD forms (PTX 3.0, sm_30); the merge and the accumulate templates one row
for _n in ("2", "4"):
    for _op in ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax"):
        ROWS.append((f"{_op}{_n}.dtype.atype.btype{{.sat}}{{.add}} d.mask, a.asel, b.bsel, c;  {_T3}", "3.0", 30,
                     _op + _n))
    ROWS.append((f"vset{_n}.atype.btype.CmpOp{{.add}} d.mask, a.asel, b.bsel, c;  {_T2}  {_CMP}", "3.0", 30,
                 "vset" + _n))
