"""The report's experiment tables as a reader wants them: a few columns chosen per
experiment, each header with its unit, numbers with thousands separators, no JSON in a
cell, a bound written as a bound ("<= 146 %", never 0), and the publication's figure in the
column right after the measured one it is set beside, its source as a footnote. Where an
experiment has many rows of one shape (sleep-accuracy's 150, periodic-jitter's 33,
hrtimer-cost's 34) the table folds them into a grid; every row and key stays in
data/result-<exp>.csv.

Pure text: the page (reportpage.py) escapes and lays it out.
"""

import statistics
from dataclasses import dataclass, field

from . import dataset, published
from .dataset import num

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
        return dataset.cell(value) if not isinstance(value, (dict, list)) else \
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
    """Footnotes naming the publications: [1] Linux at HZ=250, ..."""

    def __init__(self):
        self.names = []

    def mark(self, source):
        if source not in self.names:
            self.names.append(source)
        return "[%d]" % (self.names.index(source) + 1)

    def notes(self):
        return ["[%d] %s" % (i, s) for i, s in enumerate(self.names, 1)]


def pub_text(pub, sources):
    return "%s %s" % (pub["text"], sources.mark(pub["source"]))


def skip_notes(rows, keys):
    """One line per reason for the skip rows: "skipped (idle=poll ...): lapic hlt, pit hlt"."""
    by_reason = {}
    for r in rows:
        if r.get("status") == "skip":
            name = " ".join(dataset.cell(r.get(k)) for k in keys if r.get(k) is not None)
            by_reason.setdefault(dataset.cell(r.get("reason")) or "no reason", []).append(
                name or "a row")
    return ["skipped: %s (%s)" % (", ".join(names), reason)
            for reason, names in by_reason.items()]


def plain(exp, rows, keys):
    """One row per measured record, the given keys (those any row has), the published
    figure right after the key it compares with."""
    measured = [r for r in rows if r.get("status") != "skip"]
    keys = [k for k in keys if any(k in r for r in measured)]
    sources = Sources()
    pubs = [published.for_row(exp, r) for r in measured]
    pub_key = next((p["key"] for p in pubs if p and p.get("key") in keys), None)
    if pub_key is None and any(pubs):
        pub_key = keys[-1]
    header, body = [], []
    for k in keys:
        header.append(header_of(k))
        if k == pub_key:
            header.append("published")
    for r, pub in zip(measured, pubs):
        cells = []
        for k in keys:
            cells.append(cell_of(exp, r, k))
            if k == pub_key:
                cells.append(pub_text(pub, sources) if pub else "")
        body.append(cells)
    numeric = {i for i, h in enumerate(header) if h != "published"
               and any(num(r.get(k)) is not None and not isinstance(r.get(k), bool)
                       for r in measured for k in keys if header_of(k) == h)}
    ident = dataset.EXPERIMENT_BY_NAME[exp].row_keys if exp in dataset.EXPERIMENT_BY_NAME \
        else ()
    return Table(header, body, numeric, skip_notes(rows, ident + ("device", "wait"))
                 + sources.notes(), [r.line for r in measured])


def cell_of(exp, row, key):
    """A cell; a figure below its resolution is its bound."""
    value = row.get(key)
    if exp == "tick-overhead" and row.get("below_resolution") is True:
        if key == "overhead_pct":
            return "<= %s" % number(row.get("overhead_bound_pct"))
        if key == "per_tick_ns":
            return "<= %s" % number(row.get("per_tick_uncertainty_ns"))
    return number(value)


def generic(exp, rows):
    """An experiment this tool has no table for: its identifying keys and its scalar
    numbers, in order of first appearance."""
    measured = [r for r in rows if r.get("status") != "skip"]
    keys = []
    for r in measured:
        for k, v in r.items():
            if k in ("type", "exp", "read_cost_ns") or k in keys:
                continue
            if isinstance(v, (dict, list)):
                continue
            keys.append(k)
    return plain(exp, rows, keys[:14])


# --- folded grids -------------------------------------------------------------------------

def sleep_accuracy(rows):
    """One row per variant, mode and tick size; one column per request: the mean error."""
    exp = "sleep-accuracy"
    measured = [r for r in rows if r.get("status") != "skip"]
    variants = list(dict.fromkeys(dataset.cell(r.get("variant")) for r in measured))
    only = None
    if "faithful" in variants and len(variants) > 1:
        only = "faithful"  # the one the publication measured; the rest in the figure
        measured = [r for r in measured if r.get("variant") == only]
    requests = sorted({num(r.get("request_ns")) for r in measured
                       if num(r.get("request_ns")) is not None})
    sources = Sources()
    pub_at = {}
    for r in measured:
        pub = published.for_row(exp, r)
        if pub:
            pub_at[num(r.get("request_ns"))] = pub
    header = ["variant", "mode", "tick (ns)"]
    for q in requests:
        header.append("%s request (ns)" % short_ns(q))
        if q in pub_at:
            header.append("published (%s)" % short_ns(q))
    groups = {}
    for r in measured:
        key = (dataset.cell(r.get("variant")), dataset.cell(r.get("mode")),
               num(r.get("tick_ns")))
        groups.setdefault(key, {})[num(r.get("request_ns"))] = r
    body, lines = [], []
    for (variant, mode, tick), by_req in groups.items():
        cells = [variant or "-", mode or "-", number(tick)]
        for q in requests:
            r = by_req.get(q)
            cells.append(number(r.get("mean_err_ns")) if r else "")
            if q in pub_at:
                pub = published.for_row(exp, r) if r else None
                cells.append(pub_text(pub, sources) if pub else "")
        body.append(cells)
        lines.append(min(r.line for r in by_req.values()))
    numeric = {i for i, h in enumerate(header) if h.endswith("(ns)")}
    notes = ["each cell: the mean error (woke - requested) in ns, negative = early; min and "
             "max are in the figure and in data/result-sleep-accuracy.csv"]
    if only:
        notes.append("the %s variant (as the source measured); %s in the figure and the CSV"
                     % (only, ", ".join(v for v in variants if v != only)))
    return Table(header, body, numeric, skip_notes(rows, ("mode", "tick_ns")) + notes
                 + sources.notes(), lines)


def short_ns(ns):
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return "%g %s" % (ns / scale, unit)
    return "%g ns" % ns


def grid_words(row):
    hres = num(row.get("hres_ns"))
    if row.get("grid") is False:
        return "none (device cycle %s)" % short_ns(hres) if hres else "none"
    return "%s grid" % short_ns(hres) if hres is not None else "-"


def periodic_jitter(rows):
    """One row per set of timers and grid: the timers' interval stddev (median, max), the
    share within +-5 and +-10 us (mean over the timers, in %), overruns."""
    exp = "periodic-jitter"
    measured = [r for r in rows if r.get("status") != "skip"]
    groups = {}
    for r in measured:
        groups.setdefault((dataset.cell(r.get("set")), grid_words(r)), []).append(r)
    sources = Sources()
    header = ["set", "deadlines on", "timers", "intervals", "stddev median (ns)", "published",
              "stddev max (ns)", "within 5 us (%)", "within 10 us (%)", "overruns"]
    body, lines = [], []
    for (tset, grid), grs in groups.items():
        sd = [num(r.get("stddev_ns")) for r in grs if num(r.get("stddev_ns")) is not None]
        w5 = [num(r.get("p_within_5us")) for r in grs if num(r.get("p_within_5us")) is not None]
        w10 = [num(r.get("p_within_10us")) for r in grs
               if num(r.get("p_within_10us")) is not None]
        pub = next((published.for_row(exp, r) for r in grs if published.for_row(exp, r)), None)
        body.append([tset or "-", grid, number(len(grs)),
                     number(sum(num(r.get("samples")) or 0 for r in grs)),
                     number(round(statistics.median(sd))) if sd else "-",
                     pub_text(pub, sources) if pub else "",
                     number(max(sd)) if sd else "-",
                     "%.1f" % (100 * statistics.mean(w5)) if w5 else "-",
                     "%.1f" % (100 * statistics.mean(w10)) if w10 else "-",
                     number(sum(num(r.get("overruns")) or 0 for r in grs))])
        lines.append(grs[0].line)
    return Table(header, body, {2, 3, 4, 6, 7, 8, 9},
                 skip_notes(rows, ("set", "timer")) + ["one row per set of timers and grid; "
                 "each timer's own row in data/result-periodic-jitter.csv"] + sources.notes(),
                 lines)


def hrtimer_cost(rows):
    """One row per variant and operation, one column per device: the batch mean (+- its
    uncertainty, or a bound below resolution) or the per-operation median, in cycles."""
    exp = "hrtimer-cost"
    measured = [r for r in rows if r.get("status") != "skip"]
    devices = list(dict.fromkeys(dataset.cell(r.get("device")) for r in measured))
    groups = {}
    for r in measured:
        groups.setdefault((dataset.cell(r.get("variant")), dataset.cell(r.get("op"))),
                          {})[dataset.cell(r.get("device"))] = r
    sources = Sources()
    header = ["variant", "operation (TSC cycles)"] + devices + ["published"]
    body, lines = [], []
    for (variant, op), by_dev in groups.items():
        cells = [variant or "-", op or "-"]
        pub = None
        for d in devices:
            r = by_dev.get(d)
            cells.append(cost_cell(r) if r else "")
            pub = pub or (published.for_row(exp, r) if r else None)
        cells.append(pub_text(pub, sources) if pub else "")
        body.append(cells)
        lines.append(min(r.line for r in by_dev.values()))
    notes = ["batch: the mean over up to 1e6 operations +- half the batches' spread; per_op: "
             "the median of each operation timed alone (p99 in the figure)"]
    return Table(header, body, set(range(2, 2 + len(devices))),
                 skip_notes(rows, ("op", "device")) + notes + sources.notes(), lines)


def cost_cell(r):
    if num(r.get("mean_cyc")) is not None:
        if r.get("below_resolution") is True:
            return "<= %s" % number(r.get("uncertainty_cyc"))
        unc = num(r.get("uncertainty_cyc"))
        return number(r.get("mean_cyc")) + (" +- %s" % number(r.get("uncertainty_cyc"))
                                            if unc else "")
    return number(r.get("median_cyc"))


SPECS = {
    "period-compare": ["timer", "hz", "samples", "err_mean_ns", "err_stddev_ns", "err_min_ns",
                       "err_max_ns", "predicted_err_ns", "late_max_ns"],
    "itimer-error": ["mode", "period_us", "device", "counted", "expected", "error_pct",
                     "predicted_pct", "accounted_pct", "tolerance_pct", "matches_prediction",
                     "why"],
    "tick-overhead": ["variant", "tick_ns", "device", "mode", "ticks", "overhead_pct",
                      "per_tick_ns", "total_cyc"],
    "hwlat": ["window_ns", "windows", "threshold_ns", "reads", "gaps", "max_gap_ns",
              "total_gap_ns", "smi_delta"],
    "tsc-sync": ["cpu", "cpu_a", "cpu_b", "mode", "tsc_adjust", "rounds", "backward_steps",
                 "max_backward_cyc", "offset_cyc", "offset_uncertainty_cyc", "rtt_min_cyc"],
    "percpu-latency": ["cpu", "device", "load", "samples", "min_ns", "p50_ns", "p99_ns",
                       "max_ns", "jitter_stddev_max_ns"],
}
GRIDS = {"sleep-accuracy": sleep_accuracy, "periodic-jitter": periodic_jitter,
         "hrtimer-cost": hrtimer_cost}


def for_experiment(exp, rows):
    """The experiment's table, or None for wakeup-latency (its rows are the summary's
    table) and for an experiment with nothing measured (its skip notes then)."""
    if exp == "wakeup-latency":
        return None
    if exp in GRIDS:
        return GRIDS[exp](rows)
    if exp in SPECS:
        return plain(exp, rows, SPECS[exp])
    return generic(exp, rows)
