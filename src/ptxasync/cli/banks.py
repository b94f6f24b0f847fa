"""Bank conflicts of one warp-wide shared-memory access under each swizzle.

A box of --dtype elements, --box ROWS COLS (NumPy order), is laid out in
shared memory at --dst exactly as a TMA tile load with each swizzle puts it
(the same map as `ptxasync layout`); then the 32 threads of a warp read it
with one access pattern:

  row       thread t reads the t-th --width-byte piece along the rows
            (wrapping to the next row): the coalesced, conflict-free pattern
  column    thread t reads the same --width-byte piece of row t: the pattern
            that swizzling exists for (a column of 128-byte rows read with
            16-byte loads: 32 wavefronts unswizzled, 4 with 128B)
  ldmatrix  an ldmatrix.x4 of the 16x16 block at --first (2-byte elements)

The table gives, per swizzle, the wavefronts the access takes (one is the
minimum per phase; more means bank conflicts), the phases the hardware splits
the warp into, and the wavefronts of each phase (docs/consumers.md, rules
K1-K4). A swizzle whose span is narrower than a box row makes no valid map:
its row says which rule it breaks.

examples:
  ptxasync banks --dtype bf16 --box 32 64 --pattern column
  ptxasync banks --dtype f32 --box 32 32 --pattern row --width 8 --op st
  ptxasync banks --box 16 64 --pattern ldmatrix --swizzle 128B --dst 0x400
  ptxasync banks --box 32 64 --pattern column --swizzle NONE,128B -o banks.png

exit status: 0 the table was printed, 2 bad flags (no swizzle makes a valid
map, the pattern reads past the box, a width the elements do not fill).
"""
import argparse

from .common import add_output, check_load, integer, shared_address

NAME = "banks"
HELP = "bank conflicts (wavefronts) of a warp's access pattern under each swizzle"

SWIZZLES = ["NONE", "32B", "64B", "128B"]


def add_arguments(p):
    p.add_argument("--dtype", default="bf16", help="element type: u8 u16 u32 f16 bf16 f32 f64 ... "
                   "(default bf16)")
    p.add_argument("--box", type=integer, nargs=2, default=[32, 64], metavar=("ROWS", "COLS"),
                   help="box shape in NumPy order: rows, then elements per row (default 32 64)")
    p.add_argument("--pattern", choices=["row", "column", "ldmatrix"], default="column",
                   help="how the 32 threads read the box (default column; see above)")
    p.add_argument("--width", type=integer, choices=[4, 8, 16], default=16,
                   help="bytes each thread reads or writes: 4, 8 or 16 (default 16; ldmatrix: 16)")
    p.add_argument("--op", choices=["ld", "st"], default="ld",
                   help="load or store (8/16-byte stores split the warp differently, K3)")
    p.add_argument("--swizzle", default="all",
                   help="all (default), or one or more of NONE,32B,64B,128B separated by commas")
    p.add_argument("--dst", type=integer, default=0, help="shared-memory destination of the box (default 0)")
    p.add_argument("--first", type=integer, nargs=2, default=[0, 0], metavar=("ROW", "COL"),
                   help="box element (row, column) thread 0 reads (default 0 0)")
    add_output(p, "bank (a panel per swizzle: the banks each thread touches, by phase and wavefront)")


def swizzles(text):
    from . import UsageError
    if text.strip().lower() == "all":
        return list(SWIZZLES)
    out = []
    for s in text.split(","):
        s = s.strip().upper()
        s = "NONE" if s in ("NONE", "0") else s
        if s not in SWIZZLES:
            raise UsageError(f"--swizzle {text!r}: use all, or NONE, 32B, 64B, 128B (comma-separated)")
        out.append(s)
    return out


def analyse(args):
    """[(swizzle, BankReport or None, addresses or None, error text or None)] for each swizzle."""
    from .. import consumers
    from . import UsageError
    from .layout import build_map, parse_dtype
    parse_dtype(args.dtype)             # a bad type is said once, not once per swizzle
    shared_address(args.dst)
    rows, checked = [], False
    for sw in swizzles(args.swizzle):
        ns = argparse.Namespace(dtype=args.dtype, box=list(args.box), swizzle=sw, atomicity=None,
                                interleave="NONE")
        try:
            tm = build_map(ns)
        except UsageError as e:
            rows.append((sw, None, None, str(e)))
            continue
        if not checked:                 # a destination the load refuses is said once
            check_load(tm, args.dst)
            checked = True
        try:
            if args.pattern == "ldmatrix":
                addrs = consumers.box_ldmatrix_addresses(tm, args.dst, tuple(args.first))
                rep = consumers.bank_conflicts(addrs, 16, "ldmatrix")
            else:
                addrs = consumers.box_access_addresses(tm, args.dst, args.pattern, args.width, tuple(args.first))
                rep = consumers.bank_conflicts(addrs, args.width, args.op)
        except (ValueError, consumers._core.PtxAsyncError) as e:
            raise UsageError(str(e)) from None
        rows.append((sw, rep, addrs, None))
    if all(r[1] is None for r in rows):
        raise UsageError("no swizzle makes a valid map of this box:\n  "
                         + "\n  ".join(f"{sw}: {err}" for sw, _, _, err in rows))
    return rows


def what(args):
    """What the warp does, in words."""
    return "ldmatrix.x4" if args.pattern == "ldmatrix" else f"{args.op} {args.width} B, {args.pattern} pattern"


def heading(args):
    """The type, box, destination and access the table and the picture are of."""
    return (f"{args.dtype} box {args.box[0]}x{args.box[1]} (NumPy order) at {args.dst:#x}, {what(args)}, "
            f"thread 0 at ({args.first[0]}, {args.first[1]})")


def table(args, rows):
    out = [heading(args),
           f"{'swizzle':<8} {'wavefronts':>10} {'phases':>7} {'conflicts':>9}  per phase"]
    for sw, rep, _, err in rows:
        if rep is None:
            out.append(f"{sw:<8} {'-':>10} {'-':>7} {'-':>9}  not a valid map: {err}")
        else:
            per = " ".join(str(x) for x in rep.per_phase)
            pk = "  (packed, K4)" if rep.packed else ""
            out.append(f"{sw:<8} {rep.wavefronts:>10} {rep.phases:>7} {rep.conflicts:>9}  {per}{pk}")
    return "\n".join(out)


def run(args):
    rows = analyse(args)
    print(table(args, rows))
    if args.output:
        from .. import viz
        from .common import write_picture
        data = [viz.BankData(addrs, rep, f"swizzle {sw}") for sw, rep, addrs, _ in rows if rep is not None]
        notes = [f"swizzle {sw}: no panel, not a valid map: {err}" for sw, rep, _, err in rows if rep is None]
        write_picture(viz.banks_scene(data, title=heading(args), notes=notes), args.output)
    return 0
