"""The report's experiment tables as a reader wants them: a few columns chosen per
experiment, each header with its unit, numbers with thousands separators, no JSON in a
cell, a bound written as a bound ("<= 146 %", never 0), and the publication's figure in the
column right after the measured one it is set beside, its source as a footnote. Where an
experiment has many rows of one shape (a hundred and more) its module folds them into a
grid with the pieces here; every row and key stays in data/result-<exp>.csv.

Pure text: the page (reportpage.py) escapes and lays it out.
"""

from dataclasses import dataclass, field

from . import published, values
from .values import num

UNITS = (("_ns", "ns"), ("_cyc", "cycles"), ("_pct", "%"), ("_us", "us"), ("_hz", "Hz"),
         ("_ppb", "ppb"), ("_ppm", "ppm"), ("_bytes", "bytes"))
# keys whose unit is not in their name
NAMED = {"counted": "expiries counted", "expected": "periods expected", "samples": "samples",
         "ticks": "ticks per loop", "runs": "runs", "windows": "windows", "reads": "reads",
         "gaps": "gaps", "hz": "HZ", "rounds": "rounds", "smi_delta": "SMIs",
         "backward_steps": "backward steps", "lost": "lost", "stale": "stale",
         "overruns": "overruns", "jiffies": "jiffies", "interval_ticks": "ticks per period",
         "timers": "timers", "n": "operations"}


@dataclass
class Table:
    """Text cells; `numeric`: right-aligned column indexes; `notes`: lines under it
    (skip rows, sources)."""
    header: list
    rows: list
    numeric: set = field(default_factory=set)
    notes: list = field(default_factory=list)
    lines: list = field(default_factory=list)  # capture line per row (a tooltip), or None
    quotes: list = field(default_factory=list)  # [(footnote mark, the source's words)]


def grouped_int(text):
    sign = "-" if text.startswith("-") else ""
    digits = text.lstrip("-")
    out = []
    while len(digits) > 3:
        out.insert(0, digits[-3:])
        digits = digits[:-3]
    return sign + ",".join([digits] + out)


def number(value):
    """A number as a reader reads it: 7212603 -> 7,212,603; 0.3298 stays; 4000000.998 ->
    4,000,000.998; booleans yes/no; text as it is; None a dash."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    n = num(value)
    if n is None:
        return values.cell(value) if not isinstance(value, (dict, list)) else \
            "(%d values)" % len(value)
    if isinstance(n, float) and not n.is_integer():
        text = repr(n) if isinstance(value, float) else str(value).strip()
        if "e" in text.lower():
            return "%.4g" % n
        whole, _, frac = text.partition(".")
        return grouped_int(whole) + "." + frac
    return grouped_int(str(int(n)))


def header_of(key):
    """err_mean_ns -> "err mean (ns)"; counted -> "expiries counted"."""
    if key in NAMED:
        return NAMED[key]
    for suffix, unit in UNITS:
        if key.endswith(suffix):
            return "%s (%s)" % (key[:-len(suffix)].replace("_", " "), unit)
    return key.replace("_", " ")


class Sources:
    """Footnotes naming the publications ([1] Rainer Koster, ... (shared/sources/...)), the
    source's own words each figure shown is quoted from, and ticklab's notes on them, kept
    apart from the quotations."""

    def __init__(self):
        self.names = []
        self.quoted = {}    # mark -> the quoted words, in order, once each
        self.remarks = {}   # mark -> ticklab's notes, once each

    def mark(self, source, file=None):
        key = (source, file)
        if key not in self.names:
            self.names.append(key)
        return "[%d]" % (self.names.index(key) + 1)

    def add(self, pub):
        """The footnote mark for a published figure; its quote and note kept for below."""
        m = self.mark(pub["source"], pub.get("file"))
        for q in pub.get("quote") or ():
            self.quoted.setdefault(m, dict())[q] = True
        if pub.get("note"):
            self.remarks.setdefault(m, dict())[pub["note"]] = True
        return m

    def notes(self):
        out = []
        for i, (s, f) in enumerate(self.names, 1):
            m = "[%d]" % i
            out.append("%s %s%s" % (m, s, " (shared/sources/%s)" % f if f else ""))
            out += ["ticklab's note on %s, not the source's words: %s" % (m, n)
                    for n in self.remarks.get(m, ())]
        return out

    def quotes(self):
        """[(mark, the source's words)] for every figure shown, in the order shown."""
        return [(m, q) for m in ("[%d]" % i for i in range(1, len(self.names) + 1))
                for q in self.quoted.get(m, ())]


def pub_text(pub, sources):
    return "%s %s" % (pub["text"], sources.add(pub))


def skip_notes(rows, keys):
    """One line per reason for the skip rows ("skipped: lapic hlt, pit hlt (idle=poll
    ...)") and for the rows the kernel measured but whose figure cannot be true ("not a
    measurement: ticklab 1000000 (51 of 189 ticks arrived ...)": `status` invalid, shown
    without figures)."""
    by_reason = {}
    for r in rows:
        status = r.get("status")
        if status in values.NOT_MEASURED:
            name = " ".join(values.cell(r.get(k)) for k in keys if r.get(k) is not None)
            by_reason.setdefault((status, values.cell(r.get("reason")) or "no reason"),
                                 []).append(name or "a row")
    return ["%s: %s (%s)" % ("skipped" if status == "skip" else
                             "not a measurement, its figure could not be true",
                             ", ".join(names), reason)
            for (status, reason), names in by_reason.items()]


def plain(exp, rows, keys):
    """One row per measured record, the given keys (those any row has), the published
    figure right after the key it compares with. `exp`: the spec.Experiment, or None for
    an experiment this tool does not know."""
    measured = values.measured(rows)
    keys = [k for k in keys if any(k in r for r in measured)]
    sources = Sources()
    entries = exp.published if exp else ()
    pubs = [published.for_row(entries, r) for r in measured]
    pub_key = next((p["key"] for p in pubs if p and p.get("key") in keys), None)
    if pub_key is None and any(pubs):
        pub_key = keys[-1] if keys else ""   # "": the published column alone
    cols = keys + [""] if pub_key == "" else keys
    header, body = [], []
    for k in cols:
        if k:
            header.append(header_of(k))
        if k == pub_key:
            header.append("published")
    for r, pub in zip(measured, pubs):
        cells = []
        for k in cols:
            if k:
                cells.append(cell_of(exp, r, k))
            if k == pub_key:
                cells.append(pub_text(pub, sources) if pub else "")
        body.append(cells)
    numeric = {i for i, h in enumerate(header) if h != "published"
               and any(num(r.get(k)) is not None and not isinstance(r.get(k), bool)
                       for r in measured for k in keys if header_of(k) == h)}
    ident = exp.row_keys if exp else ()
    return Table(header, body, numeric, skip_notes(rows, ident + ("device", "wait"))
                 + sources.notes(), [r.line for r in measured], sources.quotes())


def cell_of(exp, row, key):
    """A cell: the number, or what the experiment shows instead (a bound, say)."""
    shown = exp.cell(row, key) if exp and exp.cell else None
    return number(row.get(key)) if shown is None else shown


def generic(exp, rows):
    """An experiment this tool has no table for: its identifying keys and its scalar
    numbers, in order of first appearance."""
    measured = values.measured(rows)
    keys = []
    for r in measured:
        for k, v in r.items():
            if k in ("type", "exp", "read_cost_ns") or k in keys:
                continue
            if isinstance(v, (dict, list)):
                continue
            keys.append(k)
    return plain(exp, rows, keys[:14])


def short_ns(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return "%g %s" % (ns / scale, unit)
    return "%g ns" % ns
