"""A result row's values as the host reads them, below every module that knows the
experiments: numbers that may arrive as JSON numbers or as decimal strings, a value as one
table cell, the rows that carry figures, and the clock a row's figures were measured by.

Nothing here raises on odd records: a key that is missing or not a number reads as None.
"""

import json
import math

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
    # the row's own resolution_ns: the p99 of the half widths of the clock readings that
    # bracket each sample's instant, where a latency experiment measures it
    own_from = "the record's own: p99 of the samples' bracketing half-widths"
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
