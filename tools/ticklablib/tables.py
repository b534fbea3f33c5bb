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
        if status in dataset.NOT_MEASURED:
            name = " ".join(dataset.cell(r.get(k)) for k in keys if r.get(k) is not None)
            by_reason.setdefault((status, dataset.cell(r.get("reason")) or "no reason"),
                                 []).append(name or "a row")
    return ["%s: %s (%s)" % ("skipped" if status == "skip" else
                             "not a measurement, its figure could not be true",
                             ", ".join(names), reason)
            for (status, reason), names in by_reason.items()]


def plain(exp, rows, keys):
    """One row per measured record, the given keys (those any row has), the published
    figure right after the key it compares with."""
    measured = dataset.measured(rows)
    keys = [k for k in keys if any(k in r for r in measured)]
    sources = Sources()
    pubs = [published.for_row(exp, r) for r in measured]
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
    ident = dataset.EXPERIMENT_BY_NAME[exp].row_keys if exp in dataset.EXPERIMENT_BY_NAME \
        else ()
    return Table(header, body, numeric, skip_notes(rows, ident + ("device", "wait"))
                 + sources.notes(), [r.line for r in measured], sources.quotes())


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
    measured = dataset.measured(rows)
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
    """One row per variant, mode and tick size; one column per request: the mean error;
    then the publication's figures for that tick size, each naming its requests."""
    exp = "sleep-accuracy"
    measured = dataset.measured(rows)
    variants = list(dict.fromkeys(dataset.cell(r.get("variant")) for r in measured))
    only = None
    if "faithful" in variants and len(variants) > 1:
        only = "faithful"  # the one the publication measured; the rest in the figure
        measured = [r for r in measured if r.get("variant") == only]
    requests = sorted({num(r.get("request_ns")) for r in measured
                       if num(r.get("request_ns")) is not None})
    sources = Sources()
    header = ["variant", "mode", "tick (ns)"] + ["%s request (ns)" % short_ns(q)
                                                 for q in requests]
    groups = {}
    for r in measured:
        key = (dataset.cell(r.get("variant")), dataset.cell(r.get("mode")),
               num(r.get("tick_ns")))
        groups.setdefault(key, {})[num(r.get("request_ns"))] = r
    body, lines, any_pub = [], [], False
    for (variant, mode, tick), by_req in groups.items():
        cells = [variant or "-", mode or "-", number(tick)]
        said = {}  # the published words -> the requests they stand beside
        marks = []
        for q in requests:
            r = by_req.get(q)
            cells.append(number(r.get("mean_err_ns")) if r else "")
            pub = published.for_row(exp, r) if r else None
            if pub:
                said.setdefault(pub["text"], []).append(short_ns(q))
                marks.append(sources.add(pub))
        pub_cell = "; ".join("%s: %s" % (", ".join(qs), text) for text, qs in said.items())
        cells.append("%s %s" % (pub_cell, " ".join(dict.fromkeys(marks))) if said else "")
        any_pub = any_pub or bool(said)
        body.append(cells)
        lines.append(min(r.line for r in by_req.values()))
    if any_pub:
        header.append("published (request: error)")
    else:
        body = [b[:-1] for b in body]
    numeric = {i for i, h in enumerate(header) if h.endswith("(ns)")}
    notes = ["each cell: the mean error (woke - requested) in ns, negative = early; min and "
             "max are in the figure and in data/result-sleep-accuracy.csv"]
    if only:
        notes.append("the %s variant (as the source measured); %s in the figure and the CSV"
                     % (only, ", ".join(v for v in variants if v != only)))
    return Table(header, body, numeric, skip_notes(rows, ("mode", "tick_ns")) + notes
                 + sources.notes(), lines, sources.quotes())


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
    """One row per set of timers and resolution: the timers' interval stddev and their
    shares within +-5 and +-10 us (lowest-highest over the timers, as fractions like the
    source's), each with the source's figures for the same set and resolution beside it,
    and the overruns."""
    exp = "periodic-jitter"
    measured = dataset.measured(rows)
    groups = {}
    for r in measured:
        groups.setdefault((dataset.cell(r.get("set")), grid_words(r)), []).append(r)
    sources = Sources()
    header = ["set", "deadlines on", "timers", "intervals", "stddev (ns)", "published",
              "within +-5 us", "published (+-5 us)", "within +-10 us", "published (+-10 us)",
              "overruns"]
    body, lines, why = [], [], {}
    for (tset, grid), grs in groups.items():
        def span(key, fmt):
            vals = [num(r.get(key)) for r in grs if num(r.get(key)) is not None]
            if not vals:
                return "-"
            lo, hi = fmt(min(vals)), fmt(max(vals))
            return lo if lo == hi else "%s - %s" % (lo, hi)

        def pub(key):
            p = published.for_rows(exp, grs, key)
            if p:
                return pub_text(p, sources)
            off = [published.not_compared(exp, r) for r in grs]
            off = [o for o in off if o]
            if off:
                why.setdefault(off[0], []).append("%s at %s" % (tset, grid))
                return "not compared (*)"
            return ""
        body.append([tset or "-", grid, number(len(grs)),
                     number(sum(num(r.get("samples")) or 0 for r in grs)),
                     span("stddev_ns", lambda v: number(round(v))), pub("stddev_ns"),
                     span("p_within_5us", lambda v: "%.4f" % v), pub("p_within_5us"),
                     span("p_within_10us", lambda v: "%.4f" % v), pub("p_within_10us"),
                     number(sum(num(r.get("overruns")) or 0 for r in grs))])
        lines.append(grs[0].line)
    notes = ["one row per set of timers and resolution; each figure the lowest - highest of "
             "the set's timers (shares: the fraction of intervals within +-5 / +-10 us of the "
             "period); each timer's own row in data/result-periodic-jitter.csv"]
    notes += ["(*) %s: %s, so its figures are not set beside this run's" % (
        ", ".join(dict.fromkeys(where)), reason) for reason, where in why.items()]
    return Table(header, body, {2, 3, 4, 6, 8, 10},
                 skip_notes(rows, ("set", "timer")) + notes + sources.notes(), lines,
                 sources.quotes())


# What a row's "cycles" are (hrtimer-cost's `unit`): the TSC counts guest instructions
# under QEMU's -icount (virtual time) and CPU cycles on a real CPU.
COST_UNITS = {"instructions": "instructions: the TSC counts them under -icount",
              "tsc_cycles": "TSC cycles"}


def cost_unit(rows):
    """(the unit of the rows' cycle figures in words, a warning when they are not the CPU
    cycles a publication counts, or None)."""
    units = list(dict.fromkeys(dataset.cell(r.get("unit")) for r in rows
                               if r.get("unit") is not None))
    if not units:
        return ("TSC counts", "the records do not say what their TSC counted (cycles on a "
                "real CPU, instructions under QEMU -icount: a newer kernel says so in `unit`); "
                "NuttX's figures are CPU cycles")
    words = " / ".join(COST_UNITS.get(u, u) for u in units)
    if "instructions" in units:
        return (words, "this run's figures are guest instructions, NuttX's CPU cycles on "
                "real hardware: different units, set side by side for scale only")
    return words, None


def hrtimer_cost(rows):
    """One row per variant and operation, one column per device: the batch mean (+- its
    uncertainty, or a bound below resolution) or the per-operation median, in the rows'
    unit (TSC cycles, or instructions under -icount), NuttX's figure beside it."""
    exp = "hrtimer-cost"
    measured = dataset.measured(rows)
    devices = list(dict.fromkeys(dataset.cell(r.get("device")) for r in measured))
    groups = {}
    for r in measured:
        groups.setdefault((dataset.cell(r.get("variant")), dataset.cell(r.get("op"))),
                          {})[dataset.cell(r.get("device"))] = r
    sources = Sources()
    unit, warning = cost_unit(measured)
    header = ["variant", "operation (%s)" % unit] + devices + ["published (NuttX: CPU "
                                                                "cycles)"]
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
    if warning and any(b[-1] for b in body):
        notes.insert(0, "units: " + warning)
    return Table(header, body, set(range(2, 2 + len(devices))),
                 skip_notes(rows, ("op", "device")) + notes + sources.notes(), lines,
                 sources.quotes())


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
