"""A picture as a list of shapes, drawn by matplotlib or written as SVG.

Every picture in ``ptxasync.viz`` is built once as a Scene (rectangles, lines
and text in points, y growing downwards) from data the core computes; the
renderers only draw it. Tests read the scene (positions, labels, counts).
"""
import html

__all__ = ["Scene", "to_svg", "to_figure", "require_matplotlib"]


class Scene:
    """Shapes of one picture, in points, y growing downwards."""

    def __init__(self, width, height, title=""):
        self.width, self.height, self.title = float(width), float(height), title
        self.items = []

    def rect(self, x, y, w, h, fill="none", edge="#444", lw=0.5, tag=None, hatch=False, label=None):
        """A rectangle (points, y down); ``tag`` names what it shows, ``label`` is its tooltip."""
        self.items.append(("rect", dict(x=x, y=y, w=w, h=h, fill=fill, edge=edge, lw=lw, tag=tag,
                                        hatch=hatch, label=label)))

    def line(self, x0, y0, x1, y1, color="#000", lw=1.0, dash=False, tag=None):
        """A straight line."""
        self.items.append(("line", dict(x0=x0, y0=y0, x1=x1, y1=y1, color=color, lw=lw, dash=dash,
                                        tag=tag)))

    def text(self, x, y, s, size=8, ha="center", va="center", color="#000", bold=False,
             rotation=0, tag=None, family="sans-serif"):
        """A text anchored at (x, y); ``size`` in points."""
        self.items.append(("text", dict(x=x, y=y, s=str(s), size=size, ha=ha, va=va, color=color,
                                        bold=bold, rotation=rotation, tag=tag, family=family)))

    def place(self, other, dx, dy):
        """Copy another scene's shapes into this one, shifted by (dx, dy)."""
        for kind, d in other.items:
            d = dict(d)
            for k in ("x", "x0", "x1"):
                if k in d:
                    d[k] += dx
            for k in ("y", "y0", "y1"):
                if k in d:
                    d[k] += dy
            self.items.append((kind, d))

    # --- queries (what tests and callers read) ------------------------------
    def find(self, kind=None, tag=None):
        """The shapes of a kind ("rect", "line", "text") and/or tag, as dicts."""
        return [d for k, d in self.items if (kind is None or k == kind) and (tag is None or d["tag"] == tag)]

    def texts(self, tag=None):
        """The strings of the texts with ``tag``."""
        return [d["s"] for d in self.find("text", tag)]

    # --- rendering --------------------------------------------------------
    def _repr_svg_(self):
        return to_svg(self)

    def svg(self):
        """Standalone SVG text."""
        return to_svg(self)

    def figure(self):
        """A matplotlib Figure (needs matplotlib)."""
        return to_figure(self)


def to_svg(scene):
    """The scene as a standalone SVG document (no matplotlib needed)."""
    w, h = scene.width, scene.height
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}pt" height="{h:.0f}pt" '
           f'viewBox="0 0 {w:.1f} {h:.1f}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">',
           '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="#eeeeee"/>'
           '<line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" stroke-width="2"/></pattern></defs>',
           f'<rect x="0" y="0" width="{w:.1f}" height="{h:.1f}" fill="white"/>']
    if scene.title:
        out.append(f"<title>{html.escape(scene.title)}</title>")
    for kind, d in scene.items:
        if kind == "rect":
            fill = "url(#hatch)" if d["hatch"] else d["fill"]
            tip = f"<title>{html.escape(d['label'])}</title>" if d["label"] else ""
            out.append(f'<rect x="{d["x"]:.2f}" y="{d["y"]:.2f}" width="{d["w"]:.2f}" height="{d["h"]:.2f}" '
                       f'fill="{fill}" stroke="{d["edge"]}" stroke-width="{d["lw"]}">{tip}</rect>')
        elif kind == "line":
            dash = ' stroke-dasharray="4,3"' if d["dash"] else ""
            out.append(f'<line x1="{d["x0"]:.2f}" y1="{d["y0"]:.2f}" x2="{d["x1"]:.2f}" y2="{d["y1"]:.2f}" '
                       f'stroke="{d["color"]}" stroke-width="{d["lw"]}"{dash}/>')
        else:
            anchor = {"left": "start", "center": "middle", "right": "end"}[d["ha"]]
            base = {"top": "hanging", "center": "central", "bottom": "alphabetic",
                    "baseline": "alphabetic"}[d["va"]]
            weight = ' font-weight="bold"' if d["bold"] else ""
            fam = ' font-family="DejaVu Sans Mono, monospace"' if d["family"] == "monospace" else ""
            rot = f' transform="rotate({-d["rotation"]} {d["x"]:.2f} {d["y"]:.2f})"' if d["rotation"] else ""
            out.append(f'<text x="{d["x"]:.2f}" y="{d["y"]:.2f}" font-size="{d["size"]}" text-anchor="{anchor}" '
                       f'dominant-baseline="{base}" fill="{d["color"]}"{weight}{fam}{rot}>{html.escape(d["s"])}</text>')
    out.append("</svg>")
    return "\n".join(out)


def require_matplotlib():
    """The matplotlib module, or an ImportError saying how to get it."""
    try:
        import matplotlib
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise ImportError("this picture needs matplotlib: pip install matplotlib (or pip install \".[plot]\" "
                          "in the repository; the .svg() and text forms need nothing)") from None
    return matplotlib


MAX_PNG_WIDTH = 2000   # pixels: a wide picture is drawn at a lower dpi (down to 72), not wider


def png_dpi(width):
    """The dpi a picture ``width`` points wide is drawn at: 150, or less for one
    that would be more than MAX_PNG_WIDTH pixels wide (never below 72, the
    picture's own scale, where a 7-point label is 7 pixels)."""
    return max(72.0, min(150.0, MAX_PNG_WIDTH * 72.0 / max(width, 1.0)))


def to_figure(scene):
    """The scene as a matplotlib Figure, drawn 1:1 in points."""
    require_matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle
    # a bare Figure (no pyplot state): Jupyter shows it, savefig writes it
    fig = Figure(figsize=(scene.width / 72.0, scene.height / 72.0), dpi=png_dpi(scene.width))
    ax = fig.add_axes([0, 0, 1, 1])
    ax.set_xlim(0, scene.width)
    ax.set_ylim(scene.height, 0)
    ax.axis("off")
    for kind, d in scene.items:
        if kind == "rect":
            if d["hatch"]:
                ax.add_patch(Rectangle((d["x"], d["y"]), d["w"], d["h"], facecolor="#eeeeee",
                                       edgecolor="#bbbbbb", hatch="///", lw=0))
                ax.add_patch(Rectangle((d["x"], d["y"]), d["w"], d["h"], facecolor="none",
                                       edgecolor=d["edge"], lw=d["lw"]))
            else:
                ax.add_patch(Rectangle((d["x"], d["y"]), d["w"], d["h"], facecolor=d["fill"],
                                       edgecolor=d["edge"], lw=d["lw"]))
        elif kind == "line":
            ax.plot([d["x0"], d["x1"]], [d["y0"], d["y1"]], color=d["color"], lw=d["lw"],
                    ls="--" if d["dash"] else "-", solid_capstyle="butt")
        else:
            ax.text(d["x"], d["y"], d["s"], fontsize=d["size"], ha=d["ha"],
                    va={"top": "top", "center": "center", "bottom": "bottom",
                        "baseline": "baseline"}[d["va"]],
                    color=d["color"], fontweight="bold" if d["bold"] else "normal",
                    rotation=d["rotation"], family=d["family"])
    return fig
