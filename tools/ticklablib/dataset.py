"""What a parsed run holds, in the shape the report and compare commands need.

`records.parse_stream` gives verified records in stream order; this module groups them
(experiment result rows by ``exp``, every other record by ``type``), reads numbers that
may arrive as JSON numbers or as decimal strings, and knows which experiments and plots a
full run is expected to contain, so that what is absent can be said rather than skipped.

Nothing here raises on odd records: a key that is missing or not a number reads as None.
"""

import json
import math
from dataclasses import dataclass, field

from . import records


@dataclass(frozen=True)
class Experiment:
    """One experiment the kernel may run: its `exp` name, a title, and the keys that name
    one row of its table (two runs are compared row by row on these)."""
    name: str
    title: str
    row_keys: tuple
    about: str


# The experiments' result rows (type "result", "exp" = name), in the report's order.
EXPERIMENTS = (
    Experiment("wakeup-latency", "Wakeup latency", ("device", "path"),
               "time from a timer's deadline to the interrupt handler (irq) or the timer "
               "callback, per clock event device"),
    Experiment("sleep-accuracy", "Sleep accuracy", ("mode", "tick_ns", "request_ns"),
               "how late a sleep of a requested length ends, for each tick size"),
    Experiment("tick-overhead", "Tick overhead", ("tick_ns",),
               "share of the CPU a periodic tick takes, against a tickless baseline"),
    Experiment("periodic-jitter", "Periodic jitter", ("set", "hres_ns", "period_ns"),
               "spread of the intervals of a periodic timer, alone and among others"),
    Experiment("period-compare", "hrtimer against jiffies timer", ("timer",),
               "a 1 s periodic hrtimer beside a 1 s jiffies timer: error per period"),
    Experiment("itimer-error", "Interval timer error", ("mode", "period_us"),
               "expirations counted against expected, tick-based and ns-based"),
    Experiment("hrtimer-cost", "hrtimer operation cost", ("op", "device"),
               "cycles per hrtimer operation"),
    Experiment("hwlat", "Hardware latency (SMI) detector", ("window_ns", "threshold_ns"),
               "gaps in a busy loop reading the clock: time the CPU was taken away"),
)
EXPERIMENT_BY_NAME = {e.name: e for e in EXPERIMENTS}

# Row identities of the other record types that compare looks at (type -> keys). A type
# not listed here is compared only when it appears once per run.
RECORD_ROW_KEYS = {
    "calibration": ("target", "method", "ref"),
    "clocksource": ("name",),
    "clockevent": ("name",),
    "clockevent_check": ("device", "mode"),
    "hrtimer_cost": ("op", "device"),
    "acpi": ("sig", "phys"),
    "ioapic": ("madt_id",),
}


def num(value):
    """A record value as a number: ints and floats as they are, decimal strings parsed;
    None for anything else (bools, missing, text, NaN/inf)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip()
        for kind in (int, float):
            try:
                parsed = kind(text)
            except ValueError:
                continue
            return parsed if math.isfinite(parsed) else None
    return None


def cell(value):
    """A record value as one table/CSV cell: scalars as text, lists and objects as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def columns(rows):
    """Union of the rows' keys in order of first appearance."""
    seen = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


@dataclass
class RunData:
    """One run of a capture, grouped for reporting.

    run      the records.Run (problems, line span, whole or not)
    index    1-based position of the run in its capture
    source   name of the capture file
    by_type  record type -> [Record], stream order (result rows included under "result")
    results  experiment name -> [Record] (type "result"), stream order
    """
    run: records.Run
    index: int
    source: str
    by_type: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)

    @property
    def label(self):
        return "%s#%d" % (self.source, self.index)

    @property
    def boot(self):
        return self.run.boot or {}

    def one(self, rtype):
        """The first record of a type, or an empty dict."""
        found = self.by_type.get(rtype)
        return found[0] if found else {}

    def experiments_present(self):
        """Experiment names with result rows: the known ones in report order, then any
        the kernel sent that this tool does not know yet."""
        known = [e.name for e in EXPERIMENTS if e.name in self.results]
        return known + [n for n in self.results if n not in EXPERIMENT_BY_NAME]

    def experiments_absent(self):
        return [e.name for e in EXPERIMENTS if e.name not in self.results]


def group(run, index, source):
    """Build a RunData from a parsed Run."""
    data = RunData(run=run, index=index, source=source)
    for rec in run.records:
        data.by_type.setdefault(rec.type, []).append(rec)
        if rec.type == "result":
            name = rec.get("exp")
            name = name if isinstance(name, str) and name else "(no exp)"
            data.results.setdefault(name, []).append(rec)
    return data


def load(path):
    """Read and parse a capture file. Returns (runs, [RunData]); OSError propagates."""
    with open(path, "rb") as f:
        raw = f.read()
    runs = records.parse_stream(raw)
    source = path.rsplit("/", 1)[-1]
    return runs, [group(run, i, source) for i, run in enumerate(runs, 1)]


def reportable(datas):
    """The runs worth a report: those with at least one verified record."""
    return [d for d in datas if d.run.records]
