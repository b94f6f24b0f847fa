"""Draw where a box lands in shared memory, from tensor-map flags.

The box is a tiled map over a tensor of the box's own shape (NumPy order,
outermost first, innermost contiguous). Every 16-byte chunk (or, with
--elements, every element) is drawn where the hardware puts it and labelled
with its logical (row, column).

examples:
  ptxasync layout --dtype bf16 --box 8 64 --swizzle 128B
  ptxasync layout --dtype f32 --box 16 16 --swizzle 64B --dst 0x480 -o layout.png
  ptxasync layout --dtype bf16 --box 8 64 --swizzle 128B --compare -o cmp.svg

exit status: 0 drawn, 2 the flags make no valid map or no load the model
executes (a misaligned --dst: the rule is printed).
"""
from .common import add_output, check_load, integer, line_count, write_picture

NAME = "layout"
HELP = "draw a box's shared-memory layout (swizzle, destination) as text, PNG or SVG"

ATOMICITY = {"16B": "128B", "32B": "128B_ATOM_32B", "32B_FLIP_8B": "128B_ATOM_32B_FLIP_8B",
             "64B": "128B_ATOM_64B"}


def add_arguments(p):
    p.add_argument("--dtype", default="bf16", help="element type: u8 u16 u32 s32 u64 s64 f16 bf16 f32 "
                   "f64 tf32 ... or a CU_TENSOR_MAP_DATA_TYPE_* name (default bf16)")
    p.add_argument("--box", type=integer, nargs="+", default=[8, 64], metavar="N",
                   help="box shape in NumPy order, outermost first (default 8 64)")
    p.add_argument("--swizzle", default="128B", help="NONE, 32B, 64B or 128B (default 128B)")
    p.add_argument("--atomicity", choices=sorted(ATOMICITY), default=None,
                   help="128B swizzle atomicity: 16B is the sm_90 128B swizzle; 32B, 32B_FLIP_8B and 64B are "
                   "the 128B_ATOM_* forms, which the sm_90 driver rejects (exit 2 names the rule)")
    p.add_argument("--interleave", default="NONE", help="NONE, 16B or 32B")
    p.add_argument("--dst", type=integer, default=0, help="shared-memory destination (default 0)")
    p.add_argument("--elements", action="store_true", help="zoom: one cell per element")
    p.add_argument("--bytes", type=integer, nargs=2, metavar=("LO", "HI"), default=None,
                   help="with --elements: the bytes [LO, HI) of each 128-byte line to draw (default "
                        "the first 32 or 64; --bytes 0 128 draws whole lines)")
    p.add_argument("--compare", action="store_true", help="the unswizzled layout beside it")
    p.add_argument("--lines", type=integer, default=40, help="at most this many 128-byte lines (default 40; "
                   "a note says how many there are)")
    add_output(p, "layout")


def build_map(args):
    import ptxasync as pa
    from . import UsageError
    swizzle = args.swizzle
    if args.atomicity is not None:
        if pa.enums.parse(pa.Swizzle, swizzle) != pa.Swizzle.B128:
            raise UsageError("--atomicity applies to the 128B swizzle only")
        swizzle = ATOMICITY[args.atomicity]
    if any(b < 1 for b in args.box):
        raise UsageError(f"--box {args.box}: every extent must be at least 1")
    dt = parse_dtype(args.dtype)
    try:
        esize = pa._core.dtype_info(int(dt))["bytes"]
        dims = list(args.box)[::-1]                     # driver order
        row = -(-dims[0] * max(esize, 1) // 16) * 16
        strides, acc = [], row
        for d in dims[1:]:
            strides.append(acc)
            acc *= d
        return pa.TensorMap.tiled(dt, 0, dims, strides[:len(dims) - 1], dims, swizzle=swizzle,
                                  interleave=args.interleave)
    except (ValueError, KeyError, pa.PtxAsyncError) as e:
        msg = str(e)
        if "swizzle span" in msg:
            span = {1: 32, 2: 64}.get(int(pa.enums.parse(pa.Swizzle, swizzle)), 128)
            fits = max(1, span // max(esize, 1))
            msg += (f" (a row is {args.box[-1]} x {esize} B: try --swizzle NONE, or a box of at most "
                    f"{fits} columns, e.g. --box {' '.join(str(b) for b in args.box[:-1])} {fits})")
        raise UsageError(msg) from None


def parse_dtype(text):
    """--dtype as a DataType; a bad one is one usage error naming the spellings --help uses."""
    import ptxasync as pa
    from . import UsageError
    try:
        return pa.enums.parse(pa.DataType, text)
    except ValueError as e:
        raise UsageError(f"--dtype {e}") from None


def run(args):
    from .. import viz
    from . import UsageError
    line_count(args.lines)
    tm = build_map(args)
    check_load(tm, args.dst)
    level = "element" if args.elements else "chunk"
    kw = dict(level=level, max_lines=args.lines)
    if args.bytes is not None:
        lo, hi = args.bytes
        if not (args.elements and 0 <= lo < hi <= 128):
            raise UsageError(f"--bytes {lo} {hi}: needs --elements and 0 <= LO < HI <= 128")
        kw["byte_range"] = (lo, hi)
    if args.output:
        scene = viz.compare_scene(tm, args.dst, **kw) if args.compare else viz.layout_scene(tm, args.dst, **kw)
        write_picture(scene, args.output)
    else:
        print(viz.layout_text(tm, args.dst, compare=args.compare, **kw))
    return 0
