"""itimer-error (kernel/exp/itimer_error.c): expirations of an interval timer counted
against expected, tick-based and ns-based, and CPU time sampled at each tick as ITIMER_PROF
counts it; Gruszka's program before and after his patches."""

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
# three lines (what it asked and counted, the loop's real time, the error).
UNPATCHED = ("tick", "Test program results for unpatched kernel:", "unpatched kernel")
PATCHED = ("ns", "Test program results after patches applied:", "patches applied")
ITIMER_RUNS = (
    (UNPATCHED, (
        (10000, "Requested a period of 10000 us and counted to 646, that should be 6.46 s",
         "Meanwhile real time elapsed: 7.12 s", "The error was -9.3 %"),
        (9998, "Requested a period of 9998 us and counted to 710, that should be 7.10 s",
         "Meanwhile real time elapsed: 7.12 s", "The error was -0.2 %"),
        (1000, "Requested a period of 1000 us and counted to 3563, that should be 3.56 s",
         "Meanwhile real time elapsed: 7.19 s", "The error was -50.4 %"))),
    (PATCHED, (
        (10000, "Requested a period of 10000 us and counted to 711, that should be 7.11 s",
         "Meanwhile real time elapsed: 7.12 s", "The error was -0.1 %"),
        (9998, "Requested a period of 9998 us and counted to 710, that should be 7.10 s",
         "Meanwhile real time elapsed: 7.11 s", "The error was -0.2 %"),
        (1000, "Requested a period of 1000 us and counted to 7123, that should be 7.12 s",
         "Meanwhile real time elapsed: 7.13 s", "The error was -0.1 %"))),
)
# ticklab's modes that stand for each kernel: the period rounded up to whole ticks from each
# expiry (tick) or of CPU time sampled at each tick, as the source's ITIMER_PROF counts it
# (prof_tick); an hrtimer forwarded by its period (ns) or CPU time kept in ns (prof_ns).
PROF_MODE = {"tick": "prof_tick", "ns": "prof_ns"}
# The source's kernel's tick: "the actual frequency is about 1000.152 Hz".
SOURCE_TICK_NS = 1e9 / 1000.152
# How the patched kernel counts, in the source's words (all it says of it).
PATCH_WORDS = ("It change intervals measurement resolutions and correct times when signal is "
               "generated.", "the time between two consecutive tics can be smaller than "
               "requested interval")
NS_NOTE = ("the patched kernel counts the period at a finer resolution than the tick; "
           "ticklab's ns mode, an hrtimer forwarded by its period, stands for it")


def _numbers(asked, elapsed, error):
    """(period us, counted, real time s, error %) of one of the source's results."""
    words = asked.split()
    return int(words[4]), int(words[9].rstrip(",")), float(elapsed.split()[-2]), \
        float(error.split()[-2])


def source_rounding(mode, period_us, window_s):
    """Signals the source's window holds when every tick of it is charged to the loop: the
    unpatched kernel's whole ticks (a signal every ceil(period / tick) ticks) or one per
    period of CPU time (patched)."""
    ticks = window_s * 1e9 / SOURCE_TICK_NS
    if mode == "tick":
        return int(ticks // -(-period_us * 1000 // SOURCE_TICK_NS))
    return int(window_s * 1e6 // period_us)


def _prof_note(mode, periods):
    """ticklab's reading of the source's counts, beside its prof_ modes' rows."""
    got = [(p, c, w, source_rounding(mode, p, w)) for p, c, w, _ in
           (_numbers(*x[1:]) for x in periods)]
    how = ("each interval rounded up to whole ticks of CPU time (a signal every 11, 10 and 2 "
           "ticks)" if mode == "tick" else
           "a signal at the first tick whose CPU time reaches the next multiple of the "
           "period (ticklab's reading of the source's words on the patch: it gives no more)")
    return ("the source counts ITIMER_PROF signals over a busy loop's CPU time, which the "
            "kernel charges a tick at a time; ticklab's %s rows count the same way over one "
            "busy loop of the source's 7.12 s, %s. Over the source's own windows (%s) that "
            "rounding gives %s signals, the source counted %s: the signals it counted fewer, "
            "beyond what its windows' rounding to 10 ms allows (up to 1 signal at 10 ms, 5 "
            "at 1 ms), are CPU time its loop did not get, where ticklab's loop gets every "
            "tick. ticklab has no "
            "processes, user or system time, or signals, and its three periods count on one "
            "loop where the source ran three one after another" % (
                PROF_MODE[mode], how, ", ".join("%.2f s" % w for _, _, w, _ in got),
                ", ".join("{:,}".format(r) for _, _, _, r in got),
                ", ".join("{:,}".format(c) for _, c, _, _ in got)))


def _published():
    out = []
    for (mode, section, words), periods in ITIMER_RUNS:
        note = _prof_note(mode, periods)
        for lines in periods:
            out.append(_entry(mode, section, words, *lines))
            out.append(_prof_entry(mode, section, words, note, *lines))
    return tuple(out)


def _entry(mode, section, words, period_us, asked, elapsed, error):
    pct = float(error.split()[-2])
    return Published(
        NAME, (("mode", mode), ("period_us", period_us),
               ("tick_ns", About(1000000, 0.01))), "error_pct",
        "%s %% (%s)" % (error.split()[-2], words), GRUSZKA, (asked, error), value=pct,
        section=section, block="Requested a period of",
        setup=(("period_us", "Requested a period of %d us" % period_us, "="),
               ("tick_ns", "(for HZ=1000)", "hz")),
        note="" if mode == "tick" else NS_NOTE)


def _prof_entry(mode, section, words, note, period_us, asked, elapsed, error):
    """The source's count and error beside the row that counts as it did: CPU time sampled
    at each tick over a loop of (to 1 %) the source's real time."""
    _, counted, window_s, pct = _numbers(asked, elapsed, error)
    return Published(
        NAME, (("mode", PROF_MODE[mode]), ("period_us", period_us),
               ("tick_ns", About(1000000, 0.01)),
               ("window_ns", About(window_s * 1e9, 0.01))), "error_pct",
        "%s %%: counted to %d in %.2f s (%s)" % (error.split()[-2], counted, window_s, words),
        GRUSZKA, (asked, elapsed, error), value=pct, section=section,
        block="Requested a period of",
        setup=(("period_us", "Requested a period of %d us" % period_us, "="),
               ("tick_ns", "(for HZ=1000)", "hz"), ("window_ns", elapsed, "=")),
        finding=() if mode == "tick" else PATCH_WORDS, note=note,
        near=("window_ns",), setting="a busy loop of %.2f s" % window_s)


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
    # twelve bars (four modes, three periods): their names upright, so that no two meet
    ax.tick_params(axis="x", labelrotation=90 if len(names) > 6 else 20, labelsize=8)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return [Drawn("itimer_error", "Interval timer error", fig,
                  "(counted - expected) / expected per mode and period; red: 1 % or more"
                  + ("; black stars: the publication's figures." if pub else ".")
                  + partial_note(data, NAME), clock)]


EXPERIMENT = Experiment(
    NAME, "Interval timer error", ("mode", "period_us"),
    "expirations counted against expected, tick-based and ns-based",
    columns=("mode", "period_us", "device", "window_ns", "cpu_ticks", "counted", "expected",
             "error_pct", "predicted_pct", "accounted_pct", "tolerance_pct",
             "matches_prediction", "why"),
    figures=(Figure("itimer_error", "Interval timer error", draw_errors),),
    published=PUBLISHED,
    typical_s={"quick": 11.3}, typical_icount_wall_s={"quick": 6.1})


