"""The raw samples path: `samples` and `sample_detail` records shaped exactly as
docs/report-format.md specifies (samplegen.py writes them from the spec), read back, checked
against their rows, drawn, exported; and the kernel's buckets used when there are none."""
import csv
import json

import pytest

import samplegen
from streams import join, record
from tooling import figure, run_tool
from ticklablib import dataset, figdata, records, samples


def data_of(recs):
    runs = records.parse_stream(join(record(r) for r in recs))
    return dataset.group(runs[0], 1, "t.log")


@pytest.fixture(scope="module")
def synth():
    return samplegen.run_with_samples()


@pytest.fixture(scope="module")
def synth_report(synth, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("samples")
    log = tmp / "s.log"
    log.write_bytes(join(record(r) for r in synth))
    code, out, err = run_tool("report", log, "-o", tmp / "rep")
    assert code == 0, out + err
    return tmp / "rep", out


# --- the encoding ---------------------------------------------------------------------

@pytest.mark.parametrize("values,base,text", [
    ([173, 182, 191, 175], 173, "AJSC"),          # one character each: offsets below 32
    ([1000], 0, "of"),                           # 1000 = 8 + 31 * 32: 'o' (32 + 8), 'f' (31)
    ([0, 31, 32], 0, "AfgB"),                    # 31: 'f'; 32 = digits [0, 1]: 'g', 'B'
    ([-5, -3], -5, "AC"),                        # a base below zero
])
def test_vlq_examples(values, base, text):
    assert samplegen.vlq(values, base) == text
    assert [base + v for v in samples.decode_vlq(text)] == values


def test_vlq_round_trip_and_errors():
    vals = [0, 1, 31, 32, 1023, 1024, 2 ** 20, 2 ** 40 + 7, 123456789]
    assert samples.decode_vlq(samplegen.vlq(vals, 0)) == vals
    for bad in ("g", "A!", "A=B", 5):            # cut off, not in the alphabet, not a string
        with pytest.raises(ValueError):
            samples.decode_vlq(bad)
    with pytest.raises(ValueError):
        samples.decode_vlq("g" * 20 + "A")       # longer than any 64-bit value


def test_records_stay_under_the_record_limit(synth):
    recs = [r for r in synth if r["type"] == "samples"]
    assert all(len(json.dumps(r, separators=(",", ":"))) <= 2048 for r in recs)
    many = samplegen.samples_records("wakeup-latency", "pit", "irq", "poll",
                                     list(range(0, 5000000, 997)))
    assert len(many) > 1 and all(len(json.dumps(r, separators=(",", ":"))) <= 2048
                                 for r in many)
    assert [r["first_seq"] for r in many] == [sum(x["count"] for x in many[:i])
                                              for i in range(len(many))]


# --- read and checked -------------------------------------------------------------------

def test_every_series_complete_and_agreeing_with_its_row(synth):
    data = data_of(synth)
    series = samples.collect(data)
    rows = data.results["wakeup-latency"]
    assert len(series) == len(rows) == 16
    for row in rows:
        s = samples.for_row(data, row)
        assert s.complete and len(s.values) == row["samples"] == 500
        assert samples.disagreements(s, row) == []
        assert s.percentile(990) == row["p99_ns"] and "p999_ns" not in row  # 500 samples


def test_damaged_samples_are_said_not_guessed(synth):
    recs = [dict(r) for r in synth]
    firsts = [i for i, r in enumerate(recs) if r["type"] == "samples"]
    recs[firsts[0]]["vlq"] = recs[firsts[0]]["vlq"][:-1] + "!"     # not in the alphabet
    del recs[firsts[1]]                                            # a record lost
    recs[firsts[2] - 1] = dict(recs[firsts[2] - 1], count=3)       # count disagrees
    data = data_of(recs[:-1] + [{"type": "end", "records": len(recs) - 1, "status": "ok"}])
    got = list(samples.collect(data).values())
    assert "character '!' is not in the alphabet" in got[0].problems[0]
    assert not got[0].complete and not got[0].values
    assert [s.key[2] for s in got[:2]] == ["irq", "hrtimer_irq"]  # event's only record lost
    assert "count says 3, the values are 500" in got[1].problems[0]
    row = data.results["wakeup-latency"][0]
    assert samples.for_row(data, row) is got[0]


def test_missing_part_and_duplicates():
    vals = list(range(100, 600))
    recs = samplegen.samples_records("wakeup-latency", "pit", "irq", "poll", vals)
    a = dict(recs[0], count=250, vlq=samplegen.vlq(vals[:250], 100))
    b = dict(recs[0], first_seq=200, count=100, vlq=samplegen.vlq(vals[200:300], 100))
    data = data_of([{"type": "boot"}, a, b, {"type": "end", "records": 3, "status": "ok"}])
    s = list(samples.collect(data).values())[0]
    assert "line 3: seq 200 sent twice" in s.problems
    assert "200 of 500 samples did not arrive" in s.problems
    assert not s.complete and len(s.values) == 300


def test_worst_wake_ups_split_entry_and_handler(synth):
    data = data_of(synth)
    worst = samples.worst_wakeups(data, "wakeup-latency")
    assert len(worst) == 8 and all(len(w) == 5 for w in worst)
    top = worst[0][0]
    assert top.kind == "direct" and top.total_ns >= top.entry_ns > 0
    assert top.detail["rank"] == 1 and top.detail["latency_ns"] == top.total_ns
    assert top.neighbours_ns < top.total_ns / 10  # a lone spike among ordinary wake-ups


# --- drawn ------------------------------------------------------------------------------

def test_distribution_from_samples_log_counts_and_percentiles(synth):
    data = data_of(synth)
    made = figure("wakeup_latency")(data, figdata.Options())
    assert [d.name for d in made] == ["wakeup_latency_lapic", "wakeup_latency_hpet"]
    hist, pct = made[1].fig.axes[:2]
    assert hist.get_title() == "wait poll: histogram" and hist.get_yscale() == "log"
    assert hist.get_xscale() == "log"  # a long tail
    assert "raw samples" in made[1].caption
    assert [t.get_text() for t in pct.get_yticklabels()][:3] == ["50%", "90%", "99%"]
    row = next(r for r in data.results["wakeup-latency"] if r["device"] == "lapic"
               and r["path"] == "irq" and r["wait"] == "poll")
    ax = made[0].fig.axes[1]
    marked = {round(line.get_xdata()[0]) for line in ax.get_lines()
              if line.get_marker() in ("o", "^", "s") and len(line.get_xdata()) == 1}
    assert {row["p50_ns"], row["p99_ns"]} <= marked
    # 500 samples: no p99.9 marked (it would be the max); with 1000, it is
    s = samples.for_row(data, row)
    assert s.percentile(999) not in marked and s.percentile(999) == row["max_ns"]
    thick = data_of(samplegen.run_with_samples(n=1000, devices=(("lapic", 180, 0.05),)))
    row = next(r for r in thick.results["wakeup-latency"] if r["path"] == "irq"
               and r["wait"] == "poll")
    ax = figure("wakeup_latency")(thick, figdata.Options())[0].fig.axes[1]
    marked = {round(line.get_xdata()[0]) for line in ax.get_lines()
              if line.get_marker() in ("o", "^", "s") and len(line.get_xdata()) == 1}
    assert {row["p50_ns"], row["p99_ns"], row["p999_ns"]} <= marked
    with pytest.raises(figdata.Absent, match="drawn beside each histogram"):
        figure("wakeup_cdf")(data, figdata.Options())  # folded into the figure above


def test_timeline_in_seq_order(synth):
    data = data_of(synth)
    d = figure("wakeup_timeline")(data, figdata.Options())[0]
    ax = d.fig.axes[0]
    assert ax.get_title() == "wait poll"
    assert [line.get_label() for line in ax.get_lines()] == ["event", "callback"]
    xs = list(ax.get_lines()[0].get_xdata())
    assert xs == list(range(500))
    worst = max(max(line.get_ydata()) for line in ax.get_lines())
    assert [t.get_text()[0] for t in ax.texts] == ["1", "2", "3"]
    assert ax.texts[0].xy[1] == worst


def test_without_samples_the_buckets_are_drawn_and_said(synth):
    data = data_of([r for r in synth if r["type"] not in ("samples", "sample_detail")])
    d = figure("wakeup_latency")(data, figdata.Options())[0]
    assert "drawn from the buckets" in d.caption
    with pytest.raises(figdata.Absent, match="no raw samples"):
        figure("wakeup_timeline")(data, figdata.Options())


# --- exported ---------------------------------------------------------------------------

def test_samples_csv_holds_every_sample(synth, synth_report):
    out, _ = synth_report
    with open(out / "samples.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["run", "exp", "device", "path", "wait", "seq", "latency_ns",
                             "clock"]
    sent = [r for r in synth if r["type"] == "result"]
    assert len(rows) == sum(r["samples"] for r in sent) == 8000
    first = [r for r in rows if (r["device"], r["path"], r["wait"]) == ("lapic", "irq",
                                                                         "poll")]
    assert [int(r["seq"]) for r in first] == list(range(500))
    assert min(int(r["latency_ns"]) for r in first) == sent[0]["min_ns"]


def test_cyclictest_layout(synth_report):
    out, _ = synth_report
    lines = (out / "latency-hist-ns.txt").read_text().splitlines()
    assert lines[0] == "# Histogram"
    body = [line for line in lines if not line.startswith("#") and line]
    assert body[0].startswith("000000 ") and len(body[0].split()) == 17  # bin + 16 series
    assert all(int(b.split()[0]) == i for i, b in enumerate(body))      # every bin, in order
    total = next(line for line in lines if line.startswith("# Total:")).split()[2:]
    over = next(line for line in lines if line.startswith("# Histogram Overflows:")).split()[3:]
    assert all(int(t) + int(o) == 500 for t, o in zip(total, over))
    assert any(line.startswith("# Thread 0:") for line in lines)
    assert "latency-hist-us.txt" in (out / "report.html").read_text()


def test_the_documented_example_reads_back():
    """docs/report-format.md's example record is a valid record and decodes as it says."""
    import os
    doc = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs",
                            "report-format.md"), encoding="utf-8").read()
    section = doc[doc.index("### `samples`"):doc.index("### `sample_detail`")]
    line = next(l for l in section.splitlines() if l.startswith("TLR "))
    runs = records.parse_stream(join([record({"type": "boot"}), line.encode(),
                                      record({"type": "end", "records": 2, "status": "ok"})]))
    assert runs[0].whole, runs[0].problems
    data = dataset.group(runs[0], 1, "doc")
    s = list(samples.collect(data).values())[0]
    assert s.complete and [v for _, v in s.ordered()] == [173, 182, 191, 175]
