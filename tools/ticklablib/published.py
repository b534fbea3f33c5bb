"""The figures each experiment's source publication gives, to set beside this machine's.

One table, keyed by experiment and by the row keys a figure belongs to; each entry names
its source. A result row may also carry its own `published` object (the kernel's, e.g.
{"source": "...", "value": ..., "unit": "..."}): that one wins. Entries with no row keys
are about the experiment as a whole and are shown above its table.

Every figure here is quoted from docs/experiments.md, with the source as that page names
it; where the page gives a range or a bound, so does the entry (`text`). Add a figure only
with its source. (Corrected per issue 18: the 9998 us figure, -0.2 %, is the itimer source's after-fix
figure, and the NuttX figures are from its intel64:nsh board configuration.)
"""

from dataclasses import dataclass

from .dataset import num

DOC = "as quoted in docs/experiments.md"
UNNAMED = DOC + " (not named there)"
LINUX_HZ250 = "Linux at HZ=250, " + DOC
HRTIMERS_2616 = "Linux 2.6.16 hrtimers on a Pentium 4, " + DOC
ITIMER = "the itimer publication " + UNNAMED
FIG_1998 = "the 1998 publication " + UNNAMED
NUTTX = "NuttX on its intel64:nsh board, " + DOC


@dataclass(frozen=True)
class Published:
    exp: str
    match: tuple          # ((key, value), ...) the row must have; () for the experiment
    key: str              # the row's key the figure compares with (None: a note)
    text: str             # the figure in words, as the source gives it
    source: str
    value: object = None  # a number when the source gives one, in the key's unit


TABLE = (
    Published("period-compare", (("timer", "jiffies_linux"),), "err_mean_ns",
              "+24 ms per period (250 jiffies rounded up to 256 by the wheel's level "
              "granularity)", LINUX_HZ250, 24000000),
    Published("period-compare", (("timer", "hrtimer"),), "err_mean_ns",
              "within about +-1 ms", LINUX_HZ250),
    Published("periodic-jitter", (("set", "ten"),), "stddev_ns", "stddev 4.2-4.7 us",
              HRTIMERS_2616),
    Published("periodic-jitter", (("set", "alone"),), "stddev_ns", "stddev 1.66 us",
              HRTIMERS_2616, 1660),
    Published("itimer-error", (("mode", "tick"), ("period_us", 10000)), "error_pct",
              "-9.3 % (before the fix)", ITIMER, -9.3),

    Published("itimer-error", (("mode", "tick"), ("period_us", 1000)), "error_pct",
              "-50.4 % (before the fix)", ITIMER, -50.4),
    Published("itimer-error", (("mode", "ns"), ("period_us", 9998)), "error_pct",
              "-0.2 % (after the fix)", ITIMER, -0.2),
    Published("sleep-accuracy", (("variant", "faithful"), ("mode", "select"),
                                 ("request_ns", 1000000)), "mean_err_ns",
              "about 2 ms, even at sub-ms ticks", FIG_1998,
              2000000),
    Published("tick-overhead", (("variant", "faithful"), ("tick_ns", 100000)), "overhead_pct",
              "10.2 %",
              FIG_1998, 10.2),
    Published("tick-overhead", (("variant", "faithful"), ("tick_ns", 1000000)), "overhead_pct",
              "3.1 %",
              FIG_1998, 3.1),
    Published("hrtimer-cost", (), None,
              "means over 1e6 operations: 13 cycles to insert into the queue, 48 to restart, "
              "73 to cancel and restart, over 1000 with reprogramming", NUTTX),
    Published("hrtimer-cost", (("op", "queue_insert"), ("variant", "batch")), "mean_cyc",
              "13 cycles", NUTTX, 13),
    Published("hrtimer-cost", (("op", "restart"), ("variant", "batch")), "mean_cyc",
              "48 cycles", NUTTX, 48),
    Published("hrtimer-cost", (("op", "cancel_restart"), ("variant", "batch")), "mean_cyc",
              "73 cycles", NUTTX, 73),
    Published("hrtimer-cost", (("op", "restart_reprogram"), ("variant", "batch")),
              "mean_cyc", "over 1000 cycles", NUTTX),
    Published("wakeup-latency", (), None,
              "Linux 6.1 under the same QEMU settings: a cyclictest thread wakes in 3.8 us "
              "(p99 4.35 us); timerlat sees the timer IRQ 0.73 us after the deadline (p99 "
              "0.78 us)", "a peer measurement for scale (issue 7), " + DOC),
)


def _matches(entry, row):
    for key, want in entry.match:
        have = row.get(key)
        if have != want and not (num(have) is not None and num(have) == num(want)):
            return False
    return True


def for_row(exp, row):
    """The published figure for one result row, as a dict (source, text, key, value), or
    None. The row's own `published` object comes first."""
    own = row.get("published")
    if isinstance(own, dict) and own:
        value = own.get("value")
        text = own.get("text") or ("%s %s" % (value, own.get("unit") or "")).strip()
        return {"source": str(own.get("source") or "the kernel's record"), "text": text,
                "key": own.get("key"), "value": num(value)}
    for entry in TABLE:
        if entry.exp == exp and entry.match and _matches(entry, row):
            return {"source": entry.source, "text": entry.text, "key": entry.key,
                    "value": entry.value}
    return None


def notes(exp):
    """Experiment-wide published figures: [(text, source)]."""
    return [(e.text, e.source) for e in TABLE if e.exp == exp and not e.match]
