"""Argument parsing helpers shared by the subcommands."""
import argparse


def integer(text):
    """An integer in decimal or 0x hex."""
    try:
        return int(str(text), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (decimal or 0x hex)") from None


def shared_address(value, flag="--dst"):
    """A shared-memory address flag: a usage error (exit 2) unless it is in [0, 2^32)."""
    from . import UsageError
    if not 0 <= value < 1 << 32:
        raise UsageError(f"{flag} {value:#x}: a shared address is in [0, 2^32)" if value >= 0 else
                         f"{flag} {value}: a shared address is in [0, 2^32), not negative")
    return value


def line_count(value, flag="--lines"):
    """A count of 128-byte lines to show: a usage error unless it is in [1, MAX_LINES]."""
    from ..layout import MAX_LINES
    from . import UsageError
    if not 1 <= value <= MAX_LINES:
        raise UsageError(f"{flag} {value}: show between 1 and {MAX_LINES} lines")
    return value


def check_load(tm, dst, flag="--dst"):
    """Issue the load of ``tm`` at shared address ``dst`` on a model machine: a
    picture is drawn only for a load the model executes (a misaligned or
    out-of-range destination is the model's error, as the instruction's would be)."""
    import numpy as np
    import ptxasync as pa
    from . import UsageError
    shared_address(dst, flag)
    f = tm.fields
    span = int(f["global_dim"][-1]) * (int(f["global_strides"][-1]) if f["global_strides"] else 16)
    m = pa.Machine(smem_bytes=pa.SMEM_MAX, checks=False)
    m.register(np.zeros(2 * span + 256, np.uint8), address=int(f["global_address"]))
    bar = m.mbarrier(pa.SMEM_MAX - 8).init(1)
    try:
        m.cp_async_bulk_tensor_load(tm, [0] * int(f["rank"]), dst, bar)
    except pa.PtxAsyncError as e:
        raise UsageError(f"the model refuses this load at {flag} {dst:#x}: {e}") from None


def add_output(p, what):
    p.add_argument("-o", "--output", metavar="FILE",
                   help=f"write the {what} picture to FILE (.png/.pdf need matplotlib, .svg needs "
                        "nothing); without it, print the text picture")


def write_picture(scene, path):
    from .. import viz
    from . import UsageError
    import os
    if not path.lower().endswith((".svg", ".png", ".pdf")):
        raise UsageError(f"output {path!r}: use a .png, .svg or .pdf file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"output {path!r}: the folder {folder} does not exist")
    try:
        viz.save(scene, path)
    except OSError as e:
        raise UsageError(f"output {path!r}: {e.strerror or e}") from None
    print(f"wrote {path}")
