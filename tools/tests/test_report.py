"""`ticklab report`: the page's summary, data files, exports and figures, on whole and
damaged captures; the folder written fresh; two runs never mixed."""
import json
import os

import pytest

from fullrun import full_run_bytes, full_run_lines, full_run_records, small_run_lines
from pages import (check_png_file, check_svg_file, inline_pngs, parse_html, read_csv,
                   read_jsonl)
from streams import join, record
from tooling import run_tool
from ticklablib import dataset, figdata

FULL_FIGURES = ["overview_latency", "calibration", "period_compare", "periodic_jitter", "itimer_error",
                "sleep_error", "tick_overhead", "hrtimer_cost", "wakeup_latency_lapic",
                "wakeup_latency_hpet", "wakeup_latency_pit", "wakeup_latency_rtc",
                "wakeup_latency_tsc_deadline", "wakeup_cdf", "wakeup_timeline_tsc_deadline",
                "percpu_latency"]


def report(tmp_path, data, *extra, name="serial.log", out="out"):
    """Run `ticklab report` on data; returns (exit code, stdout + stderr, out dir)."""
    log = tmp_path / name
    log.write_bytes(data)
    outdir = tmp_path / out
    code, so, se = run_tool("report", log, "-o", outdir, *extra)
    return code, se + so, outdir  # standard output last: its last line is the page's path


def page_of(out):
    return parse_html((out / "report.html").read_text(encoding="utf-8"))


# --- a whole run with every experiment ------------------------------------------------

def test_every_figure_drawn_as_png_and_svg_naming_its_clock(full_report):
    out, text, _ = full_report
    assert "%d figure(s); capture ok" % len(FULL_FIGURES) in text and "not drawn" not in text
    assert sorted(p[:-4] for p in os.listdir(out / "plots") if p.endswith(".png")) == \
        sorted(FULL_FIGURES)
    for name in FULL_FIGURES:
        w, h = check_png_file(out / "plots" / (name + ".png"))
        assert w == 1340 and 300 <= h <= 1400, (name, h)  # as wide as the page's body
        svg = check_svg_file(out / "plots" / (name + ".svg"))
        words = " ".join(t.text or "" for t in svg.iter() if t.tag.endswith("text"))
        assert "clock:" in words, name  # the measuring clock is named on the figure itself


def test_last_line_is_the_absolute_path_of_the_page(full_report):
    out, text, _ = full_report
    assert text.rstrip("\n").splitlines()[-1] == str(out.resolve() / "report.html")


def test_page_opens_with_the_summary(full_report):
    html = (full_report[0] / "report.html").read_text()
    page = page_of(full_report[0])
    head = page.text[:page.text.index("Experiment by experiment")]
    # how it was made, then one line per device and path (the list of experiments beside
    # it), then the verdict
    order = [head.index(s) for s in ("how it was started", "Wakeup latency per clock event "
                                     "device and path", "Experiments", "Verdict")]
    assert order == sorted(order)
    assert "environment unknown: no capture record and the kernel named none" in head
    # device path wait min p50 p99 p99.9 max n; a series of 50 has no p99.9
    assert "lapic irq - 250 500 2,250 7,500 20,000 1,000" in head
    assert "rtc irq - 4,000 5,000 9,000 n < 1000 12,000 50" in head
    assert "p99.9 not computable for 2 series: fewer than 1000 samples" in head
    assert "irq: the device programmed directly: deadline to the interrupt entry stub" in head
    assert "callback: an hrtimer on the device" in head
    assert html.index('id="summary"') < html.index('id="experiments"') \
        < html.index('id="inventory"')
    assert "<th>line</th>" not in html  # the capture line is a tooltip, not a column
    assert '<details id="inventory">' in html


def test_html_parses_and_embeds_every_figure(full_report):
    page = page_of(full_report[0])
    assert len(inline_pngs(page)) == len(FULL_FIGURES)
    assert {"fig-" + n for n in FULL_FIGURES} <= page.ids
    for section in ("summary", "latency", "verdict", "capture", "inventory", "calibration",
                    "experiments", "absent", "errors", "files"):
        assert section in page.ids
    html = (full_report[0] / "report.html").read_text()
    assert "<script" not in html and "src=\"http" not in html  # self-contained


def test_page_says_what_a_figure_leaves_out_and_what_is_absent(full_report):
    text = page_of(full_report[0]).text
    assert "ticklab report: Test CPU @ 3.00GHz" in text
    assert "Error records (1)" in text and "bogus=1" in text
    assert "A row without a histogram shows only its percentiles." in text  # rtc
    assert "1 method(s) skipped or failed" in text
    assert "Nothing: every experiment and figure is present." in text
    # the clock is named on each figure (its SVG's text: above), not again in its caption
    assert "Clock: " not in text


def test_published_beside_this_machine(full_report):
    text = page_of(full_report[0]).text
    # the published figure in the column right after the measured one, its source below,
    # ticklab's own explanation apart from it, labelled as ticklab's
    # (a range of the source's per-period errors beside the row's lowest and highest)
    assert "jiffies_linux 250 4 24,058,355 10 24,058,340 24,058,360 errors +23,009,118 to " \
        "+24,653,903 ns [1]" in text
    assert "[1] an article comparing Linux's low- and high-precision timers" in text
    assert "(shared/sources/hrtimer-vs-jiffies-1s.txt)" in text
    assert "ticklab's note on [1], not the source's words: the lowest and highest of the " \
        "article's 31 per-period errors" in text
    assert "256 ticks later" in text and "(250 jiffies rounded up to 256" not in text
    # the article's own explanation, quoted, beside ticklab's reading of it
    assert "\u201cWe can find that the high priority timer is processed in the interrupt " \
        "context" in text and "ticklab's rows contradict that" in text
    # the source's own words, word for word, folded away
    assert "\u201c[ 1815.080117] 2 : delta_ns 1000985662 error 985662\u201d" in text
    # a figure measured for scale is not a publication
    assert "For scale, not a publication: Linux 6.1 under the same QEMU settings" in text


def test_csv_and_jsonl_match_the_records(full_report):
    """One JSONL per group, byte for byte the records; one flat CSV per group (skip rows
    apart, lists and histograms in side tables: test_exports.py), a row per record."""
    out, _, sent = full_report
    groups = {}
    for rec in sent:
        stem = "result-" + rec["exp"] if rec["type"] == "result" else rec["type"]
        groups.setdefault(stem, []).append(rec)
    files = set(os.listdir(out / "data"))
    assert {p for p in files if p.endswith(".jsonl")} == {s + ".jsonl" for s in groups} | {
        "records.jsonl"}
    assert {s + ".csv" for s in groups} <= files
    assert {"result-period-compare-err_ns.csv", "result-periodic-jitter-hist.csv",
            "result-tsc-sync-skipped.csv"} <= files
    for stem, recs in groups.items():
        header, rows = read_csv(out / "data" / (stem + ".csv"))
        measured = [r for r in recs if r.get("status") != "skip" or r["type"] != "result"]
        assert header[0] == "capture_line" and len(rows) == len(measured), stem
        assert read_jsonl(out / "data" / (stem + ".jsonl")) == recs
    assert read_jsonl(out / "data" / "records.jsonl") == sent


def test_summary_json_like_cyclictest(full_report):
    doc = json.loads((full_report[0] / "summary.json").read_text())
    assert doc["file_version"] == 1 and doc["return_code"] == 0
    assert doc["capture_verdict"] == "ok" and doc["capture"] is None
    assert doc["environment"]["how_started"].startswith("unknown")
    lapic = [r for r in doc["latency"] if r["device"] == "lapic"][0]
    assert (lapic["min_ns"], lapic["p50_ns"], lapic["p99_ns"], lapic["p999_ns"],
            lapic["max_ns"]) == (250, 500, 2250, 7500, 20000)
    rtc = [r for r in doc["latency"] if r["device"] == "rtc"][0]
    assert rtc["samples"] == 50 and rtc["p999_ns"] is None  # the record's 9000 is its max
    assert lapic["clock"] == "time_ns" and lapic["samples"] == 1000
    assert doc["settings"]["cpu"] == "Test CPU @ 3.00GHz" and doc["settings"]["hz"] == 1000
    assert [e["exp"] for e in doc["experiments"]][:2] == ["period-compare", "periodic-jitter"]
    assert {e["state"] for e in doc["experiments"]} == {"results-only"}


def test_histograms_long_csv_and_rt_tests_text(full_report):
    out, _, _ = full_report
    header, rows = read_csv(out / "histograms.csv")
    assert header == ["device", "path", "wait", "lo_ns", "hi_ns", "count"]
    lapic = [r for r in rows if r[0] == "lapic"]
    assert sum(int(r[5]) for r in lapic) == 988
    assert lapic[0][3:5] == ["0", "16"] and lapic[-1][3:5] == ["16777216", ""]  # open bucket
    assert {r[0] for r in rows} == {"lapic", "hpet", "pit", "tsc_deadline"}  # not rtc: no hist
    text = (out / "histograms.txt").read_text().splitlines()
    assert "# Histogram" in text
    data_rows = [t for t in text if not t.startswith("#")]
    assert data_rows[0].split("\t") == ["000000"] * 5
    assert any(t.startswith("# Min Latencies: 00250 00400 00900") for t in text)
    assert any(t.startswith("# Max Latencies: 20000 32000 72000") for t in text)
    assert any(t.startswith("# Histogram Overflows: 00000 ") for t in text)
    assert any(t.startswith("# Total: 000000988") for t in text)


# --- absent, partial, odd ------------------------------------------------------------

def end_of(recs):
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    return join(record(r) for r in recs)


def test_absent_names_every_planned_experiment(tmp_path):
    """A plan record lists what the run should hold, tools' unknown experiments included."""
    recs = [r for r in full_run_records() if r.get("exp") in (None, "period-compare")
            and r["type"] != "end"]
    recs.insert(1, {"type": "plan", "experiments": [
        {"exp": "period-compare", "budget_ns": 1}, {"exp": "tsc-sync", "budget_ns": 1},
        {"exp": "brand-new-exp", "budget_ns": 1}]})
    code, text, out = report(tmp_path, end_of(recs))
    assert code == 0
    page = page_of(out)
    assert ("Experiments with no result records: tsc-sync, brand-new-exp (planned from the "
            "kernel's plan record).") in page.text


def test_without_a_plan_absent_names_all_ten(tmp_path):
    recs = [r for r in full_run_records() if r.get("exp") in (None, "period-compare")
            and r["type"] != "end"]
    code, text, out = report(tmp_path, end_of(recs))
    assert "2 figure(s); not drawn: overview_latency, periodic_jitter, itimer_error" in text
    assert ("Experiments with no result records: periodic-jitter, itimer-error, "
            "sleep-accuracy, tick-overhead, hrtimer-cost, wakeup-latency, hwlat, tsc-sync, "
            "percpu-latency") in page_of(out).text


def test_exp_start_without_exp_end_is_partial(tmp_path):
    """A run cut during wakeup-latency: its rows are flagged, the rest named absent."""
    lines = small_run_lines()
    cut = next(i for i, line in enumerate(lines) if b'"exp_end","exp":"wakeup' in line)
    code, text, out = report(tmp_path, join(lines[:cut]))
    assert code == 1
    page = page_of(out)
    assert "wakeup-latency partial - started (line" in page.text and "Started (line" in page.text
    assert "no exp_end came: the run stopped during it, its rows may be incomplete" in page.text
    assert "lapic callback (partial)" in page.text
    assert 'class="partial"' in (out / "report.html").read_text()
    doc = json.loads((out / "summary.json").read_text())
    assert [e["state"] for e in doc["experiments"]] == ["done", "partial"]


def test_rows_without_keys_draw_no_none_figures(tmp_path):
    recs = [{"type": "boot", "version": "9"},
            {"type": "result", "exp": "wakeup-latency", "p50_ns": 5, "min_ns": 1, "max_ns": 9},
            {"type": "result", "exp": "wakeup-latency", "device": "x", "p50_ns": 5,
             "min_ns": 1, "max_ns": 9}]
    code, text, out = report(tmp_path, end_of(recs))
    assert code == 0
    names = os.listdir(out / "plots")
    assert "wakeup_latency_x.png" in names and not any("None" in n for n in names)
    assert "None" not in " ".join(i["alt"] for i in page_of(out).images)


def test_odd_values_never_crash(tmp_path):
    """Strings that are not numbers, wrong types, broken histograms: reported, not fatal."""
    odd = [{"type": "result", "exp": "wakeup-latency", "device": "x",
            "hist": {"edges_ns": [3, 1], "counts": [1]}},
           {"type": "result", "exp": "wakeup-latency", "device": "y", "p50_ns": "fast"},
           {"type": "result", "exp": "sleep-accuracy", "request_ns": "1e3", "mean_err_ns": []},
           {"type": "result", "exp": "tick-overhead", "tick_ns": "abc"},
           {"type": "result", "exp": "periodic-jitter", "avg_ns": None, "hist": "x"},
           {"type": "result", "exp": "period-compare", "err_ns": "no"},
           {"type": "result", "exp": "itimer-error", "error_pct": {"a": 1}},
           {"type": "result", "exp": "brand-new", "value_ns": 5},
           {"type": "result"},
           {"type": "calibration", "status": "ok", "disagreement_ppb": "12.5"},
           {"type": "verdict", "claims": [1, {"a": None}]}]
    code, text, out = report(tmp_path, end_of([{"type": "boot", "version": "9"}] + odd))
    assert code == 0, text
    page = page_of(out)
    assert "sleep-accuracy rows have no positive request_ns with a mean_err_ns" in page.text
    assert "tick-overhead rows have no tick_ns > 0 with an overhead_pct" in page.text
    assert "period-compare rows carry no err_ns list" in page.text
    assert "exp-brand-new" in page.ids and "exp-(no exp)" in page.ids
    for name in ("wakeup_latency_x", "calibration"):
        check_png_file(out / "plots" / (name + ".png"))


def test_integer_too_large_for_a_float(tmp_path):
    """At 19bd55f compare crashed (OverflowError) and report dropped sleep_error."""
    huge = 10 ** 400
    recs = [{"type": "boot", "version": "9"},
            {"type": "result", "exp": "sleep-accuracy", "mode": "tick", "tick_ns": 1000000,
             "request_ns": 1000000, "mean_err_ns": 500, "min_err_ns": -huge,
             "max_err_ns": huge, "runs": huge}]
    code, text, out = report(tmp_path, end_of(recs))
    assert code == 0, text
    assert (out / "plots" / "sleep_error.png").exists()
    assert str(huge) in (out / "data" / "result-sleep-accuracy.jsonl").read_text()  # as sent
    assert dataset.num(huge) is None and dataset.num(2 ** 64) == 2 ** 64


def test_file_names_from_record_types_are_safe_and_unique(tmp_path):
    names = ["records", "a/b", "a_b", "A_b", "x" * 300, "../up", "result-period-compare"]
    recs = [{"type": "boot"}] + [{"type": n, "v": i} for i, n in enumerate(names)]
    recs.append({"type": "result", "exp": "period-compare", "timer": "t"})
    code, text, out = report(tmp_path, end_of(recs))
    assert code == 0, text
    files = os.listdir(out / "data")
    assert len(files) == len(set(f.lower() for f in files))
    assert read_jsonl(out / "data" / "records.jsonl")[1] == {"type": "records", "v": 0}
    jsonl = [f for f in files if f.endswith(".jsonl") and f != "records.jsonl"]
    assert len(jsonl) == len(names) + 3  # + boot, end, result-period-compare
    assert all(len(f) <= 66 and "/" not in f and not f.startswith(".") for f in files)
    by_type = {}
    for f in jsonl:
        for row in read_jsonl(out / "data" / f):
            by_type.setdefault(row["type"], set()).add(f)
    assert all(len(v) == 1 for v in by_type.values())  # one type, one file
    assert not (tmp_path / "up.jsonl").exists()


# --- folders and runs ---------------------------------------------------------------

def test_report_folder_is_fresh_or_refused(tmp_path):
    data = join(small_run_lines())
    code, _, out = report(tmp_path, data)
    assert code == 0
    (out / "plots" / "stale-from-an-old-run.png").write_bytes(b"old")
    code, text, _ = report(tmp_path, data)
    assert code == 3 and "exists (an earlier report?): --force replaces it" in text
    code, text, _ = report(tmp_path, data, "--force")
    assert code == 0 and not (out / "plots" / "stale-from-an-old-run.png").exists()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    code, text, _ = report(tmp_path, data, "--force", out="mine")
    assert code == 3 and "not a ticklab report folder" in text
    assert (mine / "notes.txt").read_text() == "keep"


def test_two_boots_are_two_reports(tmp_path):
    two = join(small_run_lines(brand="First")) + join(small_run_lines(brand="Second"))
    code, text, out = report(tmp_path, two)
    assert code == 0 and "report: run 1 of 2" in text and "report: run 2 of 2" in text
    index = page_of(out)
    assert "holds 2 runs" in index.text and "First" in index.text and "Second" in index.text
    assert "ticklab report: First" in page_of(out / "run-1").text
    assert "ticklab report: Second" in page_of(out / "run-2").text
    assert "Second" not in page_of(out / "run-1").text
    assert text.splitlines()[-1] == str(out.resolve() / "report.html")
    code, text, out = report(tmp_path, two, "--run", "1", out="one")
    assert code == 0 and "ticklab report: First" in page_of(out).text
    assert report(tmp_path, two, "--run", "3", out="three")[0] == 3


def test_empty_file_follows_the_exit_codes(tmp_path):
    """At 19bd55f report exited 3 on an empty file; check says 1 (no run): so does report."""
    for data, words in ((b"", "No run: serial.log is empty (0 bytes)."),
                        (b"BdsDxe: no ticklab here\n", "No run in this capture")):
        code, text, out = report(tmp_path, data, "--force")
        assert code == 1, text
        assert words in page_of(out).text
        assert text.splitlines()[-1] == str(out.resolve() / "report.html")


def test_failed_run_exits_2_and_unreadable_3(tmp_path):
    recs = [dict(r) for r in [{"type": "boot"}]]
    recs.append({"type": "end", "records": 1, "status": "failed", "reason": "fault"})
    code, text, out = report(tmp_path, join(record(r) for r in recs))
    assert code == 2 and "whole, but the kernel ended it failed: fault" in page_of(out).text
    assert run_tool("report", tmp_path / "nonexistent.log")[0] == 3


def test_capture_record_heads_the_page(tmp_path):
    (tmp_path / "serial.log.capture.json").write_text(json.dumps({
        "source": "qemu", "accel": "tcg", "icount_shift": 0, "machine": "q35",
        "qemu_version": "7.2.22", "smp": 1, "mem": "512M", "firmware": "bios",
        "boot": "kernel"}))
    code, text, out = report(tmp_path, join(small_run_lines()))
    assert "virtual time (icount shift=0): figures are instruction counts" in page_of(out).text
    assert "environment: virtual time (icount shift=0)" in text
    (tmp_path / "serial.log.capture.json").write_text("{broken")
    code, text, out = report(tmp_path, join(small_run_lines()), "--force")
    assert code == 0 and "serial.log.capture.json cannot be read" in page_of(out).text


# --- damaged on purpose: exact problems, still reported ---------------------------------

LINES = small_run_lines()
REC = [i for i, line in enumerate(LINES) if line.startswith(b"TLR ")]  # record indexes
WAKE = next(i for i in REC if b'"exp":"wakeup-latency"' in LINES[i]
            and b'"type":"result"' in LINES[i])
END = len(LINES)


def flip(line, at=-10, mask=0x04):
    b = bytearray(line)
    b[at] ^= mask
    return bytes(b)


def firmware_noise():
    noise = [b"\x1b[2J\x1b[01;01HBdsDxe: loading Boot0001 \"UEFI QEMU DVD-ROM\"",
             b"\x1b[0m\x1b[37m\x1b[40mWelcome to GRUB!", b"\r\x1b[K  Booting `ticklab full'"]
    lines = list(LINES)
    lines[REC[0]] = b"\x1b[1;1H\x1b[0m" + lines[REC[0]]  # noise on the boot record's line
    return join(noise + lines + [b"\xff\x00 after the run"], b"\r\n")


# name: (bytes, expected exit, [(kind, 1-based line)], figures drawn: the overlay of every
# device heads them where latency rows came)
DAMAGE = {
    "crlf": (join(LINES, b"\r\n"), 0, [], 5),
    "cr-only": (join(LINES, b"\r"), 0, [], 5),
    "firmware-noise": (firmware_noise(), 0, [], 5),
    "truncated": (join(LINES)[:join(LINES).index(LINES[WAKE]) + 40], 1,
                  [("bad-crc", WAKE + 1), ("missing-end", WAKE + 1)], 2),
    "flipped-byte": (join(LINES[:WAKE] + [flip(LINES[WAKE])] + LINES[WAKE + 1:]), 1,
                     [("bad-crc", WAKE + 1)], 5),
    "line-dropped": (join(LINES[:WAKE] + LINES[WAKE + 1:]), 1,
                     [("count-mismatch", END - 1)], 5),
    "line-duplicated": (join(LINES[:WAKE + 1] + LINES[WAKE:]), 1,
                        [("count-mismatch", END + 1)], 5),
    "reboot-mid-run": (join(LINES[:WAKE + 1]) + join(LINES), 1,
                       [("missing-end", WAKE + 1 + REC[0] + 1)], 5 + 5),
    "markers-line": (join(LINES[:3] + [b"TLR " * 250000] + LINES[3:]), 1,
                     [("bad-json", 4), ("count-mismatch", END + 1)], 5),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_check_and_report_on_damaged_logs(tmp_path, name):
    data, code, expected, figures = DAMAGE[name]
    log = tmp_path / "serial.log"
    log.write_bytes(data)
    c, out, _ = run_tool("check", log, "--json")
    doc = json.loads(out)
    got = [(q["kind"], q["line"]) for run in doc["runs"] for q in run["problems"]]
    assert (c, got) == (code, expected)
    assert doc["how_started"].startswith("unknown") and doc["capture"] is None

    rcode, text, out = report(tmp_path, data)
    assert rcode == code
    # each run's figure count (a log of several runs also prints a progress line a run)
    assert sum(int(t.split("; ")[1].split()[0]) for t in text.splitlines()
               if t.startswith("report: run ") and " figure(s)" in t) == figures
    html = (out / "report.html").read_text()
    for kind, line in expected:  # every problem on the terminal and on the page
        assert "serial.log:%d: %s: " % (line, kind) in text
        assert "serial.log:%d" % line in html
    if not expected:
        assert "No problem: every record line verified and every run is whole." in html


def test_damaged_row_is_left_out_and_the_rest_reported(tmp_path):
    _, _, out = report(tmp_path, DAMAGE["flipped-byte"][0])
    rows = read_jsonl(out / "data" / "result-wakeup-latency.jsonl")
    assert [(r["path"], r["wait"]) for r in rows] == [("irq", "poll"), ("callback", "hlt"),
                                                      ("callback", "poll")]
    assert "NOT whole: 1 problem(s) in this run" in page_of(out).text


def test_dataset_numbers_and_histograms():
    assert dataset.num("0.9870") == 0.987 and dataset.num("12") == 12
    assert dataset.num(True) is None and dataset.num("nan") is None and dataset.num([]) is None
    H = figdata.Hist
    assert figdata.parse_hist({"edges_ns": [1, 2, 4], "counts": [5, 6]}) == H([1, 2, 4], [5, 6])
    assert figdata.parse_hist({"edges_ns": [0, 16, 32], "counts": [1, 2, 3]}) == \
        H([0, 16, 32, 64], [1, 2, 3], open_last=True)       # the kernel's lower edges
    assert figdata.parse_hist({"lo_ns": -20, "bucket_ns": 10, "counts": [7, 1, 2, 3, 9]}) == \
        H([-20, -10, 0, 10], [1, 2, 3], below=7, above=9)  # periodic-jitter: outer buckets
    assert figdata.parse_hist([{"lo_ns": 1, "hi_ns": 2, "count": 3}]) == H([1, 2], [3])
    assert figdata.parse_hist([[1, 3], [2, 4]]) == H([1, 2, 4], [3, 4], open_last=True)
    assert figdata.parse_hist({"lo_ns": 0, "bucket_ns": 0, "counts": [1, 2, 3]}) is None
    assert figdata.parse_hist({"edges_ns": [2, 1], "counts": [1]}) is None
    assert figdata.parse_hist({"edges_ns": [1, 2], "counts": [-1]}) is None


def test_kernel_keys_that_are_coming_are_shown(tmp_path):
    """boot.hypervisor, the environment record, resolution_ns, variant and published on
    result rows: shown when present (tools/ticklablib never requires them)."""
    recs = [r for r in __import__("fullrun").small_run_records() if r["type"] != "end"]
    recs[0] = dict(recs[0], hypervisor="kvm", hypervisor_signature="KVMKVMKVM")
    recs.insert(1, {"type": "environment", "hypervisor": "kvm", "rdtsc_cost_cyc": 27846,
                    "rdtsc_trapped": True, "idle": "poll",
                    "clock_read_cost_ns": {"hpet": 19700, "tsc": 10700}})
    for r in recs:
        if r.get("exp") == "wakeup-latency" and r["type"] == "result":
            r.update(variant="ticklab", resolution_ns=12)
        if r.get("exp") == "period-compare" and r.get("timer") == "hrtimer":
            r["published"] = {"source": "the kernel's own source table", "value": 1000,
                              "unit": "ns", "key": "err_mean_ns"}
    code, text, out = report(tmp_path, end_of(recs), "--summary")
    assert code == 0, text
    page = page_of(out)
    assert "KVM guest: figures include VM exits" in page.text  # no capture record: the kernel
    assert "RDTSC costs 27846 cycles, trapped by the hypervisor" in page.text
    assert "one clock read costs hpet 19700 ns, tsc 10700 ns" in page.text
    assert "no CPU halts (idle=poll, exact mode)" in page.text
    assert "lapic irq hlt ticklab 173" in page.text  # the variant column
    assert "+-: the resolution of each figure (the record's own: p99 of the samples' " \
        "bracketing half-widths)" in page.text and "lapic irq hlt ticklab 173 182 191 n < 1000 191 500 0 0 12" \
        in page.text
    assert "hrtimer 250 4 582 1000 ns [1] 26" in page.text  # the kernel's own published figure
    assert "[1] the kernel's own source table" in page.text
    assert "device  path      wait  variant  min" in text


def test_interleaved_boots_say_so_at_the_top(tmp_path):
    """Two runs' lines interleaved in one log were reported under one headline (two CPUs,
    two TSC rates); now the run is not whole and its page says its figures mix two boots."""
    a, b = small_run_lines(brand="CPU A"), small_run_lines(brand="CPU B")
    mixed = [x for pair in zip(a, b) for x in pair]
    code, text, out = report(tmp_path, join(mixed))
    assert code == 1
    assert ": mixed-runs: a second cpu record" in text
    pages = [page_of(out / d) for d in os.listdir(out) if d.startswith("run-")]
    mixed_pages = [p for p in pages if "its lines mix two boots (mixed-runs)" in p.text]
    assert len(mixed_pages) == 1
    head = mixed_pages[0].text[:mixed_pages[0].text.index("Wakeup latency per clock")]
    assert "its lines mix two boots" in head


def test_dollar_signs_in_names_are_text_not_tex(tmp_path):
    recs = [{"type": "boot"}, {"type": "result", "exp": "wakeup-latency", "device": "$\\no{$",
                               "path": "_a$", "p50_ns": 5, "min_ns": 1, "max_ns": 9}]
    code, text, out = report(tmp_path, end_of(recs))
    assert code == 0 and "wakeup_latency" not in text.split("not drawn:")[-1]
    assert any(n.startswith("wakeup_latency___no__-") for n in os.listdir(out / "plots"))


# Result rows shaped as the kernel sends them (keys from a -icount quick run of this tree),
# one per reproduced row of experiments E1-E6: each finds its published figure, and only the
# faithful variant where the experiment has two.
KERNEL_ROWS = [
    ("period-compare", {"timer": "jiffies_linux", "hz": 250, "period_ns": 1000000000,
                        "err_mean_ns": 24000253}),
    ("period-compare", {"timer": "hrtimer", "hz": 250, "period_ns": 1000000000,
                        "err_mean_ns": 3}),
    ("periodic-jitter", {"set": "ten", "timer": 0, "hres_ns": 5000, "grid": True,
                         "period_ns": 500000, "stddev_ns": 1370}),
    ("periodic-jitter", {"set": "alone", "timer": 0, "hres_ns": 800, "grid": True,
                         "period_ns": 600000, "stddev_ns": 1090}),
    ("itimer-error", {"mode": "tick", "period_us": 10000, "tick_ns": 999847,
                      "error_pct": "-9.0766"}),
    ("itimer-error", {"mode": "tick", "period_us": 1000, "tick_ns": 999847,
                      "error_pct": "-49.9924"}),
    ("itimer-error", {"mode": "ns", "period_us": 9998, "tick_ns": 999847,
                      "error_pct": "0.0000"}),
    ("sleep-accuracy", {"variant": "faithful", "start": "back_to_back", "mode": "select",
                        "tick_ns": 1000000, "request_ns": 1000000, "mean_err_ns": 999515}),
    ("tick-overhead", {"variant": "faithful", "baseline": "tick_10ms", "tick_ns": 100000,
                       "overhead_pct": "1.0000"}),
    ("tick-overhead", {"variant": "faithful", "baseline": "tick_10ms", "tick_ns": 1000000,
                       "overhead_pct": "0.1000"}),
    ("hrtimer-cost", {"op": "restart", "device": "hpet", "variant": "batch",
                      "mean_cyc": "158.00"}),
    ("hrtimer-cost", {"op": "restart_irqsave", "device": "hpet", "variant": "batch",
                      "mean_cyc": "163.00"}),
    ("hrtimer-cost", {"op": "cancel_restart_irqsave", "device": "hpet", "variant": "batch",
                      "mean_cyc": "187.00"}),
]


@pytest.mark.parametrize("exp,row", KERNEL_ROWS)
def test_every_reproduced_row_has_its_published_figure(exp, row):
    from ticklablib import experiments, published
    got = published.for_row(experiments.get(exp).published, row)
    assert got is not None and got["source"] and got["text"], (exp, row)


def test_published_figures_go_to_the_faithful_variant_only():
    from ticklablib import experiments, published

    def for_row(exp, row):
        return published.for_row(experiments.get(exp).published, row)
    assert for_row("sleep-accuracy", {"variant": "ticklab", "mode": "select",
                                      "request_ns": 1000000}) is None
    assert for_row("tick-overhead", {"variant": "ticklab", "tick_ns": 100000}) is None
    assert for_row("period-compare", {"timer": "jiffies"}) is None  # exact wheel


# --- verdicts that carry their uncertainty ------------------------------------

METHOD = ("order-statistic 95 % interval of each p99 (distribution-free: ranks 1.96 binomial "
          "standard deviations either side of 0.99 n); decided only when the intervals do "
          "not overlap")


def verdict_run(verdicts):
    from fullrun import small_run_records
    recs = [r for r in small_run_records() if r["type"] not in ("verdict", "end")]
    recs += verdicts
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    return join(record(r) for r in recs)


def test_verdict_shows_its_intervals_and_method_and_says_too_close(tmp_path):
    close = {"type": "verdict", "topic": "hpet", "choice": "too_close",
             "claim": "too close to call here: hrtimer callback p99 2924872 ns [2801000, "
                      "3120000] on hpet against p99 2948212 ns [2850000, 3300000] on lapic: "
                      "the 95 % intervals overlap",
             "evidence": ["result:wakeup-latency:path=callback"], "decided": False,
             "method": METHOD,
             "intervals": [{"what": "hpet callback p99", "value_ns": 2924872,
                            "lo_ns": 2801000, "hi_ns": 3120000},
                           {"what": "lapic callback p99", "value_ns": 2948212,
                            "lo_ns": 2850000, "hi_ns": 3300000}]}
    tick = {"type": "verdict", "topic": "tick_rate", "choice": "29673",
            "claim": "one tick on lapic costs 337 ns, within [330, 337] (the repeats' spread)",
            "evidence": ["result:tick-overhead"], "decided": True,
            "method": "the spread of the repeats: at each tick size one tick's cost lies "
                      "within the estimate +- the range of the repeats' differences",
            "intervals": [{"what": "one tick on lapic", "value_ns": 337, "lo_ns": 330,
                           "hi_ns": 337}], "hz_safe": 29673, "hz_over": 30304}
    # the brief's other shape: {device: [lo, hi]}, and a verdict saying only "too_close"
    bare = {"type": "verdict", "topic": "clockevent", "choice": "too_close",
            "claim": "hpet against lapic", "intervals": {"hpet": [10, 20], "lapic": [15, 30]},
            "method": METHOD}
    code, text, out = report(tmp_path, verdict_run([close, tick, bare]), "--summary")
    assert code == 0, text
    page = page_of(out).text
    # durations read in their unit, an interval's ends in its figure's
    assert "hpet callback p99 2.92 ms in [2.80, 3.12] ms; lapic callback p99 " \
        "2.95 ms in [2.85, 3.30] ms; not decided: too close to call here" in page
    assert "order-statistic 95 % interval of each p99 [m1]" in page
    assert "[m1] " + METHOD in page
    assert "surely under 1 % of the CPU at HZ=29673 or less; surely more above HZ=30304" in page
    assert "too close to call here: hpet against lapic" in page
    assert "hpet in [10, 20] ns; lapic in [15, 30] ns" in page
    assert "Too close to call here: does the HPET help, fastest clock event device." in page
    # the terminal summary says the same
    assert "rests on: hpet callback p99 2.92 ms in [2.80, 3.12] ms" in text
    assert "method: " + METHOD in text
    summary = json.loads((out / "summary.json").read_text())
    hpet = next(v for v in summary["verdict"] if v["topic"] == "hpet")
    assert hpet["decided"] is False and hpet["intervals"][1]["hi_ns"] == 3300000


def test_an_older_kernel_s_verdicts_still_read(tmp_path):
    old = {"type": "verdict", "topic": "hpet", "choice": "helps",
           "claim": "helps: hrtimer callback p99 217 ns on hpet against 314 ns on lapic",
           "evidence": ["result:wakeup-latency:path=callback"]}
    odd = {"type": "verdict", "topic": "clockevent", "choice": "lapic", "decided": "yes",
           "intervals": [{"what": "x", "lo_ns": "a"}, 7, None], "method": 3}
    code, text, out = report(tmp_path, verdict_run([old, odd]), "--summary")
    assert code == 0, text
    page = page_of(out).text
    assert "helps: hrtimer callback p99 217 ns on hpet" in page
    assert "rests on" not in page and "too close" not in page.lower()


def test_a_tick_dearer_than_its_period_and_an_early_select_are_impossible(tmp_path):
    """Under plain TCG a tick-overhead row passed with 1,113,385 ns per tick at a
    1 ms tick, and a select sleep ended 112 us early; the summary flags both."""
    extra = [{"type": "result", "exp": "tick-overhead", "variant": "ticklab",
              "tick_ns": 1000000, "per_tick_ns": 1113385, "overhead_pct": "111.3385",
              "below_resolution": False, "clock": "tsc"},
             {"type": "result", "exp": "tick-overhead", "variant": "ticklab",
              "tick_ns": 300000, "per_tick_ns": 250, "below_resolution": False},
             {"type": "result", "exp": "sleep-accuracy", "variant": "faithful",
              "mode": "select", "tick_ns": 100000, "request_ns": 100000000,
              "mean_err_ns": 743915, "min_err_ns": -112000, "max_err_ns": 1551990},
             {"type": "result", "exp": "sleep-accuracy", "variant": "faithful",
              "mode": "tick", "tick_ns": 100000, "request_ns": 100000000,
              "mean_err_ns": -500, "min_err_ns": -500, "max_err_ns": -500}]
    code, text, out = report(tmp_path, verdict_run(extra), "--summary")
    assert code == 0, text
    assert "a tick costing more than its period, an early sleep): 2 row(s)" in text
    assert "per_tick_ns=1113385, more than the tick's period (tick_ns=1000000)" in text
    assert "min_err_ns=-112000, a select sleep that ended before its request" in text
    assert "min_err_ns=-500" not in text  # tick mode may end early: its contract
    assert "a tick costing more than its period, a sleep earlier than its contract" in \
        page_of(out).text


def test_rows_the_kernel_marked_invalid_are_said_never_shown_as_figures(tmp_path):
    """The kernel sends a row whose figure could not be true as "status":"invalid" with its
    reason and raw counts (tick-overhead, sleep-accuracy): the report shows the reason, no
    figure, and the experiment says how many."""
    from fullrun import small_run_records
    recs = [r for r in small_run_records() if r["type"] != "end"]
    recs += [{"type": "exp_start", "exp": "tick-overhead", "summary": "the tick's cost"},
             {"type": "result", "exp": "tick-overhead", "variant": "ticklab",
              "tick_ns": 1000000, "device": "lapic", "mode": "periodic", "ticks": 328,
              "overhead_pct": "0.0330", "per_tick_ns": 330, "clock": "tsc"},
             {"type": "result", "exp": "tick-overhead", "status": "invalid",
              "reason": "51 of 189 ticks arrived: the host held the guest",
              "variant": "ticklab", "tick_ns": 300000, "device": "lapic", "ticks": 51,
              "ticks_expected": 189, "clock": "tsc"},
             {"type": "exp_end", "exp": "tick-overhead", "duration_ns": 1000000000}]
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    code, text, out = report(tmp_path, join(record(r) for r in recs), "--summary")
    assert code == 0, text
    page = page_of(out).text
    assert "not a measurement, its figure could not be true: ticklab 300000 lapic (51 of " \
        "189 ticks arrived: the host held the guest)" in page
    assert "1 row(s) not a measurement" in page and "1 row(s) not a measurement" in text
    table = page[page.index("overhead (%)"):]
    assert "300,000" not in table.split("not a measurement")[0]  # no row of figures for it
    assert "1,000,000" in table.split("not a measurement")[0]


def test_summary_says_what_the_output_cost(tmp_path):
    """console_cost and screen_scroll: one line on the terminal and the page,
    marked bad when console time fell inside a measurement window."""
    from fullrun import small_run_records
    base = [r for r in small_run_records() if r["type"] != "end"]
    cost = {"type": "console_cost", "clock": "tsc", "buffered": True, "paced": True,
            "serial_baud": 115200, "irqoff_max_ns": 3500, "irqoff_max_phase": "boot:checks",
            "in_window_ns": 0, "lost_bytes": 0}
    scroll = {"type": "screen_scroll", "clock": "tsc", "cols": 80, "rows": 25,
              "redraw_ns": 62300}
    (tmp_path / "good").mkdir()
    (tmp_path / "bad").mkdir()
    code, text, out = report(tmp_path / "good", end_of(base + [scroll, cost]))
    assert ("output: longest interrupts-off stretch of the output path 3.5 us (boot:checks); "
            "console time inside measurement windows 0 ns; serial paced at 115200 baud; one "
            "screen scroll 62.3 us (80x25 cells); clock tsc") in text
    assert "the output's own cost" in page_of(out).text
    bad = dict(cost, buffered=False, irqoff_max_ns=56004313, in_window_ns=9309736037)
    code, text, out = report(tmp_path / "bad", end_of(base + [bad]))
    assert ("56 ms (boot:checks); console time inside measurement windows 9.31 s (the goal "
            "is 0); serial paced at 115200 baud, written at once (console_log=off)") in text
