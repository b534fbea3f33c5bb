"""Records as flat tables for the CSV exports: one scalar per cell, never JSON.

A record's objects become `key.sub` columns; a list of words one cell of words; a list of
numbers or of objects, and a histogram, a side table of its own (one row per element, keyed
by the record's capture line and identifying keys). Result rows' keys whose name carries no
unit get one in their column name (RENAME; the JSON Lines files keep the kernel's names), so
that every numeric column says what it counts or measures (UNIT_WORDS, COUNT_WORDS, IDS).
"""

from . import dataset
from .dataset import num
from .figdata import parse_hist

# result keys -> (CSV column, factor): a unit where the kernel's name has none
RENAME = {"counted": ("counted_expiries", 1), "expected": ("expected_periods", 1),
          "p_within_5us": ("within_5us_pct", 100), "p_within_10us": ("within_10us_pct", 100),
          "early": ("early_samples", 1), "lost": ("lost_wakeups", 1),
          "stale": ("stale_interrupts", 1), "n": ("n_ops", 1), "smi_delta": ("smis_delta", 1),
          "tsc_adjust": ("tsc_adjust_cyc", 1), "below_resolution": ("below_resolution_samples", 1)}
UNIT_WORDS = {"ns": "ns", "cyc": "cycles", "pct": "%", "us": "us", "hz": "Hz", "ppb": "ppb",
              "ppm": "ppm", "bytes": "bytes", "s": "s", "ms": "ms", "mhz": "MHz"}
COUNT_WORDS = {"samples", "periods", "expiries", "ticks", "jiffies", "reads", "gaps", "windows",
               "runs", "repeats", "batches", "ops", "intervals", "timers", "overruns",
               "reprograms", "wakeups", "interrupts", "smis", "iterations", "fires", "steps",
               "rounds", "count", "records", "retries", "attempts", "entries", "tables"}
IDS = {"capture_line", "seq", "first_seq", "index", "cpu", "cpu_a", "cpu_b", "apic_id", "timer",
       "k", "of", "rank", "try", "part", "parts"}


def tokens(name):
    return name.replace(".", "_").split("_")


def unit_of(name):
    """The unit a column's name gives: "ns", "cycles", "%", ...; "count" for a count of
    things; "" for an identifier or a name that says nothing."""
    words = tokens(name.lower())
    for w in reversed(words):
        if w in UNIT_WORDS:
            return UNIT_WORDS[w]
    if any(w in COUNT_WORDS for w in words):
        return "count"
    return ""


def says_its_unit(name):
    return name in IDS or unit_of(name) != ""


def scalar(value):
    """A scalar as a cell: numbers as written, booleans true/false, None empty."""
    return dataset.cell(value)


class Flat:
    """One record flattened: `cells` {column: text}, `numbers` [(column, index or None,
    number)] (what results.csv lists), `sides` {name: (columns, [rows])}."""

    def __init__(self):
        self.cells = {}
        self.numbers = []
        self.sides = {}


def flatten(rec, ident, result):
    """Flatten one record; `ident` its identifying keys (copied into side tables), `result`:
    a result row (its unitless keys renamed)."""
    flat = Flat()
    base = {"capture_line": rec.line}
    base.update({k: scalar(rec.get(k)) for k in ident})
    for key, value in rec.items():
        _walk(flat, key, value, base, result, top=True)
    return flat


def _column(key, value, result):
    if result and key in RENAME and num(value) is not None and not isinstance(value, bool):
        name, factor = RENAME[key]
        return name, (round(num(value) * factor, 6) if factor != 1 else value)
    return key, value


def _walk(flat, key, value, base, result, top=False):
    if isinstance(value, dict):
        hist = parse_hist(value) if key.split(".")[-1] == "hist" else None
        if hist is not None:
            rows = []
            if hist.below:
                rows.append(dict(base, lo_ns="", hi_ns=scalar(hist.edges[0]),
                                 count=scalar(hist.below)))
            for i, c in enumerate(hist.counts):
                last_open = hist.open_last and i == len(hist.counts) - 1
                rows.append(dict(base, lo_ns=scalar(hist.edges[i]),
                                 hi_ns="" if last_open else scalar(hist.edges[i + 1]),
                                 count=scalar(c)))
            if hist.above:
                rows.append(dict(base, lo_ns=scalar(hist.edges[-1]), hi_ns="",
                                 count=scalar(hist.above)))
            _side(flat, key, list(base) + ["lo_ns", "hi_ns", "count"], rows)
            return
        for sub, inner in value.items():
            _walk(flat, "%s.%s" % (key, sub), inner, base, result)
        return
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            flat.cells[key] = " ".join(value)
            return
        if all(isinstance(v, dict) for v in value):
            rows, cols = [], list(base) + ["index"]
            for i, v in enumerate(value):
                row = dict(base, index=i)
                for k2, x in _flat_dict(v):
                    row[k2] = x
                    if k2 not in cols:
                        cols.append(k2)
                rows.append(row)
            _side(flat, key, cols, rows)
            return
        name = key.split(".")[-1]
        rows = [dict(base, index=i, **{name: scalar(v) if not isinstance(v, (dict, list))
                                       else " ".join(map(str, v)) if isinstance(v, list)
                                       else ""}) for i, v in enumerate(value)]
        _side(flat, key, list(base) + ["index", name], rows)
        for i, v in enumerate(value):
            n = num(v)
            if n is not None and not isinstance(v, bool):
                flat.numbers.append((key, i, n))
        return
    column, shown = _column(key, value, result)
    flat.cells[column] = scalar(shown)
    n = num(shown)
    if n is not None and not isinstance(shown, bool) and key not in ("type", "exp"):
        flat.numbers.append((column, None, n))


def _flat_dict(d, prefix=""):
    for k, v in d.items():
        name = prefix + k
        if isinstance(v, dict):
            yield from _flat_dict(v, name + ".")
        elif isinstance(v, list):
            yield name, " ".join(scalar(x) if not isinstance(x, (dict, list)) else "?"
                                 for x in v)
        else:
            yield name, scalar(v)


def _side(flat, key, cols, rows):
    if key in flat.sides:
        flat.sides[key][1].extend(rows)
    else:
        flat.sides[key] = (cols, rows)
