"""Which fragment element a wgmma operand or an ldmatrix reads from each 16-byte
chunk of a TMA-loaded tile, and where that is not the element it meant.

A 2D box of --dtype elements, --box ROWS COLS (NumPy order), is loaded from
(0, 0) of a tensor of the same shape to --dst with --swizzle (the same map as
`ptxasync layout`). Then one consumer reads it:

  wgmma     operand B (n = ROWS, K-major): by default the descriptor that
            matches the tile (descriptor_for_tile: the map's swizzle, SBO = 8 x
            span, base offset 0, start = dst + 32 x k-slice); --desc-swizzle,
            --lbo, --sbo, --start, --base-offset change one field of it
  ldmatrix  .x4 of the 16x16 block at (0, 0), 2-byte elements: row addresses
            from the load's own layout (--rows tma), or dst + 128 row + 16
            chunk as if unswizzled (--rows plain)

The text picture has a row per 128-byte line and a column per 16-byte chunk:
'n3 k0-7' is operand row n = 3, k = 0..7; 'M1 row 2' is row 2 of ldmatrix
matrix 1; '!' marks a chunk that holds something other than what the consumer
meant (the mismatches are counted as check_wgmma / check_ldmatrix count them).

examples:
  ptxasync reads --box 64 64 --swizzle 128B --dst 0x1180
  ptxasync reads --box 64 64 --swizzle 128B --dst 0x1180 --desc-swizzle 64B --sbo 512 -o reads.png
  ptxasync reads --box 16 64 --swizzle 128B --consumer ldmatrix --rows plain

exit status: 0 the consumer reads the intended elements, 1 some differ,
2 bad flags (no valid map, no descriptor reads the tile).
"""
from .common import add_output, check_load, integer, line_count, write_picture

NAME = "reads"
HELP = "which fragment element a wgmma / ldmatrix reads from each chunk of a TMA tile, and mismatches"

_WGMMA = {"FLOAT16": "f16", "BFLOAT16": "bf16", "TFLOAT32": "tf32", "UINT8": "u8"}


def add_arguments(p):
    p.add_argument("--dtype", default="f16", help="element type of the map: f16, bf16, tf32 or u8 (default f16)")
    p.add_argument("--box", type=integer, nargs=2, default=[64, 64], metavar=("ROWS", "COLS"),
                   help="box shape in NumPy order (default 64 64)")
    p.add_argument("--swizzle", default="128B", help="the map's swizzle: NONE, 32B, 64B or 128B (default 128B)")
    p.add_argument("--dst", type=integer, default=0, help="shared-memory destination of the load (default 0)")
    p.add_argument("--consumer", choices=["wgmma", "ldmatrix"], default="wgmma",
                   help="what reads the tile (default wgmma)")
    p.add_argument("--k-slice", type=integer, default=0, help="wgmma: the k-slice to read (default 0)")
    p.add_argument("--desc-swizzle", default=None, help="wgmma: the descriptor's swizzle, if not the map's")
    for f in ("start", "lbo", "sbo", "base-offset"):
        p.add_argument(f"--{f}", type=integer, default=None, help=f"wgmma: the descriptor's {f.replace('-', ' ')}, "
                       "if not the matching one")
    p.add_argument("--rows", choices=["tma", "plain"], default="tma",
                   help="ldmatrix: row addresses from the load's layout (tma) or unswizzled (plain)")
    p.add_argument("--lines", type=integer, default=16, help="at most this many 128-byte lines")
    add_output(p, "read-order")


def build(args):
    """(map, ReadOrder, check_wgmma's report or None) of what the flags describe."""
    import argparse

    from .. import consumers, viz
    from . import UsageError
    from .layout import build_map
    tm = build_map(argparse.Namespace(dtype=args.dtype, box=list(args.box), swizzle=args.swizzle, atomicity=None,
                                      interleave="NONE"))
    check_load(tm, args.dst)             # a destination the load refuses is the load's error
    prod = consumers.TmaProducer(tm, [((0, 0), args.dst)])
    try:
        if args.consumer == "ldmatrix":
            if tm.box_layout["esize"] != 2:
                raise UsageError("--consumer ldmatrix reads 2-byte elements (.b16): use --dtype f16 or bf16")
            if args.rows == "tma":
                rows = consumers.box_ldmatrix_addresses(tm, args.dst)
            else:
                rows = [args.dst + (t % 8 + 8 * ((t // 8) % 2)) * tm.box_layout["pitch"] + 16 * (t // 16)
                        for t in range(32)]
            ro = viz.ldmatrix_read_order(rows, producer=prod, intended=(0, 0),
                                           title=f"ldmatrix .x4, {args.rows} row addresses")
            return tm, ro, None
        dt = _wgmma_type(tm)
        desc = consumers.descriptor_for_tile(tm, args.dst, args.k_slice, "B", "K", dt)
        change = {k: v for k, v in (("swizzle", args.desc_swizzle), ("start", args.start), ("lbo", args.lbo),
                                    ("sbo", args.sbo), ("base_offset", args.base_offset)) if v is not None}
        if change:
            desc = desc.replace(**change)
        ro = viz.wgmma_read_order(desc, "B", args.box[0], "K", dt, producer=prod, k_slice=args.k_slice)
        report = consumers.check_wgmma(desc, prod, "B", args.box[0], "K", dt, k_slice=args.k_slice) \
            if ro.mismatched else None
        return tm, ro, report
    except (ValueError, consumers._core.PtxAsyncError) as e:
        raise UsageError(str(e)) from None


def _wgmma_type(tm):
    from ..enums import DataType
    from . import UsageError
    dt = DataType(int(tm.fields["dtype"]))
    if dt.name not in _WGMMA:
        raise UsageError(f"--dtype {dt.name}: wgmma reads f16, bf16, tf32 or 8-bit elements")
    return _WGMMA[dt.name]


def producer_line(tm, dst):
    """What the producer is: the map's box, type and swizzle, and where it lands."""
    from ..enums import DataType
    from ..layout import swizzle_label
    f = tm.fields
    return (f"producer: a TMA tile load of a {' x '.join(str(b) for b in f['box_dim'][::-1])} (NumPy order) "
            f"{DataType(int(f['dtype'])).name.lower()} box, swizzle {swizzle_label(f['swizzle'])}, at dst {dst:#x}")


def run(args):
    from .. import viz
    line_count(args.lines)
    tm, ro, report = build(args)
    print(producer_line(tm, args.dst))
    if args.output:
        write_picture(viz.read_order_scene(ro, max_lines=args.lines), args.output)
        print(viz.read_order_text(ro, max_lines=1).splitlines()[1])
    else:
        print(viz.read_order_text(ro, max_lines=args.lines))
    if report is not None:          # why the descriptor reads other elements, and one that works
        print("\n".join(line for line in str(report).splitlines() if not line.startswith("  ")))
    return 0 if not ro.mismatched else 1
