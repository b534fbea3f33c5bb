"""The figure machinery, on matplotlib (Debian's python3-matplotlib, Agg backend): a figure
as wide as the report's body, its panels, legends beside the data rather than on it, the
clock line under its axes, and saving it.

Every figure names the clock that measured it and that clock's resolution (a line under
its axes), and its caption says what was left out, so the page never hides a row
silently. `save` draws a figure once: the PNG is written from that drawing, and what the
tests look at (labels that collide, a legend on the data, each panel's axes) is measured
on it too; an SVG (text kept as text, so it can be searched) only when asked. Which
figures exist and in what order is figures.py's business; what they are drawn from
(histograms, clock words, rows) is figdata.py's.
"""

import math
import os
import textwrap
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams.update({"svg.hashsalt": "ticklab", "svg.fonttype": "none",
                            "text.parse_math": False,  # a record's "$" is text, not TeX
                            "font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
                            # a panel's title at its top edge, not moved over tick labels
                            # on top (no panel has them): finding out measured both axes'
                            # tick labels again for every title, an eighth of the drawing
                            "axes.titley": 1.0})
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)
from matplotlib.layout_engine import LayoutEngine  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402
from matplotlib.ticker import (AutoLocator, FixedFormatter, FixedLocator,  # noqa: E402
                               FuncFormatter, MaxNLocator, NullFormatter, NullLocator)

def _fonts_read_once():
    """matplotlib's FreeType reads a font from its file through Python, a seek and a read
    for every glyph it lays out: about 100,000 system calls in one report, and text five
    times slower to lay out than from memory. Each font file read once and handed over as
    bytes instead. Only where matplotlib loads fonts as the one this was written for does
    (3.6, as Debian 12 ships it: the private `_get_font(paths, hinting_factor, *,
    _kerning_factor, thread_id)`); anywhere else matplotlib is left as it is, only slower."""
    import functools
    import inspect
    import io
    from matplotlib import font_manager, ft2font
    known = getattr(font_manager, "_get_font", None)
    try:
        params = list(inspect.signature(known).parameters) if known else []
    except (TypeError, ValueError):
        return
    if params != ["font_filepaths", "hinting_factor", "_kerning_factor", "thread_id"]:
        return

    @functools.lru_cache(maxsize=None)
    def contents(path):
        with open(path, "rb") as f:
            return f.read()

    def load(path, hinting_factor, kerning, **kw):
        try:
            data = io.BytesIO(contents(path))
        except OSError:
            data = path   # matplotlib's own error, as it would say it
        return ft2font.FT2Font(data, hinting_factor, _kerning_factor=kerning, **kw)

    @functools.lru_cache(maxsize=64)
    def get_font(font_filepaths, hinting_factor, *, _kerning_factor, thread_id):
        first, *rest = font_filepaths
        return load(first, hinting_factor, _kerning_factor, _fallback_list=[
            load(p, hinting_factor, _kerning_factor) for p in rest])

    font_manager._get_font = get_font


_fonts_read_once()

# The report's body is 1372 px at most (htmlpage.STYLE): a figure fills it at 100 dpi.
WIDTH_IN = 13.4
SIZE = (WIDTH_IN, 3.9)
DPI = 100
COLS = 3   # panels to a row by default: wide and short, so a figure fits a screen


@dataclass
class Drawn:
    """A figure drawn in memory, before it is written."""
    name: str
    title: str
    fig: object
    caption: str
    clock: str


def new_figure(title, panels=1, cols=None, panel_h=3.0):
    """A figure as wide as the page; with several panels, `cols` to a row (default up to
    COLS) and panel_h inches a row."""
    cols = cols or min(max(panels, 1), COLS)
    rows = (panels + cols - 1) // cols if panels > 1 else 1
    fig = Figure(figsize=(SIZE[0], SIZE[1] if rows == 1 else 0.9 + panel_h * rows), dpi=DPI,
                 layout=GridLayout())
    FigureCanvasAgg(fig)  # laid out and measured as it will be saved (overlapping_labels)
    fig.suptitle(title, fontsize=11)
    fig._ticklab_cols = cols
    return fig


class GridLayout(LayoutEngine):
    """The panels placed in their grid from one measurement of what stands around each
    (tick labels, axis labels, title, a legend beside or below): the columns as wide as
    each other, the rows as tall, every label inside the figure, the title above and the
    clock line below. matplotlib's constrained layout measures everything twice over and
    cost a third of the report's drawing; what stands around a panel hardly changes with
    its size, so one measurement at a first guess of the place is enough (a label that
    moved onto another is what overlapping_labels finds)."""
    _adjust_compatible = True   # the first guess is set by subplots_adjust
    _colorbar_gridspec = False
    PAD_PX = 6   # between neighbours and at the figure's edges

    def execute(self, fig):
        panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_subplotspec()]
        if not panels:
            return
        renderer = fig._get_renderer()
        nrows, ncols = panels[0].get_subplotspec().get_gridspec().get_geometry()
        width, height = fig.bbox.width, fig.bbox.height
        pad = self.PAD_PX
        top = pad + _text_height(fig._suptitle, renderer, pad)
        bottom = pad + _text_height(fig._supxlabel, renderer, pad)
        if fig._suptitle is not None:      # hung from the top edge (its "top" alignment)
            fig._suptitle.set_y(1 - pad / height)
        if fig._supxlabel is not None:     # standing on the bottom edge
            fig._supxlabel.set_y(pad / height)
        # a first guess, where the panels are measured: roughly where they will stand
        # (subplots_adjust puts every panel there)
        fig.subplots_adjust(left=0.06, right=0.94, top=1 - (top + 20) / height,
                            bottom=(bottom + 40) / height, wspace=0.3, hspace=0.45)
        left_of, right_of = [0.0] * ncols, [0.0] * ncols
        above, below = [0.0] * nrows, [0.0] * nrows
        for ax in panels:
            spec = ax.get_subplotspec()
            box = ax.get_position().transformed(fig.transFigure)
            tight = ax.get_tightbbox(renderer)
            if tight is None:
                continue
            cols, rows = spec.colspan, spec.rowspan
            left_of[cols.start] = max(left_of[cols.start], box.x0 - tight.x0)
            right_of[cols.stop - 1] = max(right_of[cols.stop - 1], tight.x1 - box.x1)
            above[rows.start] = max(above[rows.start], tight.y1 - box.y1)
            below[rows.stop - 1] = max(below[rows.stop - 1], box.y0 - tight.y0)
        w = (width - sum(left_of) - sum(right_of) - pad * (ncols + 1)) / ncols
        h = (height - top - bottom - sum(above) - sum(below) - pad * (nrows - 1)) / nrows
        w, h = max(w, 20.0), max(h, 20.0)
        xs, x = [], pad
        for c in range(ncols):
            xs.append(x + left_of[c])
            x += left_of[c] + w + right_of[c] + pad
        ys, y = [], height - top
        for r in range(nrows):
            ys.append(y - above[r] - h)   # bottom of row r, rows counted from the top
            y -= above[r] + h + below[r] + pad
        for ax in panels:
            spec = ax.get_subplotspec()
            c0, c1 = spec.colspan.start, spec.colspan.stop - 1
            r0, r1 = spec.rowspan.start, spec.rowspan.stop - 1
            x0, x1 = xs[c0], xs[c1] + w
            y0, y1 = ys[r1], ys[r0] + h
            ax._set_position(Bbox.from_extents(x0 / width, y0 / height,
                                               x1 / width, y1 / height))


def _text_height(text, renderer, pad):
    """Pixels a figure's title or clock line takes (0 without one)."""
    if text is None or not text.get_visible() or not text.get_text().strip():
        return 0.0
    return text.get_window_extent(renderer).height + pad


TAIL_FLOOR = 1e-3   # a tail axis (1 - CDF) reaches p99.9


def tail_axis(ax, top):
    """A 1 - CDF axis on a log scale from p99.9 up to `top`: its shares named, the p99 and
    p99.9 lines dotted."""
    ax.set_yscale("log")
    ax.set_ylim(TAIL_FLOOR / 1.6, top)
    ax.set_yticks([1, 0.1, 0.01, 0.001], ["all", "10 % (p90)", "1 % (p99)", "0.1 % (p99.9)"])
    ax.minorticks_off()
    for y in (0.01, 0.001):
        ax.axhline(y, color="#999999", linewidth=0.6, linestyle=":")


def warm_up():
    """One small figure drawn: the fonts and caches every later figure uses are loaded."""
    fig = new_figure("warm up", panels=2)
    for ax in panel_axes(fig, 2):
        ax.plot([1, 2], [1, 10], label="x")
        ax.set_yscale("log")
        legend_beside(ax)
    fig.canvas.draw()


def panel_axes(fig, n, share=False, cols=None):
    """n axes, `cols` to a row (the figure's own count by default) when n > 1; `share`: one
    x and y range for all, the y tick labels only in the first column."""
    if n == 1:
        return [fig.add_subplot()]
    cols = cols or getattr(fig, "_ticklab_cols", 2)
    rows = (n + cols - 1) // cols
    first = fig.add_subplot(rows, cols, 1)
    kw = {"sharex": first, "sharey": first} if share else {}
    axes = [first] + [fig.add_subplot(rows, cols, i + 1, **kw) for i in range(1, n)]
    if share:   # one y scale for the row: its labels once, at the row's left
        for i, ax in enumerate(axes):
            if i % cols:
                ax.tick_params(labelleft=False)
    return axes


def legend_beside(ax, handles=None, labels=None, **kw):
    """The axes' legend outside its data: to the right of the axes (GridLayout makes
    room), never on a curve or a bar."""
    kw.setdefault("fontsize", 7)
    args = (handles, labels) if handles is not None else ()
    return ax.legend(*args, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                     **kw)


BELOW_PT = 34   # under an axes' tick labels and x label, in points


def legend_below(ax, handles=None, labels=None, ncol=2, **kw):
    """The axes' legend under its x label (a panel in a row of several, where a legend
    beside it would squeeze every column)."""
    from matplotlib.transforms import ScaledTranslation
    kw.setdefault("fontsize", 7)
    args = (handles, labels) if handles is not None else ()
    fig = ax.get_figure()
    where = ax.transAxes + ScaledTranslation(0, -BELOW_PT / 72.0, fig.dpi_scale_trans)
    return ax.legend(*args, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                     bbox_transform=where, ncol=ncol, borderaxespad=0.0, **kw)


def name_clock(fig, words):
    """The clock line under a figure's axes, wrapped to the figure's width."""
    fig.supxlabel(textwrap.fill(words, 120), fontsize=8, color="#333333")


def mark_published(ax, xs, ys, horizontal=False):
    """The publications' figures as black stars, labelled once."""
    if not xs:
        return
    if horizontal:
        xs, ys = ys, xs
    ax.plot(xs, ys, marker="*", markersize=11, linestyle="none", color="black",
            label="published")


# --- tick labels as plain text ------------------------------------------------------------
# matplotlib labels a log axis with TeX ("$\\mathdefault{10^{7}}$"); with text.parse_math off
# (a record's "$" must stay text) that TeX is printed raw. So every log and symlog axis gets
# plain labels: durations with their unit on an axis in ns ("10 us", "1 ms"), numbers with
# SI prefixes elsewhere ("10k", "1M"), and no labels on the minor ticks.

def si_number(value):
    """1, 10, 100, 1k, 10k, 1M ... as text (a tick value; negative and fractional too)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    value = abs(value)
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return "%s%g%s" % (sign, round(value / scale, 3), prefix)
    return "%s%g" % (sign, round(value, 6))


def duration_text(ns):
    """A tick value in ns as a duration: 0, 500 ns, 10 us, 1.5 ms, -1 us."""
    if ns == 0:
        return "0"
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return "%s%g %s" % (sign, round(ns / scale, 3), unit)
    return "%s%g ns" % (sign, round(ns, 3))


def symlog_y(ax, linthresh, values):
    """A symmetric-log y axis, linear within +-linthresh, ticked at 0 and at the powers of
    ten from the one at or below linthresh out (matplotlib's own ticks crowd the linear
    part until their labels collide), its range covering every value."""
    ax.set_yscale("symlog", linthresh=linthresh)
    top = max([abs(v) for v in values] + [linthresh])
    k0 = math.floor(math.log10(linthresh) + 1e-9)
    k1 = math.ceil(math.log10(top) + 1e-9)
    decades = [10.0 ** k for k in range(k0, k1 + 1) if 10.0 ** k >= linthresh / 2]
    ax.yaxis.set_major_locator(FixedLocator(sorted([-d for d in decades] + [0.0] + decades)))
    ax.yaxis.set_minor_locator(FixedLocator([]))
    lo = min(values + [0])
    hi = max(values + [0])
    ax.set_ylim(-_pad(-lo, linthresh) if lo < 0 else -linthresh,
                _pad(hi, linthresh) if hi > 0 else linthresh)


def _pad(v, linthresh):
    return v * 2 if v > linthresh else linthresh * 1.5


class PlainFormatter(FuncFormatter):
    """plain_ticks' own labels (a figure's own FuncFormatter or fixed labels are kept)."""


def _is_ns(axis):
    text = axis.get_label().get_text()
    return "(ns" in text


def _unit_out_of_label(axis):
    """"latency (ns, log)" -> "latency (log)": the tick labels carry the unit now."""
    text = axis.get_label().get_text()
    for old, new in (("(ns, ", "("), (" (ns)", ""), ("(ns)", "")):
        text = text.replace(old, new)
    axis.set_label_text(text)


def _big(axis, lim):
    return max(abs(lim[0]), abs(lim[1])) >= 1e5


def plain_ticks(fig):
    """Every axis of the figure labelled in plain text: an axis in ns (its label says
    "(ns") in durations with their unit, any other log, symlog or large linear axis with
    SI prefixes; minor ticks unlabelled on log axes."""
    for ax in fig.axes:
        for axis, scale, lim in ((ax.xaxis, ax.get_xscale(), ax.get_xlim()),
                                 (ax.yaxis, ax.get_yscale(), ax.get_ylim())):
            current = axis.get_major_formatter()
            if isinstance(current, (FixedFormatter, FuncFormatter)) and \
                    not isinstance(current, PlainFormatter):
                continue  # labelled by the figure itself (set_xticks with labels)
            if scale in ("log", "symlog", "logit"):
                # unlabelled minor ticks (a dozen objects each) cost most of a log axis'
                # drawing; the major ticks and their grid carry the reading
                axis.set_minor_locator(NullLocator())
            elif type(axis.get_major_locator()) is AutoLocator:
                # at most six steps on a linear axis (matplotlib's own asks for up to nine
                # on a wide panel): a tick is made of five artists, and the ticks were the
                # largest part of drawing a panel
                axis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
            ns = _is_ns(axis)
            if not ns and scale not in ("log", "symlog") and not _big(axis, lim):
                continue
            words = duration_text if ns else si_number
            axis.set_major_formatter(PlainFormatter(lambda v, _pos, w=words: w(v)))
            if scale in ("log", "symlog"):
                axis.set_minor_formatter(NullFormatter())
            if ns:
                _unit_out_of_label(axis)


# --- text that must not collide ----------------------------------------------------------

def _texts(fig):
    """Every visible text of a drawn figure with its box on the canvas: tick labels
    inside their axis' view, axis labels, titles, legends, annotations."""
    out = []
    for ax in fig.axes:
        for axis, lim in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            lo, hi = min(lim), max(lim)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not (lo - 1e-9 * abs(hi - lo) <= tick.get_loc() <= hi + 1e-9 * abs(hi - lo)):
                    continue
                for label in (tick.label1, tick.label2):
                    out.append(label)
            out.append(axis.label)
        out += [ax.title, ax._left_title, ax._right_title]
        out += [t for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None:
            out += list(legend.get_texts())
    out += [t for t in (fig._suptitle, fig._supxlabel, fig._supylabel) if t is not None]
    out += list(fig.texts)
    unique = {id(t): t for t in out}  # the figure's own texts are listed twice
    return [t for t in unique.values() if t.get_visible() and t.get_text().strip()]


def declutter(fig, annotations, step_pt=9, tries=6):
    """Move annotations (textcoords "offset points") down, then up, until none overlaps
    an earlier one: two spikes close together keep readable labels."""
    if len(annotations) < 2:
        return
    # measured where the axes stand before the layout: the layout moves the panels, not
    # one panel's points against each other, so no drawing is needed for it
    renderer = fig.canvas.get_renderer()
    placed = []
    for t in annotations:
        x0, y0 = t.xyann
        for k in range(tries * 2 + 1):
            shift = ((k + 1) // 2) * step_pt * (-1 if k % 2 else 1)
            t.xyann = (x0, y0 + shift)
            box = t.get_window_extent(renderer).expanded(1.1, 1.2)
            if not any(box.overlaps(p) for p in placed):
                break
        placed.append(t.get_window_extent(renderer).expanded(1.1, 1.2))


EDGE = "(the figure's edge)"


def overlapping_labels(fig, slack_px=1.0, draw=True):
    """[(text a, text b)] for every two visible texts of the figure whose boxes overlap
    by more than slack_px each way, and (text, EDGE) for every text reaching more than
    slack_px out of the figure (cut off in the PNG), once the figure is laid out as it
    will be saved (`draw` false: it was just drawn)."""
    if draw:
        fig.canvas.draw()
    import numpy as np
    renderer = fig.canvas.get_renderer()
    names, boxes = [], []
    for t in _texts(fig):
        box = t.get_window_extent(renderer)
        if box.width > 0 and box.height > 0 and all(map(math.isfinite, box.bounds)):
            names.append(t.get_text())
            boxes.append(box.extents)
    if not boxes:
        return []
    b = np.array(boxes)   # x0, y0, x1, y1 per text: every pair compared at once
    wide = np.minimum.outer(b[:, 2], b[:, 2]) - np.maximum.outer(b[:, 0], b[:, 0])
    tall = np.minimum.outer(b[:, 3], b[:, 3]) - np.maximum.outer(b[:, 1], b[:, 1])
    hit = np.triu((wide > slack_px) & (tall > slack_px), k=1)
    out = [(names[i], names[j]) for i, j in zip(*np.nonzero(hit))]
    width, height = fig.bbox.width, fig.bbox.height
    out += [(names[i], EDGE) for i in range(len(names))
            if min(b[i, 0], b[i, 1]) < -slack_px or b[i, 2] > width + slack_px
            or b[i, 3] > height + slack_px]
    return out


def legends_on_data(fig, slack_px=2.0):
    """[axes title] of every panel whose legend lies on its plotting area (a drawn
    figure): a legend there hides what it is drawn over."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        a = ax.get_window_extent(renderer)
        b = legend.get_window_extent(renderer)
        if min(a.x1, b.x1) - max(a.x0, b.x0) > slack_px and \
                min(a.y1, b.y1) - max(a.y0, b.y0) > slack_px:
            out.append(ax.get_title() or (fig._suptitle.get_text() if fig._suptitle else ""))
    return out


def axes_facts(fig):
    """Each panel's axes as the tests compare them: x scale and limits, y scale."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.has_data():
            continue
        out.append({"title": ax.get_title(), "x": ax.get_xscale(),
                    "xlim": [float(v) for v in ax.get_xlim()], "y": ax.get_yscale(),
                    "ylim": [float(v) for v in ax.get_ylim()],
                    "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel()})
    return out


@dataclass
class Saved:
    """A figure written: its files (svg None unless asked) and what was measured on it."""
    png: str
    svg: object
    overlaps: tuple = ()
    legends_on_data: tuple = ()
    axes: tuple = ()


def png_bytes(rgba):
    """An h x w x 4 array of 8-bit RGBA pixels as the bytes of an RGB PNG: every row
    unfiltered, deflated at zlib's fastest level. A figure is mostly flat colour, so this
    is about 15 % larger than PIL's adaptively filtered PNG and written in half the time
    (PIL's encoder and its RGBA-to-RGB conversion were a tenth of a report's CPU)."""
    import struct
    import zlib
    import numpy as np
    h, w = rgba.shape[:2]
    rows = np.zeros((h, 1 + 3 * w), dtype=np.uint8)   # filter type 0 ahead of each row
    rows[:, 1:] = rgba[:, :, :3].reshape(h, 3 * w)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 1)) + chunk(b"IEND", b""))


def write_png(fig, path):
    """The canvas as drawn, as a PNG (no second drawing: savefig would lay it out and
    draw it again)."""
    import numpy as np
    with open(path, "wb") as f:
        f.write(png_bytes(np.asarray(fig.canvas.buffer_rgba())))


def save(drawn, outdir, svg=False, measure=True):
    """Draw a figure once and write it as outdir/NAME.png (and .svg when `svg`); returns
    Saved. `measure`: the collisions and legends on data of that drawing."""
    plain_ticks(drawn.fig)
    drawn.fig.canvas.draw()
    saved = Saved(os.path.join(outdir, drawn.name + ".png"), None)
    if measure:
        saved.overlaps = tuple(overlapping_labels(drawn.fig, draw=False))
        saved.legends_on_data = tuple(legends_on_data(drawn.fig))
        saved.axes = tuple(axes_facts(drawn.fig))
    write_png(drawn.fig, saved.png)
    if svg:
        saved.svg = os.path.join(outdir, drawn.name + ".svg")
        drawn.fig.set_layout_engine("none")  # keep the layout just computed for the SVG
        drawn.fig.savefig(saved.svg, format="svg", metadata={"Date": None})
    return saved
