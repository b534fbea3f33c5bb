"""The publications' figures the report shows (each experiment's `published`, the entries
of tools/ticklablib/published.py's shape), checked
against the publications themselves: the files in shared/sources/ beside the checkout
(../shared/sources from the repository; CI keeps them there). Each figure's quoted words
occur in its file, in the part and the record the entry says; the figure shown is made of
the quoted numbers; the row it stands on is the setup the source states (its tick, its
resolution, its set of timers, its period); and the figures each table of the report shows
are those. A checkout without the sources says SKIP with the reason.

The checks on which row gets which figure that need no file run everywhere."""
import gzip
import os
import re
from pathlib import Path

import pytest

from ticklablib import dataset, experiments, published, records, tables
from ticklablib.published import About

TABLE = experiments.published_entries()


def for_row(exp, row, key=None):
    """The published figure for a row of experiment `exp` (published.for_row)."""
    return published.for_row(experiments.get(exp).published, row, key)


REPO = Path(__file__).resolve().parents[2]


def find_sources():
    """shared/sources beside the checkout (../shared/sources), or beside a folder the
    checkout sits in (a worktree in /work/wt/<name> with the sources in /work/shared);
    $TICKLAB_SOURCES first when set. None when absent."""
    if os.environ.get("TICKLAB_SOURCES"):
        return Path(os.environ["TICKLAB_SOURCES"])
    for up in REPO.parents:
        if (up / "shared" / "sources").is_dir():
            return up / "shared" / "sources"
    return None


SOURCES = find_sources()
needs_sources = pytest.mark.skipif(
    SOURCES is None or not SOURCES.is_dir(),
    reason="SKIP: the publications are not here (%s): their figures cannot be checked "
           "against their text" % (
               "TICKLAB_SOURCES=%s is not a folder" % SOURCES if SOURCES is not None else
               "no shared/sources beside this checkout, in %s or above it, and "
               "TICKLAB_SOURCES unset" % REPO.parent))


def flat(text):
    """Whitespace folded to single spaces: a quote may wrap where the file does not."""
    return " ".join(text.split())


def file_text(name):
    return flat((SOURCES / name).read_text(encoding="utf-8"))


def entry_id(e):
    return "%s:%s:%s:%s" % (e.exp, ",".join("%s=%s" % (k, getattr(v, "value", v))
                                            for k, v in e.match), e.key, e.text)


# --- numbers in words --------------------------------------------------------------------

UNIT_NS = {"ns": 1, "us": 1000, "\u00b5s": 1000, "$\\mu$ s": 1000, "ms": 1000000,
           "s": 1000000000}
NUMBER = r"[-+]?\d[\d,]*(?:\.\d+)?"
WITH_UNIT = re.compile(r"(%s)\s*(\$\\mu\$ s|\u00b5s|us|ms|ns|s\b)?" % NUMBER)


def numbers(text):
    """Every number in the words, as floats (thousands separators dropped)."""
    return [float(n.replace(",", "")) for n in re.findall(NUMBER, text)]


def durations_ns(text):
    """Every number with a unit of time in the words, in ns, in order."""
    return [float(n.replace(",", "")) * UNIT_NS[u] for n, u in WITH_UNIT.findall(text) if u]


def made_of(shown, quoted):
    """The number shown is one of the quoted numbers, or one of them rounded to the
    decimals shown."""
    text = repr(shown) if not float(shown).is_integer() else "%d" % shown
    decimals = len(text.split(".")[1]) if "." in text else 0
    return any(abs(q - shown) < 1e-9 or round(q, decimals) == shown
               or abs(q) == abs(shown) for q in quoted)


# --- where a quote is in its file ----------------------------------------------------------

def span_of(entry, text):
    """(start, end) of the part of the file the entry's section opens: up to the next
    section any entry of the same file names."""
    if not entry.section:
        return 0, len(text)
    start = text.find(flat(entry.section))
    assert start >= 0, "section %r not in %s" % (entry.section, entry.source.file)
    others = {flat(e.section) for e in TABLE if e.source.file == entry.source.file
              and e.section}
    ends = [text.find(s, start + 1) for s in others]
    ends = [p for p in ends if p > start]
    return start, min(ends) if ends else len(text)


def quote_positions(entry, text):
    """Where each quote is: in the entry's part, in one record (`block`), in order."""
    start, end = span_of(entry, text)
    first = text.find(flat(entry.quote[0]), start, end)
    assert first >= 0, "%r is not in the part of %s opened by %r" % (
        entry.quote[0], entry.source.file, entry.section)
    lo, hi = start, end
    if entry.block:
        b = flat(entry.block)
        lo = text.rfind(b, start, first + len(b))
        lo = lo if lo >= 0 else start
        nxt = text.find(b, first + len(b), end)
        hi = nxt if nxt >= 0 and not entry.span else end
    pos, out = lo, []
    for q in entry.quote:
        at = text.find(flat(q), pos, hi)
        assert at >= 0, "%r is not in the same record of %s after %r" % (
            q, entry.source.file, entry.quote[0])
        out.append(at)
        pos = at + 1
    return out


# --- the checks against the files ------------------------------------------------------------

@needs_sources
@pytest.mark.parametrize("source", experiments.sources(), ids=lambda s: s.file)
def test_each_source_is_the_one_named(source):
    text = file_text(source.file)
    for words in source.proof:
        assert flat(words) in text, (source.file, words)


@needs_sources
def test_the_sources_readme_lists_every_file_quoted():
    readme = (SOURCES / "README.md").read_text(encoding="utf-8")
    for source in experiments.sources():
        assert source.file in readme


@needs_sources
@pytest.mark.parametrize("entry", TABLE, ids=entry_id)
def test_quoted_word_for_word_in_its_part_of_the_file(entry):
    quote_positions(entry, file_text(entry.source.file))


@needs_sources
@pytest.mark.parametrize("entry", TABLE, ids=entry_id)
def test_the_figure_shown_is_made_of_the_quoted_numbers(entry):
    quoted = [n for q in entry.quote for n in numbers(q)]
    shown = numbers(entry.text)
    assert shown, entry.text
    if entry.span:  # a range over a record: its lowest and highest
        text = file_text(entry.source.file)
        at = quote_positions(entry, text)
        block = text[at[0]:at[-1] + len(flat(entry.quote[-1]))]
        found = [float(x) for x in re.findall(entry.span, block)]
        assert (entry.lo, entry.hi) == (min(found), max(found)), entry.text
        assert (min(found), max(found)) == (shown[0], shown[1]), entry.text
        return
    for s in shown:
        assert made_of(s, quoted), "%s: %r is not among the quoted numbers %r" % (
            entry.text, s, quoted)
    if entry.value is not None:  # the same figure in the key's unit, unrounded
        assert any(made_of(entry.value / scale, quoted) and
                   any(made_of(sh, [entry.value / scale]) for sh in shown)
                   for scale in (1, 1000, 1000000)), (entry.text, entry.value)


def setup_holds(entry, key, words, rel):
    """The row the entry stands on has the setup the source states for it."""
    want = dict(entry.match).get(key)
    assert want is not None, "%s: the setup names %s, but the entry does not match on it" % (
        entry_id(entry), key)
    have = want.value if isinstance(want, About) else want
    if key == "set":
        told = {"ten": "10 concurrent tasks", "alone": "only one task"}[have]
        return told in words
    if rel == "hz":
        return isinstance(want, About) and want.holds(1e9 / numbers(words.split("HZ=")[1])[0])
    if rel == "avg_us":
        return round(numbers(words.split("AVG=")[1])[0]) * 1000 == have
    if rel == "T+13i":
        base = numbers(words.split("=")[1])[0]
        return any((base + 13 * i) * 1000 == have for i in range(10))
    if key in ("hz", "period_us"):
        told = numbers(words)
    elif key == "period_ns" and "nsecond" in words.lower():
        told = [abs(n) for n in numbers(words) if abs(n) >= 1e6]
    else:
        told = durations_ns(words)
    assert told, (key, words)
    if rel == "=":
        return have == told[0] or (isinstance(want, About) and want.holds(told[0]))
    if rel == "in":
        return any(have == t or (isinstance(want, About) and want.holds(t)) for t in told)
    if rel == "<":
        return have < told[0]
    if rel == ">=":
        return have >= told[0]
    raise AssertionError("unknown relation %r" % rel)


# the keys of a row that say which setting it measured: each needs the source's words
SETTING_KEYS = {"period-compare": ("period_ns",),  # its HZ: an example only (below)
                "periodic-jitter": ("set", "hres_ns", "period_ns"),
                "itimer-error": ("period_us", "tick_ns"),
                "sleep-accuracy": ("tick_ns", "request_ns"),
                "tick-overhead": ("tick_ns",)}
# itimer-error: ticklab's whole-tick mode is the unpatched kernel, its ns mode the patched
ITIMER_PARTS = {"tick": "for unpatched kernel", "ns": "after patches applied",
                "prof_tick": "for unpatched kernel", "prof_ns": "after patches applied"}
# hrtimer-cost: the operation the quoted words are about, and whether the figure includes
# NuttX's interrupt pair (None: not a restart). ticklab's hrtimer calls take no pair: a
# figure with one stands on the `_irqsave` row (the same call inside irq_save/irq_restore),
# one without on the plain row.
NUTTX_OPS = {"restart": ("excluding synchronization", False),
             "restart_irqsave": ("both implementation tests", True),
             "cancel_restart_irqsave": ("(including the synchronization)", True),
             "restart_reprogram": ("reprogramming", None),
             "irq_save_restore": ("up_irq_save", None)}


@needs_sources
@pytest.mark.parametrize("entry", TABLE, ids=entry_id)
def test_the_row_it_stands_on_is_the_setup_the_source_states(entry):
    text = file_text(entry.source.file)
    for key, words, rel in entry.setup:
        assert flat(words) in text, "%s: %r not in %s" % (entry_id(entry), words,
                                                          entry.source.file)
        assert setup_holds(entry, key, words, rel), "%s: %s is not %s %r" % (
            entry_id(entry), key, rel, words)
    stated = {k for k, _, _ in entry.setup}
    for key in SETTING_KEYS.get(entry.exp, ()):
        assert key in stated, "%s: which %s the source ran is not shown from its words" % (
            entry_id(entry), key)
    if entry.exp == "itimer-error":  # the kernel's tick rounding is the unpatched one
        mode = dict(entry.match)["mode"]
        assert ITIMER_PARTS[mode] in entry.section, entry_id(entry)
        # a count stands only beside a CPU-time row whose loop ran the source's real time,
        # the one its own record gives
        window = [w for k, w, _ in entry.setup if k == "window_ns"]
        assert bool(window) == mode.startswith("prof_") == ("counted to" in entry.text)
        assert all(w in entry.quote for w in window), (entry_id(entry), window)
    if entry.exp == "hrtimer-cost":
        op = dict(entry.match)["op"]
        words, pair = NUTTX_OPS[op]
        assert words in " ".join(entry.quote), (op, entry.quote)
        if pair is not None:
            assert op.endswith("_irqsave") == pair, (op, "with" if pair else "without")


@needs_sources
@pytest.mark.parametrize("entry", [e for e in TABLE if e.finding], ids=entry_id)
def test_the_source_s_own_reading_is_quoted_word_for_word(entry):
    text = file_text(entry.source.file)
    for words in entry.finding:
        assert flat(words) in text, (entry_id(entry), words)


@pytest.mark.parametrize("entry", [e for e in TABLE if e.lo is not None and e.hi is not None],
                         ids=entry_id)
def test_a_range_stands_beside_a_range(entry):
    """A figure that is the lowest and highest of the source's values is set beside the row's
    lowest and highest, never beside its mean: keyed to the row's max, whose min the table
    shows before it."""
    if entry.exp == "periodic-jitter":
        return
    assert re.search(r"_max(_|$)", entry.key), (entry_id(entry), entry.key)
    exp = experiments.get(entry.exp)
    low = entry.key.replace("_max", "_min")
    assert low in exp.columns and exp.columns.index(low) + 1 == exp.columns.index(entry.key)


def linux_wheel_ticks(delta):
    """Linux's timer wheel (4.8 and later, calc_wheel_index): a timer `delta` ticks ahead
    goes to level n, the number of level starts (63 << 3(k-1), k >= 1) delta reaches; its
    slot is (expires + 8^n) >> 3n, so one armed on a multiple of 8^n runs this many ticks
    later."""
    level = 0
    while level < 8 and delta >= 63 << (3 * level):
        level += 1
    gran = 8 ** level
    return (delta + gran) // gran * gran


def test_period_compare_s_hz_is_a_rate_its_figure_fits():
    """The article names HZ=250 as an example, not as its setting: the row's HZ condition
    holds because Linux's wheel makes its +24 ms at that rate (and at 1000, which the note
    says), not at 100 or 300."""
    def late_ns(hz):
        return round(linux_wheel_ticks(hz) * 1e9 / hz - 1e9)
    assert (late_ns(250), late_ns(1000), late_ns(100), late_ns(300)) == \
        (24000000, 24000000, 40000000, 13333333)
    for e in TABLE:
        if e.exp != "period-compare":
            continue
        assert not any(k == "hz" for k, _, _ in e.setup), entry_id(e)
        hz = dict(e.match).get("hz")
        if hz is None:
            assert dict(e.match)["timer"] == "hrtimer"  # an hrtimer does not tick
            continue
        fits = [h for h in (100, 250, 300, 1000) if e.lo <= late_ns(h) <= e.hi]
        assert hz in fits and fits == [250, 1000], (entry_id(e), fits)
        assert "HZ=250" in e.note and "1000" in e.note and "example" in e.note


def test_john_s_conclusions_stand_beside_the_runs_they_compare():
    """"slightly better" is the 800 ns run against the 5000 ns one, "markedly better" one
    task alone against ten: each quoted beside its own set, with ticklab's reading of what
    its rows show instead (the rounding under virtual time)."""
    said = {}
    for e in TABLE:
        if e.exp == "periodic-jitter":
            m = dict(e.match)
            said.setdefault((m["set"], m["hres_ns"]), set()).add((e.finding, e.note))
    assert set(said) == {("ten", 5000), ("ten", 800), ("alone", 800)}
    assert all(len(v) == 1 for v in said.values())
    (finding, note), = said[("ten", 800)]
    assert "slightly better" in finding[0] and "5 times better" in note
    (finding, note), = said[("alone", 800)]
    assert "markedly better" in finding[0] and "about the same as its ten" in note
    (finding, note), = said[("ten", 5000)]
    assert not finding and "T mod resolution" in note and "P(+-5 us) 1" in note
    for (finding, note), in said.values():
        assert "rounding" in note


def test_koster_s_overhead_ratio_is_explained_from_his_figures():
    """Beside Koster's 10.2 % and 3.1 %: their ratio, what a fixed cost per tick would give
    against the 10 ms tick, and his cost per extra tick, each computed from the figures."""
    value = {dict(e.match)["tick_ns"].value: e for e in TABLE if e.exp == "tick-overhead"}
    fast, slow = value[100000], value[1000000]
    assert fast.note == slow.note
    extra = {t: 1e9 / t - 100 for t in (100000, 1000000)}   # ticks a second beyond 10 ms's
    per_tick_us = {t: e.value / 100 / (1 + e.value / 100) / extra[t] * 1e6
                   for t, e in ((100000, fast), (1000000, slow))}
    words = ("%.1f times" % (fast.value / slow.value), "gives %d times" % round(
        extra[100000] / extra[1000000]), "%.1f us at 100 us" % per_tick_us[100000],
             "%.1f us at 1 ms" % per_tick_us[1000000])
    for w in words:
        assert w in fast.note, (w, fast.note)


def test_nuttx_s_restart_is_its_queue_work_and_its_interrupt_pair():
    """The row condition of NuttX's figures in numbers: its 48 is its 13 without the pair
    plus the pair's 35, so 48 stands where ticklab adds the pair and 13 where it does not."""
    value = {dict(e.match)["op"]: e.value for e in TABLE if e.exp == "hrtimer-cost"}
    assert value["restart"] + value["irq_save_restore"] == value["restart_irqsave"]
    assert value["cancel_restart_irqsave"] > value["restart_irqsave"]
    assert "cancel_restart" not in value and "queue_insert" not in value


# --- which row gets which figure (no file needed) ------------------------------------------

def jitter_row(tset, hres, period_us, grid=True):
    return {"set": tset, "timer": 0, "hres_ns": hres, "grid": grid,
            "period_ns": period_us * 1000, "stddev_ns": 1500, "p_within_5us": "1.0000",
            "p_within_10us": "1.0000"}


def text_of(exp, row, key=None):
    pub = for_row(exp, row, key)
    return pub and pub["text"]


def test_periodic_jitter_figures_only_on_their_set_and_resolution():
    assert text_of("periodic-jitter", jitter_row("ten", 5000, 500)) == "stddev 4.72 us"
    assert text_of("periodic-jitter", jitter_row("ten", 5000, 617)) == "stddev 4.76 us"
    assert text_of("periodic-jitter", jitter_row("ten", 800, 613)) == "stddev 4.18 us"
    assert text_of("periodic-jitter", jitter_row("alone", 800, 600)) == "stddev 1.66 us"
    assert text_of("periodic-jitter", jitter_row("ten", 800, 600), "p_within_5us") == "0.8467"
    assert text_of("periodic-jitter", jitter_row("ten", 5000, 500), "p_within_10us") == \
        "0.9631"
    # not the source's: the 5000 ns kernel at 600+13i (an earlier ticklab), one alone
    # at 5000 ns, any set at the finest resolution (no grid), a period it did not run
    for row in (jitter_row("ten", 5000, 600), jitter_row("alone", 5000, 600),
                jitter_row("ten", 10, 600, grid=False), jitter_row("alone", 10, 600, False),
                jitter_row("ten", 800, 500)):
        assert for_row("periodic-jitter", row) is None, row
    entries = experiments.get("periodic-jitter").published
    assert published.not_compared(entries, jitter_row("ten", 5000, 600)) == \
        "here the source ran ten timers with T = 500+13*i us"


def test_the_folded_jitter_table_quotes_each_set_s_range():
    rows = []
    for line, (tset, hres, first, n) in enumerate(((("ten", 5000, 500, 10)),
                                                   ("ten", 800, 600, 10),
                                                   ("alone", 800, 600, 1),
                                                   ("ten", 10, 600, 10))):
        for i in range(n):
            r = Row(jitter_row(tset, hres, first + 13 * i, grid=hres != 10))
            r.line = line + 1
            rows.append(r)
    t = experiments.get("periodic-jitter").grid(rows)
    cells = {(b[0], b[1]): b for b in t.rows}
    ten5000, ten800 = cells[("ten", "5 us grid")], cells[("ten", "800 ns grid")]
    assert ten5000[5].startswith("stddev 4.59-4.76 us [")
    assert ten5000[7].startswith("0.8164-0.8295")
    assert ten5000[9].startswith("0.9617-0.9663")
    assert ten800[5].startswith("stddev 4.18-4.38 us")
    assert ten800[7].startswith("0.8449-0.8599") and ten800[9].startswith("0.9707-0.9757")
    assert cells[("alone", "800 ns grid")][5].startswith("stddev 1.66 us [")
    finest = [b for k, b in cells.items() if k[1].startswith("none")]
    assert finest and all(b[5] == b[7] == b[9] == "" for b in finest)
    assert any("John" in n and "lkml-2006-hrtimers-posix-periodic.txt" in n for n in t.notes)
    assert ("[1]", "AVG=500.0000119875 STDDEV=4.7221250605") in t.quotes


class Row(dict):
    line = 1


def test_sleep_accuracy_about_2ms_only_under_1ms_at_a_1ms_tick():
    def row(tick, request):
        return {"variant": "faithful", "mode": "select", "tick_ns": tick,
                "request_ns": request, "mean_err_ns": 1}
    assert text_of("sleep-accuracy", row(999847, 10000)) == "about 2ms"
    assert text_of("sleep-accuracy", row(999847, 100000)) == "about 2ms"
    assert text_of("sleep-accuracy", row(999847, 1000000)) == "about 1ms"
    assert text_of("sleep-accuracy", row(999847, 100000000)) == "about 1ms"
    for tick in (99733, 10000000):  # the misquote: "about 2 ms" at every tick
        for request in (10000, 100000, 1000000):
            assert for_row("sleep-accuracy", row(tick, request)) is None
    assert text_of("sleep-accuracy", row(299954, 10000)) == "600 us, dropping to 500 us"
    assert for_row("sleep-accuracy", dict(row(999847, 10000),
                                                     variant="ticklab")) is None


def test_itimer_counts_only_beside_a_loop_of_the_source_s_length():
    def row(mode, period, window):
        return {"mode": mode, "period_us": period, "tick_ns": 999847, "window_ns": window}
    assert text_of("itimer-error", row("prof_tick", 10000, 7120004430)) == \
        "-9.3 %: counted to 646 in 7.12 s (unpatched kernel)"
    assert text_of("itimer-error", row("prof_tick", 1000, 7120004430)) == \
        "-50.4 %: counted to 3563 in 7.19 s (unpatched kernel)"
    assert text_of("itimer-error", row("prof_ns", 1000, 7120004430)) == \
        "-0.1 %: counted to 7123 in 7.13 s (patches applied)"
    short = row("prof_tick", 10000, 2000000000)
    assert for_row("itimer-error", short) is None
    entries = experiments.get("itimer-error").published
    assert published.not_compared(entries, short) == "here the source ran a busy loop of 7.12 s"
    # what the source's windows hold at whole-tick rounding, in ticklab's note beside them
    note = for_row("itimer-error", row("prof_tick", 10000, 7120004430))["note"]
    assert "gives 647, 712, 3,595 signals, the source counted 646, 710, 3,563" in note
    note = for_row("itimer-error", row("prof_ns", 9998, 7120004430))["note"]
    assert "gives 712, 711, 7,130 signals, the source counted 711, 710, 7,123" in note


def test_itimer_before_and_after_the_fix():
    def row(mode, period):
        return {"mode": mode, "period_us": period, "tick_ns": 999847}
    assert text_of("itimer-error", row("tick", 10000)) == "-9.3 % (unpatched kernel)"
    assert text_of("itimer-error", row("tick", 9998)) == "-0.2 % (unpatched kernel)"
    assert text_of("itimer-error", row("tick", 1000)) == "-50.4 % (unpatched kernel)"
    assert text_of("itimer-error", row("ns", 10000)) == "-0.1 % (patches applied)"
    assert text_of("itimer-error", row("ns", 9998)) == "-0.2 % (patches applied)"
    assert text_of("itimer-error", row("ns", 1000)) == "-0.1 % (patches applied)"
    assert for_row("itimer-error", dict(row("tick", 10000), tick_ns=4000000)) is None
    assert "Stanislaw Gruszka" in for_row("itimer-error", row("ns", 9998))["source"]


def test_ticklab_s_explanations_are_never_inside_a_quote():
    """period-compare's 256 jiffies, the 13 cycles' arithmetic, the select() formula's
    reading: ticklab's notes, labelled, never in `text` or `quote`."""
    for e in TABLE:
        said = e.text + " ".join(e.quote + e.finding)
        for own in ("256", "ticklab", "48 - 35", "level 1"):
            assert own not in said, (entry_id(e), own)
    pc = for_row("period-compare", {"timer": "jiffies_linux", "hz": 250,
                                              "period_ns": 1000000000})
    assert "256" in pc["note"] and "256" not in pc["text"]
    notes = tables.Sources()
    notes.add(pc)
    assert any(n.startswith("ticklab's note on [1], not the source's words: ")
               for n in notes.notes())


def test_sources_are_named_and_the_peer_measurement_is_not_a_publication():
    names = " ".join(s.name for s in experiments.sources())
    assert "Stanislaw Gruszka" in names and "Rainer Koster" in names
    assert "University of Kaiserslautern, 1998" in names
    assert "not named" not in names
    assert not [e for e in TABLE if e.exp == "wakeup-latency"]
    (text, where), = experiments.get("wakeup-latency").references
    assert "measured for ticklab" in where and "Linux 6.1" in text
    irq = for_row("hrtimer-cost", {"op": "irq_save_restore", "variant": "batch"})
    assert irq["value"] == 35


def test_hrtimer_cost_names_its_unit_beside_nuttx_s_cycles():
    def row(op, unit=None):
        r = Row({"op": op, "device": "none", "variant": "batch", "mean_cyc": "8.00"})
        if unit:
            r["unit"] = unit
        return r
    t = experiments.get("hrtimer-cost").grid([row("irq_save_restore", "instructions"),
                             row("restart", "instructions")])
    assert t.header[1].startswith("operation (instructions")
    assert t.header[-1] == "published (NuttX: CPU cycles)"
    assert any("different units" in n for n in t.notes)
    assert t.rows[0][-1].startswith("35 cycles [1]")
    t = experiments.get("hrtimer-cost").grid([row("restart", "tsc_cycles")])
    assert t.header[1] == "operation (TSC cycles)" and not any("units:" in n for n in t.notes)
    t = experiments.get("hrtimer-cost").grid([row("restart")])  # an older kernel: the unit not stated
    assert any("do not say what their TSC counted" in n for n in t.notes)


# --- what the report's tables show -------------------------------------------------------

def rows_for_every_entry(exp):
    """One result row standing on each of the experiment's published figures."""
    out, seen = [], set()
    for n, e in enumerate(e for e in TABLE if e.exp == exp):
        if e.match in seen:
            continue
        seen.add(e.match)
        r = Row({k: (v.value if isinstance(v, About) else v) for k, v in e.match})
        r.setdefault("device", "hpet" if exp != "hrtimer-cost" else "none")
        r.setdefault(e.key, 1)
        r.line = n + 1
        out.append(r)
    return out


PUB_MARK = re.compile(r"\[(\d+)\]")


@needs_sources
@pytest.mark.parametrize("exp", sorted({e.exp for e in TABLE}))
def test_every_published_cell_of_the_report_is_quoted_from_its_file(exp):
    """The experiment's table (tables.py) over rows standing on every figure: each published
    cell's numbers are made of the words its footnote quotes, and those words are in the
    file the footnote names."""
    t = experiments.table(exp, rows_for_every_entry(exp))
    pub_cols = [i for i, h in enumerate(t.header) if h.startswith("published")]
    assert pub_cols, t.header
    files = {}
    for note in t.notes:
        m = re.match(r"\[(\d+)\] .*\(shared/sources/([^)]+)\)$", note)
        if m:
            files["[%s]" % m.group(1)] = m.group(2)
    quoted = {}
    for mark, words in t.quotes:
        assert flat(words) in file_text(files[mark]), (mark, words)
        quoted.setdefault(mark, []).extend(numbers(words))
    cells = [row[i] for row in t.rows for i in pub_cols if row[i]]
    assert cells
    for c in cells:
        marks = ["[%s]" % m for m in PUB_MARK.findall(c)]
        assert marks, c
        said = PUB_MARK.sub("", c)
        said = re.sub(r"(?<=\d)-(?=\d)", " to ", said)  # a range: 4.59-4.76
        # the requests a sleep-accuracy cell names are the row's, not the source's figures
        said = re.sub(r"(?:^|; )[\d., a-z]+(?=:)", "", said) if exp == "sleep-accuracy" \
            else said
        for s in numbers(said):
            assert any(made_of(s, quoted.get(m, [])) for m in marks), (c, s)


# --- the rows a real run makes -------------------------------------------------------------

# A quick run under -icount of the kernel that has every row a figure stands on
# (fixtures/README.md).
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "icount0-quick-32fcd66.log.gz"


@pytest.fixture(scope="module")
def fixture_rows():
    runs = records.parse_stream(gzip.open(FIXTURE, "rb").read())
    assert len(runs) == 1 and runs[0].whole
    data = dataset.group(runs[0], 1, FIXTURE.name)
    return {exp: [r for r in rows if r.get("status") is None]
            for exp, rows in data.results.items()}


@pytest.mark.parametrize("entry", TABLE, ids=entry_id)
def test_each_figure_stands_on_a_row_the_kernel_makes(entry, fixture_rows):
    """The row condition of every quote holds for a row of a real run: some measured row
    has every key and value the entry matches on, gets this figure for its key, and has
    that key as a number."""
    rows = [r for r in fixture_rows.get(entry.exp, ())
            if published.for_row(experiments.get(entry.exp).published, r,
                                 entry.key) == published._as_dict(entry)]
    assert rows, "%s: no row of %s stands on it" % (entry_id(entry), FIXTURE.name)
    assert all(published.num(r.get(entry.key)) is not None for r in rows), entry_id(entry)


TIME_UNIT = re.compile(r"\d\s*(ns|us|ms|s)\b")


def first_figure_ns(text):
    """The text's first number in ns, in the first unit of time written after it (a range,
    "-954,649 to +985,662 ns", names its unit once)."""
    m = re.search(NUMBER, text)
    unit = TIME_UNIT.search(text, m.start())
    return float(m.group(0).replace(",", "")) * UNIT_NS[unit.group(1)]


@pytest.mark.parametrize("entry", TABLE, ids=entry_id)
def test_each_figure_is_in_the_unit_of_the_key_it_stands_beside(entry):
    """A figure in ns beside an _ns key (its value, in ns, the text's first duration), a
    percentage beside a _pct key, cycles beside a _cyc key, a share (0..1) beside a share."""
    key, text = entry.key, entry.text
    figure = entry.value if entry.value is not None else entry.lo
    assert figure is not None, entry_id(entry)
    if key.endswith("_ns"):
        assert TIME_UNIT.search(text), (entry_id(entry), "no time unit")
        first = first_figure_ns(text)
        assert abs(first - figure) <= 0.01 * abs(figure), (entry_id(entry), first, figure)
    elif key.endswith("_pct"):
        assert "%" in text and numbers(text)[0] == figure, entry_id(entry)
    elif key.endswith("_cyc"):
        assert "cycles" in text and numbers(text)[0] == figure, entry_id(entry)
    elif key.startswith("p_within_"):
        assert 0 <= figure <= 1 and "%" not in text, entry_id(entry)
    else:
        raise AssertionError("%s: a key of no known unit" % entry_id(entry))
