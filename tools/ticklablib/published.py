"""The figures each experiment's source publication gives, quoted, to set beside this
machine's.

The publications are in `shared/sources/` beside the checkout (its README lists them).
Every entry names its source and file and carries the exact words of that file its figure
comes from (`quote`), the words that open the part of the file they are in (`section`),
and the words that state the setup of the row it stands on (`setup`: the tick, the
resolution, the period). tools/tests/test_published.py checks each against the file: the
words occur there, in that part, the figure shown is made of the quoted numbers, and the
row's keys are the setup the source states.

A quotation is the source's; `note` is ticklab's own reading of it, shown labelled as
ticklab's, never as the source's. A figure ticklab measured itself for scale is not a
publication: it is in REFERENCES, not TABLE.

A result row may also carry its own `published` object (the kernel's, e.g.
{"source": "...", "value": ..., "unit": "..."}): that one wins.
"""

from dataclasses import dataclass

from .dataset import cell, num


@dataclass(frozen=True)
class Source:
    """A publication: how it is cited, its file in shared/sources/, and words of that file
    that bear the citation out (author, title, date, place)."""
    name: str
    file: str
    proof: tuple


@dataclass(frozen=True)
class About:
    """A row value within `rel` of `value`: a tick's real period (the PIT makes 100 us as
    119 clocks, 99,733 ns) against the source's nominal one."""
    value: float
    rel: float = 0.02

    def holds(self, have):
        have = num(have)
        return have is not None and abs(have - self.value) <= self.rel * abs(self.value)


@dataclass(frozen=True)
class Published:
    exp: str
    match: tuple          # ((key, value or About), ...) the row must have
    key: str              # the row's key the figure is set beside
    text: str             # the figure, in the source's numbers (a range: its lowest, highest)
    source: Source
    quote: tuple          # exact words of the source's file the figure comes from, in order
    value: object = None  # the figure in the key's unit, when it is one number
    lo: object = None     # a range's ends, in the key's unit
    hi: object = None
    section: str = ""     # exact words opening the part of the file the quote is in
    block: str = ""       # words opening each record of that part: the quote is in one
    setup: tuple = ()     # ((key, exact words stating it, relation), ...): "=", "<", ">=",
    #                       "in" (one of a list), "T+13i" (a base and a step per timer),
    #                       "hz" (a tick rate: the row's period is 1e9 / HZ), "avg_us"
    span: str = ""        # regex: `text` is the lowest and highest of its matches over
    #                       the quoted block (first quote .. last quote); the quote also
    #                       holds the lines with the lowest and the highest
    note: str = ""        # ticklab's own reading, shown as ticklab's
    near: tuple = ()      # keys a row may differ in and still be told why it is not compared
    setting: str = ""     # then: what the source ran, in ticklab's words ("ten timers ...")


ARTICLE = Source(
    "an article comparing Linux's low- and high-precision timers: a 1 s hrtimer and a 1 s "
    "jiffies timer, 31 intervals each (its author, kernel and date are not given)",
    "hrtimer-vs-jiffies-1s.txt",
    ("\u2022 High priority timer test results", "\u2022 Low priority timer test results"))
JOHN_2006 = Source(
    "John, \"Better resolution using the hrtimers infrastructure\", LKML, 2006-10-12 "
    "(Linux 2.6.16.28 on a Pentium 4 2.8 GHz, HZ=250)",
    "lkml-2006-hrtimers-posix-periodic.txt",
    ("Better resolution using the hrtimers infrastructure",
     "On Thu, 2006-10-12 at 10:18 +0200, John wrote:", "running Linux 2.6.16.28",
     "P4 2.8 GHz", "HZ=250"))
GRUSZKA = Source(
    "Stanislaw Gruszka, \"[PATCH resend 0/2] itimers: periodic timers fixes\", LKML "
    "(HZ=1000)",
    "lkml-itimers-periodic-fixes.txt",
    ("[PATCH resend 0/2] itimers: periodic timers fixes", "Stanislaw Gruszka",
     "(for HZ=1000)"))
KOSTER = Source(
    "Rainer Koster, \"Clock Granularity\" (The BEAT Communication Service, chapter 3), "
    "University of Kaiserslautern, 1998",
    "koster-1998-clock-granularity.txt",
    ("Rainer Koster, 6/18/1998", "University of Kaiserslautern", "3 Clock Granularity",
     "The BEAT Communication Service"))
NUTTX = Source(
    "Fix-Point on apache/nuttx PR #17675, NuttX non-SMP on its intel64:nsh configuration "
    "(github.com/apache/nuttx/pull/17675#issuecomment-3701557519)",
    "nuttx-pr17675-hrtimer-cost.txt",
    ("Fix-Point commented on PR #17675",
     "https://github.com/apache/nuttx/pull/17675#issuecomment-3701557519", "intel64:nsh",
     "non-SMP"))
SOURCES = (ARTICLE, JOHN_2006, GRUSZKA, KOSTER, NUTTX)


# --- period-compare: the article's 31 intervals of each timer ------------------------------

def _period_compare():
    hz = ("hz", "if config Hz is configured as 250", "=")
    return (
        Published("period-compare", (("timer", "hrtimer"), ("hz", 250),
                                     ("period_ns", 1000000000)), "err_mean_ns",
                  "errors -954,649 to +985,662 ns", ARTICLE,
                  ("[ 1815.080114] 1 : delta_ns 1000104199 error 104199",
                   "[ 1815.080117] 2 : delta_ns 1000985662 error 985662",
                   "[ 1815.080118] 3 : delta_ns 999045351 error -954649",
                   "[ 1815.080143] 31 : delta_ns 999861476 error -138524"),
                  lo=-954649, hi=985662, section="\u2022 High priority timer test results",
                  setup=(hz, ("period_ns", "#define HRTIMER_TIMEOUT_NSECOND    1000000000",
                              "=")),
                  span=r"error (-?\d+)"),
        Published("period-compare", (("timer", "jiffies_linux"), ("hz", 250),
                                     ("period_ns", 1000000000)), "err_mean_ns",
                  "errors +23,009,118 to +24,653,903 ns", ARTICLE,
                  ("[  238.694774] 1 : delta_ns 1023593664 error 23593664",
                   "[  238.694793] 20 : delta_ns 1023009118 error 23009118",
                   "[  238.694798] 26 : delta_ns 1024653903 error 24653903",
                   "[  238.694803] 31 : delta_ns 1023730694 error 23730694"),
                  lo=23009118, hi=24653903, section="\u2022 Low priority timer test results",
                  setup=(hz, ("period_ns", "delta_nsecond-1000000000);", "=")),
                  span=r"error (-?\d+)",
                  note="the article re-arms its timer with jiffies + HZ and does not say "
                  "why it runs 24 ms long; Linux's timer wheel (4.8 and later) puts a timer "
                  "250 ticks ahead in level 1, whose granularity is 8 ticks, so it runs 256 "
                  "ticks later: +24 ms at HZ=250. ticklab's jiffies_linux row rounds so; "
                  "its jiffies row, on ticklab's exact wheel, does not"),
    )


# --- periodic-jitter: John's ten timers at 5000 ns and 800 ns, and one alone ---------------

# Each timer as the source prints it: its AVG and STDDEV line (us), then the shares within
# +-5 us and +-10 us of its period.
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
JITTER_SETS = (
    # set, resolution (ns), the words that open its part, what it ran in ticklab's words,
    # its setup, its timers
    ("ten", 5000, "I first compiled a kernel with a resolution of 5000 ns.",
     "ten timers with T = 500+13*i us",
     (("hres_ns", "a resolution of 5000 ns", "="), ("set", "I ran 10 concurrent tasks", "="),
      ("period_ns", "T = 500+13*i \u00b5s", "T+13i")), JITTER_5000),
    ("ten", 800, "I then recompiled my kernel with a resolution of 800 ns.",
     "ten timers with T = 600+13*i us",
     (("hres_ns", "a resolution of 800 ns", "="), ("set", "I ran 10 concurrent tasks", "="),
      ("period_ns", "T = 600+13*i \u00b5s", "T+13i")), JITTER_800),
    ("alone", 800, "Finally, I ran only one task with T = 600 \u00b5s",
     "one timer alone at T = 600 us",
     (("hres_ns", "a resolution of 800 ns", "="), ("set", "I ran only one task", "="),
      ("period_ns", "only one task with T = 600 \u00b5s", "=")), JITTER_ALONE),
)


def _value(line, name):
    """The number after `name=` or `= ` in one of the source's lines."""
    tail = line.split(name, 1)[1] if name else line.rsplit("= ", 1)[1]
    return float(tail.split()[0])


def _periodic_jitter():
    out = []
    for tset, hres, section, setting, setup, timers in JITTER_SETS:
        for avg_sd, p5, p10 in timers:
            period_us = round(_value(avg_sd, "AVG="))
            match = (("set", tset), ("grid", True), ("hres_ns", hres),
                     ("period_ns", period_us * 1000))
            timer_setup = setup + (("period_ns", avg_sd.split()[0], "avg_us"),)
            stddev_us = _value(avg_sd, "STDDEV=")
            common = dict(section=section, block="AVG=", setup=timer_setup,
                          near=("period_ns", "set"), setting=setting)
            quote = (avg_sd, p5, p10)
            out += [
                Published("periodic-jitter", match, "stddev_ns", "stddev %.2f us" % stddev_us,
                          JOHN_2006, quote, value=stddev_us * 1000, **common),
                Published("periodic-jitter", match, "p_within_5us", "%.4f" % _value(p5, ""),
                          JOHN_2006, quote, value=_value(p5, ""), **common),
                Published("periodic-jitter", match, "p_within_10us",
                          "%.4f" % _value(p10, ""), JOHN_2006, quote, value=_value(p10, ""),
                          **common)]
    return tuple(out)


# --- itimer-error: Gruszka's program before and after the patches ---------------------------

ITIMER_RUNS = (
    # mode, section, its name in the source's words, period (us), the result's two lines
    ("tick", "Test program results for unpatched kernel:", "unpatched kernel", 10000,
     "Requested a period of 10000 us and counted to 646, that should be 6.46 s",
     "The error was -9.3 %"),
    ("tick", "Test program results for unpatched kernel:", "unpatched kernel", 9998,
     "Requested a period of 9998 us and counted to 710, that should be 7.10 s",
     "The error was -0.2 %"),
    ("tick", "Test program results for unpatched kernel:", "unpatched kernel", 1000,
     "Requested a period of 1000 us and counted to 3563, that should be 3.56 s",
     "The error was -50.4 %"),
    ("ns", "Test program results after patches applied:", "patches applied", 10000,
     "Requested a period of 10000 us and counted to 711, that should be 7.11 s",
     "The error was -0.1 %"),
    ("ns", "Test program results after patches applied:", "patches applied", 9998,
     "Requested a period of 9998 us and counted to 710, that should be 7.10 s",
     "The error was -0.2 %"),
    ("ns", "Test program results after patches applied:", "patches applied", 1000,
     "Requested a period of 1000 us and counted to 7123, that should be 7.12 s",
     "The error was -0.1 %"),
)


def _itimer_error():
    out = []
    for mode, section, words, period_us, asked, error in ITIMER_RUNS:
        pct = float(error.split()[-2])
        out.append(Published(
            "itimer-error", (("mode", mode), ("period_us", period_us),
                             ("tick_ns", About(1000000, 0.01))), "error_pct",
            "%s %% (%s)" % (error.split()[-2], words), GRUSZKA, (asked, error), value=pct,
            section=section, block="Requested a period of",
            setup=(("period_us", "Requested a period of %d us" % period_us, "="),
                   ("tick_ns", "(for HZ=1000)", "hz")),
            note="" if mode == "tick" else "the patched kernel counts the period at a finer "
            "resolution than the tick; ticklab's ns mode, an hrtimer forwarded by its period, "
            "stands for it"))
    return tuple(out)


# --- sleep-accuracy and tick-overhead: Koster's select() and empty-loop figures -------------

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
    return Published("sleep-accuracy", (("variant", "faithful"), ("mode", "select"),
                                        ("tick_ns", About(tick)), ("request_ns", request)),
                     "mean_err_ns", text, KOSTER, (quote,), value=value,
                     section="3.3 Performance", setup=SELECT_SETUP + setup, note=note)


def _sleep_accuracy():
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


def _tick_overhead():
    loop = ("the source's overhead is its empty loop's time against the same loop's at a "
            "10 ms tick, as ticklab's faithful rows measure it")
    return (
        Published("tick-overhead", (("variant", "faithful"), ("tick_ns", About(100000))),
                  "overhead_pct", "10.2% for the empty loop (11.9% for a kernel make)",
                  KOSTER, ("At a tick granularity of 100 $\\mu$ s there is an overhead of "
                           "10.2% compared to 10ms tick size for the loop, and 11.9% for the "
                           "kernel make.",), value=10.2, section="3.3 Performance",
                  setup=(("tick_ns", "At a tick granularity of 100 $\\mu$ s", "="),),
                  note=loop),
        Published("tick-overhead", (("variant", "faithful"), ("tick_ns", About(1000000))),
                  "overhead_pct", "3.1% for the empty loop (3.2% for a kernel make)",
                  KOSTER, ("With interrupts every 1ms the overhead is 3.1% and 3.2%, "
                           "respectively.",), value=3.1, section="3.3 Performance",
                  setup=(("tick_ns", "With interrupts every 1ms", "="),),
                  note=loop),
    )


# --- hrtimer-cost: NuttX's cycles ------------------------------------------------------------

def _nuttx(op, text, quote, value=None, lo=None, note=""):
    return Published("hrtimer-cost", (("op", op), ("variant", "batch")), "mean_cyc", text,
                     NUTTX, (quote,), value=value, lo=lo, note=note)


def _hrtimer_cost():
    return (
        _nuttx("queue_insert", "about 13 cycles (queue insertion)",
               "the average overhead for restart is only about 13 cycles (queue insertion)",
               13, note="the source's 13 is its restart less its interrupt pair (48 - 35); "
               "ticklab times the queue insertion alone"),
        _nuttx("restart", "48 CPU cycles (~23 ns)",
               "the average overhead for both implementation tests running 1 million times "
               "is 48 CPU cycles (~23 ns)", 48),
        _nuttx("cancel_restart", "73 cycles (~35 ns)",
               "the overhead for `cancel + restart` (including the synchronization), when no "
               "hardware timer reprogramming is involved, is only 73 cycles (~35 ns)", 73),
        _nuttx("restart_reprogram", "over 1000 CPU cycles",
               "reprogramming the actual hardware timer (over 1000 CPU cycles)", lo=1000),
        _nuttx("irq_save_restore", "35 cycles",
               "the time consumed by enabling/disabling interrupts "
               "(`up_irq_save`/`up_irq_restore`) is 35 cycles", 35),
    )


TABLE = (_period_compare() + _periodic_jitter() + _itimer_error() + _sleep_accuracy()
         + _tick_overhead() + _hrtimer_cost())

# Figures measured by ticklab's developers for scale: not publications, and never shown as
# one (experiment, text, where it comes from).
REFERENCES = (
    ("wakeup-latency",
     "Linux 6.1 under the same QEMU settings: a cyclictest thread wakes in 3.8 us (p99 "
     "4.35 us); timerlat sees the timer IRQ 0.73 us after the deadline (p99 0.78 us)",
     "measured for ticklab: issue 7, docs/experiments.md"),
)


def _holds(want, have):
    if isinstance(want, About):
        return want.holds(have)
    return have == want or (num(have) is not None and num(have) == num(want))


def _matches(entry, row, skip=()):
    return all(_holds(want, row.get(key)) for key, want in entry.match if key not in skip)


def _as_dict(entry):
    return {"source": entry.source.name, "text": entry.text, "key": entry.key,
            "value": entry.value, "lo": entry.lo, "hi": entry.hi, "quote": entry.quote,
            "file": entry.source.file, "note": entry.note}


def for_row(exp, row, key=None):
    """The published figure for one result row (for its `key`, else the first), as a dict
    (source, text, key, value, lo, hi, quote, file, note), or None. The row's own
    `published` object comes first."""
    own = row.get("published")
    if isinstance(own, dict) and own:
        if key is not None and own.get("key") not in (None, key):
            return None
        value = own.get("value")
        text = own.get("text")
        if not isinstance(text, str) or not text:  # any JSON may come: text it is
            text = ("%s %s" % (cell(value), cell(own.get("unit") or ""))).strip()
        return {"source": cell(own.get("source") or "the kernel's record"), "text": text,
                "key": own.get("key"), "value": num(value), "lo": None, "hi": None,
                "quote": (), "file": None, "note": ""}
    for entry in TABLE:
        if entry.exp == exp and (key is None or entry.key == key) and _matches(entry, row):
            return _as_dict(entry)
    return None


def not_compared(exp, row):
    """Why a row the source ran otherwise has no figure beside it ("here the source ran ten
    timers with T = 500+13*i us"), or None: a row with a figure, or whose setting the
    source did not run at all."""
    if for_row(exp, row):
        return None
    ran = [e.setting for e in TABLE if e.exp == exp and e.near
           and _matches(e, row, e.near)]
    ran = list(dict.fromkeys(ran))
    return "here the source ran %s" % " and ".join(ran) if ran else None


def notes(exp):
    """Experiment-wide published figures: [(text, source)] (none at present: every figure
    stands on its row)."""
    return [(e.text, e.source.name) for e in TABLE if e.exp == exp and not e.match]


def references(exp):
    """Figures measured for scale, not published: [(text, where from)]."""
    return [(text, where) for e, text, where in REFERENCES if e == exp]


def span_text(key, lo, hi):
    """A range of the source's figures as the report shows it, in the source's numbers:
    `stddev_ns` in us to 2 decimals, shares to 4 (as the source's figures round)."""
    if key == "stddev_ns":
        one = "%.2f" % (lo / 1000)
        two = "%.2f" % (hi / 1000)
        return "stddev %s us" % one if one == two else "stddev %s-%s us" % (one, two)
    one, two = "%.4f" % lo, "%.4f" % hi
    return one if one == two else "%s-%s" % (one, two)


def for_rows(exp, rows, key):
    """The published figure for a group of rows folded into one line of a table (ten
    timers): the lowest and highest of the rows' own figures, as a dict like for_row's
    (`text` the range, `value` None, `entries` each row's), or None when no row has one."""
    pubs = [p for p in (for_row(exp, r, key) for r in rows) if p]
    if not pubs:
        return None
    values = [num(p["value"]) for p in pubs]
    if len(pubs) == 1 or None in values:
        return dict(pubs[0], entries=pubs)
    lo, hi = min(values), max(values)
    quote = tuple(q for p in pubs for q in p["quote"])
    notes = list(dict.fromkeys(p["note"] for p in pubs if p["note"]))
    return dict(pubs[0], text=span_text(key, lo, hi),
                value=None, lo=lo, hi=hi, quote=tuple(dict.fromkeys(quote)),
                note="; ".join(notes), entries=pubs)
