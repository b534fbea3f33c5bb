"""The report's files other tools read: the records as JSON Lines and CSV, one summary
JSON per run (shaped like `cyclictest --json`), and the wakeup-latency histograms as a long
CSV and in the text shape of rt-tests' `cyclictest -h`.

Every file name that comes from a record (a type, an experiment) goes through names.Stems,
so no record can overwrite another's file or a file the tool writes itself.
"""

import csv
import json
import os

from . import dataset
from .dataset import num
from .names import Stems
from .figdata import parse_hist

RESERVED = ("records",)


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def write_csv(path, rows):
    """CSV with a `capture_line` column, then the union of the rows' keys; lists and
    objects as compact JSON, booleans as true/false, absent keys empty."""
    keys = dataset.columns(rows)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["capture_line"] + keys)
        for row in rows:
            w.writerow([row.line] + [dataset.cell(row.get(k)) for k in keys])


def write_data(data, outdir):
    """data/records.jsonl and one JSONL + CSV pair per experiment and per record type.
    Returns the written paths relative to outdir."""
    ddir = os.path.join(outdir, "data")
    os.makedirs(ddir, exist_ok=True)
    stems = Stems(RESERVED)
    written = ["data/records.jsonl"]
    write_jsonl(os.path.join(ddir, "records.jsonl"), data.run.records)
    groups = [("result-" + name, ("exp", name), rows) for name, rows in data.results.items()]
    groups += [(t, ("type", t), rows) for t, rows in data.by_type.items() if t != "result"]
    for name, key, rows in groups:
        stem = stems(name, key)
        write_jsonl(os.path.join(ddir, stem + ".jsonl"), rows)
        write_csv(os.path.join(ddir, stem + ".csv"), rows)
        written += ["data/%s.jsonl" % stem, "data/%s.csv" % stem]
    return written


def write_summary(summary, outdir):
    with open(os.path.join(outdir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return "summary.json"


def latency_series(data):
    """(row, Hist) for every measured wakeup-latency row with a histogram."""
    out = []
    for row in data.results.get("wakeup-latency", []):
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


def write_histogram_csv(data, outdir):
    """histograms.csv: device,path,wait,lo_ns,hi_ns,count (hi_ns empty: no upper bound;
    lo_ns empty: everything below hi_ns); a variant column when a row has one."""
    series = latency_series(data)
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


def write_histogram_text(data, outdir, clock_words=""):
    """histograms.txt in the shape of `cyclictest -h`: one row per bucket (its lower edge,
    then one count per series, tab-separated), then the # Total / # Min Latencies /
    # Avg Latencies / # Max Latencies / # Histogram Overflows lines, one column per series.
    In ns, where cyclictest writes us."""
    series = latency_series(data)
    path = os.path.join(outdir, "histograms.txt")
    names = ["%s/%s/%s" % (r.get("device"), r.get("path"), r.get("wait")) for r, _ in series]
    # rows: the closed buckets; the open last bucket (and any count above the range) is
    # cyclictest's "overflow", counts below the range are reported on their own line
    table = [{lo: count for lo, hi, count in buckets(h) if lo is not None and hi is not None}
             for _, h in series]
    edges = sorted({lo for t in table for lo in t})
    lines = ["# ticklab wakeup-latency histograms, in the shape of rt-tests' cyclictest -h",
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
