"""The figures of the calibration and of the experiments other than wakeup-latency: one
function each, in the report's order (plots.py has the shared machinery)."""

from matplotlib.ticker import MaxNLocator

from . import published, tables
from .dataset import num
from .figdata import (Absent, clock_words, fmt_ns, label, parse_hist, partial_note, rows_of,
                      text_of, unique_names)
from .plots import Drawn, name_clock, new_figure, panel_axes, symlog_y


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
    symlog_y(ax, max(floor, 0.1), [p + e for p, e in zip(ppm, err)]
             + [p - e for p, e in zip(ppm, err)])
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
    cols = 3 if len(series) == 3 else 2
    fig = new_figure("hrtimer against jiffies timer: error of each 1 s period", len(series),
                     cols=cols, panel_h=2.6)
    pub = 0
    for ax, (row, errs) in zip(panel_axes(fig, len(series), cols=cols), series):
        ax.plot(range(1, len(errs) + 1), errs, marker="o", label="measured")
        ax.axhline(0, color="black", linewidth=0.7)
        value = published_value("period-compare", row)
        if value is not None:
            pub += 1
            ax.axhline(value, color="black", linestyle="--", linewidth=1.2,
                       label="published %s" % fmt_ns(value))
            ax.legend(fontsize=7, loc="center right")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title("timer %s" % label(row, ("timer", "variant")), fontsize=10)
        ax.set_xlabel("period number")
        ax.set_ylabel("interval - period (ns)")
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return one("period_compare", "hrtimer against jiffies timer", fig,
               "Each period's measured interval minus its nominal length, one panel per "
               "timer (each on its own scale; the first period counts from the arming)"
               + ("; dashed: the publication's figure." if pub else ".")
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
        # the source's stddev of the timer with the same period, set and resolution
        pub = [(num(r.get("period_ns")) / 1000, published_value("periodic-jitter", r))
               for r in rows if num(r.get("period_ns")) is not None]
        pub = [(x, y) for x, y in pub if y is not None]
        mark_published(ax, [x for x, _ in pub], [y for _, y in pub])
        handles, labels = ax.get_legend_handles_labels()
        keep = dict(zip(labels, handles))  # each label once
        ax.set_title("interval stddev per timer", fontsize=10)
        ax.set_xlabel("timer period (us)")
        ax.set_ylabel("stddev of the intervals (ns)")
        ax.legend(keep.values(), keep.keys(), fontsize=6)
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
    pub = [(i, published_value("itimer-error", r)) for i, r in enumerate(rows)
           if published_value("itimer-error", r) is not None]
    mark_published(ax, [p[0] for p in pub], [p[1] for p in pub])
    if pub:
        ax.legend(fontsize=7, loc="lower right")
    ax.set_ylabel("counted / expected - 1 (%)")
    ax.tick_params(axis="x", labelrotation=20)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return one("itimer_error", "Interval timer error", fig,
               "(counted - expected) / expected per mode and period; red: 1 % or more"
               + ("; black stars: the publication's figures." if pub else ".")
               + partial_note(data, "itimer-error"), clock)


def sleep_error(data, options):
    rows = rows_of(data, "sleep-accuracy")
    # one panel per mode, and per variant where the rows have one (faithful: back to back as
    # the source; ticklab: random phase)
    def panel(r):
        return (text_of(r.get("mode")), text_of(r.get("variant")) if r.get("variant") else "")
    mode_names = list(dict.fromkeys(panel(r)[0] for r in rows))
    variants = list(dict.fromkeys(panel(r)[1] for r in rows))
    present = set(panel(r) for r in rows)
    # one column per mode, one row per variant (faithful, then ticklab)
    modes = [(m, v) for v in variants for m in mode_names]
    cols = len(mode_names) if len(mode_names) <= 3 else 2
    fig = new_figure("Sleep error against requested time, per tick size", len(modes),
                     cols=cols, panel_h=2.7)
    hidden = drawn = early = 0
    spans = []
    pub_shown = 0
    axes = panel_axes(fig, len(modes), share=True, cols=cols)
    for ax, key in zip(axes, modes):
        if key not in present:
            ax.set_visible(False)
            continue
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
            spans += [y - lo for y, lo in zip(ys, los)] + [y + hi for y, hi in zip(ys, his)]
        px = [num(r.get("request_ns")) for r in rows if panel(r) == key
              and published_value("sleep-accuracy", r) is not None]
        py = [published_value("sleep-accuracy", r) for r in rows if panel(r) == key
              and published_value("sleep-accuracy", r) is not None]
        mark_published(ax, px, py)
        pub_shown += len(px)
        spans += py
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title("mode %s" % mode, fontsize=10)
        ax.set_xscale("log")
        ax.set_xlabel("requested sleep (ns, log)")
        ax.set_ylabel("woke - requested (ns, symlog)")
        ax.yaxis.label.set_visible(axes.index(ax) % cols == 0)  # the unit, for plain_ticks
        if axes.index(ax) == 0 and ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6, loc="lower left")
    if not drawn:
        raise Absent("sleep-accuracy rows have no positive request_ns with a mean_err_ns")
    for ax in axes:
        symlog_y(ax, 1000, spans)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Error of a sleep (woke - requested) against its requested length, one panel "
               "per mode, one line per tick size; the bars span min to max. The y axis is "
               "symmetric-log, linear within +-1 us, so early wake-ups show below 0")
    caption += (": %d sleep(s) woke early at least once (red triangles at their min)." % early
                if early else "; none woke early.")
    if pub_shown:
        caption += " Black stars: the publication's figures."
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


def published_value(exp, row):
    """The publication's figure for a row, as a number, or None (published.py)."""
    pub = published.for_row(exp, row)
    return None if pub is None else num(pub.get("value"))


def mark_published(ax, xs, ys, horizontal=False):
    """The publications' figures as black stars, labelled once."""
    if not xs:
        return
    if horizontal:
        xs, ys = ys, xs
    ax.plot(xs, ys, marker="*", markersize=11, linestyle="none", color="black",
            label="published")


def tick_overhead(data, options):
    rows = rows_of(data, "tick-overhead")
    pts = [r for r in rows if (num(r.get("tick_ns")) or 0) > 0
           and (num(r.get("overhead_pct")) is not None
                or num(r.get("overhead_bound_pct")) is not None)]
    if not pts:
        raise Absent("tick-overhead rows have no tick_ns > 0 with an overhead_pct")
    parts = ("entry_cyc", "handler_cyc", "eoi_cyc", "return_cyc")
    split = [r for r in pts if any(num(r.get(p)) is not None for p in parts)]
    split = list({num(r.get("tick_ns")): r for r in split}.values())  # one per tick size
    fig = new_figure("Tick overhead against tick size")
    ax = fig.add_subplot(1, 2 if split else 1, 1)
    bounds = measured = 0
    pub_x, pub_y = [], []
    variants = list(dict.fromkeys(text_of(r.get("variant"), "") for r in pts))
    for i, variant in enumerate(variants):
        colour = ("tab:blue", "tab:orange", "tab:green")[i % 3]
        vrows = sorted((r for r in pts if text_of(r.get("variant"), "") == variant),
                       key=lambda r: num(r.get("tick_ns")))
        name = {"ticklab": "vs no tick", "faithful": "vs 10 ms tick"}.get(
            variant, variant or "overhead")
        got = [(num(r.get("tick_ns")), num(r.get("overhead_pct")),
                num(r.get("overhead_uncertainty_pct")) or 0) for r in vrows
               if r.get("below_resolution") is not True
               and num(r.get("overhead_pct")) is not None]
        if got:
            measured += len(got)
            ax.errorbar([g[0] for g in got], [g[1] for g in got], yerr=[g[2] for g in got],
                        marker="o", capsize=3, color=colour, label=name)
        top = [(num(r.get("tick_ns")), num(r.get("overhead_bound_pct"))) for r in vrows
               if r.get("below_resolution") is True
               and num(r.get("overhead_bound_pct")) is not None]
        if top:
            bounds += len(top)
            ax.plot([t[0] for t in top], [t[1] for t in top], marker="v", markersize=8,
                    linestyle="none", color=colour, markerfacecolor="none",
                    label="%s: at most" % name)
        for r in vrows:
            value = published_value("tick-overhead", r)
            if value is not None:
                pub_x.append(num(r.get("tick_ns")))
                pub_y.append(value)
    mark_published(ax, pub_x, pub_y)
    ax.set_xscale("log")
    ys = [y for line in ax.get_lines() for y in line.get_ydata() if y > 0]
    if ys and max(ys) / min(ys) > 30:
        ax.set_yscale("log")
        ax.set_ylim(min(ys) / 3, max(ys) * 3)
    else:
        ax.set_ylim(0, max(ys or [1]) * 1.3)
    ax.set_xlabel("tick period (ns, log)")
    ax.set_ylabel("CPU time taken by the tick (%)")
    ax.legend(fontsize=7)
    caption = ("Share of a busy loop's time lost to the tick: circles measured (bars: the "
               "spread of the rounds)")
    caption += ("; hollow triangles where the difference was below the measurement's "
                "resolution: the most the rounds allow, not a measured value (%d)" % bounds
                if bounds else "")
    caption += "; black stars: the publication's figures." if pub_x else "."
    if split:
        bx = fig.add_subplot(1, 2, 2)
        split.sort(key=lambda r: num(r.get("tick_ns")))
        names = [fmt_ns(r.get("tick_ns")) for r in split]
        left = [0.0] * len(split)
        for part in parts:
            vals = [num(r.get(part)) or 0 for r in split]
            bx.barh(names, vals, left=left, label=part[:-4])
            left = [a + v for a, v in zip(left, vals)]
        bx.set_xlabel("TSC cycles per tick interrupt (median)")
        bx.set_ylabel("tick period")
        bx.legend(fontsize=7)
        caption += " Right: where one tick interrupt's TSC cycles go (median of each part)."
    clock = clock_words(data, pts)
    name_clock(fig, clock)
    return one("tick_overhead", "Tick overhead against tick size", fig,
               caption + partial_note(data, "tick-overhead"), clock)


def hrtimer_cost(data, options):
    rows = rows_of(data, "hrtimer-cost")
    batch = [r for r in rows if num(r.get("mean_cyc")) is not None]
    per_op = [r for r in rows if num(r.get("median_cyc")) is not None]
    if not batch and not per_op:
        raise Absent("hrtimer-cost rows carry neither mean_cyc nor median_cyc")
    panels = [p for p in (("batch", batch), ("per_op", per_op)) if p[1]]
    fig = new_figure("hrtimer operation cost per device", len(panels), cols=1, panel_h=3.2)
    pub = 0
    every = list(dict.fromkeys(text_of(r.get("device")) for r in batch + per_op))
    colour = {d: "C%d" % (i % 10) for i, d in enumerate(every)}
    unit_words, warning = tables.cost_unit(batch + per_op)
    unit_words = unit_words.split(":")[0]
    for ax, (kind, prows) in zip(panel_axes(fig, len(panels), cols=1), panels):
        ops = list(dict.fromkeys(text_of(r.get("op")) for r in prows))
        devices = [d for d in every if any(text_of(r.get("device")) == d for r in prows)]
        height = 0.8 / max(len(devices), 1)
        key = "mean_cyc" if kind == "batch" else "median_cyc"
        for j, device in enumerate(devices):
            got = [(ops.index(text_of(r.get("op"))), r) for r in prows
                   if text_of(r.get("device")) == device]
            ys = [i + (j - (len(devices) - 1) / 2) * height for i, _ in got]
            # a batch mean below its resolution is drawn as its bound: a hollow bar to the
            # uncertainty ("at most"), never as a measured value
            bound = [kind == "batch" and r.get("below_resolution") is True for _, r in got]
            vals = [num(r.get("uncertainty_cyc")) or 0 if b else num(r.get(key))
                    for (_, r), b in zip(got, bound)]
            if kind == "batch":
                err = [0 if b else num(r.get("uncertainty_cyc")) or 0
                       for (_, r), b in zip(got, bound)]
            else:
                err = [[0] * len(got), [max(0, (num(r.get("p99_cyc")) or v) - v)
                                        for (_, r), v in zip(got, vals)]]
            bars = ax.barh(ys, vals, height, xerr=err, label=device, capsize=2,
                           color=colour[device])
            for bar, b in zip(bars, bound):
                if b:
                    bar.set_fill(False)
                    bar.set_hatch("//")
                    bar.set_edgecolor(colour[device])
        px, py = [], []
        for r in prows:
            value = published_value("hrtimer-cost", r)
            if value is not None:
                px.append(ops.index(text_of(r.get("op"))))
                py.append(value)
        pub += len(px)
        mark_published(ax, px, py, horizontal=True)
        ax.set_yticks(range(len(ops)), ops, fontsize=8)
        ax.invert_yaxis()
        vals = [num(r.get(key)) for r in prows if (num(r.get(key)) or 0) > 0]
        if vals and max(vals) / min(vals) > 30:
            ax.set_xscale("log")
        ax.set_xlabel("%s per operation (%s)" % (unit_words,
            "mean over the batches, +- half their spread" if kind == "batch"
            else "median, whisker to p99"))
        ax.set_title("%s: %s" % (kind, "means over up to 1e6 operations, as the source"
                                 if kind == "batch" else "each operation timed alone"),
                     fontsize=10)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    clock = clock_words(data, batch + per_op)
    name_clock(fig, clock)
    return one("hrtimer_cost", "hrtimer operation cost", fig,
               "%s of one operation, per device: the source's batch means (top) and " % (
                   unit_words[0].upper() + unit_words[1:]) +
               "each operation alone, its median with a whisker to its p99 (the ordered TSC "
               "pair included); a hatched hollow bar: a batch mean below its resolution, drawn "
               "to its bound" + ("; black stars: the publication's figures (NuttX, CPU "
                                   "cycles%s)." % ("; " + warning if warning else "")
                                   if pub else ".") + partial_note(data, "hrtimer-cost"),
               clock)


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
