"""What a parsed run holds, in the shape the report and compare commands need.

`records.parse_stream` gives verified records in stream order; this module groups them
(experiment result rows by ``exp``, every other record by ``type``), reads numbers that
may arrive as JSON numbers or as decimal strings, names each row by every field that
identifies it, and knows which experiments a run was meant to hold (its plan record, its
`exp=` command line, or the kernel's full list), so that what is absent or cut short can
be said rather than skipped.

Nothing here raises on odd records: a key that is missing or not a number reads as None.
"""

import json
import math
from dataclasses import dataclass, field

from . import records


@dataclass(frozen=True)
class Experiment:
    """One experiment the kernel may run: its `exp` name, a title, the keys that name one
    row of its table (two runs are compared row by row on these), what it measures."""
    name: str
    title: str
    row_keys: tuple
    about: str


# Every experiment the kernel runs with exp=all, in its order (docs/experiments.md).
EXPERIMENTS = (
    Experiment("period-compare", "hrtimer against jiffies timer", ("timer",),
               "a 1 s periodic hrtimer beside a 1 s jiffies timer: error per period"),
    Experiment("periodic-jitter", "Periodic jitter", ("set", "timer", "hres_ns", "grid",
                                                      "period_ns"),
               "spread of the intervals of a periodic timer, alone and among others"),
    Experiment("itimer-error", "Interval timer error", ("mode", "period_us"),
               "expirations counted against expected, tick-based and ns-based"),
    Experiment("sleep-accuracy", "Sleep accuracy", ("mode", "tick_ns", "request_ns"),
               "how late (or early) a sleep of a requested length ends, per tick size"),
    Experiment("tick-overhead", "Tick overhead", ("variant", "tick_ns", "mode"),
               "share of the CPU a periodic tick takes, against a tickless baseline (ticklab) "
               "and against the 10 ms tick (faithful, as the 1998 source)"),
    Experiment("hrtimer-cost", "hrtimer operation cost", ("op", "device", "variant"),
               "cycles per hrtimer operation: means over 1e6 operations (batch, as the "
               "source) and each operation timed alone (per_op)"),
    Experiment("wakeup-latency", "Wakeup latency", ("device", "path", "wait"),
               "time from a timer's deadline to the interrupt entry, the device's event "
               "function or the hrtimer callback, per clock event device"),
    Experiment("hwlat", "Hardware latency (SMI) detector", ("window_ns", "threshold_ns"),
               "gaps in a busy loop reading the clock: time the CPU was taken away"),
    Experiment("tsc-sync", "TSC synchronisation", ("cpu", "cpu_a", "cpu_b", "mode"),
               "TSC ping-pong between every pair of CPUs: backward steps and offsets"),
    Experiment("percpu-latency", "Per-CPU latency", ("cpu", "device", "load"),
               "each CPU's own timers: wake-ups and periodic jitter, idle and loaded"),
)
EXPERIMENT_BY_NAME = {e.name: e for e in EXPERIMENTS}

# Row identities of the other record types (type -> keys).
RECORD_ROW_KEYS = {
    "calibration": ("target", "method", "ref"),
    "clocksource": ("name",),
    "clockevent": ("name",),
    "clockevent_check": ("device", "mode"),
    "acpi": ("sig",),  # where a table sits (phys) moves between boots; it is not its name
    "ioapic": ("madt_id",),
    "cpu_start": ("cpu",),
    "cpu_dropped": ("entry",),
    "percpu_timer_check": ("cpu", "device"),
    "exp_start": ("exp",),
    "exp_end": ("exp",),
    "verdict": ("topic",),
    "error": ("what", "word", "record_type", "vector", "exp"),
    "madt_more": ("part",),
    "acpi_dump": ("sig", "phys", "offset"),
    "hrtimer_check": ("device",),
    "tick": ("device", "mode", "hz_requested"),
    "tick_check": ("device", "hz"),
    "tick_stats": ("device",),
    "clock_rate": ("name",),
    "samples": ("exp", "device", "path", "wait", "first_seq"),
    "sample_detail": ("exp", "device", "path", "wait", "seq"),
    "console_phase": ("exp", "phase"),
    "serial_port": ("index",),
    # sent once per run: the row needs no name
    "boot": (), "cpu": (), "memory": (), "console": (), "paging": (), "lapic": (),
    "interrupts": (), "irq_check": (), "irq_stats": (), "acpi_summary": (), "fadt": (),
    "hpet_table": (), "hpet_boot_state": (), "madt": (), "environment": (), "clocksource_selected": (),
    "hrtimer_base": (), "cpu_plan": (), "dmar": (), "console_cost": (), "screen_scroll": (),
    "serial_ports": (),
}
# Keys that name a row whatever its type (the kernel's coming `variant`: faithful/ticklab).
ALWAYS_ROW_KEYS = ("variant",)
# Free text: never part of a row's name, even in a type this tool does not know.
FREE_TEXT = {"reason", "claim", "summary", "detail", "action", "accepted", "why", "cmdline",
             "brand", "image", "evidence", "status", "clock", "loader", "git", "version"}

# The paths of wakeup-latency, in one line each (shown wherever a path is).
PATHS = {
    "irq": "the device programmed directly: deadline to the interrupt entry stub",
    "event": "the device programmed directly: deadline to the device's event function",
    "hrtimer_irq": "an hrtimer on the device: its expiry to the interrupt entry stub",
    "callback": "an hrtimer on the device: its expiry to the callback's first instruction",
}
WAITS = {"hlt": "the CPU waits in HLT", "poll": "the CPU spins with interrupts on"}

# Numbers outside this range are shown as sent but never computed with: the kernel sends
# nothing wider than 64 bits, and a float cannot hold some integers JSON can.
NUM_LIMIT = 2 ** 64


def num(value):
    """A record value as a number: ints and floats as they are, decimal strings parsed;
    None for anything else (bools, missing, text, NaN/inf, beyond +-2^64)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value if -NUM_LIMIT <= value <= NUM_LIMIT else None
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 64:
            return None
        for kind in (int, float):
            try:
                parsed = kind(text)
            except ValueError:
                continue
            return num(parsed)
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


def identity_keys(group, row):
    """The keys that name this row within its group (an experiment name or a record
    type): the group's known keys and `variant` where present; for a group this tool does
    not know, every short text or boolean value that is not free text."""
    exp = EXPERIMENT_BY_NAME.get(group)
    known = exp.row_keys if exp else RECORD_ROW_KEYS.get(group)
    if known is None:
        keys = [k for k, v in row.items() if k not in ("type", "exp") and k not in FREE_TEXT
                and (isinstance(v, bool) or (isinstance(v, str) and len(v) <= 40
                                             and not v.startswith("0x")))]
    else:
        keys = [k for k in known if k in row]
    return tuple(keys) + tuple(k for k in ALWAYS_ROW_KEYS if k in row and k not in keys)


def row_names(group, rows):
    """Each row's name within its group, from all its identifying fields; an ordinal
    only where two rows agree on every one of them."""
    bases = [" ".join("%s=%s" % (k, cell(rec.get(k))) for k in identity_keys(group, rec))
             for rec in rows]
    total = {b: bases.count(b) for b in bases}
    names, seen = [], {}
    for base in bases:
        seen[base] = seen.get(base, 0) + 1
        names.append(base if total[base] == 1 else ("%s #%d" % (base, seen[base])).strip())
    return names


@dataclass
class ExpState:
    """One experiment of a run: done, partial (started, never ended), skipped (every row a
    skip row), results-only (rows with no exp_start), or absent (planned, nothing came)."""
    name: str
    state: str
    rows: list
    start: object = None
    end: object = None
    errors: list = field(default_factory=list)

    @property
    def title(self):
        exp = EXPERIMENT_BY_NAME.get(self.name)
        return exp.title if exp else self.name

    @property
    def duration_ns(self):
        return num((self.end or {}).get("duration_ns"))

    def describe(self):
        if self.state == "partial":
            return ("started (line %d) but no exp_end came: the run stopped during it, its "
                    "rows may be incomplete" % self.start.line)
        if self.state == "absent":
            return "planned, but no record of it came"
        if self.state == "results-only":
            return "result rows without an exp_start record"
        if self.state == "skipped":
            reasons = sorted({str(r.get("reason")) for r in self.rows if r.get("reason")})
            return "ran; every row is a skip row: %s" % ("; ".join(reasons) or "no reason")
        d = self.duration_ns
        text = "done in %.3g s (machine time)" % (d / 1e9) if d is not None else "done"
        if self.invalid:
            text += "; %d row(s) not a measurement: the kernel found their figure could not " \
                "be true (the table says why)" % self.invalid
        return text

    @property
    def invalid(self):
        """Rows the kernel measured but sent without figures (`status` invalid)."""
        return sum(r.get("status") == "invalid" for r in self.rows)


@dataclass
class RunData:
    """One run of a capture, grouped for reporting.

    run      the records.Run (problems, line span, whole or not)
    index    1-based position of the run in its capture
    source   name of the capture file
    by_type  record type -> [Record], stream order (result rows included under "result")
    results  experiment name -> [Record] (type "result"), stream order
    cache    views computed once from the records (the raw samples, samples.py)
    """
    run: records.Run
    index: int
    source: str
    by_type: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    cache: dict = field(default_factory=dict, repr=False)  # derived views (samples.py)

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

    def planned(self):
        """The experiments this run was meant to hold, in order, and where that list came
        from: the kernel's plan record, the exp= command line, or the kernel's full list."""
        plan = self.one("plan")
        if isinstance(plan.get("experiments"), list):
            names = [e.get("exp") for e in plan["experiments"] if isinstance(e, dict)]
            return [n for n in names if isinstance(n, str)], "the kernel's plan record"
        words = dict(w.split("=", 1) for w in str(self.boot.get("cmdline") or "").split()
                     if "=" in w)
        if "exp" in words and words["exp"] != "all":
            names = [n for n in words["exp"].split(",") if n and n != "none"]
            return names, "the command line (exp=%s)" % words["exp"]
        return [e.name for e in EXPERIMENTS], "the kernel's experiments (exp=all)"

    def experiments(self):
        """[ExpState] for every experiment planned or seen: the planned ones in order, then
        any other that sent records."""
        starts = {r["exp"]: r for r in self.by_type.get("exp_start", [])
                  if isinstance(r.get("exp"), str)}
        ends = {r["exp"]: r for r in self.by_type.get("exp_end", [])
                if isinstance(r.get("exp"), str)}
        planned, _ = self.planned()
        names = list(dict.fromkeys(planned + [n for n in starts if isinstance(n, str)]
                                   + list(self.results)))
        errors = self._errors_by_experiment()
        out = []
        for name in names:
            rows = self.results.get(name, [])
            start, end = starts.get(name), ends.get(name)
            if start is not None and end is None:
                state = "partial"
            elif start is None and end is None:
                state = "results-only" if rows else "absent"
            elif rows and all(r.get("status") == "skip" for r in rows):
                state = "skipped"
            else:
                state = "done"
            out.append(ExpState(name, state, rows, start, end, errors.get(name, [])))
        return out

    def _errors_by_experiment(self):
        """error records sent between an experiment's exp_start and its end."""
        out, current = {}, None
        for rec in self.run.records:
            if rec.type == "exp_start":
                current = rec.get("exp")
            elif rec.type == "exp_end":
                current = None
            elif rec.type == "error" and current is not None:
                out.setdefault(current, []).append(rec)
        return out

    def experiments_present(self):
        """Experiment names with result rows: the planned ones in order, then the rest."""
        return [s.name for s in self.experiments() if s.rows]

    def experiments_absent(self):
        return [s.name for s in self.experiments() if s.state == "absent"]

    def partial(self, name):
        return any(s.name == name and s.state == "partial" for s in self.experiments())


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


# --- clocks and resolution ---------------------------------------------------------------

def clocksource(data, name):
    for rec in data.by_type.get("clocksource", []):
        if rec.get("name") == name:
            return rec
    return {}


# A result row's `status` when it holds no figure: `skip` (not measured: absent or unusable
# hardware, with its reason) and `invalid` (measured, but its figure could not be true: a
# tick dearer than its period, ticks gone missing, a sleep earlier than its contract; the
# kernel sends the raw counts and its reason, never the figure).
NOT_MEASURED = ("skip", "invalid")


def measured(rows):
    """The rows that carry figures."""
    return [r for r in rows if r.get("status") not in NOT_MEASURED]


def clock_of(data, row):
    """(clock name as the row says it, words naming it, resolution ns or None, where the
    resolution comes from)."""
    clock = row.get("clock")
    own = num(row.get("resolution_ns"))
    own_from = "measured cost of the clock reads (the record's own)"
    on_time_ns = clock == "time_ns"
    given = row.get("clock_resolution_ns")
    if given is None and on_time_ns:
        given = row.get("time_ns_resolution_ns")     # the kernel's, for time_ns rows
    if own is None and num(given) is not None:
        own = num(given)
        own_from = "the clock's resolution as the record gives it"
    device = row.get("clock_device")  # the device behind the clock, where the row names it
    if device is None and on_time_ns:
        device = row.get("time_ns_device")
    device = device if isinstance(device, str) and device else None
    if clock == "time_ns":
        source = device or data.one("clocksource_selected").get("name")
        words = "time_ns() on %s" % source if source else "time_ns() (source unknown)"
        cs = clocksource(data, source) if source else {}
    elif clock == "tsc" and device in (None, "tsc"):
        cs = clocksource(data, "tsc")
        hz = num(cs.get("freq_hz"))
        words = "TSC" + (" at %.6g MHz" % (hz / 1e6) if hz else "")
    elif device is not None:
        cs = clocksource(data, device)
        words = device if clock in (None, device) else "%s on %s" % (cell(clock), device)
    elif isinstance(clock, str) and clock:
        cs, words = clocksource(data, clock), clock
    else:
        return None, "clock not named in the record", own, "the record" if own else None
    if own is not None:
        return clock, words, own, own_from
    step = num(cs.get("resolution_ns"))
    if step is not None:
        return clock, words, step, "smallest step of %s" % cs.get("name")
    return clock, words, None, None
