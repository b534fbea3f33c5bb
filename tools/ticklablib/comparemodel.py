"""What changed between runs: every value matched by what names it, then judged against
its own noise, so that a one-tick difference is not a change and the real changes rank
first.

A value's noise is the largest of
  - twice the resolution of the clock that measured it (the row's own `resolution_ns`,
    else the smallest step of its clock: `time_ns` -> the selected clocksource, `tsc` ->
    the TSC), in both runs: two reads of a 10 ns clock can differ by 20 ns for nothing;
  - its stated uncertainty where the record gives one (a calibration's uncertainty_ppb);
  - the run-to-run spread, when the two runs are of different set-ups and either set-up
    was run more than once among the runs compared (same command line, CPU, accelerator,
    icount, machine, CPU count, kernel): the range of the value across those repeats. Two
    repeats of one set-up are compared against the other bounds only, so that a mode meant
    to be repeatable (icount) shows every difference between its runs;
  - for a count, its Poisson spread, 2 * sqrt(count); a count of trouble (lost, stale,
    early, gaps, errors, overruns, retries, rescued events, backward steps) has none: any
    change of it is a change.
  - where nothing else is known, twice the last digit the value was written with (an
    integer: 2; 0.3927: 0.0002).
A value changed when |difference| > noise (its score, |difference| / noise, is above 1).
Changes rank by their size against the value (`magnitude`: a 455-fold step before a
15 ppm drift); counts are compared as counts (+3), never as rates or percentages.

The noise floor depends on the mode the runs were made in (`floor_of`). In exact mode
(every run under icount) the runs of one set-up repeat byte for byte, so the bounds above
are all there is and any other difference is a change. In any other mode (plain emulation,
KVM, real hardware) a timing is also moved by what the host did, by far more than its
resolution: there the runs' own spread is the floor. Each value's move is measured as
d = |asinh(b / s) - asinh(a / s)|, s its resolution bound above (about |ln(b / a)| for large
values, smooth through zero); of the values that moved, the 97.5th percentile of d is the
floor, and a value is beyond noise only when it moved further (the outliers of this pair
of runs, not of its mode in general: the compare says so). Counts of trouble are judged the
same way there, since the host makes them too.

Internal values (a clocksource's mult and shift, interrupts counted per vector, table
lengths, ids: INTERNAL) are compared but never ranked: they follow from a measurement or a
machine's layout and say nothing of their own.
"""

import math
from dataclasses import dataclass, field

from . import dataset
from .dataset import num

SKIP_TYPES = {"end", "acpi_dump", "madt_more", "verdict", "exp_start", "plan", "samples",
              "sample_detail"}
TROUBLE = {"lost", "stale", "early", "gaps", "errors", "overruns", "retries", "hrtimer_rescued",
           "backward_steps", "backup_wakes", "lapic_errors", "lapic_spurious", "search_etime",
           "pic_spurious7", "pic_spurious15", "pic_unexpected", "out_of_order", "hangs",
           "storms", "not_reported", "rearm_retries"}
COUNTS = {"samples", "runs", "n", "ticks", "counted", "records", "reads", "iterations",
          "interrupts", "fired", "timers", "entries", "map_entries", "split_ticks",
          "split_samples", "windows", "rounds", "mono_reads", "jiffies_start", "jiffies_end",
          "jiffies", "attempts", "parts", "tables", "tables_ok", "tables_rejected",
          "jitter_intervals", "jitter_timers", "nohz_stops", "idle_skipped", "wraps",
          "events", "capacity", "reprograms", "expected_ticks", "smi_count", "smi_delta",
          "fire_check_attempts", "cpus_disabled", "unknown_entries", "short_entries", "dropped",
          "interval_ticks", "tick_interrupts", "jiffies_advanced"}


INTERNAL = {"mult", "shift", "max_ns", "wrap_ns", "bits", "rating", "vector", "gsi", "gsi_base",
            "apic_id", "initial_apic_id", "id", "madt_id", "version", "revision", "length",
            "capacity", "parts", "part", "k", "of", "jiffies_start", "jiffies_end",
            "hz_requested", "family", "model", "stepping", "numerator", "denominator",
            "hpet_number", "hw_rev", "min_tick", "page_protection", "address_space", "century",
            "sci_irq", "pm_tmr_len", "screen_cols", "screen_rows", "serial_baud", "fb_width",
            "fb_height", "fb_bpp", "max_lvt", "pins", "isa_irq", "entries", "smi_count",
            "accumulates", "limit_cyc", "chunk_ops", "iterations", "budget_ns", "comparators",
            "map_entries", "usable_bytes", "tables", "tables_ok", "cpus_disabled", "interval_ticks"}
INTERNAL_PREFIXES = ("vectors.",)


def kind_of(key):
    """'internal', 'trouble', 'count', or the unit: 'ns', 'cyc', 'ppb', 'ppm', 'pct', 'hz',
    'other'."""
    base = key.split(".")[-1]
    if base in INTERNAL or key.startswith(INTERNAL_PREFIXES):
        return "internal"
    if base in TROUBLE:
        return "trouble"
    if base in COUNTS or base.endswith("_count") or key.startswith("vectors."):
        return "count"
    for unit in ("ns", "cyc", "ppb", "ppm", "pct", "hz"):
        if base.endswith("_" + unit):
            return unit
    return "other"


@dataclass
class Value:
    """One compared value: section (record type or `result <exp>`), the row's name (all
    its identifying fields), the key, the value in each run (None: absent)."""
    section: str
    name: str
    key: str
    values: list
    kind: str = "other"
    resolution: list = field(default_factory=list)  # per run, in the key's unit, or None
    uncertainty: list = field(default_factory=list)  # per run, absolute, or None
    noise: float = 0.0
    scores: list = field(default_factory=list)       # per run against run 1 (None: n/a)
    status: str = "equal"                            # changed, noise, equal, absent

    @property
    def score(self):
        known = [s for s in self.scores if s is not None]
        return max(known) if known else 0.0


def flatten(rec, keys):
    """(key, number) pairs of a record, nested objects' numbers as `a.b` keys; lists are
    not compared value by value (their summary keys are)."""
    out = []
    for key, value in rec.items():
        if key in keys or key in ("type", "exp"):
            continue
        if isinstance(value, dict):
            for sub, inner in value.items():
                n = num(inner)
                if n is not None:
                    out.append(("%s.%s" % (key, sub), n))
            continue
        n = num(value)
        if n is not None:
            out.append((key, n))
    return out


def groups(data):
    """(section, group name for identity keys, [records]) of every comparable group."""
    out = [("result " + name, name, rows) for name, rows in data.results.items()]
    out += [(t, t, rows) for t, rows in data.by_type.items()
            if t not in SKIP_TYPES and t != "result"]
    return out


def resolution_of(data, rec, key, kind):
    """The value's resolution in its own unit, or None."""
    if kind == "ns":
        return dataset.clock_of(data, rec)[2] if rec.get("clock") else None
    if kind == "cyc" and (rec.get("clock") == "tsc" or key.endswith("tsc_cyc")
                          or rec.get("clock") is None):
        return num(dataset.clocksource(data, "tsc").get("resolution_cyc"))
    return None


def uncertainty_of(rec, key, value):
    ppb = num(rec.get("uncertainty_ppb"))
    if ppb is None:
        return None
    if key.endswith("_ppb"):
        return ppb
    if key.endswith("_hz"):
        return abs(value) * ppb * 1e-9
    return None


def collect(datas):
    """Every numeric value of every run, aligned by (section, row name, key)."""
    table = {}
    n = len(datas)
    for col, data in enumerate(datas):
        for section, group, rows in groups(data):
            for name, rec in zip(dataset.row_names(group, rows), rows):
                keys = set(dataset.identity_keys(group, rec))
                for key, value in flatten(rec, keys):
                    v = table.get((section, name, key))
                    if v is None:
                        v = table[(section, name, key)] = Value(
                            section, name, key, [None] * n, kind_of(key),
                            [None] * n, [None] * n)
                    v.values[col] = value
                    v.resolution[col] = resolution_of(data, rec, key, v.kind)
                    v.uncertainty[col] = uncertainty_of(rec, key, value)
    return list(table.values())


def setup_signature(data, capture):
    """What makes two runs repeats of one set-up."""
    c = capture or {}
    return (data.boot.get("cmdline"), data.one("cpu").get("brand"), data.boot.get("git"),
            c.get("accel"), c.get("icount_shift"), c.get("machine"), c.get("smp"),
            c.get("cpu_model"))


def spreads(values, signatures):
    """Per value and run: the range of the value over the runs sharing that run's set-up
    (0 when the set-up was run once)."""
    out = {}
    for v in values:
        per = []
        for sig in signatures:
            same = [v.values[j] for j, s in enumerate(signatures)
                    if s == sig and v.values[j] is not None]
            per.append(max(same) - min(same) if len(same) > 1 else 0)
        out[id(v)] = per
    return out


EXACT = "icount"
FLOOR_QUANTILE = 0.975


@dataclass
class Floor:
    """The noise floor of a comparison: `mode` words, `exact` (every run under icount),
    `distance` (the runs' own spread: d a value may move within noise; None in exact mode),
    `moved` (values that moved, the floor's sample)."""
    mode: str
    exact: bool
    distance: object = None
    moved: int = 0

    def words(self):
        if self.exact and self.mode.startswith("mode unknown"):
            return ("mode unknown in some run (no capture record): judged as exact mode, "
                    "every difference beyond a value's resolution is listed")
        if self.exact:
            return ("exact mode (icount) in every run: runs of one set-up repeat byte for "
                    "byte, so every difference beyond a value's resolution is listed")
        if self.distance is None:
            return "%s: no value moved, so no floor was needed" % self.mode
        return ("%s: timings move with the host, so the noise floor is these runs' own "
                "spread: of the %d values that moved, 97.5 %% moved by a factor of %.3g or "
                "less (%.3g on an asinh scale, which also spans a change of sign); a value is "
                "listed when it moved further: the outliers of these runs"
                % (self.mode, self.moved, math.exp(self.distance), self.distance))


MODE_WORDS = {"tcg": "plain emulation (TCG)", "kvm": "KVM", "hardware": "real hardware",
              "other-vm": "a virtual machine", None: "an unknown mode"}


def distance(v, a, b):
    scale = max(abs_noise(v, 0, 1), 1e-9)
    return abs(math.asinh(b / scale) - math.asinh(a / scale))


def floor_of(values, modes):
    """The comparison's Floor from the runs' modes (provenance.mode_of per run) and, outside
    exact mode, the spread of the experiments' values between the first two runs."""
    named = sorted({MODE_WORDS.get(m, str(m)) for m in modes if m != EXACT})
    if all(m == EXACT for m in modes):
        return Floor("exact mode (icount)", True)
    if all(m in (EXACT, None) for m in modes):  # no capture record: judged strictly
        return Floor("mode unknown (no capture record): judged as exact mode", True)
    mode = " and ".join(named) + (" with exact mode" if EXACT in modes else "")
    moved = []
    for v in values:
        if v.kind == "internal" or not v.section.startswith("result ") or \
                any(x is None for x in v.values[:2]) or v.values[0] == v.values[1]:
            continue
        moved.append(distance(v, v.values[0], v.values[1]))
    if not moved:
        return Floor(mode, False)
    moved.sort()
    return Floor(mode, False, moved[min(len(moved) - 1, int(FLOOR_QUANTILE * len(moved)))],
                 len(moved))


def judge(values, signatures, modes=None):
    """Set each value's noise, scores against run 1, and status; returns the Floor."""
    floor = floor_of(values, modes or [EXACT] * len(signatures))
    spread = spreads(values, signatures)
    for v in values:
        base = v.values[0]
        v.scores = [None] * len(v.values)
        if any(x is None for x in v.values):
            v.status = "absent"
            continue
        if all(x == base for x in v.values):
            v.status = "equal"
            continue
        if v.kind == "internal":
            v.status = "internal"
            continue
        for i, x in enumerate(v.values[1:], 1):
            apart = signatures[i] != signatures[0]
            noise = noise_of(v, 0, i, spread[id(v)] if apart else [0] * len(v.values),
                             floor.exact)
            diff = abs(x - base)
            score = math.inf if noise == 0 and diff else (diff / noise if noise else 0.0)
            if not floor.exact and floor.distance:
                own = distance(v, base, x) / floor.distance
                if own < score:  # within the runs' own spread: its noise is that spread
                    score = own
                    scale = max(abs_noise(v, 0, i), 1e-9)
                    noise = max(noise, abs(scale * math.sinh(
                        math.asinh(abs(base) / scale) + floor.distance)) - abs(base))
            v.scores[i] = score
            v.noise = max(v.noise, noise)
        v.status = "changed" if v.score > 1 else "noise"
    return floor


def last_digit(value):
    """The unit of the last digit a number was written with (as Python reads it back)."""
    if isinstance(value, int):
        return 1
    text = repr(float(value))
    if "e" in text or "." not in text:
        return 0
    return 10.0 ** -len(text.split(".")[1])


def abs_noise(v, a, b):
    """A value's own bounds: twice its resolution, its stated uncertainty, twice its last
    digit; 2 for a count."""
    if v.kind in ("count", "trouble"):
        return 2.0
    parts = [2 * r for r in (v.resolution[a], v.resolution[b]) if r]
    parts += [u for u in (v.uncertainty[a], v.uncertainty[b]) if u]
    parts += [2 * last_digit(v.values[a]), 2 * last_digit(v.values[b])]
    return max(parts)


def noise_of(v, a, b, spread, exact=True):
    """The noise bound of run b against run a: a count of trouble has none in exact mode."""
    if v.kind == "trouble" and exact:
        return 0.0
    return max([abs_noise(v, a, b), spread[a], spread[b]])


def magnitude(v):
    """The size of the largest change against the smaller of the two values plus the
    noise, on a log scale: ln(1 + |b - a| / (min(|a|, |b|) + noise)). A 455-fold step
    scores about 6, a sign flip of equal size about 1, a 15 ppm drift about 0."""
    base = v.values[0]
    out = 0.0
    floor = max(v.noise, 1.0 if v.kind == "trouble" else 0.0)
    for x in v.values[1:]:
        if x is None or base is None or x == base:
            continue
        scale = min(abs(x), abs(base)) + floor
        out = max(out, math.log1p(abs(x - base) / scale) if scale else math.inf)
    return out


def delta(v, i):
    """The difference of run i from run 1 as a number, or None where one is absent."""
    a, b = v.values[0], v.values[i]
    return None if a is None or b is None else b - a


def ratio(v, i):
    """Run i's value over run 1's, or None (absent, or run 1's is 0)."""
    a, b = v.values[0], v.values[i]
    return None if a is None or b is None or a == 0 else b / a


def number_text(x, signed=False):
    """A delta or ratio as a number a spreadsheet reads: integers whole, the rest %.6g
    (`signed`: with its sign, as a difference is read on a terminal)."""
    if x is None:
        return ""
    if float(x).is_integer() and abs(x) < 1e15:
        return ("%+d" if signed else "%d") % x
    return ("%+.6g" if signed else "%.6g") % x


def delta_text(v, i):
    """The difference of run i from run 1, as text: counts as counts, measures with %."""
    a, b = v.values[0], v.values[i]
    if a is None or b is None:
        return ""
    diff = b - a
    text = "%+d" % diff if float(diff).is_integer() and abs(diff) < 1e15 else "%+.4g" % diff
    if v.kind in ("trouble", "count") or a == 0 or diff == 0:
        return text
    rel = diff / abs(a)
    return "%s (%s)" % (text, "x%.3g" % (b / a) if abs(rel) >= 10 and a and b / a > 0
                        else "%+.2f%%" % (100 * rel) if abs(rel) >= 1e-4
                        else "%+.3g ppm" % (rel * 1e6))


def row_presence(values, n):
    """{(section, row name): [present in run k]}: a row is present in a run when any of
    its values is (a key only one kernel sends does not make the row absent)."""
    out = {}
    for v in values:
        have = out.setdefault((v.section, v.name), [False] * n)
        for k, x in enumerate(v.values):
            if x is not None:
                have[k] = True
    return out


def ranked(values):
    """Changed values first, the largest (magnitude) first, experiments' results before
    inventory at equal size; then the rest in their order."""
    changed = sorted((v for v in values if v.status == "changed"),
                     key=lambda v: (-round(magnitude(v), 2),
                                    not v.section.startswith("result "), v.section, v.name,
                                    v.key))
    return changed + [v for v in values if v.status != "changed"]
