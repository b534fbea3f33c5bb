"""Synthetic `samples` and `sample_detail` records shaped exactly as docs/report-format.md
specifies them, for the host tool's samples path until the kernel sends them.

The encoder here is written from the spec, apart from tools/ticklablib/samples.py's
decoder, so the tests check the reader against the contract rather than against itself.
The result rows are computed from the samples as the kernel computes them (nearest-rank
percentiles, lib/stats.c; the log2 buckets 0, 16, 32 ... 2^24 ns, lib/hist.c).
"""
import json
import random

from streams import record

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
RECORD_LIMIT = 2048  # bytes of JSON in one record (docs/report-format.md)


def vlq(values, base):
    """Each value - base as base-32 digits, least significant first; a digit d is the
    character ALPHABET[d] when it is the value's last, ALPHABET[32 + d] when more follow."""
    out = []
    for v in values:
        u = v - base
        assert u >= 0
        while u >= 32:
            out.append(ALPHABET[32 + (u & 31)])
            u >>= 5
        out.append(ALPHABET[u])
    return "".join(out)


def samples_records(exp, device, path, wait, values, clock="time_ns"):
    """The records for one row's samples, each as full as the 2048-byte limit allows."""
    out, seq = [], 0
    while seq < len(values) or not out:
        n = len(values) - seq
        while True:
            chunk = values[seq:seq + n]
            rec = {"type": "samples", "exp": exp, "device": device, "path": path,
                   "wait": wait, "clock": clock, "series_samples": len(values),
                   "first_seq": seq, "count": len(chunk),
                   "base_ns": min(chunk) if chunk else 0, "vlq": vlq(chunk, min(chunk)
                                                                   if chunk else 0)}
            if len(json.dumps(rec, separators=(",", ":"))) <= RECORD_LIMIT or n == 1:
                break
            n = n * 3 // 4
        out.append(rec)
        seq += n
        if not values:
            break
    return out


def rank(sorted_vals, per_mille):
    k = (len(sorted_vals) * per_mille + 999) // 1000
    return sorted_vals[max(k, 1) - 1]


def row_of(exp, device, path, wait, values):
    """The result row the kernel writes for these samples."""
    v = sorted(values)
    edges = [0] + [16 << k for k in range(21)]
    counts = [0] * 22
    for x in values:
        counts[max(i for i, e in enumerate(edges) if e <= max(x, 0))] += 1
    mean = round(sum(values) / len(values)) if values else 0
    row = {"type": "result", "exp": exp, "device": device, "path": path, "wait": wait,
           "clock": "time_ns", "samples": len(values), "early": 0, "stale": 1, "lost": 0,
           "resolution_ns": 9, "min_ns": v[0], "p50_ns": rank(v, 500),
           "p99_ns": rank(v, 990), "p999_ns": rank(v, 999), "max_ns": v[-1],
           "mean_ns": mean, "hist": {"edges_ns": edges, "counts": counts}}
    if len(values) < 1000:  # as the kernel: no p99.9 from fewer samples
        del row["p999_ns"]
    return row


def series_values(rng, n, base, spread, spikes):
    """Entry and handler values of n wake-ups: a log-normal body and a few spikes."""
    entry = [int(base * rng.lognormvariate(0, spread)) for _ in range(n)]
    for i in rng.sample(range(n), spikes):
        entry[i] += int(base * rng.uniform(20, 200))
    handler = [e + int(rng.uniform(80, 140)) for e in entry]
    return entry, handler


def detail(exp, device, path, wait, seq, value, rank_no):
    return {"type": "sample_detail", "exp": exp, "device": device, "path": path,
            "wait": wait, "clock": "time_ns", "seq": seq, "rank": rank_no,
            "latency_ns": value, "delay_ns": 150000 + 1000 * seq, "at_ns": 200000 * seq,
            "try": seq + 1, "stale": 1 if rank_no == 1 else 0, "lost_before": 0,
            "rescued": 0, "half_width_ns": 9, "max_gap_ns": value - 500 if rank_no == 1
            else 0}


def wakeup_records(n=500, seed=7, devices=(("lapic", 180, 0.05), ("hpet", 900, 0.4)),
                   details=True):
    """wakeup-latency's records with samples: per device, poll then hlt, the direct
    series (irq, event) and the hrtimer one (hrtimer_irq, callback): rows, samples, and
    the sample_detail of each row's three worst."""
    rng = random.Random(seed)
    exp = "wakeup-latency"
    out = []
    for wait in ("poll", "hlt"):
        for device, base, spread in devices:
            for paths in (("irq", "event"), ("hrtimer_irq", "callback")):
                pair = series_values(rng, n, base, spread, spikes=3)
                for path, values in zip(paths, pair):
                    out.append(row_of(exp, device, path, wait, values))
                    out += samples_records(exp, device, path, wait, values)
                    if details:
                        worst = sorted(range(n), key=lambda i: (-values[i], i))[:3]
                        out += [detail(exp, device, path, wait, i, values[i], r)
                                for r, i in enumerate(worst, 1)]
    return out


def run_with_samples(n=500, **kw):
    """A whole run holding wakeup-latency with samples (and little else)."""
    recs = [{"type": "boot", "version": "0.1.0", "git": "abc1234", "boot": "multiboot1",
             "firmware": "bios", "loader": "qemu", "cmdline": "exp=wakeup-latency",
             "qemu": True, "profile": "quick", "hz": 1000},
            {"type": "clocksource", "name": "hpet", "present": True, "usable": True,
             "rating": 250, "resolution_ns": 10},
            {"type": "clocksource_selected", "name": "hpet", "requested": None},
            {"type": "plan", "profile": "quick", "clock": "tsc",
             "experiments": [{"exp": "wakeup-latency", "budget_ns": 60000000000}]},
            {"type": "exp_start", "exp": "wakeup-latency", "summary": "wake-ups",
             "profile": "quick", "budget_ns": 60000000000, "clock": "tsc", "k": 1, "of": 1}]
    recs += wakeup_records(n, **kw)
    recs += [{"type": "exp_end", "exp": "wakeup-latency", "clock": "tsc",
              "duration_ns": 900000000, "budget_ns": 60000000000, "over_budget": False,
              "hrtimer_rescued": 0}]
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    return recs


def run_bytes_with_samples(**kw):
    return b"".join(record(r) + b"\n" for r in run_with_samples(**kw))


def from_buckets(rng, row):
    """Values shaped like a row's kernel buckets, inside its min and max."""
    from ticklablib.figdata import parse_hist
    hist = parse_hist(row.get("hist"))
    lo, hi = row["min_ns"], row["max_ns"]
    out = []
    for k, count in enumerate(hist.counts):
        a, b = max(hist.edges[k], lo), min(hist.edges[k + 1] - 1, hi)
        out += [rng.randint(min(a, b), max(a, b)) for _ in range(int(count))]
    out = out[:row["samples"]] + [lo] * max(0, row["samples"] - len(out))
    out[0], out[-1] = lo, hi
    rng.shuffle(out)
    return out


def with_samples(recs, seed=1):
    """A real run's records with samples records added for every measured wakeup-latency
    row, drawn from its buckets (the entry and handler rows of a series share their
    wake-ups), each row's figures recomputed from them as the kernel would, the end count
    kept right. For looking at the samples path on a real run's shape."""
    rng = random.Random(seed)
    out, entry = [], {}
    for rec in recs:
        if rec.get("type") == "end":
            rec = dict(rec, records=len(out))
        if rec.get("type") != "result" or rec.get("exp") != "wakeup-latency" \
                or rec.get("status") == "skip" or not rec.get("samples"):
            out.append(rec)
            continue
        key = (rec["device"], rec["wait"])
        if rec["path"] in ("irq", "hrtimer_irq"):
            values = from_buckets(rng, rec)
            entry[key] = values
        else:
            base = entry.get(key) or from_buckets(rng, rec)
            shift = max(0, rec["p50_ns"] - sorted(base)[len(base) // 2])
            values = [v + shift + rng.randint(0, 20) for v in base]
        row = dict(rec)
        row.update({k: v for k, v in row_of(rec["exp"], rec["device"], rec["path"],
                                            rec["wait"], values).items()
                    if k in ("min_ns", "p50_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns",
                             "hist", "samples")})
        out.append(row)
        out += samples_records(rec["exp"], rec["device"], rec["path"], rec["wait"], values)
    return out
