"""The tour: a 128B-swizzled tile load through an mbarrier, end to end.

Builds a 2D bf16 tensor map (cuTensorMapEncodeTiled), loads one tile the way a
kernel does (mbarrier.arrive.expect_tx, cp.async.bulk.tensor, try_wait),
checks the tile against the tensor, and loads an im2col column. Writes into
the folder --out names (created if needed):

  summary.txt         everything printed
  layout.png          the tile in shared memory: unswizzled and 128B-swizzled side by side
  layout_dst.png      the same box at a destination that starts mid-pattern
  elements.png        zoomed: every element of the first lines
  provenance.png      which tensor element each box element holds (an edge tile: OOB fill)
  im2col.png          which input pixel fills each row of an im2col column

(.svg instead of .png without matplotlib: install the plot extra for PNG, see
README; --no-figures writes summary.txt alone.)

example:
  ptxasync tour --out /tmp/tour && ls /tmp/tour

exit status: 0 the loaded tile equals the tensor slice, 1 it does not.
"""
import io
import os

NAME = "tour"
HELP = "run the end-to-end example; write figures and a summary to a folder"


def add_arguments(p):
    p.add_argument("--out", default="ptxasync-tour", metavar="DIR",
                   help="folder for the figures and summary.txt (default ./ptxasync-tour)")
    p.add_argument("--svg", action="store_true", help="write SVG figures even if matplotlib is there")
    p.add_argument("--no-figures", action="store_true", help="write summary.txt only, no figures")


def tour(out="ptxasync-tour", svg=False, echo=print, figures=True):
    """Run the tour; returns (ok, [files written]). ``figures=False`` writes
    summary.txt alone."""
    import numpy as np

    import ptxasync as pa
    from .. import viz
    from ..layout import render_box, render_chunks

    text = io.StringIO()

    def say(*a):
        print(*a, file=text)
        echo(*a)

    # A 128 x 256 tensor of 16-bit values; element (r, c) holds r * 256 + c so
    # that every value names its own position (stored as uint16 bits; the map
    # says bf16: a copy moves bits, it does not convert them).
    rows, cols = 128, 256
    tensor = (np.arange(rows * cols, dtype=np.uint32) % 65536).astype(np.uint16).reshape(rows, cols)
    gpu = pa.Machine(ctas=1, smem_bytes=64 * 1024)
    gmem = gpu.register(tensor)
    tmap = pa.TensorMap.from_array(tensor, (8, 64), gmem.address, swizzle="128B", dtype="bf16")
    say("== cuTensorMapEncodeTiled ==")
    say(tmap)

    bar = gpu.mbarrier(0).init(1)
    bar.arrive_expect_tx(tmap.box_bytes)
    dst, coords = 1024, (64, 16)                 # driver order: c0 = column, c1 = row
    gpu.cp_async_bulk_tensor_load(tmap, coords, dst, bar)
    say(f"\nissued the load of the box at coordinates {coords} in driver order (c0 = column {coords[0]}, "
        f"c1 = row {coords[1]}; NumPy order tensor[16:24, 64:128]) to shared 0x{dst:x}: "
        f"{gpu.pending} operation pending, barrier {bar}")
    say(f"destination before completion: {gpu.smem[dst:dst + 8]} (untouched)")
    assert bar.try_wait(0)
    say(f"after mbarrier.try_wait.parity 0: {bar}")
    say("\n== the 128B swizzle: which 16-byte chunk of a row each slot of a 128-byte line holds ==")
    say(render_chunks("128B", base=dst))
    say("\n== where the box landed (r = box row, c = first element of the 16-byte chunk) ==")
    say(render_box(tmap, dst))
    tile = pa.read_box(gpu, tmap, dst)
    expected = tensor[16:24, 64:128]
    ok = bool(np.array_equal(tile.view(np.uint16), expected))
    say(f"\nthe tile read back through the layout (read_box) equals tensor[16:24, 64:128]: {ok}")

    # an im2col column: NHWC 1x4x4x8, 3x3 'same' padding, 6 pixels from (h, w) = (0, 0)
    x = np.arange(1 * 4 * 4 * 8, dtype=np.uint16).reshape(1, 4, 4, 8)
    gx = gpu.register(x)
    col_map = pa.TensorMap.im2col("u16", gx.address, [8, 4, 4, 1], [16, 64, 256], [-1, -1], [-1, -1],
                                  channels_per_pixel=8, pixels_per_column=6)
    prov_col = viz.provenance(col_map, (0, -1, -1, 0), "im2col", (1, 1))
    say("\n== an im2col column (cuTensorMapEncodeIm2col, offsets (1, 1)) ==")
    say(viz.im2col_text(prov_col))

    # an edge tile: rows and columns past the tensor are out-of-bounds fill
    edge = viz.provenance(tmap, (224, 124))
    n_oob = int(edge.oob.sum())
    say(f"\n== a tile at driver coordinates (224, 124) (NumPy order: rows 124..131, columns 224..287) hangs "
        f"over the tensor's {rows} x {cols} edge: {n_oob} of {edge.oob.size} elements are out-of-bounds fill ==")

    os.makedirs(out, exist_ok=True)
    files = []
    if not figures:
        return ok, _summary(out, text, files, echo)
    try:
        viz.require_matplotlib()
        ext = ".svg" if svg else ".png"
    except ImportError:
        ext = ".svg"
        say("\n(matplotlib is not installed: figures are SVG; pip install matplotlib for PNG)")
    pictures = {
        "layout": viz.compare_scene(tmap, dst),
        "layout_dst": viz.layout_scene(tmap, dst + 384, title="the same box at dst 0x580: 3 lines into "
                                       "the 1024-byte repeat"),
        "elements": viz.layout_scene(tmap, dst, level="element"),
        "provenance": viz.provenance_scene(edge),
        "im2col": viz.im2col_scene(prov_col),
    }
    for name, scene in pictures.items():
        files.append(viz.save(scene, os.path.join(out, name + ext)))
    return ok, _summary(out, text, files, echo)


def _summary(out, text, files, echo):
    summary = os.path.join(out, "summary.txt")
    with open(summary, "w", encoding="utf-8") as f:
        f.write(text.getvalue())
    files.append(summary)
    echo(f"\nwrote {len(files)} file{'s' if len(files) > 1 else ''} to {os.path.join(out, '')}: "
         + ", ".join(os.path.basename(f) for f in files))
    return files


def run(args):
    from . import UsageError
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"--out {args.out}: exists and is not a folder (give a folder for the figures)")
    try:
        ok, _ = tour(args.out, args.svg, figures=not args.no_figures)
    except OSError as e:
        raise UsageError(f"--out {args.out}: {e.strerror or e}") from None
    return 0 if ok else 1
