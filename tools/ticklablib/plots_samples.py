"""The wakeup-latency figures drawn from the kernel's raw samples (samples.py), when it
sent them: per clock event device a fine histogram with a log count axis (cyclictest's -h
habit), the distribution on a percentile axis with p50, p99 and p99.9 marked, and the
latency of every wake-up in the order they happened, the worst numbered. plots_latency.py
falls back to the kernel's buckets for a device whose rows came without samples.
"""

import math

import numpy

from . import samples as samples_mod
from .figdata import clock_words, fmt_ns, text_of
from .plots import Drawn, name_clock, new_figure, panel_axes

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


def histogram_figure(data, device, rows, options, got):
    paths = grouped(rows, "path")
    waits = list(grouped(rows, "wait"))
    colour = {w: COLOURS[i % len(COLOURS)] for i, w in enumerate(waits)}
    fig = new_figure("Wakeup latency on %s: histograms per path (raw samples)" % device,
                     len(paths))
    left_out = 0
    for ax, (path, prows) in zip(panel_axes(fig, len(paths)), paths.items()):
        every = [v for r in prows for v in got[id(r)].values.values()]
        log = is_wide(every)
        edges = bins_for(every, log)
        for row in prows:
            series = got[id(row)]
            vals = list(series.values.values())
            if log:
                left_out += len(vals) - len(positive(vals))
                vals = positive(vals)
            wait = text_of(row.get("wait"))
            ax.hist(vals, bins=edges, histtype="step", color=colour[wait], linewidth=1.3,
                    label="%s: %s" % (wait, marks_text(series)))
            for per_mille, _, style in PCTS:
                ax.axvline(series.percentile(per_mille), color=colour[wait],
                           linestyle=style, linewidth=1)
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.7)
        if log:
            ax.set_xscale("log")
        ax.set_title("path %s" % path, fontsize=10)
        ax.set_xlabel("latency after the deadline (ns%s)" % (", log" if log else ""))
        ax.set_ylabel("wake-ups per bin (log)")
        ax.legend(fontsize=6, loc="upper right")
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Every wake-up on %s (the kernel's raw samples), one panel per path, the waits "
               "in colour; count axis logarithmic, so a single late wake-up shows; dotted "
               "p50, dashed p99, dash-dotted p99.9. Bins: 25 a decade on a log axis, whole "
               "ns on a linear one." % device)
    if left_out:
        caption += " %d sample(s) at or below 0 ns cannot sit on the log axis." % left_out
    return Drawn("wakeup_latency_" + options.stems(device),
                 "Wakeup latency on %s: histograms" % device, fig, caption, clock)


PCT_AXIS = ((0.5, "50%"), (0.9, "90%"), (0.99, "99%"), (0.999, "99.9%"), (0.9999, "99.99%"))


def cdf_figure(data, device, rows, options, got):
    waits = grouped(rows, "wait")
    paths = list(grouped(rows, "path"))
    colour = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(paths)}
    fig = new_figure("Wakeup latency on %s: distribution per wait (raw samples)" % device,
                     len(waits))
    every = [v for r in rows for v in got[id(r)].values.values()]
    log = is_wide(every)
    n_max = max(len(got[id(r)].values) for r in rows)
    for ax, (wait, wrows) in zip(panel_axes(fig, len(waits), share=True), waits.items()):
        for row in wrows:
            series = got[id(row)]
            vals = series.sorted_values()
            n = len(vals)
            # the i'th smallest of n is at or above (i + 0.5) / n of the wake-ups: its
            # height 1 / (1 - F) grows without bound towards the worst, which stays on
            # the axis at 2n
            ys = [1.0 / (1.0 - (i + 0.5) / n) for i in range(n)]
            xs = vals
            if log:
                keep = [(x, y) for x, y in zip(xs, ys) if x > 0]
                xs, ys = [k[0] for k in keep], [k[1] for k in keep]
            path = text_of(row.get("path"))
            ax.step(xs, ys, where="post", color=colour[path], linewidth=1.3,
                    label="%s: %s" % (path, marks_text(series)))
            for (per_mille, _, _), marker in zip(PCTS, ("o", "^", "s")):
                x = series.percentile(per_mille)
                if x > 0 or not log:
                    ax.plot([x], [1.0 / (1.0 - per_mille / 1000.0)], marker=marker,
                            color=colour[path], markersize=5, linestyle="none")
        ax.set_yscale("log")
        ax.set_ylim(1.0, 2.0 * n_max * 1.3)
        ticks = [(1.0 / (1.0 - q), text) for q, text in PCT_AXIS if 1.0 / (1.0 - q) <= 2 * n_max]
        ax.set_yticks([t[0] for t in ticks], [t[1] for t in ticks])
        ax.minorticks_off()
        for y, _ in ticks[:3]:
            ax.axhline(y, color="#999999", linewidth=0.6, linestyle=":")
        if log:
            ax.set_xscale("log")
        ax.set_title("wait %s" % wait, fontsize=10)
        ax.set_xlabel("latency after the deadline (ns%s)" % (", log" if log else ""))
        ax.set_ylabel("wake-ups at or below (percentile)")
        ax.legend(fontsize=6, loc="upper left")
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("The distribution of every wake-up on %s, one panel per wait, one curve per "
               "path, on a percentile axis (50 %%, 90 %%, 99 %%, 99.9 %%: each step up a "
               "tenth of the wake-ups left), so the tail is as readable as the median; "
               "circle p50, triangle p99, square p99.9 (the kernel's nearest-rank "
               "definition). With fewer than 1000 samples p99.9 is the worst." % device)
    return Drawn("wakeup_cdf_" + options.stems(device), "Wakeup latency on %s: CDF" % device,
                 fig, caption, clock)


def timeline_figure(data, device, rows, options, got):
    paths = grouped(rows, "path")
    waits = list(grouped(rows, "wait"))
    colour = {w: COLOURS[i % len(COLOURS)] for i, w in enumerate(waits)}
    fig = new_figure("Wakeup latency on %s over the run: every wake-up in order" % device,
                     len(paths))
    every = [v for r in rows for v in got[id(r)].values.values()]
    log = is_wide(every)
    for ax, (path, prows) in zip(panel_axes(fig, len(paths), share=True), paths.items()):
        for row in prows:
            series = got[id(row)]
            pts = series.ordered()
            if log:
                pts = [p for p in pts if p[1] > 0]
            wait = text_of(row.get("wait"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", markersize=2.5,
                    linestyle="none", color=colour[wait], label=wait)
            for k, (seq, value) in enumerate(series.worst(3), 1):
                if value > 0 or not log:
                    ax.annotate(str(k), (seq, value), textcoords="offset points",
                                xytext=(3, 2), fontsize=7, color=colour[wait])
        if log:
            ax.set_yscale("log")
        ax.set_title("path %s" % path, fontsize=10)
        ax.set_xlabel("wake-up number (seq)")
        ax.set_ylabel("latency (ns%s)" % (", log" if log else ""))
        ax.legend(fontsize=7, loc="lower right", markerscale=3)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Every wake-up on %s in the order it happened, one panel per path, the waits "
               "in colour; the three worst of each series numbered (the table of worst "
               "wake-ups says what the kernel knows about them). A stall of the machine "
               "shows as a run of late wake-ups, a one-off as a lone point." % device)
    return Drawn("wakeup_timeline_" + options.stems(device),
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
