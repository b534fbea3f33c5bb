"""periodic-jitter (kernel/exp/periodic_jitter.c): the spread of a periodic timer's
intervals, alone and among others; John's ten timers and one alone, its table folded per
set and resolution, and its histograms."""

from ..figdata import Absent, clock_words, fmt_ns, parse_hist, partial_note, rows_of, text_of
from ..published import Published, Source, for_rows, not_compared, value_for
from ..tables import Sources, Table, number, pub_text, short_ns, skip_notes
from ..values import cell, measured, num
from .spec import Experiment, Figure

NAME = "periodic-jitter"

JOHN_2006 = Source(
    "John, \"Better resolution using the hrtimers infrastructure\", LKML, 2006-10-12 "
    "(Linux 2.6.16.28 on a Pentium 4 2.8 GHz, HZ=250)",
    "lkml-2006-hrtimers-posix-periodic.txt",
    ("Better resolution using the hrtimers infrastructure",
     "On Thu, 2006-10-12 at 10:18 +0200, John wrote:", "running Linux 2.6.16.28",
     "P4 2.8 GHz", "HZ=250"))

# John's ten timers at 5000 ns and 800 ns, and one alone. Each timer as the source prints
# it: its AVG and STDDEV line (us), then the shares within +-5 us and +-10 us of its period.
JITTER_5000 = (
    ("AVG=500.0000119875 STDDEV=4.7221250605", "P(495 <= L <= 505) = 0.8177218875",
     "P(490 <= L <= 510) = 0.9630963875"),
    ("AVG=512.9983118837 STDDEV=4.6444950150", "P(508 <= L <= 518) = 0.8248110095",
     "P(503 <= L <= 523) = 0.9648220375"),
    ("AVG=525.9978541435 STDDEV=4.5872769426", "P(521 <= L <= 531) = 0.8294680508",
     "P(516 <= L <= 536) = 0.9662504459"),
    ("AVG=538.9976678278 STDDEV=4.6550001682", "P(534 <= L <= 544) = 0.8233726222",
     "P(529 <= L <= 549) = 0.9647691136"),
    ("AVG=551.9962816176 STDDEV=4.6202416645", "P(547 <= L <= 557) = 0.8261095807",
     "P(542 <= L <= 562) = 0.9654630987"),
    ("AVG=564.9992072061 STDDEV=4.7382868551", "P(560 <= L <= 570) = 0.8201386764",
     "P(555 <= L <= 575) = 0.9631647119"),
    ("AVG=577.9969566710 STDDEV=4.6799294742", "P(573 <= L <= 583) = 0.8199662908",
     "P(568 <= L <= 588) = 0.9637724766"),
    ("AVG=591.0001112558 STDDEV=4.6366848287", "P(586 <= L <= 596) = 0.8273179260",
     "P(581 <= L <= 601) = 0.9651421699"),
    ("AVG=604.0009058943 STDDEV=4.7022062409", "P(599 <= L <= 609) = 0.8253007146",
     "P(594 <= L <= 614) = 0.9627097645"),
    ("AVG=617.0019377040 STDDEV=4.7598557221", "P(612 <= L <= 622) = 0.8164446084",
     "P(607 <= L <= 627) = 0.9616794710"),
)
JITTER_800 = (
    ("AVG=599.9986703520 STDDEV=4.3792286239", "P(595 <= L <= 605) = 0.8466944914",
     "P(590 <= L <= 610) = 0.9707216439"),
    ("AVG=612.9981400476 STDDEV=4.1769930447", "P(608 <= L <= 618) = 0.8585605458",
     "P(603 <= L <= 623) = 0.9756196900"),
    ("AVG=625.9983042536 STDDEV=4.2016958416", "P(621 <= L <= 631) = 0.8569019831",
     "P(616 <= L <= 636) = 0.9753284384"),
    ("AVG=638.9985581093 STDDEV=4.2072766644", "P(634 <= L <= 644) = 0.8532895995",
     "P(629 <= L <= 649) = 0.9746377576"),
    ("AVG=651.9989919428 STDDEV=4.1936623871", "P(647 <= L <= 657) = 0.8576286791",
     "P(642 <= L <= 662) = 0.9757251792"),
    ("AVG=664.9976003076 STDDEV=4.2224641203", "P(660 <= L <= 670) = 0.8541156365",
     "P(655 <= L <= 675) = 0.9748352293"),
    ("AVG=677.9992813471 STDDEV=4.2120672530", "P(673 <= L <= 683) = 0.8598737385",
     "P(668 <= L <= 688) = 0.9752509658"),
    ("AVG=690.9987525239 STDDEV=4.2379530226", "P(686 <= L <= 696) = 0.8548963154",
     "P(681 <= L <= 701) = 0.9744069907"),
    ("AVG=703.9993729190 STDDEV=4.3323158412", "P(699 <= L <= 709) = 0.8449093344",
     "P(694 <= L <= 714) = 0.9731234341"),
    ("AVG=717.0005565641 STDDEV=4.2230279084", "P(712 <= L <= 722) = 0.8579009228",
     "P(707 <= L <= 727) = 0.9744286679"),
)
JITTER_ALONE = (
    ("AVG=600.0036125280 STDDEV=1.6630613701", "P(595 <= L <= 605) = 0.9997573360",
     "P(590 <= L <= 610) = 0.9998031160"),
)
# What the source concludes of its runs, in its words: the 800 ns run against the 5000 ns
# one, and one task alone against ten.
SLIGHTLY = ("The resolution (STDDEV) was slightly better, but I un-scientifically changed two "
            "parameters.",)
MARKEDLY = ("The resolution is markedly better (unsurprisingly).",)

# ticklab's reading beside them: what the rounding model gives under virtual time.
ROUNDING_NOTE = (
    "ticklab rounds each re-arm's delay up to the resolution; under virtual time every "
    "callback comes the same L ns after its expiry, so the rounding's phase steps by (L - T) "
    "mod resolution each period and a timer's stddev is resolution x sqrt(p(1 - p)), p that "
    "step over the resolution: it follows T mod resolution, is at most half of it, and keeps "
    "every interval within +-5 us of T (P(+-5 us) 1 by construction); the source's 0.82-0.86 "
    "is a real machine's variation, which the model leaves out")
SLIGHTLY_NOTE = (
    "the source finds 800 ns slightly better than 5000 ns (4.18-4.38 us against 4.59-4.76, "
    "a resolution 6.25 times finer); ticklab's 800 ns rows are about 5 times better: its "
    "spread is the resolution's rounding alone, so it scales with the resolution")
MARKEDLY_NOTE = (
    "the source finds one timer alone markedly better (1.66 us against 4.18-4.38); "
    "ticklab's is about the same as its ten: the others' callbacks move L by a few hundred "
    "ns, and the resolution's rounding sets the spread either way")

JITTER_SETS = (
    # set, resolution (ns), the words that open its part, what it ran in ticklab's words,
    # its setup, its timers, the source's conclusion about the set and ticklab's note on it
    ("ten", 5000, "I first compiled a kernel with a resolution of 5000 ns.",
     "ten timers with T = 500+13*i us",
     (("hres_ns", "a resolution of 5000 ns", "="), ("set", "I ran 10 concurrent tasks", "="),
      ("period_ns", "T = 500+13*i \u00b5s", "T+13i")), JITTER_5000, (), ROUNDING_NOTE),
    ("ten", 800, "I then recompiled my kernel with a resolution of 800 ns.",
     "ten timers with T = 600+13*i us",
     (("hres_ns", "a resolution of 800 ns", "="), ("set", "I ran 10 concurrent tasks", "="),
      ("period_ns", "T = 600+13*i \u00b5s", "T+13i")), JITTER_800, SLIGHTLY, SLIGHTLY_NOTE),
    ("alone", 800, "Finally, I ran only one task with T = 600 \u00b5s",
     "one timer alone at T = 600 us",
     (("hres_ns", "a resolution of 800 ns", "="), ("set", "I ran only one task", "="),
      ("period_ns", "only one task with T = 600 \u00b5s", "=")), JITTER_ALONE, MARKEDLY,
     MARKEDLY_NOTE),
)


def _value(line, name):
    """The number after `name=` or `= ` in one of the source's lines."""
    tail = line.split(name, 1)[1] if name else line.rsplit("= ", 1)[1]
    return float(tail.split()[0])


def _published():
    out = []
    for tset, hres, section, setting, setup, timers, finding, note in JITTER_SETS:
        for avg_sd, p5, p10 in timers:
            period_us = round(_value(avg_sd, "AVG="))
            match = (("set", tset), ("grid", True), ("hres_ns", hres),
                     ("period_ns", period_us * 1000))
            timer_setup = setup + (("period_ns", avg_sd.split()[0], "avg_us"),)
            stddev_us = _value(avg_sd, "STDDEV=")
            common = dict(section=section, block="AVG=", setup=timer_setup,
                          near=("period_ns", "set"), setting=setting, finding=finding,
                          note=note)
            quote = (avg_sd, p5, p10)
            out += [
                Published(NAME, match, "stddev_ns", "stddev %.2f us" % stddev_us,
                          JOHN_2006, quote, value=stddev_us * 1000, **common),
                Published(NAME, match, "p_within_5us", "%.4f" % _value(p5, ""),
                          JOHN_2006, quote, value=_value(p5, ""), **common),
                Published(NAME, match, "p_within_10us",
                          "%.4f" % _value(p10, ""), JOHN_2006, quote, value=_value(p10, ""),
                          **common)]
    return tuple(out)


PUBLISHED = _published()


def table_grid_words(row):
    """What the deadlines were rounded to, as the table says it."""
    hres = num(row.get("hres_ns"))
    if row.get("grid") is False:
        return "none (device cycle %s)" % short_ns(hres) if hres else "none"
    return "%s grid" % short_ns(hres) if hres is not None else "-"


def grid_table(rows):
    """One row per set of timers and resolution: the timers' interval stddev and their
    shares within +-5 and +-10 us (lowest-highest over the timers, as fractions like the
    source's), each with the source's figures for the same set and resolution beside it,
    and the overruns."""
    groups = {}
    for r in measured(rows):
        groups.setdefault((cell(r.get("set")), table_grid_words(r)), []).append(r)
    sources = Sources()
    header = ["set", "deadlines on", "timers", "intervals", "stddev (ns)", "published",
              "within +-5 us", "published (+-5 us)", "within +-10 us", "published (+-10 us)",
              "overruns"]
    body, lines, why = [], [], {}
    for (tset, grid), grs in groups.items():
        def span(key, fmt):
            vals = [num(r.get(key)) for r in grs if num(r.get(key)) is not None]
            if not vals:
                return "-"
            lo, hi = fmt(min(vals)), fmt(max(vals))
            return lo if lo == hi else "%s - %s" % (lo, hi)

        def pub(key):
            p = for_rows(PUBLISHED, grs, key)
            if p:
                return pub_text(p, sources)
            off = [not_compared(PUBLISHED, r) for r in grs]
            off = [o for o in off if o]
            if off:
                why.setdefault(off[0], []).append("%s at %s" % (tset, grid))
                return "not compared (*)"
            return ""
        body.append([tset or "-", grid, number(len(grs)),
                     number(sum(num(r.get("samples")) or 0 for r in grs)),
                     span("stddev_ns", lambda v: number(round(v))), pub("stddev_ns"),
                     span("p_within_5us", lambda v: "%.4f" % v), pub("p_within_5us"),
                     span("p_within_10us", lambda v: "%.4f" % v), pub("p_within_10us"),
                     number(sum(num(r.get("overruns")) or 0 for r in grs))])
        lines.append(grs[0].line)
    notes = ["one row per set of timers and resolution; each figure the lowest - highest of "
             "the set's timers (shares: the fraction of intervals within +-5 / +-10 us of the "
             "period); each timer's own row in data/result-%s.csv" % NAME]
    notes += ["(*) %s: %s, so its figures are not set beside this run's" % (
        ", ".join(dict.fromkeys(where)), reason) for reason, where in why.items()]
    return Table(header, body, {2, 3, 4, 6, 8, 10},
                 skip_notes(rows, ("set", "timer")) + notes + sources.notes(), lines,
                 sources.quotes())


def draw_histograms(data, options):
    """The intervals' deviations per grid and set, and each timer's stddev."""
    from ..plots import (Drawn, legend_beside, legend_below, mark_published, name_clock,
                         new_figure, panel_axes)
    rows = rows_of(data, NAME)
    hists = [(r, parse_hist(r.get("hist"))) for r in rows]
    sets = {}
    for row, hist in hists:
        if hist is None:
            continue
        key = (figure_grid_words(row), text_of(row.get("set")), tuple(hist.edges))
        total = sets.setdefault(key, {"counts": [0] * len(hist.counts), "timers": 0,
                                      "below": 0, "above": 0})
        total["counts"] = [a + b for a, b in zip(total["counts"], hist.counts)]
        total["timers"] += 1
        total["below"] += hist.below   # the kernel's outer buckets: beyond the axis
        total["above"] += hist.above
    panels = list(dict.fromkeys(k[0] for k in sets))
    stddev = [(num(r.get("period_ns")), num(r.get("stddev_ns")), figure_grid_words(r))
              for r in rows]
    stddev = [s for s in stddev if s[0] is not None and s[1] is not None]
    if not panels and not stddev:
        raise Absent("%s rows carry neither a histogram nor stddev_ns" % NAME)
    n_panels = len(panels) + bool(stddev)
    # every panel in one row (four at most), tall enough for the legends under them
    fig = new_figure("Periodic timer jitter", n_panels, panel_h=3.4,
                     cols=min(n_panels, 4))
    if n_panels <= 4:
        fig.set_figheight(5.4)
    axes = panel_axes(fig, len(panels) + bool(stddev))
    width_note = set()
    clipped = []   # (panel, set, below, above, all periods)
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
            out = (total["below"], total["above"])
            bars = ax.bar(edges[lo:hi], counts[lo:hi], width=edges[1] - edges[0],
                          align="edge", alpha=0.5, label="%s (%d timer%s)%s" % (
                              tset, total["timers"], "s" * (total["timers"] > 1),
                              "\nbeyond (hatched): %d below %s,\n%d above %s" % (
                                  out[0], fmt_ns(edges[0]), out[1], fmt_ns(edges[-1]))
                              if any(out) else ""))
            if any(out):
                # the periods beyond the kernel's buckets, as hatched bars at the edges
                # with their counts: a clipped histogram never hides them
                w = edges[1] - edges[0]
                colour = bars.patches[0].get_facecolor() if bars.patches else None
                for x, c in ((edges[0] - w, out[0]), (edges[-1], out[1])):
                    if c:
                        ax.bar([x], [c], width=w, align="edge", color=colour, hatch="///",
                               edgecolor="black", linewidth=0.5)
                clipped.append((hres, tset, out[0], out[1],
                                sum(counts) + out[0] + out[1], edges[0], edges[-1]))
        ax.set_title(hres, fontsize=10)
        if options.log_counts:
            ax.set_yscale("log")
        ax.set_xlabel("expiry - ideal expiry (ns)")
        ax.set_ylabel("periods per bucket")
        if ax.get_legend_handles_labels()[0]:
            legend_below(ax, ncol=1)  # a narrow panel: one column
    if stddev:
        ax = axes[len(panels)]
        for hres in dict.fromkeys(s[2] for s in stddev):
            pts = sorted((p, sd) for p, sd, h in stddev if h == hres)
            ax.plot([p / 1000 for p, _ in pts], [sd for _, sd in pts], marker="o",
                    linestyle="none", label=hres)
        # the source's stddev of the timer with the same period, set and resolution
        pub = [(num(r.get("period_ns")) / 1000, value_for(PUBLISHED, r))
               for r in rows if num(r.get("period_ns")) is not None]
        pub = [(x, y) for x, y in pub if y is not None]
        mark_published(ax, [x for x, _ in pub], [y for _, y in pub])
        handles, labels = ax.get_legend_handles_labels()
        keep = dict(zip(labels, handles))  # each label once
        ax.set_title("interval stddev per timer", fontsize=10)
        ax.set_xlabel("timer period (us)")
        ax.set_ylabel("stddev of the intervals (ns)")
        legend_beside(ax, list(keep.values()), list(keep.keys()), fontsize=6)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    caption = ("Each period's deviation from its ideal expiry, one panel per grid, one "
               "colour per set of timers, the axis fitted to the buckets that hold data")
    if width_note:
        caption += " (the kernel's buckets are %s wide)" % ", ".join(
            fmt_ns(w) for w in sorted(width_note))
    caption += "; last panel: each timer's interval stddev, which resolves what the buckets " \
               "cannot." if stddev else "."
    if clipped:
        caption += " Beyond the buckets (hatched, at the edges): %s." % "; ".join(
            "%s, %s: %d of %d periods (%d below, %d above)" % (
                hres, tset, lo + hi, n, lo, hi) for hres, tset, lo, hi, n, _, _ in clipped)
    return [Drawn("periodic_jitter", "Periodic jitter distributions", fig,
                  caption + partial_note(data, NAME), clock)]


def figure_grid_words(row):
    """What the deadlines were rounded to, as the figure says it."""
    hres = num(row.get("hres_ns"))
    if row.get("grid") is False:
        return "no grid (the device's %s cycle)" % fmt_ns(hres) if hres else "no grid"
    return "deadlines on a %s grid" % fmt_ns(hres) if hres is not None else "grid not named"


EXPERIMENT = Experiment(
    NAME, "Periodic jitter", ("set", "timer", "hres_ns", "grid", "period_ns"),
    "spread of the intervals of a periodic timer, alone and among others",
    grid=grid_table,
    figures=(Figure("periodic_jitter", "Periodic jitter distributions", draw_histograms),),
    reads=("samples", "stddev_ns", "p_within_5us", "p_within_10us", "overruns", "hist"),
    published=PUBLISHED,
    typical_s={"quick": 2.0}, typical_icount_wall_s={"quick": 0.9})
