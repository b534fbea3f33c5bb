"""sleep-accuracy (kernel/exp/sleep_accuracy.c): how late (or early) a sleep of a
requested length ends, per tick size; Koster's select() figures, its table folded into a
grid of requests, and the sleeps that end before their request."""

from ..figdata import Absent, clock_words, fmt_ns, partial_note, rows_of, text_of
from ..published import KOSTER, About, Published, for_row, value_for
from ..tables import Sources, Table, number, short_ns, skip_notes
from ..values import cell, clock_of, measured, num
from .spec import Experiment, Figure

NAME = "sleep-accuracy"

# Koster's select() figures.
SELECT_SETUP = (
    ("tick_ns", "for timer granularities of 100 $\\mu$ s, 300 $\\mu$ s, 1ms, 3ms, and 10ms",
     "in"),
    ("request_ns", "to block for 10 $\\mu$ s, 100 $\\mu$ s, 1ms, 10ms, and 100ms", "in"))
ONE_MS = "Let us consider the graph for 1ms blocking time. For timer granularities of less " \
    "than 1ms the error is about 2ms, for other granularities about 1ms."
DROPS = "For 300 $\\mu$ s and 3ms, the error only drops from 600 $\\mu$ s to 500 $\\mu$ s " \
    "and from 6ms to 5ms, respectively"
ONE_MS_NOTE = ("the source's graphs are one per tick size (its next "
               "sentences), so \"the graph for 1ms blocking time\" is the 1 ms tick's, and "
               "its \"granularities\" there are the requests; its formula, ceil(r / tick) + 1 "
               "ticks, gives 1.99 ms and 1.9 ms of error for 10 us and 100 us at a 1 ms tick, "
               "and 1 ms for 1 ms and longer")
ENDS_NOTE = ("the source names no request; \"from\" is its curve's start, "
             "the shortest request (10 us), \"to\" its end, the longest (100 ms)")


def _select(tick, request, text, value, quote, setup, note):
    return Published(NAME, (("variant", "faithful"), ("mode", "select"),
                                        ("tick_ns", About(tick)), ("request_ns", request)),
                     "mean_err_ns", text, KOSTER, (quote,), value=value,
                     section="3.3 Performance", setup=SELECT_SETUP + setup, note=note)


def _published():
    one_ms = ("tick_ns", "the graph for 1ms blocking time", "=")
    under = ("request_ns", "For timer granularities of less than 1ms", "<")
    over = ("request_ns", "For timer granularities of less than 1ms", ">=")
    shortest = ("request_ns", "to block for 10 $\\mu$ s", "=")
    longest = ("request_ns", "and 100ms for timer granularities", "=")
    t300, t3ms = ("tick_ns", "For 300 $\\mu$ s and 3ms", "="), ("tick_ns", "and 3ms, the", "=")
    out = [_select(1000000, r, "about 2ms", 2000000, ONE_MS, (one_ms, under), ONE_MS_NOTE)
           for r in (10000, 100000)]
    out += [_select(1000000, r, "about 1ms", 1000000, ONE_MS, (one_ms, over), ONE_MS_NOTE)
            for r in (1000000, 10000000, 100000000)]
    out += [_select(300000, 10000, "600 us, dropping to 500 us", 600000, DROPS,
                    (t300, shortest), ENDS_NOTE),
            _select(300000, 100000000, "500 us, down from 600 us", 500000, DROPS,
                    (t300, longest), ENDS_NOTE),
            _select(3000000, 10000, "6 ms, dropping to 5 ms", 6000000, DROPS,
                    (t3ms, shortest), ENDS_NOTE),
            _select(3000000, 100000000, "5 ms, down from 6 ms", 5000000, DROPS,
                    (t3ms, longest), ENDS_NOTE)]
    return tuple(out)


PUBLISHED = _published()


def grid_table(rows):
    """One row per variant, mode and tick size; one column per request: the mean error;
    then the publication's figures for that tick size, each naming its requests."""
    shown = measured(rows)
    variants = list(dict.fromkeys(cell(r.get("variant")) for r in shown))
    only = None
    if "faithful" in variants and len(variants) > 1:
        only = "faithful"  # the one the publication measured; the rest in the figure
        shown = [r for r in shown if r.get("variant") == only]
    requests = sorted({num(r.get("request_ns")) for r in shown
                       if num(r.get("request_ns")) is not None})
    sources = Sources()
    header = ["variant", "mode", "tick (ns)"] + ["%s request (ns)" % short_ns(q)
                                                 for q in requests]
    groups = {}
    for r in shown:
        key = (cell(r.get("variant")), cell(r.get("mode")),
               num(r.get("tick_ns")))
        groups.setdefault(key, {})[num(r.get("request_ns"))] = r
    body, lines, any_pub = [], [], False
    for (variant, mode, tick), by_req in groups.items():
        cells = [variant or "-", mode or "-", number(tick)]
        said = {}  # the published words -> the requests they stand beside
        marks = []
        for q in requests:
            r = by_req.get(q)
            cells.append(number(r.get("mean_err_ns")) if r else "")
            pub = for_row(PUBLISHED, r) if r else None
            if pub:
                said.setdefault(pub["text"], []).append(short_ns(q))
                marks.append(sources.add(pub))
        pub_cell = "; ".join("%s: %s" % (", ".join(qs), text) for text, qs in said.items())
        cells.append("%s %s" % (pub_cell, " ".join(dict.fromkeys(marks))) if said else "")
        any_pub = any_pub or bool(said)
        body.append(cells)
        lines.append(min(r.line for r in by_req.values()))
    if any_pub:
        header.append("published (request: error)")
    else:
        body = [b[:-1] for b in body]
    numeric = {i for i, h in enumerate(header) if h.endswith("(ns)")}
    notes = ["each cell: the mean error (woke - requested) in ns, negative = early; min and "
             "max are in the figure and in data/result-%s.csv" % NAME]
    if only:
        notes.append("the %s variant (as the source measured); %s in the figure and the CSV"
                     % (only, ", ".join(v for v in variants if v != only)))
    return Table(header, body, numeric, skip_notes(rows, ("mode", "tick_ns")) + notes
                 + sources.notes(), lines, sources.quotes())


def draw_errors(data, options):
    """The error against the request, one panel per mode (and variant), a line per tick."""
    from ..plots import (Drawn, legend_beside, mark_published, name_clock, new_figure,
                         panel_axes, symlog_y)
    rows = rows_of(data, NAME)
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
              and value_for(PUBLISHED, r) is not None]
        py = [value_for(PUBLISHED, r) for r in rows if panel(r) == key
              and value_for(PUBLISHED, r) is not None]
        mark_published(ax, px, py)
        pub_shown += len(px)
        spans += py
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_title("mode %s" % mode, fontsize=10)
        ax.set_xscale("log")
        ax.set_xlabel("requested sleep (ns, log)")
        ax.set_ylabel("woke - requested (ns, symlog)")
        ax.yaxis.label.set_visible(axes.index(ax) % cols == 0)  # the unit, for plain_ticks
        if axes.index(ax) == cols - 1 and ax.get_legend_handles_labels()[0]:
            legend_beside(ax, fontsize=6)  # beside the first row's last panel
    if not drawn:
        raise Absent("%s rows have no positive request_ns with a mean_err_ns" % NAME)
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
    return [Drawn("sleep_error", "Sleep error against requested time per tick size", fig,
                  caption + partial_note(data, NAME), clock)]


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


def early_sleeps(data, rows, names):
    """A select or hrtimer sleep that ended before its request, to within one count of the
    clock that timed it (the kernel's contract; `tick` mode may end early, by design)."""
    out = []
    for name, row in zip(names, rows):
        early = num(row.get("min_err_ns"))
        res = clock_of(data, row)[2] or 0
        if row.get("mode") in ("select", "hrtimer") and early is not None and early < -res:
            out.append("%s %s: min_err_ns=%s, a %s sleep that ended before its request, "
                       "which it never does" % (NAME, name, row.get("min_err_ns"),
                                                row.get("mode")))
    return out


EXPERIMENT = Experiment(
    NAME, "Sleep accuracy", ("mode", "tick_ns", "request_ns"),
    "how late (or early) a sleep of a requested length ends, per tick size",
    grid=grid_table,
    figures=(Figure("sleep_error", "Sleep error against requested time per tick size",
                    draw_errors),),
    reads=("variant", "mean_err_ns", "min_err_ns", "max_err_ns"),
    published=PUBLISHED,
    impossible=early_sleeps, impossible_kind="sleep",
    typical_s={"quick": 8.4}, typical_icount_wall_s={"quick": 2.6})
