"""Argument parsing helpers shared by the subcommands."""
import argparse


def integer(text):
    """An integer in decimal or 0x hex."""
    try:
        return int(str(text), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (decimal or 0x hex)") from None


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
