"""The raw samples the kernel sends beside a result row (`samples` records), decoded and
checked, and what it knows about the worst of them (`sample_detail` records); both are
specified in docs/report-format.md.

A series is one result row's samples: (exp, device, path, wait), the values in the order
the wake-ups happened, numbered by `seq` from 0. The same seq in a direct series' `irq` and
`event` rows (an hrtimer series' `hrtimer_irq` and `callback`) is the same wake-up, so its
time splits into deadline -> interrupt entry and entry -> handler.

Nothing here raises on a bad record: a record that does not decode, overlaps another or
leaves a hole is listed in its series' `problems`, and the series is not `complete`. The
report then says so and draws from what is there (or from the kernel's buckets when a
series has no sample at all).
"""

from dataclasses import dataclass, field

from .values import num

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
DIGIT = {c: i for i, c in enumerate(ALPHABET)}
MORE = 32           # a character at index 32 + d: digit d, and more digits follow
MAX_DIGITS = 13     # 65 bits: no value the kernel sends needs more
PATH_PAIRS = (("irq", "event"), ("hrtimer_irq", "callback"))  # (entry, handler) of a series
KEYS = ("exp", "device", "path", "wait")


def decode_vlq(text):
    """The offsets a `vlq` string holds (docs/report-format.md, `samples`): base-32 digits,
    least significant first, a character per digit; ValueError for anything else."""
    if not isinstance(text, str):
        raise ValueError("vlq is not a string")
    out, value, shift, digits = [], 0, 0, 0
    for ch in text:
        d = DIGIT.get(ch)
        if d is None:
            raise ValueError("character %r is not in the alphabet" % ch)
        digits += 1
        if digits > MAX_DIGITS:
            raise ValueError("a value longer than %d digits" % MAX_DIGITS)
        value |= (d & 31) << shift
        if d & MORE:
            shift += 5
            continue
        out.append(value)
        value, shift, digits = 0, 0, 0
    if digits:
        raise ValueError("the last value is cut off (its last character says more follow)")
    return out


def values_of(rec):
    """A samples record's values, or raises ValueError saying why they cannot be read.
    `base_ns` + `vlq` is the kernel's form; a plain `latency_ns` list is read too."""
    count = num(rec.get("count"))
    if "vlq" in rec:
        base = rec.get("base_ns")
        if isinstance(base, bool) or not isinstance(base, int):
            raise ValueError("base_ns is not an integer")
        vals = [base + v for v in decode_vlq(rec.get("vlq"))]
    elif isinstance(rec.get("latency_ns"), list):
        vals = rec["latency_ns"]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            raise ValueError("latency_ns holds something other than integers")
    else:
        raise ValueError("neither vlq nor latency_ns")
    if count is not None and count != len(vals):
        raise ValueError("count says %s, the values are %d" % (rec.get("count"), len(vals)))
    return vals


@dataclass
class Series:
    """One row's raw samples. `values[seq]`; `expected`: the series' sample count (the
    records' series_samples); `lines`: the capture lines of its records."""
    exp: str
    device: str
    path: str
    wait: object
    clock: object = None
    expected: object = None
    values: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    lines: list = field(default_factory=list)
    details: list = field(default_factory=list)

    @property
    def key(self):
        return (self.exp, self.device, self.path, self.wait)

    @property
    def complete(self):
        n = self.expected if self.expected is not None else len(self.values)
        return not self.problems and len(self.values) == n and \
            all(s in self.values for s in range(n))

    def ordered(self):
        """(seq, value) by seq."""
        return sorted(self.values.items())

    def sorted_values(self):
        return sorted(self.values.values())

    def percentile(self, per_mille):
        """The kernel's definition (lib/stats.c): the smallest value with at least
        n * p / 1000 of the samples at or below it (nearest rank)."""
        vals = self.sorted_values()
        if not vals:
            return None
        k = (len(vals) * per_mille + 999) // 1000
        return vals[max(k, 1) - 1]

    def worst(self, k=5):
        """The k largest samples, [(seq, value)], largest first (the earlier seq first on a
        tie)."""
        return sorted(self.values.items(), key=lambda sv: (-sv[1], sv[0]))[:k]


def _add(series, rec):
    first = rec.get("first_seq")
    if isinstance(first, bool) or not isinstance(first, int) or first < 0:
        series.problems.append("line %d: first_seq is not a sequence number" % rec.line)
        return
    try:
        vals = values_of(rec)
    except ValueError as e:
        series.problems.append("line %d: %s" % (rec.line, e))
        return
    twice = [first + i for i in range(len(vals)) if first + i in series.values]
    if twice:
        series.problems.append("line %d: seq %d sent twice" % (rec.line, twice[0]))
    for i, v in enumerate(vals):
        series.values.setdefault(first + i, v)
    series.lines.append(rec.line)


def key_of(rec):
    """(exp, device, path, wait) of a record, or None when it names no series: exp, device
    and path must be strings, wait a string, a number or absent (a list or an object from a
    damaged or hand-made log names nothing)."""
    key = tuple(rec.get(k) for k in KEYS)
    if not all(isinstance(k, str) for k in key[:3]):
        return None
    if not isinstance(key[3], (str, int, float, type(None))):
        return None
    return key


def collect(data):
    """{(exp, device, path, wait): Series} for every `samples` record of the run (cached
    on the RunData)."""
    if "samples" in data.cache:
        return data.cache["samples"]
    out = {}
    for rec in data.by_type.get("samples", []):
        key = key_of(rec)
        if key is None:
            continue  # names no row: shown with the other records, not as samples
        series = out.get(key)
        if series is None:
            series = out[key] = Series(*key, clock=rec.get("clock"))
        total = num(rec.get("series_samples"))
        if total is not None:
            if series.expected not in (None, total):
                series.problems.append("line %d: series_samples %s, an earlier record said "
                                       "%s" % (rec.line, rec.get("series_samples"),
                                               series.expected))
            series.expected = int(total)
        _add(series, rec)
    for rec in data.by_type.get("sample_detail", []):
        key = key_of(rec)
        series = out.get(key) if key is not None else None
        if series is not None:
            series.details.append(rec)
    for series in out.values():
        n = series.expected if series.expected is not None else len(series.values)
        missing = n - sum(1 for s in series.values if 0 <= s < n)
        if missing > 0:
            series.problems.append("%d of %d samples did not arrive" % (missing, n))
        beyond = [s for s in series.values if s >= n]
        if beyond:
            series.problems.append("seq %d is beyond the series' %d samples" % (beyond[0], n))
    data.cache["samples"] = out
    return out


# The fewest samples a p99.9 is computed from: below, its nearest rank is the series' max or
# next to it (the kernel writes no p999_ns then; an older kernel's is not shown).
P999_MIN_SAMPLES = 1000


def p999_computable(n):
    """Whether a series of n samples has a p99.9 (an unknown count: not)."""
    return n is not None and n >= P999_MIN_SAMPLES


def for_row(data, row):
    """The Series of a result row, or None."""
    key = key_of(row)
    return collect(data).get(key) if key is not None else None


def disagreements(series, row):
    """Where the row's own figures differ from its samples: ["p99_ns 1234 (samples
    1240)", ...]; the sample count too."""
    out = []
    n = num(row.get("samples"))
    if n is not None and n != len(series.values):
        out.append("samples %s (%d arrived)" % (row.get("samples"), len(series.values)))
    if not series.values:
        return out
    vals = series.sorted_values()
    mine = {"min_ns": vals[0], "max_ns": vals[-1], "p50_ns": series.percentile(500),
            "p99_ns": series.percentile(990), "p999_ns": series.percentile(999)}
    for key, value in mine.items():
        theirs = num(row.get(key))
        if theirs is not None and theirs != value:
            out.append("%s %s (samples %d)" % (key, row.get(key), value))
    return out


@dataclass
class WakeUp:
    """One wake-up of a series with both its stamps: where its time went."""
    device: str
    wait: object
    kind: str            # "direct" or "hrtimer"
    seq: int
    n: int               # samples in the series
    total_ns: int        # deadline -> handler (event or callback path)
    entry_ns: object     # deadline -> interrupt entry (irq or hrtimer_irq path), or None
    neighbours_ns: object  # median of the 10 wake-ups around it
    detail: dict         # the kernel's sample_detail for it (handler path first), or {}


def worst_wakeups(data, exp, k=5):
    """[[WakeUp] largest first] per series of experiment `exp` (device, wait,
    direct/hrtimer) whose handler path has samples."""
    series = collect(data)
    out = []
    for entry_path, handler_path in PATH_PAIRS:
        kind = "direct" if entry_path == "irq" else "hrtimer"
        for key, handler in series.items():
            if key[0] != exp or key[2] != handler_path or not handler.values:
                continue
            entry = series.get((key[0], key[1], entry_path, key[3]))
            details = {d.get("seq"): d for d in handler.details}
            if entry is not None:
                for d in entry.details:
                    details.setdefault(d.get("seq"), d)
            ordered = handler.ordered()
            index = {seq: i for i, (seq, _) in enumerate(ordered)}
            got = []
            for seq, value in handler.worst(k):
                i = index[seq]
                around = sorted(v for _, v in ordered[max(0, i - 5):i] + ordered[i + 1:i + 6])
                got.append(WakeUp(key[1], key[3], kind, seq, len(ordered), value,
                                  entry.values.get(seq) if entry else None,
                                  around[len(around) // 2] if around else None,
                                  dict(details.get(seq, {}))))
            out.append(got)
    return out
