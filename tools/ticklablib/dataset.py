"""What a parsed run holds, in the shape the report and compare commands need.

`records.parse_stream` gives verified records in stream order; this module groups them
(experiment result rows by ``exp``, every other record by ``type``), names each row by
every field that identifies it (an experiment's row keys come from the registry,
experiments/), and knows which experiments a run was meant to hold (its plan record, its
`exp=` command line, or the kernel's full list), so that what is absent or cut short can
be said rather than skipped. Reading a value (a number that may arrive as a decimal
string, a cell) is values.py's.

Nothing here raises on odd records: a key that is missing or not a number reads as None.
"""

from dataclasses import dataclass, field

from . import experiments, inputs, records
# The primitives live below the experiments' modules (values.py); the modules above read
# them from here too.
from .values import (NOT_MEASURED, cell, clock_of, clocksource, measured,  # noqa: F401
                     num)


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
    "serial_ports": (), "smbios": (), "acpi_mode": (),
    "usb_handoff": ("bdf",),
}
# Keys that name a row whatever its type (the kernel's coming `variant`: faithful/ticklab).
ALWAYS_ROW_KEYS = ("variant",)
# Free text: never part of a row's name, even in a type this tool does not know.
FREE_TEXT = {"reason", "claim", "summary", "detail", "action", "accepted", "why", "cmdline",
             "brand", "image", "evidence", "status", "clock", "loader", "git", "version"}

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
    exp = experiments.get(group)
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
        exp = experiments.get(self.name)
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
        return [e.name for e in experiments.EXPERIMENTS], "the kernel's experiments (exp=all)"

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
    """Read and parse a capture (a file, gzipped or not, or "-" for standard input).
    Returns (runs, [RunData]); inputs.InputError when it cannot be read."""
    return parse(inputs.read(path), inputs.name_of(path).rsplit("/", 1)[-1])


def parse(raw, source):
    """(runs, [RunData]) of a capture's bytes; `source` names it."""
    runs = records.parse_stream(raw)
    return runs, [group(run, i, source) for i, run in enumerate(runs, 1)]


def reportable(datas):
    """The runs worth a report: those with at least one verified record."""
    return [d for d in datas if d.run.records]


