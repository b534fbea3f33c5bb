"""The figure machinery, on matplotlib (Debian's python3-matplotlib, Agg backend): a figure
of the report's width, its panels, the clock line under its axes, and saving it.

Every figure names the clock that measured it and that clock's resolution (a line under
its axes, and in its caption), and its caption says what was left out, so the page never
hides a row silently. `save` writes a figure as PNG and SVG (text kept as text, so it can
be searched). Which figures exist and in what order is figures.py's business; what they
are drawn from (histograms, clock words, rows) is figdata.py's.
"""

import os
import textwrap
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams.update({"svg.hashsalt": "ticklab", "svg.fonttype": "none",
                            "text.parse_math": False,  # a record's "$" is text, not TeX
                            "font.size": 9, "axes.grid": True, "grid.alpha": 0.3})
from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)

SIZE = (7.5, 4.2)


@dataclass
class Drawn:
    """A figure drawn in memory, before it is written."""
    name: str
    title: str
    fig: object
    caption: str
    clock: str


def new_figure(title, panels=1, cols=2, panel_h=3.0):
    """A figure 750 px wide; with several panels, `cols` to a row and panel_h in a row."""
    rows = (panels + cols - 1) // cols if panels > 1 else 1
    fig = Figure(figsize=(SIZE[0], SIZE[1] if rows == 1 else 0.9 + panel_h * rows), dpi=100,
                 layout="constrained")
    fig.suptitle(title, fontsize=11)
    return fig


def panel_axes(fig, n, share=False, cols=2):
    """n axes, `cols` to a row when n > 1; `share`: one x and y range for all."""
    if n == 1:
        return [fig.add_subplot()]
    rows = (n + cols - 1) // cols
    first = fig.add_subplot(rows, cols, 1)
    kw = {"sharex": first, "sharey": first} if share else {}
    return [first] + [fig.add_subplot(rows, cols, i + 1, **kw) for i in range(1, n)]


def name_clock(fig, words):
    """The clock line under a figure's axes, wrapped to the figure's width."""
    fig.supxlabel(textwrap.fill(words, 120), fontsize=8, color="#333333")


def save(drawn, outdir, svg=True):
    """Write a drawn figure as outdir/NAME.png (and .svg); returns the two paths (the SVG
    one None when not written)."""
    png = os.path.join(outdir, drawn.name + ".png")
    drawn.fig.savefig(png, format="png", metadata={"Software": None})
    if not svg:
        return png, None
    path = os.path.join(outdir, drawn.name + ".svg")
    drawn.fig.set_layout_engine("none")  # keep the layout just computed for the SVG
    drawn.fig.savefig(path, format="svg", metadata={"Date": None})
    return png, path
