"""itimer-error (kernel/exp/itimer_error.c): expirations of an interval timer counted
against expected, tick-based and ns-based; Gruszka's program before and after his
patches."""

from ..figdata import clock_words, partial_note, rows_with, text_of, unique_names
from ..published import About, Published, Source, value_for
from ..values import num
from .spec import Experiment, Figure

NAME = "itimer-error"

GRUSZKA = Source(
    "Stanislaw Gruszka, \"[PATCH resend 0/2] itimers: periodic timers fixes\", LKML "
    "(HZ=1000)",
    "lkml-itimers-periodic-fixes.txt",
    ("[PATCH resend 0/2] itimers: periodic timers fixes", "Stanislaw Gruszka",
     "(for HZ=1000)"))

# Gruszka's program before and after the patches: per run, its mode, the words that open
# its part of the file, its name in the source's words, then per period (us) the result's
# two lines.
UNPATCHED = ("tick", "Test program results for unpatched kernel:", "unpatched kernel")
PATCHED = ("ns", "Test program results after patches applied:", "patches applied")
ITIMER_RUNS = (
    (UNPATCHED, (
        (10000, "Requested a period of 10000 us and counted to 646, that should be 6.46 s",
         "The error was -9.3 %"),
        (9998, "Requested a period of 9998 us and counted to 710, that should be 7.10 s",
         "The error was -0.2 %"),
        (1000, "Requested a period of 1000 us and counted to 3563, that should be 3.56 s",
         "The error was -50.4 %"))),
    (PATCHED, (
        (10000, "Requested a period of 10000 us and counted to 711, that should be 7.11 s",
         "The error was -0.1 %"),
        (9998, "Requested a period of 9998 us and counted to 710, that should be 7.10 s",
         "The error was -0.2 %"),
        (1000, "Requested a period of 1000 us and counted to 7123, that should be 7.12 s",
         "The error was -0.1 %"))),
)


def _published():
    out = []
    for (mode, section, words), periods in ITIMER_RUNS:
        for period_us, asked, error in periods:
            out.append(_entry(mode, section, words, period_us, asked, error))
    return tuple(out)


def _entry(mode, section, words, period_us, asked, error):
    pct = float(error.split()[-2])
    return Published(
        NAME, (("mode", mode), ("period_us", period_us),
               ("tick_ns", About(1000000, 0.01))), "error_pct",
        "%s %% (%s)" % (error.split()[-2], words), GRUSZKA, (asked, error), value=pct,
        section=section, block="Requested a period of",
        setup=(("period_us", "Requested a period of %d us" % period_us, "="),
               ("tick_ns", "(for HZ=1000)", "hz")),
        note="" if mode == "tick" else "the patched kernel counts the period at a finer "
        "resolution than the tick; ticklab's ns mode, an hrtimer forwarded by its period, "
        "stands for it")


PUBLISHED = _published()


def draw_errors(data, options):
    """The error per mode and period, the source's figures as stars."""
    from ..plots import Drawn, legend_beside, mark_published, name_clock, new_figure
    rows = rows_with(data, NAME, "error_pct")
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
    pub = [(i, value_for(PUBLISHED, r)) for i, r in enumerate(rows)
           if value_for(PUBLISHED, r) is not None]
    mark_published(ax, [p[0] for p in pub], [p[1] for p in pub])
    if pub:
        legend_beside(ax)
    ax.set_ylabel("counted / expected - 1 (%)")
    ax.tick_params(axis="x", labelrotation=20)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return [Drawn("itimer_error", "Interval timer error", fig,
                  "(counted - expected) / expected per mode and period; red: 1 % or more"
                  + ("; black stars: the publication's figures." if pub else ".")
                  + partial_note(data, NAME), clock)]


EXPERIMENT = Experiment(
    NAME, "Interval timer error", ("mode", "period_us"),
    "expirations counted against expected, tick-based and ns-based",
    columns=("mode", "period_us", "device", "counted", "expected", "error_pct",
             "predicted_pct", "accounted_pct", "tolerance_pct", "matches_prediction", "why"),
    figures=(Figure("itimer_error", "Interval timer error", draw_errors),),
    published=PUBLISHED,
    typical_s={"quick": 4.1}, typical_icount_wall_s={"quick": 1.3})


