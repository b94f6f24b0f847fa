"""Pictures of what the model computes, in three forms each.

* a matplotlib Figure (``*_figure``; needs matplotlib),
* SVG text for Jupyter or a file (``*_svg``; no matplotlib needed),
* plain text for a terminal (``*_text``).

Pictures:

``layout_*(tmap, dst)``
    the shared-memory image of a box: every 16-byte chunk (``level="element"``:
    every element) where the hardware puts it, labelled with its logical
    (row, column), 128-byte lines, swizzle span and repeat; ``compare_*`` puts the
    unswizzled and swizzled images side by side. A destination not aligned to
    the swizzle repeat starts mid-pattern, and the picture says so.
``provenance(tmap, coords)`` then ``provenance_*``
    which global coordinate each loaded element came from, or out-of-bounds fill.
``im2col_*(provenance(tmap, coords, "im2col", offsets))``
    which input pixel (n, d, h, w) and channels fill each row of the column.
``banks_*(banks_data(addresses, width, op))``
    which of the 32 banks each thread of a warp touches, grouped by phase, each
    cell numbered with the wavefront that serves it (``consumers.bank_conflicts``).
``read_order_*(wgmma_read_order(desc, ...))`` / ``ldmatrix_read_order(rows)``
    which fragment element a wgmma operand (descriptor, K/MN-major, type) or an
    ldmatrix reads from each 16-byte chunk (or element) of shared memory; with
    the producer (a TMA load), what each chunk holds and, outlined red, where
    that is not the intended element (``consumers.check_wgmma``'s comparison).
``timeline_*(machine.trace)``
    the engine's trace over logical time: a lane per thread, per asynchronous
    operation (issue to completion) and per mbarrier (phases, arrivals, flips),
    waits and hazards.

Everything is drawn from the core's own answers (``TensorMap.smem_addresses``,
the load itself); no layout rule is re-derived for a picture.
"""
from .banks import BankData, banks_data, banks_figure, banks_scene, banks_svg, banks_text
from .layout import (LayoutData, compare_figure, compare_scene, compare_svg, layout_data,
                     layout_figure, layout_scene, layout_svg, layout_text)
from .provenance import (Provenance, im2col_figure, im2col_scene, im2col_svg, im2col_text,
                         provenance, provenance_figure, provenance_scene, provenance_svg,
                         provenance_text)
from .reads import (ReadOrder, ldmatrix_read_order, read_order_figure, read_order_scene, read_order_svg,
                    read_order_text, wgmma_read_order)
from .scene import MAX_PNG_WIDTH, Scene, png_dpi, require_matplotlib
from .timeline import Timeline, timeline, timeline_figure, timeline_scene, timeline_svg, timeline_text

__all__ = ["layout_data", "layout_scene", "layout_figure", "layout_svg", "layout_text",
           "compare_scene", "compare_figure", "compare_svg", "provenance", "provenance_scene",
           "provenance_figure", "provenance_svg", "provenance_text", "im2col_scene",
           "im2col_figure", "im2col_svg", "im2col_text", "Scene", "LayoutData", "Provenance",
           "require_matplotlib", "save", "Timeline", "timeline", "timeline_scene", "timeline_figure",
           "timeline_svg", "timeline_text", "BankData", "banks_data", "banks_scene", "banks_figure",
           "banks_svg", "banks_text", "ReadOrder", "wgmma_read_order", "ldmatrix_read_order",
           "read_order_scene", "read_order_figure", "read_order_svg", "read_order_text"]


def save(picture, path, dpi=None):
    """Write a picture to ``path``: a Scene (``*_scene``; .svg needs nothing,
    .png/.pdf need matplotlib) or a matplotlib Figure (``*_figure``). Without
    ``dpi``: 150, or less for a picture that would be more than MAX_PNG_WIDTH
    pixels wide (never below 72, the picture's own scale); a Figure made here
    already has that dpi, so ``fig.savefig(path)`` writes the same PNG."""
    path = str(path)
    if hasattr(picture, "savefig"):                 # a matplotlib Figure
        picture.savefig(path, dpi="figure" if dpi is None else dpi)
        return path
    if not isinstance(picture, Scene):
        raise TypeError(f"save takes a Scene (viz.*_scene) or a matplotlib Figure (viz.*_figure), "
                        f"not {type(picture).__name__}")
    if path.endswith(".svg"):
        with open(path, "w", encoding="utf-8") as f:
            f.write(picture.svg())
    else:
        picture.figure().savefig(path, dpi=png_dpi(picture.width) if dpi is None else dpi)
    return path
