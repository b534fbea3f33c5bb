"""A latency experiment's figures drawn from the kernel's raw samples (samples.py), when it
sent them: per clock event device and wait, a fine histogram with a log count axis
(cyclictest's -h habit) beside the same samples on a percentile axis with p50, p99 and
(from 1000 samples on) p99.9 marked; and the latency of every wake-up in the order they
happened, the worst numbered. Every device's figure uses the same latency axis (`Axis`,
chosen over all of them by plots_latency), so two devices are compared by eye.
plots_latency.py falls back to the kernel's buckets (a histogram and a CDF figure) for a
device whose rows came without samples.
"""

import math

import numpy

from . import samples as samples_mod
from .figdata import clock_words, fmt_ns, text_of
from .plots import Drawn, declutter, legend_beside, name_clock, new_figure, panel_axes

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
PCTS = ((500, "p50", ":"), (990, "p99", "--"), (999, "p99.9", "-."))
WIDE = 30  # a spread (max / min) beyond which an axis is logarithmic


def grouped(rows, key):
    out = {}
    for row in rows:
        out.setdefault(text_of(row.get(key)), []).append(row)
    return out


def positive(vals):
    return [v for v in vals if v > 0]


def is_wide(vals):
    pos = positive(vals)
    return bool(pos) and max(pos) / min(pos) > WIDE


def bins_for(vals, log):
    """Bin edges: 25 a decade on a log axis; on a linear one whole ns, about 120 bins."""
    if log:
        pos = positive(vals)
        lo, hi = math.log10(min(pos)), math.log10(max(pos) * 1.001)
        return numpy.logspace(lo, hi, max(2, int((hi - lo) * 25) + 1))
    lo, hi = min(vals), max(vals)
    width = max(1, math.ceil((hi - lo + 1) / 120))
    return numpy.arange(lo, hi + width + 1, width) - 0.5


def marks_text(series):
    """The legend's figures for a series: its p99 and worst (the rest are on the axis)."""
    return "p99 %s, max %s" % (fmt_ns(series.percentile(990)),
                               fmt_ns(max(series.values.values())))


HANDLERS = ("event", "callback")  # deadline to handler: the later stamp of each series


def distribution_figure(data, device, rows, options, got, stem, axis):
    """One row of two panels per wait: the histogram of every path (step lines, log count
    axis) and the same samples on a percentile axis, on the latency axis every device's
    figure shares (`axis`: plots_latency.Axis)."""
    waits = grouped(rows, "wait")
    paths = list(grouped(rows, "path"))
    colour = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(paths)}
    cols = min(2 * len(waits), 4)
    fig = new_figure("Wakeup latency on %s: distribution (raw samples)" % device,
                     2 * len(waits), cols=cols, panel_h=2.9)
    axes = panel_axes(fig, 2 * len(waits))
    every = [v for r in rows for v in got[id(r)].values.values()]
    edges = bins_for([v for v in every if v > 0] or [1] if axis.log else every, axis.log)
    n_max = max(len(got[id(r)].values) for r in rows)
    left_out = 0
    for k, (wait, wrows) in enumerate(waits.items()):
        hx, cx = axes[2 * k], axes[2 * k + 1]
        for row in wrows:
            series = got[id(row)]
            path = text_of(row.get("path"))
            vals = list(series.values.values())
            if axis.log:
                left_out += len(vals) - len(positive(vals))
                vals = positive(vals)
            hx.hist(vals, bins=edges, histtype="step", color=colour[path], linewidth=1.2,
                    label=path)
            percentile_curve(cx, series, colour[path], axis.log)
        hx.set_yscale("log")
        hx.set_ylim(bottom=0.7)
        hx.set_title("wait %s: histogram" % wait, fontsize=10)
        hx.set_ylabel("wake-ups per bin (log)")
        cx.set_title("wait %s: percentiles" % wait, fontsize=10)
        percentile_axis(cx, n_max)
        for ax in (hx, cx):
            axis.apply(ax)
    legend_beside(axes[-1], *axes[0].get_legend_handles_labels(), title="path")
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Every wake-up on %s (raw samples), a row per wait, the paths in colour: "
               "histogram on a log count axis (a single late wake-up shows), and the same on "
               "a percentile axis, circle p50, triangle p99%s; the latency axis is the same "
               "for every device." % (device, ", square p99.9" if samples_mod.p999_computable(n_max)
                                      else " (p99.9 needs 1000 samples: not marked)"))
    if left_out:
        caption += " %d sample(s) at or below 0 ns cannot sit on the log axis." % left_out
    return Drawn("%s_%s" % (stem, options.stems(device)),
                 "Wakeup latency on %s: distribution" % device, fig, caption, clock)


PCT_AXIS = ((0.5, "50%"), (0.9, "90%"), (0.99, "99%"), (0.999, "99.9%"), (0.9999, "99.99%"))


def percentile_curve(ax, series, colour, log):
    """The i'th smallest of n samples at height 1 / (1 - (i + 0.5) / n): the percentile
    axis, on which the worst of n stays on the axis at 2n."""
    vals = series.sorted_values()
    n = len(vals)
    pts = [(x, 1.0 / (1.0 - (i + 0.5) / n)) for i, x in enumerate(vals) if x > 0 or not log]
    ax.step([p[0] for p in pts], [p[1] for p in pts], where="post", color=colour,
            linewidth=1.2)
    for (per_mille, _, _), marker in zip(PCTS, ("o", "^", "s")):
        if per_mille == 999 and not samples_mod.p999_computable(n):
            continue
        x = series.percentile(per_mille)
        if x > 0 or not log:
            ax.plot([x], [1.0 / (1.0 - per_mille / 1000.0)], marker=marker, color=colour,
                    markersize=5, linestyle="none")


def percentile_axis(ax, n_max):
    ax.set_yscale("log")
    ax.set_ylim(1.0, 2.0 * n_max * 1.3)
    ticks = [(1.0 / (1.0 - q), text) for q, text in PCT_AXIS if 1.0 / (1.0 - q) <= 2 * n_max]
    ax.set_yticks([t[0] for t in ticks], [t[1] for t in ticks])
    ax.minorticks_off()
    for y, _ in ticks[:3]:
        ax.axhline(y, color="#999999", linewidth=0.6, linestyle=":")
    ax.set_ylabel("at or below (percentile)")


def timeline_figure(data, device, rows, options, got, stem, axis):
    """One panel per wait: each wake-up's deadline-to-handler latency in the order they
    happened (the event and callback paths), the three worst of each numbered; the latency
    axis (here y) the same for every device (`axis`)."""
    waits = grouped(rows, "wait")
    handler_rows = [r for r in rows if r.get("path") in HANDLERS] or rows
    paths = list(dict.fromkeys(text_of(r.get("path")) for r in handler_rows))
    colour = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(paths)}
    fig = new_figure("Wakeup latency on %s over the run: every wake-up in order" % device,
                     len(waits), panel_h=3.0, cols=min(len(waits), 2))
    labels = []
    axes = panel_axes(fig, len(waits), share=True)
    for ax, wait in zip(axes, waits):
        worst = []
        for row in handler_rows:
            if text_of(row.get("wait")) != wait:
                continue
            series = got[id(row)]
            pts = series.ordered()
            if axis.log:
                pts = [p for p in pts if p[1] > 0]
            path = text_of(row.get("path"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", markersize=2.5,
                    linestyle="none", color=colour[path], label=path)
            worst += [(value, seq, path) for seq, value in series.worst(3)
                      if value > 0 or not axis.log]
        # the panel's three worst, numbered; each label placed on another side of its
        # point so that two spikes close together do not write over each other
        n = max([len(got[id(r)].values) for r in handler_rows] + [1])
        for k, (value, seq, path) in enumerate(sorted(worst, reverse=True)[:3]):
            right = seq > 0.6 * n  # the label on the side with room
            labels.append(ax.annotate(
                "%d %s" % (k + 1, path), (seq, value), textcoords="offset points",
                xytext=(-4 if right else 4, 2), fontsize=7, ha="right" if right else "left",
                color=colour[path]))
        axis.apply(ax, which="y")
        ax.set_title("wait %s" % wait, fontsize=10)
        ax.set_xlabel("wake-up number (seq)")
        ax.set_ylabel("deadline to handler (ns%s)" % (", log" if axis.log else ""))
    legend_beside(axes[-1], *axes[0].get_legend_handles_labels(), markerscale=3, title="path")
    clock = clock_words(data, handler_rows)
    name_clock(fig, clock)
    declutter(fig, labels)
    caption = ("Every wake-up on %s in order, deadline to handler (event function or "
               "callback); the three worst numbered (split in the table above). A stall shows "
               "as a run of late wake-ups, a one-off as a lone point; the latency axis is "
               "the same for every device." % device)
    return Drawn("%s_%s" % (stem, options.stems(device)),
                 "Wakeup latency on %s over the run" % device, fig, caption, clock)


def series_of(data, rows):
    """{id(row): Series} when every row has samples, else None."""
    got = {}
    for row in rows:
        series = samples_mod.for_row(data, row)
        if series is None or not series.values:
            return None
        got[id(row)] = series
    return got
