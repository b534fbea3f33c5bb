"""The report's files other tools read: the records as JSON Lines and CSV, one summary
JSON per run (shaped like `cyclictest --json`), and the latency experiment's histograms (the
one whose rows are latency series; its name is passed in) as a long CSV and in the text
shape of rt-tests' `cyclictest -h`.

Every file name that comes from a record (a type, an experiment) goes through names.Stems,
so no record can overwrite another's file or a file the tool writes itself.
"""

import csv
import json
import os

from . import dataset, tabular
from .dataset import num
from .names import Stems
from .figdata import parse_hist

RESERVED = ("records",)


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def write_rows(path, header, rows):
    """A CSV of dict rows under `header` (a missing key: an empty cell)."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for row in rows:
            w.writerow([row.get(h, "") for h in header])


def write_csv(path, rows, group=None, result=False):
    """rows as one flat CSV (tabular.py): `capture_line`, then every column the rows have
    in order of first appearance, one scalar per cell. Returns {key: (columns, rows)} of
    the side tables their lists and histograms make."""
    flats = [tabular.flatten(r, dataset.identity_keys(group or r.type, r), result)
             for r in rows]
    header = ["capture_line"] + list(dict.fromkeys(c for f in flats for c in f.cells))
    write_rows(path, header, [dict(f.cells, capture_line=r.line) for r, f in zip(rows, flats)])
    sides = {}
    for f in flats:
        for key, (cols, srows) in f.sides.items():
            have = sides.setdefault(key, ([], []))
            have[0].extend(c for c in cols if c not in have[0])
            have[1].extend(srows)
    return sides


def write_group(ddir, stems, name, key, rows, group, result):
    """One record group's JSONL and CSV (and the side tables of its lists); a result
    group's skip rows go to a CSV of their own. Returns the paths written."""
    stem = stems(name, key)
    write_jsonl(os.path.join(ddir, stem + ".jsonl"), rows)
    written = ["data/%s.jsonl" % stem]
    measured = [r for r in rows if not (result and r.get("status") == "skip")]
    skipped = [r for r in rows if result and r.get("status") == "skip"]
    sides = write_csv(os.path.join(ddir, stem + ".csv"), measured, group, result)
    written.append("data/%s.csv" % stem)
    if skipped:
        sstem = stems(name + "-skipped", key + ("skipped",))
        write_csv(os.path.join(ddir, sstem + ".csv"), skipped, group, result)
        written.append("data/%s.csv" % sstem)
    for side, (cols, srows) in sides.items():
        sstem = stems("%s-%s" % (name, side), key + (side,))
        write_rows(os.path.join(ddir, sstem + ".csv"), cols, srows)
        written.append("data/%s.csv" % sstem)
    return stem, written


def write_data(data, outdir):
    """data/records.jsonl, and per experiment and per record type a JSONL file (the
    records as sent) and a flat CSV (skip rows apart, lists in side tables).
    Returns (the written paths relative to outdir, {experiment name: its file stem})."""
    ddir = os.path.join(outdir, "data")
    os.makedirs(ddir, exist_ok=True)
    stems = Stems(RESERVED)
    written = ["data/records.jsonl"]
    write_jsonl(os.path.join(ddir, "records.jsonl"), data.run.records)
    by_exp = {}
    for name, rows in data.results.items():
        stem, files = write_group(ddir, stems, "result-" + name, ("exp", name), rows, name,
                                  True)
        by_exp[name] = stem
        written += files
    for t, rows in data.by_type.items():
        if t != "result":
            written += write_group(ddir, stems, t, ("type", t), rows, t, False)[1]
    return written, by_exp


RESULTS_FIXED = ["run", "exp", "row"]
RESULTS_TAIL = ["quantity", "index", "unit", "value"]


def write_results(data, outdir):
    """results.csv: every measured number of every result row, one per row: the run, the
    experiment, the row's name and its identifying keys, the quantity (the CSV column's
    name, unit included), the index of a list's element, the unit, the value. Skip rows are
    not in it (data/result-<exp>-skipped.csv). Returns the name."""
    out, ident_cols = [], []
    for exp, rows in data.results.items():
        measured = [r for r in rows if r.get("status") != "skip"]
        for name, rec in zip(dataset.row_names(exp, measured), measured):
            ident = dataset.identity_keys(exp, rec)
            ident_cols.extend(k for k in ident if k not in ident_cols)
            flat = tabular.flatten(rec, ident, True)
            base = {"run": data.label, "exp": exp, "row": name}
            base.update({k: dataset.cell(rec.get(k)) for k in ident})
            for column, index, value in flat.numbers:
                if column in ident or column in tabular.IDS:
                    continue
                out.append(dict(base, quantity=column, index="" if index is None else index,
                                unit=tabular.unit_of(column), value=dataset.cell(value)))
    write_rows(os.path.join(outdir, "results.csv"),
               RESULTS_FIXED + ident_cols + RESULTS_TAIL, out)
    return "results.csv"


def write_summary(summary, outdir):
    with open(os.path.join(outdir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return "summary.json"


def latency_series(data, exp):
    """(row, Hist) for every measured row of experiment `exp` with a histogram."""
    out = []
    for row in data.results.get(exp, []):
        if row.get("status") == "skip":
            continue
        hist = parse_hist(row.get("hist"))
        if hist is not None:
            out.append((row, hist))
    return out


def buckets(hist):
    """(lo_ns, hi_ns or None for the open last bucket, count), counts outside included."""
    out = []
    if hist.below:
        out.append((None, hist.edges[0], hist.below))
    for i, count in enumerate(hist.counts):
        last_open = hist.open_last and i == len(hist.counts) - 1
        out.append((hist.edges[i], None if last_open else hist.edges[i + 1], count))
    if hist.above:
        out.append((hist.edges[-1], None, hist.above))
    return out


def write_histogram_csv(data, outdir, exp):
    """histograms.csv: device,path,wait,lo_ns,hi_ns,count (hi_ns empty: no upper bound;
    lo_ns empty: everything below hi_ns); a variant column when a row has one."""
    series = latency_series(data, exp)
    variant = any("variant" in row for row, _ in series)
    with open(os.path.join(outdir, "histograms.csv"), "w", encoding="utf-8",
              newline="") as f:
        w = csv.writer(f)
        w.writerow(["device", "path", "wait", "lo_ns", "hi_ns", "count"]
                   + (["variant"] if variant else []))
        for row, hist in series:
            for lo, hi, count in buckets(hist):
                w.writerow([dataset.cell(row.get("device")), dataset.cell(row.get("path")),
                            dataset.cell(row.get("wait")), dataset.cell(lo), dataset.cell(hi),
                            dataset.cell(count)]
                           + ([dataset.cell(row.get("variant"))] if variant else []))
    return "histograms.csv"


def write_histogram_text(data, outdir, exp, clock_words=""):
    """histograms.txt in the shape of `cyclictest -h`: one row per bucket (its lower edge,
    then one count per series, tab-separated), then the # Total / # Min Latencies /
    # Avg Latencies / # Max Latencies / # Histogram Overflows lines, one column per series.
    In ns, where cyclictest writes us."""
    series = latency_series(data, exp)
    path = os.path.join(outdir, "histograms.txt")
    names = ["%s/%s/%s" % (r.get("device"), r.get("path"), r.get("wait")) for r, _ in series]
    # rows: the closed buckets; the open last bucket (and any count above the range) is
    # cyclictest's "overflow", counts below the range are reported on their own line
    table = [{lo: count for lo, hi, count in buckets(h) if lo is not None and hi is not None}
             for _, h in series]
    edges = sorted({lo for t in table for lo in t})
    lines = ["# ticklab %s histograms, in the shape of rt-tests' cyclictest -h" % exp,
             "# latency unit: ns (cyclictest writes us); a row: a bucket's lower edge, then "
             "one count per series",
             "# series: " + "  ".join("%d=%s" % (i, n) for i, n in enumerate(names, 1))]
    if clock_words:
        lines.append("# " + clock_words)
    if len({tuple(h.edges) for _, h in series}) > 1:
        lines.append("# note: the series' buckets differ; each row holds the buckets that "
                     "start at its edge")
    lines.append("# Histogram")
    for edge in edges:
        lines.append("%06d" % edge + "".join("\t%06d" % t.get(edge, 0) for t in table))

    def row(label, key, width):
        vals = [num(r.get(key)) for r, _ in series]
        return "# %s:" % label + "".join(" %0*d" % (width, v) if v is not None else " -"
                                          for v in vals)
    total = [sum(c for _, _, c in buckets(h)) for _, h in series]
    lines.append("# Total:" + "".join(" %09d" % t for t in total))
    lines.append(row("Min Latencies", "min_ns", 5))
    lines.append(row("Avg Latencies", "mean_ns", 5))
    lines.append(row("Max Latencies", "max_ns", 5))
    overflow = [sum(c for lo, hi, c in buckets(h) if hi is None) for _, h in series]
    lines.append("# Histogram Overflows:" + "".join(" %05d" % o for o in overflow))
    below = [h.below for _, h in series]
    if any(below):
        lines.append("# Below the histogram:" + "".join(" %05d" % b for b in below))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return "histograms.txt"


# --- the raw samples (samples.py) ----------------------------------------------------------

SAMPLE_COLUMNS = ["run", "exp", "device", "path", "wait", "seq", "latency_ns", "clock"]


def sample_series(data):
    """Every series of raw samples with values, in the order of its result rows."""
    from . import samples
    series = samples.collect(data)
    rows = [samples.key_of(r) for rs in data.results.values() for r in rs]
    order = {key: i for i, key in enumerate(rows) if key is not None}
    return sorted((s for s in series.values() if s.values),
                  key=lambda s: order.get(s.key, len(order)))


def write_samples_csv(data, outdir):
    """samples.csv: one row per sample (run, exp, device, path, wait, seq, latency_ns,
    clock), or nothing when the kernel sent none. Returns the name written or None."""
    series = sample_series(data)
    if not series:
        return None
    with open(os.path.join(outdir, "samples.csv"), "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(SAMPLE_COLUMNS)
        for s in series:
            for seq, value in s.ordered():
                w.writerow([data.label, s.exp, s.device, s.path, dataset.cell(s.wait), seq,
                            value, dataset.cell(s.clock)])
    return "samples.csv"


CYCLICTEST_BINS = 1000   # as `cyclictest -h 1000`: the bins 0..999, the rest overflows
CYCLICTEST_OUTLIERS = 100  # overflow sequence numbers listed per series, as cyclictest


def write_cyclictest_histogram(data, outdir, unit, exp):
    """latency-hist-us.txt (unit "us") or latency-hist-ns.txt ("ns"): the raw samples in
    the layout `cyclictest -h N` prints, so tools that read it read these: `# Histogram`,
    a row per bin from 0 to N-1 (`%06d` bin, then one `%06d` count per series,
    tab-separated; N the bins up to the worst, at most CYCLICTEST_BINS), `# Total:`
    (binned samples), `# Min/Avg/Max Latencies:`, `# Histogram Overflows:` and the seq of
    each overflow under `# Histogram Overflow at cycle number:` / `# Thread k:`, one
    "thread" per series. Then `#` lines naming the series (after cyclictest's own lines, so
    a reader that wants `# Histogram` first finds it). Returns the name or None."""
    series = sample_series(data)
    if not series:
        return None
    scale = 1000 if unit == "us" else 1
    binned = [[v // scale if v >= 0 else 0 for _, v in s.ordered()] for s in series]
    top = max(max(b) for b in binned)
    nbins = min(top + 1, CYCLICTEST_BINS)
    counts = [[0] * nbins for _ in series]
    overflows = [[] for _ in series]
    for k, (s, b) in enumerate(zip(series, binned)):
        for (seq, _), v in zip(s.ordered(), b):
            if v < nbins:
                counts[k][v] += 1
            else:
                overflows[k].append(seq)
    lines = ["# Histogram"]
    for i in range(nbins):
        lines.append("%06d " % i + "\t".join("%06d" % c[i] for c in counts))
    lines.append("# Total:" + "".join(" %09d" % sum(c) for c in counts))
    lines.append("# Min Latencies:" + "".join(" %05d" % min(b) for b in binned))
    lines.append("# Avg Latencies:" + "".join(" %05d" % (sum(b) // len(b)) for b in binned))
    lines.append("# Max Latencies:" + "".join(" %05d" % max(b) for b in binned))
    lines.append("# Histogram Overflows:" + "".join(" %05d" % len(o) for o in overflows))
    lines.append("# Histogram Overflow at cycle number:")
    for k, o in enumerate(overflows):
        shown = "".join(" %05d" % seq for seq in o[:CYCLICTEST_OUTLIERS])
        more = " # %05d others" % (len(o) - CYCLICTEST_OUTLIERS) \
            if len(o) > CYCLICTEST_OUTLIERS else ""
        lines.append("# Thread %d:%s%s" % (k, shown, more))
    lines.append("")
    lines.append("# ticklab: the kernel's raw %s samples in the layout of rt-tests' "
                 "cyclictest -h; one bin = 1 %s (latency_ns // %d)" % (exp, unit, scale))
    lines.append("# ticklab: a sample below 0 ns (none on a sound machine) is counted in bin 0"
                 "; a cycle number is the sample's seq")
    for k, s in enumerate(series):
        lines.append("# ticklab: thread %d = %s %s %s wait %s, clock %s, %d samples" % (
            k, s.exp, s.device, s.path, dataset.cell(s.wait), dataset.cell(s.clock),
            len(s.values)))
    name = "latency-hist-%s.txt" % unit
    with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return name
