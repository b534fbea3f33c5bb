"""The figures of the calibration and of the experiments other than wakeup-latency: one
function each, in the report's order (plots.py has the shared machinery)."""

from matplotlib.ticker import MaxNLocator

from .dataset import num
from .figdata import (Absent, clock_words, fmt_ns, label, parse_hist, partial_note, rows_of,
                      text_of, unique_names)
from .plots import Drawn, name_clock, new_figure, panel_axes


def one(name, title, fig, caption, clock):
    return [Drawn(name, title, fig, caption, clock)]


def calibration(data, options):
    rows = [r for r in data.by_type.get("calibration", [])
            if r.get("status") == "ok" and num(r.get("disagreement_ppb")) is not None]
    if not rows:
        raise Absent("no calibration record with status ok and a disagreement_ppb")
    fig = new_figure("Calibration: each method's disagreement with the chosen rate")
    ax = fig.add_subplot()
    names = unique_names(["%s by %s/%s" % (r.get("target"), r.get("method"), r.get("ref"))
                          for r in rows])
    ppm = [num(r.get("disagreement_ppb")) / 1000 for r in rows]
    err = [(num(r.get("uncertainty_ppb")) or 0) / 1000 for r in rows]
    for i, r in enumerate(rows):
        chosen = r.get("chosen") is True
        colour = "tab:green" if chosen else ("tab:red" if r.get("agrees") is False
                                             else "tab:blue")
        ax.errorbar([i], [ppm[i]], yerr=[err[i]], marker="D" if chosen else "o",
                    markersize=7 if chosen else 5, color=colour, capsize=4, linewidth=1.4)
        ax.annotate("chosen" if chosen else "%+.3g ppm" % ppm[i], (i, ppm[i]),
                    textcoords="offset points", xytext=(8, 4), fontsize=7, color=colour)
    ax.axhline(0, color="black", linewidth=0.8)
    floor = min([e for e in err if e > 0] or [1.0])
    ax.set_yscale("symlog", linthresh=max(floor, 0.1))
    ax.set_xticks(range(len(rows)), names, rotation=25, fontsize=8)
    ax.set_ylabel("disagreement with the chosen rate (ppm, symlog)")
    ax.set_xlim(-0.6, len(rows) - 0.4)
    clock = ("clock: each counter timed against its reference (the TSC against hpet, acpi_pm, "
             "pit; the LAPIC against the TSC); resolution: each bar, its uncertainty bound")
    name_clock(fig, clock)
    other = len(data.by_type.get("calibration", [])) - len(rows)
    caption = ("Each method's rate against the chosen one (green diamond at 0, its bar the "
               "chosen method's own bound); red: the two intervals do not overlap.")
    if other:
        caption += " %d method(s) skipped or failed (see the table)." % other
    return one("calibration", "Calibration disagreement per method", fig, caption, clock)


def period_compare(data, options):
    rows = rows_of(data, "period-compare")
    series = []
    for row in rows:
        errs = row.get("err_ns")
        errs = [num(e) for e in errs] if isinstance(errs, list) else []
        errs = [e for e in errs if e is not None]
        if errs:
            series.append((row, errs))
    if not series:
        raise Absent("period-compare rows carry no err_ns list")
    fig = new_figure("hrtimer against jiffies timer: error of each 1 s period", len(series),
                     panel_h=2.6)
    for ax, (row, errs) in zip(panel_axes(fig, len(series)), series):
        ax.plot(range(1, len(errs) + 1), errs, marker="o")
        ax.axhline(0, color="black", linewidth=0.7)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title("timer %s" % label(row, ("timer", "variant")), fontsize=10)
        ax.set_xlabel("period number")
        ax.set_ylabel("interval - period (ns)")
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return one("period_compare", "hrtimer against jiffies timer", fig,
               "Each period's measured interval minus its nominal length, one panel per "
               "timer (each on its own scale; the first period counts from the arming)."
               + partial_note(data, "period-compare"), clock)


def periodic_jitter(data, options):
    rows = rows_of(data, "periodic-jitter")
    hists = [(r, parse_hist(r.get("hist"))) for r in rows]
    sets = {}
    for row, hist in hists:
        if hist is None:
            continue
        key = (grid_words(row), text_of(row.get("set")), tuple(hist.edges))
        total = sets.setdefault(key, {"counts": [0] * len(hist.counts), "timers": 0})
        total["counts"] = [a + b for a, b in zip(total["counts"], hist.counts)]
        total["timers"] += 1
    panels = list(dict.fromkeys(k[0] for k in sets))
    stddev = [(num(r.get("period_ns")), num(r.get("stddev_ns")), grid_words(r)) for r in rows]
    stddev = [s for s in stddev if s[0] is not None and s[1] is not None]
    if not panels and not stddev:
        raise Absent("periodic-jitter rows carry neither a histogram nor stddev_ns")
    fig = new_figure("Periodic timer jitter", len(panels) + bool(stddev), panel_h=2.7)
    axes = panel_axes(fig, len(panels) + bool(stddev))
    width_note = set()
    for ax, hres in zip(axes, panels):
        for (res, tset, edges), total in sets.items():
            if res != hres:
                continue
            counts = total["counts"]
            idx = [i for i, c in enumerate(counts) if c]
            if not idx:
                continue
            lo, hi = max(idx[0] - 1, 0), min(idx[-1] + 2, len(counts))
            width_note.add(edges[1] - edges[0])
            ax.bar(edges[lo:hi], counts[lo:hi], width=edges[1] - edges[0], align="edge",
                   alpha=0.5, label="%s (%d timer%s)" % (tset, total["timers"],
                                                         "s" * (total["timers"] > 1)))
        ax.set_title(hres, fontsize=10)
        if options.log_counts:
            ax.set_yscale("log")
        ax.set_xlabel("expiry - ideal expiry (ns)")
        ax.set_ylabel("periods per bucket")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    if stddev:
        ax = axes[len(panels)]
        for hres in dict.fromkeys(s[2] for s in stddev):
            pts = sorted((p, sd) for p, sd, h in stddev if h == hres)
            ax.plot([p / 1000 for p, _ in pts], [sd for _, sd in pts], marker="o",
                    linestyle="none", label=hres)
        ax.set_title("interval stddev per timer", fontsize=10)
        ax.set_xlabel("timer period (us)")
        ax.set_ylabel("stddev of the intervals (ns)")
        ax.legend(fontsize=7)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Each period's deviation from its ideal expiry, one panel per grid, one "
               "colour per set of timers, the axis fitted to the buckets that hold data")
    if width_note:
        caption += " (the kernel's buckets are %s wide)" % ", ".join(
            fmt_ns(w) for w in sorted(width_note))
    caption += "; last panel: each timer's interval stddev, which resolves what the buckets " \
               "cannot." if stddev else "."
    return one("periodic_jitter", "Periodic jitter distributions", fig,
               caption + partial_note(data, "periodic-jitter"), clock)


def grid_words(row):
    """What periodic-jitter's deadlines were rounded to, in words."""
    hres = num(row.get("hres_ns"))
    if row.get("grid") is False:
        return "no grid (the device's %s cycle)" % fmt_ns(hres) if hres else "no grid"
    return "deadlines on a %s grid" % fmt_ns(hres) if hres is not None else "grid not named"


def itimer_error(data, options):
    rows = [r for r in rows_of(data, "itimer-error") if num(r.get("error_pct")) is not None]
    if not rows:
        raise Absent("itimer-error rows carry no error_pct")
    fig = new_figure("Interval timer: expirations counted against expected")
    ax = fig.add_subplot()
    names = unique_names(["%s %s us" % (text_of(r.get("mode")), text_of(r.get("period_us")))
                          for r in rows])
    vals = [num(r.get("error_pct")) for r in rows]
    ax.bar(names, vals, color=["tab:red" if abs(v) >= 1 else "tab:blue" for v in vals])
    for i, v in enumerate(vals):
        ax.annotate("%+.4g %%" % v, (i, v), textcoords="offset points",
                    xytext=(0, -10 if v < 0 else 3), ha="center", fontsize=7)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("counted / expected - 1 (%)")
    ax.tick_params(axis="x", labelrotation=20)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return one("itimer_error", "Interval timer error", fig,
               "(counted - expected) / expected per mode and period; red: 1 % or more."
               + partial_note(data, "itimer-error"), clock)


def sleep_error(data, options):
    rows = rows_of(data, "sleep-accuracy")
    # one panel per mode, and per variant where the rows have one (faithful: back to back as
    # the source; ticklab: random phase)
    def panel(r):
        return (text_of(r.get("mode")), text_of(r.get("variant")) if r.get("variant") else "")
    modes = list(dict.fromkeys(panel(r) for r in rows))
    fig = new_figure("Sleep error against requested time, per tick size", len(modes),
                     panel_h=2.8)
    hidden = drawn = early = 0
    for ax, key in zip(panel_axes(fig, len(modes), share=True), modes):
        mode = key[0] + (" (%s)" % key[1] if key[1] else "")
        series = {}
        for row in rows:
            if panel(row) == key:
                series.setdefault(num(row.get("tick_ns")), []).append(row)
        for tick, group in series.items():
            pts, lost = sleep_points(group)
            hidden += lost
            if not pts:
                continue
            xs, ys, los, his = zip(*sorted(pts))
            ax.errorbar(xs, ys, yerr=[los, his], marker="o", capsize=2, markersize=4,
                               label="tick %s" % fmt_ns(tick) if tick else "no tick")
            low = [(x, y - lo) for x, y, lo in zip(xs, ys, los) if y - lo < 0]
            early += len(low)
            if low:
                ax.plot(*zip(*low), marker="v", linestyle="none", color="tab:red",
                        markersize=5)
            drawn += len(pts)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title("mode %s" % mode, fontsize=10)
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1000)
        ax.set_xlabel("requested sleep (ns, log)")
        ax.set_ylabel("woke - requested (ns, symlog)")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    if not drawn:
        raise Absent("sleep-accuracy rows have no positive request_ns with a mean_err_ns")
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Error of a sleep (woke - requested) against its requested length, one panel "
               "per mode, one line per tick size; the bars span min to max. The y axis is "
               "symmetric-log, linear within +-1 us, so early wake-ups show below 0")
    caption += (": %d sleep(s) woke early at least once (red triangles at their min)." % early
                if early else "; none woke early.")
    if hidden:
        caption += (" %d row(s) without a positive request or a mean error are in the table "
                    "only." % hidden)
    return one("sleep_error", "Sleep error against requested time per tick size", fig,
               caption + partial_note(data, "sleep-accuracy"), clock)


def sleep_points(group):
    """(x, y, down, up) per drawable row, and how many rows cannot be drawn."""
    pts, hidden = [], 0
    for row in group:
        x, y = num(row.get("request_ns")), num(row.get("mean_err_ns"))
        if x is None or y is None or x <= 0:
            hidden += 1
            continue
        lo, hi = num(row.get("min_err_ns")), num(row.get("max_err_ns"))
        down = y - lo if lo is not None and lo <= y else 0
        up = hi - y if hi is not None and hi >= y else 0
        pts.append((x, y, down, up))
    return pts, hidden


def tick_overhead(data, options):
    rows = rows_of(data, "tick-overhead")
    pts = [(num(r.get("tick_ns")), num(r.get("overhead_pct")), r) for r in rows]
    ticked = sorted(((x, y, r) for x, y, r in pts if x and x > 0 and y is not None),
                    key=lambda p: p[0])
    if not ticked:
        raise Absent("tick-overhead rows have no tick_ns > 0 with an overhead_pct")
    parts = ("entry_cyc", "handler_cyc", "eoi_cyc", "return_cyc")
    has_cycles = any(num(r.get(p)) is not None for _, _, r in ticked for p in parts)
    fig = new_figure("Tick overhead against tick size")
    ax = fig.add_subplot(1, 2 if has_cycles else 1, 1)
    xs, ys = [p[0] for p in ticked], [p[1] for p in ticked]
    ax.plot(xs, ys, marker="o")
    ax.axhline(0, color="black", linewidth=0.7)
    ax.set_xscale("log")
    if all(y > 0 for y in ys) and max(ys) / min(ys) > 100:
        ax.set_yscale("log")
    ax.set_xlabel("tick period (ns, log)")
    ax.set_ylabel("CPU time taken by the tick (%)")
    caption = "Share of a busy loop's time lost to the tick, against the tickless baseline."
    if has_cycles:
        bx = fig.add_subplot(1, 2, 2)
        bottom = [0.0] * len(ticked)
        names = unique_names([fmt_ns(x) for x in xs])
        for part in parts:
            vals = [num(r.get(part)) or 0 for _, _, r in ticked]
            bx.bar(names, vals, bottom=bottom, label=part[:-4])
            bottom = [b + v for b, v in zip(bottom, vals)]
        bx.set_ylabel("TSC cycles per tick interrupt (median)")
        bx.set_xlabel("tick period")
        bx.legend(fontsize=8)
        caption += " Right: where one tick's TSC cycles go (median of each part)."
    skipped = len(rows) - len(ticked)
    if skipped:
        caption += " %d row(s) not drawn (the tickless baseline, or no value)." % skipped
    clock = clock_words(data, [r for _, _, r in ticked])
    name_clock(fig, clock)
    return one("tick_overhead", "Tick overhead against tick size", fig,
               caption + partial_note(data, "tick-overhead"), clock)


def hrtimer_cost(data, options):
    rows = [r for r in rows_of(data, "hrtimer-cost") if num(r.get("median_cyc")) is not None]
    if not rows:
        raise Absent("hrtimer-cost rows carry no median_cyc")
    fig = new_figure("hrtimer operation cost per device")
    ax = fig.add_subplot()
    ops = list(dict.fromkeys(text_of(r.get("op")) for r in rows))
    devices = list(dict.fromkeys(text_of(r.get("device")) for r in rows))
    width = 0.8 / max(len(devices), 1)
    for j, device in enumerate(devices):
        vals = {text_of(r.get("op")): num(r.get("median_cyc")) for r in rows
                if text_of(r.get("device")) == device}
        ax.bar([i + (j - (len(devices) - 1) / 2) * width for i in range(len(ops))],
               [vals.get(op, 0) for op in ops], width, label=device)
    ax.set_xticks(range(len(ops)), ops, rotation=20, fontsize=8)
    ax.set_ylabel("TSC cycles per operation (median)")
    ax.legend(fontsize=8)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return one("hrtimer_cost", "hrtimer operation cost", fig,
               "Median TSC cycles of one operation, per device (the ordered TSC pair "
               "included)." + partial_note(data, "hrtimer-cost"), clock)


FIGURES = (
    ("calibration", "Calibration disagreement per method", calibration, None),
    ("period_compare", "hrtimer against jiffies timer", period_compare, "period-compare"),
    ("periodic_jitter", "Periodic jitter distributions", periodic_jitter, "periodic-jitter"),
    ("itimer_error", "Interval timer error", itimer_error, "itimer-error"),
    ("sleep_error", "Sleep error against requested time per tick size", sleep_error,
     "sleep-accuracy"),
    ("tick_overhead", "Tick overhead against tick size", tick_overhead, "tick-overhead"),
    ("hrtimer_cost", "hrtimer operation cost", hrtimer_cost, "hrtimer-cost"),
)
