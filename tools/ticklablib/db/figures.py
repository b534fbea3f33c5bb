"""The page's figures (matplotlib, through plots.py; imported only when `db report` draws).

Both are drawn for one kind of figures at a time (exact, emulation, KVM, hardware): a
figure never puts an instruction count beside a nanosecond of a real PC. The values are
the kernel's own: the intervals its clockevent verdict rests on (each device's hrtimer
callback p99 and the 95 % order-statistic interval around it), clocked by time_ns().
"""

from ..figdata import Plot
from . import query

CLOCK = "p99 and interval as the kernel's clockevent verdict gives them (clock: time_ns())"


def _save(drawn, outdir):
    from .. import plots
    saved = plots.save(drawn, outdir, svg=True, measure=False)
    return Plot(drawn.name, drawn.title, drawn.caption, saved.png, saved.svg, None,
                drawn.clock)


def _scale(set_scale, values):
    """Log only where the values span more than a decade and a bit: a log axis over a
    narrow range shows no labelled tick at all."""
    low = [v for v in values if v and v > 0]
    if low and max(low) / min(low) > 20:
        set_scale("log")


def _label(m):
    return "%d %s" % (m.id, m.name if len(m.name) <= 28 else m.name[:27] + "~")


def p99_by_machine(mode, latest, intervals, outdir):
    """Each device's callback p99 by machine: (machine, its latest run of this kind)."""
    from .. import plots
    rows = [(m, intervals.get(run["id"], [])) for m, run in latest]
    rows = [(m, ivs) for m, ivs in rows if ivs]
    if not rows:
        return None
    devices = sorted({d for _, ivs in rows for d, *_ in ivs})
    fig = plots.new_figure("Clock event devices' p99 by machine (%s)" % mode)
    fig.set_figheight(max(3.2, 1.2 + 0.32 * len(rows) * max(1, len(devices)) ** 0.5))
    ax = fig.add_subplot()
    step = 0.8 / max(1, len(devices))
    for k, device in enumerate(devices):
        ys, xs, lo, hi = [], [], [], []
        for i, (m, ivs) in enumerate(rows):
            for d, value, low, high in ivs:
                if d == device and value is not None:
                    ys.append(i - 0.4 + step * (k + 0.5))
                    xs.append(value)
                    lo.append(max(0.0, value - (low if low is not None else value)))
                    hi.append(max(0.0, (high if high is not None else value) - value))
        if xs:
            ax.errorbar(xs, ys, xerr=[lo, hi], fmt="o", ms=4, capsize=2, label=device)
    ax.set_yticks(range(len(rows)), [_label(m) for m, _ in rows])
    ax.invert_yaxis()
    _scale(ax.set_xscale, [v for _, ivs in rows for _, v, _, _ in ivs])
    ax.set_xlabel("hrtimer callback p99 after the deadline (ns)")
    ax.legend(fontsize=8, loc="best")
    plots.name_clock(fig, CLOCK)
    caption = ("One row per machine with a %s run that measured its devices: the latest such "
               "run; a bar is the 95 %% interval of the p99." % mode)
    return _save(plots.Drawn("db_p99_%s" % mode, "p99 by machine, %s" % mode, fig, caption,
                             CLOCK), outdir)


def history(mode, found, outdir, most):
    """Each machine's chosen device's p99, run after run, by the run's time."""
    from .. import plots
    series = []
    for m in found:
        runs = [r for r in m.runs if r["mode"] == mode and r["chosen_p99_ns"] is not None]
        if runs:
            series.append((m, runs))
    if not series:
        return None
    series.sort(key=lambda s: -len(s[1]))
    shown = series[:most]
    fig = plots.new_figure("History: the chosen device's p99 per machine (%s)" % mode)
    ax = fig.add_subplot()
    times = sorted({query.when(r) for _, runs in shown for r in runs})
    where = {t: i for i, t in enumerate(times)}
    for m, runs in shown:
        xs = [where[query.when(r)] for r in runs]
        ys = [r["chosen_p99_ns"] for r in runs]
        lo = [max(0.0, y - (r["chosen_lo_ns"] if r["chosen_lo_ns"] is not None else y))
              for y, r in zip(ys, runs)]
        hi = [max(0.0, (r["chosen_hi_ns"] if r["chosen_hi_ns"] is not None else y) - y)
              for y, r in zip(ys, runs)]
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o-", ms=3, capsize=2, lw=1, label=_label(m))
    ticks = sorted(set([0, len(times) - 1] + list(range(0, len(times), max(1, len(times) // 5)))))
    ax.set_xticks(ticks, [times[i][:10] for i in ticks])
    _scale(ax.set_yscale, [r["chosen_p99_ns"] for _, runs in shown for r in runs])
    ax.set_ylabel("chosen device's callback p99 (ns)")
    ax.set_xlabel("run, in time order (capture start, else when it was added)")
    ax.legend(fontsize=7, loc="best", ncol=2)
    plots.name_clock(fig, CLOCK)
    caption = "%d of %d machine(s) with %s runs (those with the most runs)%s." % (
        len(shown), len(series), mode,
        "; `ticklab db show MACHINE` lists every run of the others" if len(series) > most
        else "")
    return _save(plots.Drawn("db_history_%s" % mode, "History, %s" % mode, fig, caption,
                             CLOCK), outdir)
