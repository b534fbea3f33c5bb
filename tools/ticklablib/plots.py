"""The report's figures, drawn with matplotlib (Debian's python3-matplotlib, Agg backend).

Each figure is one function over a dataset.RunData that returns (Figure, caption) or raises
`Absent` with the reason it cannot be drawn (the experiment did not run, or its rows carry
nothing plottable). Captions say what was left out of a figure (points that a log axis
cannot show, rows without a histogram), so that the page never hides a row silently.
`render` writes every figure as PNG and SVG and returns what was drawn and what was not.
"""

import os
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams.update({"svg.hashsalt": "ticklab", "font.size": 9,
                            "axes.grid": True, "grid.alpha": 0.3})
from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)

from .dataset import num  # noqa: E402

SIZE = (7.5, 4.2)


class Absent(Exception):
    """This figure cannot be drawn from this run; the message says why."""


@dataclass(frozen=True)
class Plot:
    """A drawn figure: file stem, title, caption, and the two files written."""
    name: str
    title: str
    caption: str
    png: str
    svg: str


def fmt_ns(ns):
    """A duration for a label: 250 ns, 4 us, 1 ms, 1.5 s."""
    ns = num(ns)
    if ns is None:
        return "?"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return "%g %s" % (round(ns / scale, 3), unit)
    return "%g ns" % ns


def label(row, keys):
    """A row's legend text from its identifying keys."""
    parts = []
    for key in keys:
        value = row.get(key)
        if value is None:
            continue
        parts.append(fmt_ns(value) if key.endswith("_ns") else str(value))
    return " ".join(parts) or "row at line %d" % row.line


@dataclass(frozen=True)
class Hist:
    """A histogram ready to draw: len(edges) == len(counts) + 1; `below` and `above` are
    counts outside the drawn edges (a linear histogram's outer buckets)."""
    edges: list
    counts: list
    below: float = 0
    above: float = 0


def parse_hist(hist):
    """A record's histogram as a Hist, or None when it is in no form understood.

    Accepted forms:
    - {"edges_ns": [...], "counts": [...]}: bucket bounds (one more edge than counts), or
      lower bounds (as many edges as counts; the kernel's log2 buckets, include/ticklab/hist.h): the
      last, open-ended bucket is drawn one log step (x2) wide;
    - {"lo_ns": L, "bucket_ns": W, "counts": [c0, ..., cn-1]}: c0 counts values below L,
      c1..cn-2 the buckets [L + (k-1)W, L + kW), cn-1 values from L + (n-2)W up
      (periodic-jitter);
    - a list of {"lo_ns", "hi_ns", "count"} buckets, or of [lower_edge_ns, count] pairs.
    """
    edges = counts = None
    if isinstance(hist, dict) and "bucket_ns" in hist:
        return _linear_hist(hist)
    if isinstance(hist, dict):
        edges = hist.get("edges_ns", hist.get("edges"))
        counts = hist.get("counts")
    elif isinstance(hist, list) and hist:
        if all(isinstance(b, dict) for b in hist):
            edges = [b.get("lo_ns") for b in hist]
            counts = [b.get("count") for b in hist]
            last = hist[-1].get("hi_ns")
            if last is not None:
                edges = edges + [last]
        elif all(isinstance(b, list) and len(b) == 2 for b in hist):
            edges = [b[0] for b in hist]
            counts = [b[1] for b in hist]
    if not isinstance(edges, list) or not isinstance(counts, list) or not counts:
        return None
    edges = [num(e) for e in edges]
    counts = [num(c) for c in counts]
    if None in edges or None in counts:
        return None
    if len(edges) == len(counts):
        edges = edges + [edges[-1] * 2 if edges[-1] > 0 else 1]
    if len(edges) != len(counts) + 1 or any(b <= a for a, b in zip(edges, edges[1:])):
        return None
    return Hist(edges, counts)


def _linear_hist(hist):
    lo, width, counts = num(hist.get("lo_ns")), num(hist.get("bucket_ns")), hist.get("counts")
    if lo is None or not width or width <= 0 or not isinstance(counts, list) \
            or len(counts) < 3:
        return None
    counts = [num(c) for c in counts]
    if None in counts:
        return None
    inner = counts[1:-1]
    return Hist([lo + k * width for k in range(len(inner) + 1)], inner, counts[0], counts[-1])


def new_figure(title, panels=1):
    """A figure 750 px wide; with several panels, two to a row and 3 in of height a row."""
    rows = (panels + 1) // 2 if panels > 1 else 1
    fig = Figure(figsize=(SIZE[0], SIZE[1] if rows == 1 else 0.6 + 3.0 * rows), dpi=100,
                 layout="constrained")
    fig.suptitle(title, fontsize=11)
    return fig


def panel_axes(fig, n, share=False):
    """n axes, two to a row when n > 1; `share`: one x and y range for all, so panels
    compare at a glance."""
    if n == 1:
        return [fig.add_subplot()]
    rows = (n + 1) // 2
    first = fig.add_subplot(rows, 2, 1)
    kw = {"sharex": first, "sharey": first} if share else {}
    return [first] + [fig.add_subplot(rows, 2, i + 1, **kw) for i in range(1, n)]


def unique_names(names):
    """Bar labels must differ (matplotlib merges equal categories): number repeats."""
    total = {n: names.count(n) for n in names}
    seen = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if total[name] == 1 else "%s #%d" % (name, seen[name]))
    return out


def rows_of(data, exp):
    rows = data.results.get(exp)
    if not rows:
        raise Absent("no %s result records in this run" % exp)
    return rows


def positive_log_floor(values):
    positive = [v for v in values if v > 0]
    return min(positive) / 2 if positive else 1


# --- the figures --------------------------------------------------------------------

def wakeup_latency(data):
    rows = rows_of(data, "wakeup-latency")
    devices = list(dict.fromkeys(str(r.get("device")) for r in rows))
    with_hist = [(r, parse_hist(r.get("hist"))) for r in rows]
    # What tells a device's rows apart: the path, and the wait when it varies.
    keys = ("path", "wait") if len({r.get("wait") for r in rows}) > 1 else ("path",)
    if not any(h for _, h in with_hist):
        return wakeup_percentiles(rows, devices, keys)
    devices = [d for d in devices if any(h and str(r.get("device")) == d
                                         for r, h in with_hist)]
    fig = new_figure("Wakeup latency per device (log scale)", len(devices))
    for ax, device in zip(panel_axes(fig, len(devices)), devices):
        for row, hist in with_hist:
            if hist is None or str(row.get("device")) != device:
                continue
            low = positive_log_floor(hist.edges)
            xs = [e if e > 0 else low for e in hist.edges]
            ax.stairs(hist.counts, xs, label=label(row, keys), linewidth=1.4)
        ax.set_title(device, fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel("latency after the deadline (ns, log)")
        ax.set_ylabel("wakeups per bucket")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    caption = ("Time from a timer's deadline to the handler, one panel per device, one "
               "curve per %s." % " and ".join(keys))
    missing = [label(r, ("device",) + keys) for r, h in with_hist if h is None]
    if missing:
        caption += (" No histogram in the record of %s: see the table's percentiles."
                    % ", ".join(missing))
    return fig, caption


def wakeup_percentiles(rows, devices, keys):
    names = ("min_ns", "p50_ns", "p99_ns", "p999_ns", "max_ns")
    fig = new_figure("Wakeup latency per device (log scale)", len(devices))
    for ax, device in zip(panel_axes(fig, len(devices)), devices):
        for row in rows:
            if str(row.get("device")) != device:
                continue
            pts = [(i, num(row.get(k))) for i, k in enumerate(names)]
            pts = [(i, v) for i, v in pts if v is not None and v > 0]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=label(row, keys))
        ax.set_title(device, fontsize=10)
        ax.set_xticks(range(len(names)), ["min", "p50", "p99", "p99.9", "max"])
        ax.set_yscale("log")
        ax.set_ylabel("latency (ns, log)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    return fig, ("Time from a timer's deadline to the handler. The records carry no "
                 "histogram: their percentiles are drawn instead.")


def sleep_error(data):
    rows = rows_of(data, "sleep-accuracy")
    modes = list(dict.fromkeys(str(r.get("mode")) for r in rows))
    fig = new_figure("Sleep error against requested time, per tick size (log-log)",
                     len(modes))
    hidden = drawn = 0
    for ax, mode in zip(panel_axes(fig, len(modes), share=True), modes):
        series = {}
        for row in rows:
            if str(row.get("mode")) == mode:
                series.setdefault(row.get("tick_ns"), []).append(row)
        for tick, group in series.items():
            pts, lost = sleep_points(group)
            hidden += lost
            if not pts:
                continue
            xs, ys, los, his = zip(*sorted(pts))
            ax.errorbar(xs, ys, yerr=[los, his], marker="o", capsize=2, markersize=4,
                        label="no tick" if num(tick) == 0 else "tick %s" % fmt_ns(tick))
            drawn += len(pts)
        ax.set_title("mode %s" % mode, fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("requested sleep (ns, log)")
        ax.set_ylabel("mean error (ns, log)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    if not drawn:
        raise Absent("sleep-accuracy rows have no positive request_ns and mean_err_ns")
    caption = ("Mean lateness of a sleep (woke - requested) against its requested length, "
               "one panel per mode, one line per tick size; bars span min to max.")
    if hidden:
        caption += (" %d row(s) with a zero, negative or missing value cannot be shown on "
                    "log axes (they are in the table)." % hidden)
    return fig, caption


def sleep_points(group):
    """(x, y, down, up) per drawable row, and how many rows a log axis cannot show."""
    pts, hidden = [], 0
    for row in group:
        x, y = num(row.get("request_ns")), num(row.get("mean_err_ns"))
        if x is None or y is None or x <= 0 or y <= 0:
            hidden += 1
            continue
        lo, hi = num(row.get("min_err_ns")), num(row.get("max_err_ns"))
        lo = y - lo if lo is not None and 0 < lo <= y else 0
        hi = hi - y if hi is not None and hi >= y else 0
        pts.append((x, y, lo, hi))
    return pts, hidden


def tick_overhead(data):
    rows = rows_of(data, "tick-overhead")
    pts = [(num(r.get("tick_ns")), num(r.get("overhead_pct")), r) for r in rows]
    ticked = sorted((x, y, r) for x, y, r in pts if x and x > 0 and y is not None)
    if not ticked:
        raise Absent("tick-overhead rows have no tick_ns > 0 with an overhead_pct")
    parts = ("entry_cyc", "handler_cyc", "eoi_cyc", "return_cyc")
    has_cycles = any(num(r.get(p)) is not None for _, _, r in ticked for p in parts)
    fig = new_figure("Tick overhead against tick size")
    ax = fig.add_subplot(1, 2 if has_cycles else 1, 1)
    xs, ys = [p[0] for p in ticked], [p[1] for p in ticked]
    ax.plot(xs, ys, marker="o")
    ax.set_xscale("log")
    if all(y > 0 for y in ys) and max(ys) / min(ys) > 100:
        ax.set_yscale("log")
    ax.set_xlabel("tick period (ns, log)")
    ax.set_ylabel("CPU time taken by the tick (%)")
    caption = "Share of a busy loop's time lost to the tick, against the tickless baseline."
    if has_cycles:
        bx = fig.add_subplot(1, 2, 2)
        bottom = [0.0] * len(ticked)
        names = [fmt_ns(x) for x in xs]
        for part in parts:
            vals = [num(r.get(part)) or 0 for _, _, r in ticked]
            bx.bar(names, vals, bottom=bottom, label=part[:-4])
            bottom = [b + v for b, v in zip(bottom, vals)]
        bx.set_ylabel("cycles per tick")
        bx.set_xlabel("tick period")
        bx.legend(fontsize=8)
        caption += " Right: where one tick's cycles go."
    skipped = len(rows) - len(ticked)
    if skipped:
        caption += " %d row(s) not drawn (the tickless baseline, or no value)." % skipped
    return fig, caption


def calibration(data):
    rows = [r for r in data.by_type.get("calibration", [])
            if r.get("status") == "ok" and num(r.get("disagreement_ppb")) is not None]
    if not rows:
        raise Absent("no calibration record with status ok and a disagreement_ppb")
    fig = new_figure("Calibration disagreement per method (ppm from the chosen value)")
    ax = fig.add_subplot()
    names = unique_names(["%s %s/%s%s" % (r.get("target"), r.get("method"), r.get("ref"),
                                          " (chosen)" if r.get("chosen") is True else "")
                          for r in rows])
    ppm = [num(r.get("disagreement_ppb")) / 1000 for r in rows]
    err = [(num(r.get("uncertainty_ppb")) or 0) / 1000 for r in rows]
    colours = ["tab:green" if r.get("chosen") is True else
               ("tab:blue" if r.get("agrees") is not False else "tab:red") for r in rows]
    ax.bar(names, ppm, yerr=err, color=colours, capsize=3)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylabel("disagreement (ppm, symlog)")
    ax.tick_params(axis="x", labelrotation=30)
    other = len(data.by_type.get("calibration", [])) - len(rows)
    caption = ("Each method's frequency against the chosen one (green), with its "
               "uncertainty bound; red: the intervals do not overlap.")
    if other:
        caption += " %d method(s) skipped or failed (see the table)." % other
    return fig, caption


def periodic_jitter(data):
    rows = rows_of(data, "periodic-jitter")
    hists = [(r, parse_hist(r.get("hist"))) for r in rows]
    if any(h for _, h in hists):
        return jitter_histograms("Periodic timer jitter", hists)
    fig = new_figure("Periodic timer jitter")
    names = unique_names([jitter_label(r) for r in rows])
    ax = fig.add_subplot(1, 2, 1)
    width = 0.4
    for i, (key, text) in enumerate((("p_within_5us", "within 5 us"),
                                     ("p_within_10us", "within 10 us"))):
        vals = [num(r.get(key)) or 0 for r in rows]
        ax.bar([j + (i - 0.5) * width for j in range(len(rows))], vals, width, label=text)
    ax.set_xticks(range(len(rows)), names, rotation=20)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("fraction of periods")
    ax.legend(fontsize=8)
    bx = fig.add_subplot(1, 2, 2)
    avg = [num(r.get("avg_ns")) or 0 for r in rows]
    sd = [num(r.get("stddev_ns")) or 0 for r in rows]
    bx.bar(names, avg, yerr=sd, capsize=3)
    bx.set_ylabel("mean interval error (ns), +- 1 stddev")
    bx.tick_params(axis="x", labelrotation=20)
    return fig, ("Share of periods within 5 us and 10 us of their deadline (left) and the "
                 "mean error with its standard deviation (right); the records carry no "
                 "histogram.")


def jitter_histograms(fig_title, hists):
    """One panel per timer resolution, one curve per set: a set's timers' histograms are
    summed when their buckets agree (ten timers of different periods are one set)."""
    sets = {}
    for row, hist in hists:
        if hist is None:
            continue
        key = (fmt_ns(row.get("hres_ns")), str(row.get("set")), tuple(hist.edges))
        total = sets.setdefault(key, {"counts": [0] * len(hist.counts), "below": 0,
                                      "above": 0, "timers": 0})
        total["counts"] = [a + b for a, b in zip(total["counts"], hist.counts)]
        total["below"] += hist.below
        total["above"] += hist.above
        total["timers"] += 1
    panels = list(dict.fromkeys(k[0] for k in sets))
    fig = new_figure(fig_title, len(panels))
    outside = []
    for ax, hres in zip(panel_axes(fig, len(panels)), panels):
        for (res, tset, edges), total in sets.items():
            if res != hres:
                continue
            text = "%s (%d timer%s)" % (tset, total["timers"], "s" * (total["timers"] > 1))
            ax.stairs(total["counts"], list(edges), label=text, linewidth=1.4)
            if total["below"] or total["above"]:
                outside.append("hres %s, %s: %d below %s, %d from %s up" % (
                    res, text, total["below"], fmt_ns(edges[0]), total["above"],
                    fmt_ns(edges[-1])))
        ax.set_title("timer resolution %s" % hres, fontsize=10)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel("expiry - ideal expiry (ns)")
        ax.set_ylabel("periods per bucket")
        ax.legend(fontsize=7)
    caption = ("Distribution of each period's deviation from its ideal expiry, one panel "
               "per timer resolution, one curve per set of timers.")
    missing = sum(h is None for _, h in hists)
    if missing:
        caption += " %d row(s) without a histogram are in the table only." % missing
    if outside:
        caption += " Outside the drawn range: " + "; ".join(outside) + "."
    return fig, caption


def jitter_label(row):
    return "%s, period %s, hres %s" % (row.get("set"), fmt_ns(row.get("period_ns")),
                                       fmt_ns(row.get("hres_ns")))


def period_compare(data):
    rows = rows_of(data, "period-compare")
    fig = new_figure("hrtimer against jiffies timer: error of each 1 s period")
    ax = fig.add_subplot()
    drawn = 0
    for row in rows:
        errs = row.get("err_ns")
        errs = [num(e) for e in errs] if isinstance(errs, list) else []
        errs = [e for e in errs if e is not None]
        if errs:
            ax.plot(range(1, len(errs) + 1), errs, marker="o", label=label(row, ("timer",)))
            drawn += 1
    if not drawn:
        raise Absent("period-compare rows carry no err_ns list")
    ax.set_xlabel("period")
    ax.set_ylabel("interval - period (ns)")
    if ax.get_ylim()[1] - ax.get_ylim()[0] > 1e4:
        ax.set_yscale("symlog", linthresh=1000)
    ax.legend(fontsize=8)
    return fig, "Each period's measured interval minus its nominal length, per timer."


def itimer_error(data):
    rows = rows_of(data, "itimer-error")
    fig = new_figure("Interval timer: expirations counted against expected")
    ax = fig.add_subplot()
    names = unique_names(["%s %s us%s" % (r.get("mode"), r.get("period_us"),
                                          " " + str(r["device"]) if "device" in r else "")
                          for r in rows])
    ax.bar(names, [num(r.get("error_pct")) or 0 for r in rows])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("error (%)")
    ax.tick_params(axis="x", labelrotation=30)
    return fig, "(counted - expected) / expected per mode and period."


# name (file stem), title, function; the report's order
FIGURES = (
    ("wakeup_latency", "Wakeup latency histograms per device", wakeup_latency),
    ("sleep_error", "Sleep error against requested time per tick size", sleep_error),
    ("tick_overhead", "Tick overhead against tick size", tick_overhead),
    ("calibration", "Calibration disagreement per method", calibration),
    ("periodic_jitter", "Periodic jitter distributions", periodic_jitter),
    ("period_compare", "hrtimer against jiffies timer", period_compare),
    ("itimer_error", "Interval timer error", itimer_error),
)


def render(data, outdir):
    """Draw every figure this run supports into outdir as PNG and SVG.
    Returns ([Plot], [(name, title, reason not drawn)])."""
    os.makedirs(outdir, exist_ok=True)
    drawn, absent = [], []
    for name, title, draw in FIGURES:
        try:
            fig, caption = draw(data)
        except Absent as e:
            absent.append((name, title, str(e)))
            continue
        except Exception as e:  # noqa: BLE001  odd values must not cost the whole report
            absent.append((name, title, "could not be drawn from these records: %s: %s"
                           % (type(e).__name__, e)))
            continue
        png = os.path.join(outdir, name + ".png")
        svg = os.path.join(outdir, name + ".svg")
        fig.savefig(png, format="png", metadata={"Software": None})
        fig.set_layout_engine("none")  # keep the layout just computed: the SVG is the same
        fig.savefig(svg, format="svg", metadata={"Date": None})
        drawn.append(Plot(name, title, caption, png, svg))
    return drawn, absent
