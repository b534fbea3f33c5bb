"""What the figures are drawn from, without matplotlib: the kernel's histograms parsed, the
words naming a figure's clock, durations for labels, an experiment's measurable rows.

The exports, the report page and the terminal use these too, so they live apart from the
drawing (plots.py and the modules it serves): `check`, `capture` and the data files work
on a machine without python3-matplotlib.
"""

from dataclasses import dataclass, field

from . import values
from .values import num
from .names import Stems


class Absent(Exception):
    """This figure cannot be drawn from this run; the message says why."""


@dataclass(frozen=True)
class Plot:
    """A figure written to disk: file stem, title, caption, the two files, the experiment
    it belongs to (None: its own section) and the words naming its clock."""
    name: str
    title: str
    caption: str
    png: str
    svg: str
    exp: object = None
    clock: str = ""
    overlaps: tuple = ()  # pairs of label texts that collide on the drawn figure
    legends_on_data: tuple = ()  # panels whose legend lies on their data
    axes: tuple = ()      # each panel's scales and limits (plots.axes_facts)


@dataclass
class Options:
    """How to draw: log_counts puts the kernel's bucket counts on a log axis (histograms
    from raw samples always have one); stems makes the file names derived from record
    values safe and unique; svg also writes each figure as SVG; workers: processes that
    draw at once (1: here)."""
    log_counts: bool = False
    stems: Stems = field(default_factory=Stems)
    svg: bool = False
    workers: int = 1


def fmt_ns(ns):
    """A duration for a label: 250 ns, 4 us, 1 ms, 1.5 s."""
    ns = num(ns)
    if ns is None:
        return "?"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return "%g %s" % (round(ns / scale, 3), unit)
    return "%g ns" % ns


def label(row, keys):
    """A row's legend text from its identifying keys; never "None"."""
    parts = []
    for key in keys:
        value = row.get(key)
        if value is None:
            continue
        parts.append(fmt_ns(value) if key.endswith("_ns") else str(value))
    return " ".join(parts) or "row at line %d" % row.line


def text_of(value, missing="(not named)"):
    return missing if value is None or value == "" else str(value)


def clock_words(data, rows):
    """"clock: time_ns() on hpet, resolution 10 ns (smallest step of hpet)" for the rows
    of a figure: every distinct clock they name, each once, with the range of its rows'
    resolutions where they differ."""
    seen = {}
    for row in rows:
        clock, words, res, where = values.clock_of(data, row)
        seen.setdefault((words, where), []).append(res)
    parts = []
    for (words, where), res in seen.items():
        known = [r for r in res if r is not None]
        if not known:
            parts.append(words)
            continue
        lo, hi = min(known), max(known)
        span = fmt_ns(lo) if lo == hi else "%s to %s" % (fmt_ns(lo), fmt_ns(hi))
        parts.append("%s, resolution %s (%s)" % (words, span, where))
    return "clock: " + ("; ".join(parts) if parts else "not named in the records")


@dataclass(frozen=True)
class Hist:
    """A histogram ready to draw: len(edges) == len(counts) + 1; `below` and `above` are
    counts outside the drawn edges (a linear histogram's outer buckets); `open_last`: the
    last bucket has no upper bound (its upper edge here is a stand-in)."""
    edges: list
    counts: list
    below: float = 0
    above: float = 0
    open_last: bool = False

    def nonzero_span(self):
        idx = [i for i, c in enumerate(self.counts) if c]
        return (idx[0], idx[-1]) if idx else None


def parse_hist(hist):
    """A record's histogram as a Hist, or None when it is in no form understood.

    Accepted forms:
    - {"edges_ns": [...], "counts": [...]}: bucket bounds (one more edge than counts), or
      lower bounds (as many edges as counts; the kernel's log2 buckets, lib/hist.c): the
      last, open-ended bucket is given a stand-in upper edge one log step (x2) up;
    - {"lo_ns": L, "bucket_ns": W, "counts": [c0, ..., cn-1]}: c0 counts values below L,
      c1..cn-2 the buckets [L + (k-1)W, L + kW), cn-1 values from L + (n-2)W up
      (the jitter of a periodic timer; any linear histogram around the data);
    - a list of {"lo_ns", "hi_ns", "count"} buckets, or of [lower_edge_ns, count] pairs.
    """
    edges = counts = None
    if isinstance(hist, dict) and "bucket_ns" in hist:
        return _linear_hist(hist)
    if isinstance(hist, dict):
        edges = hist.get("edges_ns", hist.get("edges"))
        counts = hist.get("counts")
    elif isinstance(hist, list) and hist:
        if all(isinstance(b, dict) for b in hist):
            edges = [b.get("lo_ns") for b in hist]
            counts = [b.get("count") for b in hist]
            last = hist[-1].get("hi_ns")
            if last is not None:
                edges = edges + [last]
        elif all(isinstance(b, list) and len(b) == 2 for b in hist):
            edges = [b[0] for b in hist]
            counts = [b[1] for b in hist]
    if not isinstance(edges, list) or not isinstance(counts, list) or not counts:
        return None
    edges = [num(e) for e in edges]
    counts = [num(c) for c in counts]
    if None in edges or None in counts or any(c < 0 for c in counts):
        return None
    open_last = len(edges) == len(counts)
    if open_last:
        edges = edges + [edges[-1] * 2 if edges[-1] > 0 else 1]
    if len(edges) != len(counts) + 1 or any(b <= a for a, b in zip(edges, edges[1:])):
        return None
    return Hist(edges, counts, open_last=open_last)


def _linear_hist(hist):
    lo, width, counts = num(hist.get("lo_ns")), num(hist.get("bucket_ns")), hist.get("counts")
    if lo is None or not width or width <= 0 or not isinstance(counts, list) \
            or len(counts) < 3:
        return None
    counts = [num(c) for c in counts]
    if None in counts or any(c < 0 for c in counts):
        return None
    inner = counts[1:-1]
    return Hist([lo + k * width for k in range(len(inner) + 1)], inner, counts[0], counts[-1])


def unique_names(names):
    """Bar labels must differ (matplotlib merges equal categories): number repeats."""
    total = {n: names.count(n) for n in names}
    seen = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if total[name] == 1 else "%s #%d" % (name, seen[name]))
    return out


def rows_of(data, exp, measured=True):
    """An experiment's rows; `measured`: without its skip rows and the rows the kernel
    marked invalid (no figure: it could not be true)."""
    rows = data.results.get(exp)
    if not rows:
        raise Absent("no %s result records in this run" % exp)
    if measured:
        rows = values.measured(rows)
        if not rows:
            raise Absent("every %s row is a skip row or not a measurement" % exp)
    return rows


def rows_with(data, exp, key):
    """An experiment's measured rows that carry a number at `key`."""
    rows = [r for r in rows_of(data, exp) if num(r.get(key)) is not None]
    if not rows:
        raise Absent("%s rows carry no %s" % (exp, key))
    return rows


def partial_note(data, exp):
    return (" The experiment did not finish (exp_start without exp_end): rows may be "
            "missing." if data.partial(exp) else "")
