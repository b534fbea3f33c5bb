"""The figures each experiment's source publication gives, quoted, to set beside this
machine's: what an entry is and how a row finds its own. The entries themselves are in
each experiment's module (`published` of its spec.Experiment); a publication quoted by
more than one experiment is defined here.

The publications are in `shared/sources/` beside the checkout (its README lists them).
Every entry names its source and file and carries the exact words of that file its figure
comes from (`quote`), the words that open the part of the file they are in (`section`),
and the words that state the setup of the row it stands on (`setup`: the tick, the
resolution, the period); where the source explains its figures, those words too
(`finding`), so that ticklab's own reading (`note`) stands beside them. tools/tests/test_published.py checks each against the file: the
words occur there, in that part, the figure shown is made of the quoted numbers, and the
row's keys are the setup the source states.

A quotation is the source's; `note` is ticklab's own reading of it, shown labelled as
ticklab's, never as the source's. A figure ticklab measured itself for scale is not a
publication: it is in the experiment's `references`, not its `published`.

A result row may also carry its own `published` object (the kernel's, e.g.
{"source": "...", "value": ..., "unit": "..."}): that one wins.
"""

from dataclasses import dataclass

from .values import cell, num


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
    finding: tuple = ()   # the source's own reading of its figures (why it thinks they are
    #                       so, what it concludes), its exact words: shown as quotations
    #                       beside the figure, `note` then saying what ticklab's rows show
    near: tuple = ()      # keys a row may differ in and still be told why it is not compared
    setting: str = ""     # then: what the source ran, in ticklab's words ("ten timers ...")


# Quoted by two experiments: the select() sleeps and the tick's overhead.
KOSTER = Source(
    "Rainer Koster, \"Clock Granularity\" (The BEAT Communication Service, chapter 3), "
    "University of Kaiserslautern, 1998",
    "koster-1998-clock-granularity.txt",
    ("Rainer Koster, 6/18/1998", "University of Kaiserslautern", "3 Clock Granularity",
     "The BEAT Communication Service"))


def _holds(want, have):
    if isinstance(want, About):
        return want.holds(have)
    return have == want or (num(have) is not None and num(have) == num(want))


def _matches(entry, row, skip=()):
    return all(_holds(want, row.get(key)) for key, want in entry.match if key not in skip)


def _as_dict(entry):
    return {"source": entry.source.name, "text": entry.text, "key": entry.key,
            "value": entry.value, "lo": entry.lo, "hi": entry.hi,
            "quote": entry.quote + entry.finding,
            "file": entry.source.file, "note": entry.note}


def for_row(entries, row, key=None):
    """The published figure for one result row among an experiment's `entries` (for its
    `key`, else the first), as a dict (source, text, key, value, lo, hi, quote, file,
    note), or None. The row's own `published` object comes first."""
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
    for entry in entries:
        if (key is None or entry.key == key) and _matches(entry, row):
            return _as_dict(entry)
    return None


def value_for(entries, row):
    """The published figure for a row, as a number, or None."""
    pub = for_row(entries, row)
    return None if pub is None else num(pub.get("value"))


def not_compared(entries, row):
    """Why a row the source ran otherwise has no figure beside it ("here the source ran ten
    timers with T = 500+13*i us"), or None: a row with a figure, or whose setting the
    source did not run at all."""
    if for_row(entries, row):
        return None
    ran = [e.setting for e in entries if e.near and _matches(e, row, e.near)]
    ran = list(dict.fromkeys(ran))
    return "here the source ran %s" % " and ".join(ran) if ran else None


def notes(entries):
    """Experiment-wide published figures: [(text, source)] (none at present: every figure
    stands on its row)."""
    return [(e.text, e.source.name) for e in entries if not e.match]


def span_text(key, lo, hi):
    """A range of the source's figures as the report shows it, in the source's numbers:
    `stddev_ns` in us to 2 decimals, shares to 4 (as the source's figures round)."""
    if key == "stddev_ns":
        one = "%.2f" % (lo / 1000)
        two = "%.2f" % (hi / 1000)
        return "stddev %s us" % one if one == two else "stddev %s-%s us" % (one, two)
    one, two = "%.4f" % lo, "%.4f" % hi
    return one if one == two else "%s-%s" % (one, two)


def for_rows(entries, rows, key):
    """The published figure for a group of rows folded into one line of a table (ten
    timers): the lowest and highest of the rows' own figures, as a dict like for_row's
    (`text` the range, `value` None, `entries` each row's), or None when no row has one."""
    pubs = [p for p in (for_row(entries, r, key) for r in rows) if p]
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
