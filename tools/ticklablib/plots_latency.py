"""The figures of a latency experiment's series (its rows: device, path, wait; the
experiment module passes its name): for each clock event device, its histograms (one panel
per path, the waits side by side, p50, p99 and max marked), and for every device in one
figure, its tails (1 - CDF on a log axis, a panel per device, a curve per path and wait).
Every device's figures share one latency axis (`Axis`, chosen over all the devices:
logarithmic when the slowest wake-up is 30 times the fastest, else linear, and the same
range), so that a device's figure is compared with another's at a glance; legends sit
beside the panels, never on the data.

The kernel's histogram buckets double in width (0, 16, 32, 64 ... ns: lib/hist.c), so the
whole LAPIC distribution of an icount run (173-191 ns) falls in one bucket. Nothing finer
can be drawn than what the kernel sends, but nothing coarser need be either: the outer
buckets are clipped to the minimum and maximum the kernel measured, bars of unequal width
show wake-ups per ns rather than per bucket, and the tail passes exactly through every
bucket edge and marks the percentiles the kernel computed from every sample. A linear
histogram from the kernel (lo_ns, bucket_ns, counts) is drawn bucket for bucket.
"""

from .values import num
from . import plots_samples
from .samples import p999_computable
from .figdata import Absent, clock_words, fmt_ns, parse_hist, partial_note, rows_of, text_of
from .plots import TAIL_FLOOR, Drawn, legend_beside, name_clock, new_figure, panel_axes, \
    tail_axis
from matplotlib.ticker import MaxNLocator  # noqa: E402  (plots set the backend first)

COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
WAIT_STYLES = {"hlt": "-", "poll": "--"}
WIDE = 30  # a spread (max / min) beyond which the latency axis is logarithmic


class Axis:
    """The latency axis every device's figure shares: log or linear, and its range."""

    def __init__(self, log, lo, hi):
        self.log, self.lo, self.hi = log, lo, hi

    def apply(self, ax, which="x"):
        set_scale = ax.set_xscale if which == "x" else ax.set_yscale
        set_lim = ax.set_xlim if which == "x" else ax.set_ylim
        if self.log:
            set_scale("log")
            set_lim(self.lo / 1.15, self.hi * 1.15)
        else:
            pad = max((self.hi - self.lo) * 0.06, 1.0)
            set_lim(self.lo - pad, self.hi + pad)
            # at most five labels: a narrow panel's "140 ns", "150 ns", ... ran together
            (ax.xaxis if which == "x" else ax.yaxis).set_major_locator(MaxNLocator(nbins=5))
        if which == "x":
            ax.set_xlabel("latency after the deadline (ns%s)" % (", log" if self.log else ""))


def shared_axis(data, rows):
    """The Axis of every device's figures: over every row's samples, or its histogram's
    drawn span and its min and max. Logarithmic when the slowest wake-up is WIDE times the
    typical fastest (the median of the rows' minima): a tail orders of magnitude long
    (plain emulation: 10 us to 10 ms); a series that starts at 0 ns does not make it so."""
    vals, mins = [], []
    for row in rows:
        s = plots_samples.series_of(data, [row])
        if s:
            got = list(s[id(row)].values.values())
            vals += [min(got), max(got)]
            mins.append(min(got))
            continue
        hist = parse_hist(row.get("hist"))
        b = bars(row, hist) if hist is not None else []
        vals += [x for lo, w, _ in b for x in (lo, lo + w)]
        vals += [v for v in (num(row.get("min_ns")), num(row.get("max_ns"))) if v is not None]
        if num(row.get("min_ns")) is not None:
            mins.append(num(row.get("min_ns")))
    pos = [v for v in vals if v > 0]
    if not vals:
        return Axis(False, 0, 1)
    typical = sorted(mins)[len(mins) // 2] if mins else min(pos or [1])
    # a wake-up before its deadline cannot sit on a log axis: each figure's caption says
    # so (early_note) rather than every device losing its tail to a linear axis
    log = bool(pos) and typical > 0 and max(pos) / typical > WIDE
    if log:
        return Axis(True, min(pos), max(pos))
    return Axis(False, min(vals), max(vals))
MARKS = (("p50_ns", "p50", ":", "o"), ("p99_ns", "p99", "--", "^"), ("max_ns", "max", "-", "s"))
CDF_MARKS = (("p50_ns", 0.5, "o"), ("p99_ns", 0.99, "^"), ("p999_ns", 0.999, "D"),
             ("max_ns", 1.0, "s"))
NO_SAMPLES = " No raw samples came for these rows (samples records): drawn from the buckets."


def latency_rows(data, exp):
    rows = [r for r in rows_of(data, exp) if r.get("device") is not None]
    if not rows:
        raise Absent("no measured %s row names its device" % exp)
    return rows


def grouped(rows, key):
    out = {}
    for row in rows:
        out.setdefault(text_of(row.get(key)), []).append(row)
    return out


def bars(row, hist):
    """(left, width, count) for the histogram's non-empty span, its outer buckets clipped
    to the row's measured min and max (max is a whole ns: the bucket ends at max + 1)."""
    span = hist.nonzero_span()
    if span is None:
        return []
    lo_clip, hi_clip = num(row.get("min_ns")), num(row.get("max_ns"))
    first, last = span
    out = []
    for i in range(first, last + 1):
        lo, hi = hist.edges[i], hist.edges[i + 1]
        if i == first and lo_clip is not None and lo <= lo_clip < hi:
            lo = lo_clip
        if i == last and hi_clip is not None and lo < hi_clip + 1 <= hi:
            hi = hi_clip + 1
        elif i == last and hist.open_last and i == len(hist.counts) - 1:
            hi = max(hi, (hi_clip or hi) + 1)
        out.append((lo, hi - lo, hist.counts[i]))
    return out


def fitted(ax, xs, log=False):
    lo, hi = min(xs), max(xs)
    if log and lo > 0:
        ax.set_xscale("log")
        ax.set_xlim(lo / 1.15, hi * 1.15)
        return
    pad = max((hi - lo) * 0.06, 1.0)
    ax.set_xlim(lo - pad, hi + pad)
    # at most five labels: a narrow panel's "140 ns", "150 ns", ... ran into each other
    ax.xaxis.set_major_locator(MaxNLocator(nbins=5))


def marks_legend(row):
    return ", ".join("%s %s" % (text, fmt_ns(row.get(key))) for key, text, _, _ in MARKS
                     if num(row.get(key)) is not None)


def histogram_figure(data, device, rows, options, stem, axis):
    paths = grouped(rows, "path")
    waits = list(grouped(rows, "wait"))
    colour = {w: COLOURS[i % len(COLOURS)] for i, w in enumerate(waits)}
    got = {id(r): bars(r, parse_hist(r.get("hist"))) if parse_hist(r.get("hist")) else []
           for r in rows}
    # on the shared log axis (plain emulation: 10 us to 10 ms) the kernel's doubling
    # buckets are bars of one width and counts are per bucket, on a log count axis; on a
    # linear one, bars of unequal width show wake-ups per ns
    wide = axis.log
    unequal = not wide and any(len({round(w, 6) for _, w, _ in b}) > 1 for b in got.values())
    log_counts = options.log_counts or wide
    no_hist = any(not b for b in got.values())
    # every path in one row (four at most): the figure stays one screen-line tall
    fig = new_figure("Wakeup latency on %s: histograms per path" % device, len(paths),
                     cols=min(len(paths), 4))
    axes = panel_axes(fig, len(paths))
    for ax, (path, prows) in zip(axes, paths.items()):
        for row in prows:
            wait = text_of(row.get("wait"))
            b = [x for x in got[id(row)] if x[0] > 0] if wide else got[id(row)]
            if b:
                ax.bar([x[0] for x in b], [c / w if unequal else c for _, w, c in b],
                       width=[x[1] for x in b], align="edge", color=colour[wait], alpha=0.35,
                       edgecolor=colour[wait], linewidth=1, label="wait %s" % wait)
            else:
                ax.plot([], [], color=colour[wait], label="wait %s (no histogram)" % wait)
            for key, _, style, _ in MARKS:
                v = num(row.get(key))
                if v is not None and (v > 0 or not wide):
                    ax.axvline(v, color=colour[wait], linestyle=style, linewidth=1.1)
        axis.apply(ax)
        if log_counts:
            ax.set_yscale("log")
            top = max([p.get_height() for p in ax.patches] + [1])
            ax.set_ylim(0.7 if not unequal else None, top * 2)
        ax.set_title("path %s" % path, fontsize=10)
        ax.set_ylabel(("wake-ups per ns" if unequal else "wake-ups per bucket")
                      + (" (log)" if log_counts else ""))
    handles = [h for ax in axes for h in [ax.get_legend_handles_labels()]]
    seen = {}
    for hs, ls in handles:
        for h, lab in zip(hs, ls):
            seen.setdefault(lab, h)
    for key, text, style, _ in MARKS:
        seen[text] = fig_line(style)
    legend_beside(axes[-1], list(seen.values()), list(seen))
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Wake-ups on %s, a panel per path, the waits in colour; dotted p50, dashed "
               "p99, solid max (the figures are in the table above). The kernel's buckets, "
               "the outer ones clipped to the measured min and max" % device)
    caption += (" (they double in width, so bars show wake-ups per ns)." if unequal else
                "; the latency and count axes logarithmic, where the doubling buckets are "
                "bars of one width." if wide else ".")
    caption += " The latency axis is the same for every device."
    if no_hist:
        caption += " A row without a histogram shows only its percentiles."
    caption += early_note(rows)
    return Drawn("%s_%s" % (stem, options.stems(device)),
                 "Wakeup latency on %s: histograms" % device, fig, caption, clock)


def fig_line(style):
    """A legend entry for a line style alone (the marks' meaning)."""
    from matplotlib.lines import Line2D
    return Line2D([], [], color="black", linestyle=style, linewidth=1.1)


def early_note(rows):
    early = [r for r in rows if (num(r.get("min_ns")) or 0) < 0 or (num(r.get("early")) or 0)]
    if not early:
        return ""
    return (" %d row(s) report wake-ups before the deadline (negative min_ns or early > 0): "
            "%s." % (len(early), "; ".join("%s/%s min %s, early %s" % (
                text_of(r.get("path")), text_of(r.get("wait")), fmt_ns(r.get("min_ns")),
                text_of(r.get("early"), "?")) for r in early)))


def cdf_points(row, hist):
    """The CDF through the exact points, (x, fraction of wake-ups at or below x): every
    edge of the kernel's histogram and every percentile it computed from the samples; a
    point that would make the curve go down (rounding) is left out."""
    mn, mx = num(row.get("min_ns")), num(row.get("max_ns"))
    n = num(row.get("samples"))
    pts = [(num(row.get(k)), q) for k, q in (("p50_ns", 0.5), ("p99_ns", 0.99),
                                              ("p999_ns", 0.999))
           if k != "p999_ns" or p999_computable(num(row.get("samples")))]
    if mn is not None:
        pts.append((mn, 0.0))
    if mx is not None:
        pts.append((mx, 1.0))
    if hist is not None and hist.nonzero_span() is not None:
        total = sum(hist.counts) + hist.below + hist.above
        got = bars(row, hist)
        pts.append((got[0][0], hist.below / total))
        cum = hist.below
        for lo, width, count in got:
            cum += count
            pts.append((lo + width, cum / total))
    pts = sorted((x, q) for x, q in pts if x is not None)
    out = []
    for x, q in pts:
        if out and q < out[-1][1]:
            continue
        out.append((x, q))
    return out


def tail_figure(data, rows, options, stem, axis):
    """Every device's tails in one figure: a panel per device on the shared latency axis, a
    curve per path and wait, the share of wake-ups later than each latency on a log axis
    down to p99.9 (a linear CDF squeezes everything past p99 flat against 1)."""
    from matplotlib.lines import Line2D
    devices = grouped(rows, "device")
    paths = list(grouped(rows, "path"))
    waits = list(grouped(rows, "wait"))
    colour = {p: COLOURS[i % len(COLOURS)] for i, p in enumerate(paths)}
    cols = min(len(devices), 4)
    fig = new_figure("Wakeup latency tails: a panel per device, a curve per path",
                     len(devices), cols=cols)
    axes = panel_axes(fig, len(devices), share=True)
    for ax, (device, drows) in zip(axes, devices.items()):
        for row in drows:
            path, wait = text_of(row.get("path")), text_of(row.get("wait"))
            style = dict(color=colour[path], linestyle=WAIT_STYLES.get(wait, ":"))
            pts = cdf_points(row, parse_hist(row.get("hist")))
            if axis.log:
                pts = [p for p in pts if p[0] > 0]
            tail = [(x, 1.0 - q) for x, q in pts if 1.0 - q > TAIL_FLOOR / 2]
            if len(tail) >= 2:
                ax.plot([p[0] for p in tail], [p[1] for p in tail], linewidth=1.3, **style)
            for key, q, marker in CDF_MARKS:
                v = num(row.get(key))
                if key == "p999_ns" and not p999_computable(num(row.get("samples"))):
                    v = None
                if v is None or (axis.log and v <= 0):
                    continue
                # the max has no share later than it: it sits on the axis' floor
                y = 1.0 - q if q < 1.0 else TAIL_FLOOR / 1.4
                ax.plot([v], [y], marker=marker, color=colour[path], markersize=4.5,
                        linestyle="none", clip_on=False)
        axis.apply(ax)
        tail_axis(ax, 1.3)
        ax.set_title(device, fontsize=10)
    axes[0].set_ylabel("share of wake-ups later than x (log)")
    handles = [Line2D([], [], color=colour[p], linewidth=1.3) for p in paths]
    labels = ["path %s" % p for p in paths]
    if len(waits) > 1:
        handles += [Line2D([], [], color="black", linestyle=WAIT_STYLES.get(w, ":"))
                    for w in waits]
        labels += ["wait %s" % w for w in waits]
    legend_beside(axes[-1], handles, labels)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("The tail of each device's wake-ups, a panel per device, a colour per path%s: "
               "the share later than each latency on a log axis down to 0.1 %% (p99.9), "
               "through the points known exactly (bucket edges, the kernel's percentiles); "
               "circle p50, triangle p99, diamond p99.9 (from 1000 samples on), square max "
               "(at the foot of the axis: nothing is later). The latency axis is the "
               "histograms'." % (", solid hlt, dashed poll" if len(waits) > 1 else ""))
    return Drawn(stem, "Wakeup latency tails per device", fig, caption + early_note(rows),
                 clock)


def histograms(data, options, exp, stem):
    """Per device: the raw samples' distribution, else the kernel's buckets; one latency
    axis for every device."""
    rows = latency_rows(data, exp)
    axis = shared_axis(data, rows)
    out = []
    for device, drows in grouped(rows, "device").items():
        got = plots_samples.series_of(data, drows)
        if got:
            out.append(plots_samples.distribution_figure(data, device, drows, options, got,
                                                         stem, axis))
        else:
            out.append(histogram_figure(data, device, drows, options, stem, axis))
            out[-1].caption += NO_SAMPLES
        out[-1].caption += partial_note(data, exp)
    return out


def cdfs(data, options, exp, stem, beside):
    """The tails of the devices without raw samples, from the kernel's buckets, in one
    figure (with samples the histogram figure `beside` has the percentiles)."""
    rows = latency_rows(data, exp)
    axis = shared_axis(data, rows)
    bucketed = [r for device, drows in grouped(rows, "device").items()
                if not plots_samples.series_of(data, drows) for r in drows]
    if not bucketed:
        raise Absent("drawn beside each histogram (%s_*): every device has raw "
                     "samples" % beside)
    made = tail_figure(data, bucketed, options, stem, axis)
    made.caption += NO_SAMPLES
    return [made]


def timelines(data, options, exp, stem):
    """Per device with raw samples: every wake-up in the order it happened."""
    rows = latency_rows(data, exp)
    axis = shared_axis(data, [r for r in rows if r.get("path") in plots_samples.HANDLERS]
                       or rows)
    out = []
    for device, drows in grouped(rows, "device").items():
        got = plots_samples.series_of(data, drows)
        if got:
            out.append(plots_samples.timeline_figure(data, device, drows, options, got, stem,
                                                     axis))
    if not out:
        raise Absent("the kernel sent no raw samples (samples records): the latency of each "
                     "wake-up in order needs them")
    return out


def cdf_overlay(datas, labels, options, exp):
    """compare's figures: for each device, one panel per path, every run's CDF on the same
    axis (colour: the run; solid: hlt, dashed: poll)."""
    per_run = []
    for data in datas:
        try:
            per_run.append(latency_rows(data, exp))
        except Absent:
            per_run.append([])
    devices = list(dict.fromkeys(text_of(r.get("device")) for rows in per_run for r in rows))
    if not devices:
        raise Absent("no run has measured %s rows" % exp)
    styles = {"hlt": "-", "poll": "--"}
    out = []
    for device in devices:
        paths = list(dict.fromkeys(text_of(r.get("path")) for rows in per_run for r in rows
                                   if text_of(r.get("device")) == device))
        curves = []
        for i, rows in enumerate(per_run):
            for r in rows:
                if text_of(r.get("device")) == device:
                    curves.append((i, r, cdf_points(r, parse_hist(r.get("hist")))))
        positive = [x for _, _, pts in curves for x, _ in pts if x > 0]
        log = bool(positive) and max(positive) / min(positive) > 30
        fig = new_figure("Wakeup latency on %s, runs overlaid: CDF per path" % device,
                         len(paths))
        for ax, path in zip(panel_axes(fig, len(paths)), paths):
            xs = []
            for i, r, pts in curves:
                if text_of(r.get("path")) != path:
                    continue
                if log:
                    pts = [p for p in pts if p[0] > 0]
                if len(pts) < 2:
                    continue
                wait = text_of(r.get("wait"))
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLOURS[i % 6],
                        linestyle=styles.get(wait, ":"), linewidth=1.4,
                        label="[%d] %s" % (i + 1, wait))
                xs += [p[0] for p in pts]
            if xs:
                fitted(ax, xs, log)
            ax.set_ylim(-0.02, 1.04)
            ax.set_title("path %s" % path, fontsize=10)
            ax.set_xlabel("latency after the deadline (ns%s)" % (", log" if log else ""))
            ax.set_ylabel("fraction at or below")
        legend_beside(fig.axes[-1], *fig.axes[0].get_legend_handles_labels(), fontsize=6)
        clocks = "; ".join("[%d] %s" % (i + 1, clock_words(d, rows)[len("clock: "):])
                           for i, (d, rows) in enumerate(zip(datas, per_run)) if rows)
        clock = "clock: " + clocks
        name_clock(fig, clock)
        runs = ", ".join("[%d] %s" % (i + 1, label) for i, label in enumerate(labels))
        out.append(Drawn("overlay_cdf_" + options.stems(device),
                         "Wakeup latency on %s: every run's CDF" % device, fig,
                         "The CDFs of every run on one axis (%s); solid: wait hlt, dashed: "
                         "poll." % runs, clock))
    return out
