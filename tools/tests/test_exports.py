"""The exports as a data person loads them, with Python's csv module alone: every
raw sample of the run, as many as the kernel counted; no JSON in any cell of any CSV; a
unit (or what is counted) in the name of every numeric column of the measurement tables;
one value per row in results.csv; skip rows apart; the cyclictest -h layout."""
import csv
import json
import os

import pytest

import samplegen
from streams import join, record
from tooling import run_tool

# how a column's name says its unit: a unit word, a count of named things, or an id
UNITS = {"ns", "cyc", "pct", "us", "hz", "ppb", "ppm", "bytes", "s", "ms", "mhz"}
COUNTED = {"samples", "periods", "expiries", "ticks", "jiffies", "reads", "gaps", "windows",
           "runs", "repeats", "batches", "ops", "intervals", "timers", "overruns", "reprograms",
           "wakeups", "interrupts", "smis", "iterations", "fires", "steps", "rounds", "count"}
IDS = {"capture_line", "seq", "index", "cpu", "cpu_a", "cpu_b", "apic_id", "timer"}


def says_unit(name):
    words = name.lower().replace(".", "_").split("_")
    return name in IDS or any(w in UNITS or w in COUNTED for w in words)


def is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def every_csv(folder):
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".csv"):
                yield os.path.join(root, name)


def measurement_csvs(folder):
    """The tables of measurements: results.csv, samples.csv, histograms.csv and every
    data/result-*.csv (the inventory's tables keep the kernel's register and id names)."""
    for path in every_csv(folder):
        base = os.path.basename(path)
        top = os.path.dirname(path) == str(folder)
        if (top and base in ("results.csv", "samples.csv", "histograms.csv")) or \
                base.startswith("result-"):
            yield path


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A synthetic run with raw samples and sample_detail records, plus the full run's
    other experiments, reported."""
    from fullrun import full_run_records
    tmp = tmp_path_factory.mktemp("exports")
    recs = [r for r in full_run_records() if r.get("exp") != "wakeup-latency"
            and r["type"] != "end"] + samplegen.wakeup_records(n=400)
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    log = tmp / "run.log"
    log.write_bytes(join(record(r) for r in recs))
    code, out, err = run_tool("report", log, "-o", tmp / "rep")
    assert code == 0, out + err
    return recs, tmp / "rep"


def test_every_sample_of_the_run(run):
    recs, out = run
    rows = read(out / "samples.csv")
    kernel = sum(r["samples"] for r in recs if r.get("exp") == "wakeup-latency"
                 and r["type"] == "result")
    assert len(rows) == kernel == 16 * 400
    series = {}
    for r in rows:
        series.setdefault((r["device"], r["path"], r["wait"]), []).append(int(r["seq"]))
    assert all(sorted(s) == list(range(400)) for s in series.values())
    assert {r["clock"] for r in rows} == {"time_ns"} and {r["run"] for r in rows} == {"run.log#1"}


@pytest.mark.parametrize("which", ["synthetic", "exact", "plain"])
def test_no_json_in_any_cell_and_units_in_names(which, run, real_reports):
    out = run[1] if which == "synthetic" else real_reports[which][0]
    checked = 0
    for path in every_csv(out):
        for row in read(path):
            for key, cell in row.items():
                text = (cell or "").strip()
                if text[:1] in "[{":
                    with pytest.raises(ValueError):
                        json.loads(text)  # looks like JSON: must not be
                checked += 1
    assert checked > 1000
    for path in measurement_csvs(out):
        rows = read(path)
        for col in (rows[0] if rows else {}):
            cells = [r[col] for r in rows if r[col] != ""]
            if os.path.basename(path) == "results.csv" and col == "value":
                continue  # one value per row: its unit is the row's `unit` (checked below)
            if cells and all(is_number(c) for c in cells):
                assert says_unit(col), (os.path.basename(path), col)


def test_results_one_value_per_row_skips_apart(run):
    recs, out = run
    rows = read(out / "results.csv")
    assert list(rows[0])[:3] == ["run", "exp", "row"]
    assert list(rows[0])[-4:] == ["quantity", "index", "unit", "value"]
    assert all(is_number(r["value"]) for r in rows)
    assert all(says_unit(r["quantity"]) and r["unit"] for r in rows)
    itimer = {r["quantity"]: r["value"] for r in rows if r["exp"] == "itimer-error"
              and r["row"] == "mode=tick period_us=500"}
    assert itimer["counted_expiries"] == "1990" and itimer["expected_periods"] == "2000"
    jitter = {r["quantity"]: r for r in rows if r["exp"] == "periodic-jitter"
              and r["row"].startswith("set=alone")}
    assert jitter["within_5us_pct"]["value"] == "98.7" and jitter["within_5us_pct"]["unit"] == "%"
    periods = [r for r in rows if r["quantity"] == "err_ns" and r["row"] == "timer=hrtimer"]
    assert [r["value"] for r in periods] == ["540", "610", "580", "600"]
    assert [r["index"] for r in periods] == ["0", "1", "2", "3"]
    assert not any(r["exp"] == "tsc-sync" for r in rows)  # its only row is a skip row
    skipped = read(out / "data" / "result-tsc-sync-skipped.csv")
    assert [r["reason"] for r in skipped] == ["one CPU online: nothing to compare"]
    assert read(out / "data" / "result-tsc-sync.csv") == []


def test_lists_and_histograms_become_tables(run):
    _, out = run
    periods = read(out / "data" / "result-period-compare-err_ns.csv")
    assert list(periods[0]) == ["capture_line", "timer", "index", "err_ns"]
    hist = read(out / "data" / "result-periodic-jitter-hist.csv")
    assert list(hist[0])[-3:] == ["lo_ns", "hi_ns", "count"]
    assert hist[0]["lo_ns"] == "" and hist[0]["hi_ns"] == "-20000"  # below the range
    wide = read(out / "data" / "result-period-compare.csv")
    assert "err_ns" not in wide[0] and "err_mean_ns" in wide[0]


def test_cyclictest_layout_of_the_samples(run):
    _, out = run
    lines = (out / "latency-hist-us.txt").read_text().splitlines()
    assert lines[0] == "# Histogram"
    rows = [line.split() for line in lines[1:] if line and not line.startswith("#")]
    assert [int(r[0]) for r in rows] == list(range(len(rows)))
    assert all(len(r) == 17 for r in rows)
    total = [int(x) for x in next(line for line in lines if line.startswith("# Total:")).split()[2:]]
    over = [int(x) for x in next(line for line in lines
                                 if line.startswith("# Histogram Overflows:")).split()[3:]]
    assert [t + o for t, o in zip(total, over)] == [400] * 16


def test_every_sample_of_a_real_run(tmp_path):
    """The kernel's own samples records (a real quick run in exact mode, fixtures/README.md):
    samples.csv holds each measured wakeup-latency row's samples, as many as the row counts,
    seq 0..n-1 once each, and their nearest-rank p99 is the row's p99_ns."""
    from conftest import unpack_fixture
    log = unpack_fixture(tmp_path, "icount0-quick-11204e5.log")
    code, out, err = run_tool("report", log, "-o", tmp_path / "rep")
    assert code == 0, out + err
    from ticklablib import records
    recs = [dict(r) for r in records.parse_stream(log.read_bytes())[0].records]
    kernel = {(r["device"], r["path"], r["wait"]): r for r in recs
              if r.get("exp") == "wakeup-latency" and r["type"] == "result"
              and r.get("status") is None}
    assert len(kernel) == 12
    series = {}
    for r in read(tmp_path / "rep" / "samples.csv"):
        series.setdefault((r["device"], r["path"], r["wait"]), []).append(
            (int(r["seq"]), int(r["latency_ns"])))
    assert set(series) == set(kernel)
    for key, vals in series.items():
        row = kernel[key]
        assert sorted(s for s, _ in vals) == list(range(row["samples"]))
        lat = sorted(v for _, v in vals)
        rank = -(-990 * len(lat) // 1000)           # nearest rank, as lib/stats.c
        assert lat[rank - 1] == row["p99_ns"], key
        assert lat[0] == row["min_ns"] and lat[-1] == row["max_ns"], key
