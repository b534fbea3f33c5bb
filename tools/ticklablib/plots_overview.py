"""The report's first figure: every clock event device's wake-ups on one pair of shared
axes, the comparison the verdict rests on. Left, a histogram with a log count axis in the
style of OSADL's latency plots (a single late wake-up shows); right, the tail as 1 - CDF on
a log axis down to 1 in 1000 (p99.9), where what real-time users read (p99 and beyond) is
not squeezed flat against 1 as on a linear CDF.

One path for every device: the hrtimer callback where the run measured it (the path the
verdict compares), else the next the latency experiment has. Each device keeps one colour,
each wait one line style. From the kernel's raw samples where they came, else from its
buckets (their edges are the only points known exactly there).
"""

import math

import numpy

from . import experiments
from . import samples as samples_mod
from .figdata import Absent, clock_words, fmt_ns, parse_hist, text_of
from .plots import Drawn, legend_beside, name_clock, new_figure, tail_axis
from .values import measured, num

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
STYLES = {"hlt": "-", "poll": "--"}
PATH_ORDER = ("callback", "event", "hrtimer_irq", "irq")
WIDE = 30              # a spread (max / min) beyond which the latency axis is logarithmic


def chosen_path(rows):
    paths = [text_of(r.get("path")) for r in rows]
    for p in PATH_ORDER:
        if p in paths:
            return p
    return paths[0] if paths else None


class Series:
    """One device and wait on the chosen path: its samples, or its histogram."""

    def __init__(self, row, values, hist):
        self.row = row
        self.device = text_of(row.get("device"))
        self.wait = text_of(row.get("wait"), "")
        self.values = values          # sorted samples, or None
        self.hist = hist              # figdata.Hist, or None

    def span(self):
        if self.values:
            return [v for v in (self.values[0], self.values[-1]) if v > 0]
        got = [x for x in (num(self.row.get("min_ns")), num(self.row.get("max_ns")))
               if x is not None and x > 0]
        if self.hist is not None and self.hist.nonzero_span() is not None:
            first, last = self.hist.nonzero_span()
            got += [e for e in (self.hist.edges[first], self.hist.edges[last + 1]) if e > 0]
        return got

    def tail(self):
        """(x, share of wake-ups later than x): every sample, or every bucket edge."""
        if self.values:
            n = len(self.values)
            return [(x, (n - i - 1) / n) for i, x in enumerate(self.values)], 1.0 / n
        h = self.hist
        total = sum(h.counts) + h.below + h.above
        if not total:
            return [], 1.0
        later = total - h.below
        pts = []
        for i, c in enumerate(h.counts):
            pts.append((h.edges[i], later / total))
            later -= c
            pts.append((h.edges[i + 1], later / total))
        mx = num(self.row.get("max_ns"))
        if mx is not None:
            pts.append((mx, 0.0))
        return pts, 1.0 / total

    def label(self):
        r = self.row
        return "%s%s: p50 %s, p99 %s, max %s" % (
            self.device, " %s" % self.wait if self.wait else "", fmt_ns(r.get("p50_ns")),
            fmt_ns(r.get("p99_ns")), fmt_ns(r.get("max_ns")))


def collect(data):
    """(path, [Series]) of the latency experiment's measured rows on one path."""
    exp = experiments.latency().name
    rows = [r for r in measured(data.results.get(exp, [])) if r.get("device") is not None]
    if not rows:
        raise Absent("no measured %s row" % exp)
    path = chosen_path(rows)
    out = []
    for row in rows:
        if text_of(row.get("path")) != path:
            continue
        s = samples_mod.for_row(data, row)
        values = s.sorted_values() if s is not None and s.values else None
        hist = parse_hist(row.get("hist"))
        if values or (hist is not None and hist.nonzero_span() is not None):
            out.append(Series(row, values, hist))
    if not out:
        raise Absent("the %s rows of path %s carry neither samples nor a histogram"
                     % (exp, path))
    return path, out


def overview(data, options):
    path, series = collect(data)
    devices = list(dict.fromkeys(s.device for s in series))
    colour = {d: COLOURS[i % len(COLOURS)] for i, d in enumerate(devices)}
    every = [x for s in series for x in s.span()]
    log = bool(every) and max(every) / min(every) > WIDE
    lo, hi = (min(every), max(every)) if every else (1, 10)
    fig = new_figure("Every clock event device's wake-ups, path %s: shared axes" % path,
                     2, cols=2)
    hx, tx = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2, sharex=None)
    if log:
        edges = numpy.logspace(math.log10(lo), math.log10(hi * 1.001),
                               max(2, int(math.log10(hi / lo) * 25) + 1))
    else:
        width = max(1, math.ceil((hi - lo + 1) / 120))
        edges = numpy.arange(lo, hi + width + 1, width) - 0.5
    from_buckets = []
    for s in series:
        style = dict(color=colour[s.device], linestyle=STYLES.get(s.wait, ":"),
                     linewidth=1.4)
        if s.values:
            vals = [v for v in s.values if v > 0] if log else s.values
            counts, _ = numpy.histogram(vals, bins=edges)
            hx.step(edges[:-1], counts, where="post", label=s.label(), **style)
        else:
            from_buckets.append(s.device)
            h = s.hist
            keep = [i for i in range(len(h.counts)) if not log or h.edges[i] > 0]
            hx.step([h.edges[i] for i in keep] + [h.edges[keep[-1] + 1]] if keep else [],
                    [h.counts[i] for i in keep] + [h.counts[keep[-1]]] if keep else [],
                    where="post", label=s.label(), **style)
        pts, floor = s.tail()
        pts = [(x, y) for x, y in pts if y > 0 and (x > 0 or not log)]
        if pts:
            tx.step([p[0] for p in pts], [p[1] for p in pts], where="post", **style)
    hx.set_yscale("log")
    hx.set_ylim(bottom=0.7)
    hx.set_ylabel("wake-ups per bin (log)")
    hx.set_title("histogram (log count)", fontsize=10)
    tail_axis(tx, 1.2)
    tx.set_ylabel("share of wake-ups later than x")
    tx.set_title("tail: 1 - CDF (log)", fontsize=10)
    for ax in (hx, tx):
        if log:
            ax.set_xscale("log")
            ax.set_xlim(lo / 1.15, hi * 1.15)
        else:
            pad = max((hi - lo) * 0.05, 1.0)
            ax.set_xlim(lo - pad, hi + pad)
        ax.set_xlabel("latency after the deadline (ns%s)" % (", log" if log else ""))
    legend_beside(tx, *hx.get_legend_handles_labels())
    clock = clock_words(data, [s.row for s in series])
    name_clock(fig, clock)
    waits = sorted({s.wait for s in series if s.wait})
    caption = ("Every device's %s path on one latency axis: left the distribution with a "
               "log count, right the tail (the share later than each latency), where p99 "
               "and p99.9 read off the dotted lines; a colour per device%s." % (
                   path, ", solid hlt, dashed poll" if len(waits) > 1 else ""))
    if from_buckets:
        caption += (" %s: no raw samples, drawn from the kernel's buckets (steps at their "
                    "edges)." % ", ".join(dict.fromkeys(from_buckets)))
    short = [s for s in series if s.values and len(s.values) < 1000]
    if short:
        caption += (" Series of fewer than 1000 wake-ups end above 0.1 %: their p99.9 would "
                    "be their max.")
    return [Drawn("overview_latency", "Every device on shared axes", fig, caption, clock)]


FIGURES = (("overview_latency", "Every device on shared axes", overview),)
