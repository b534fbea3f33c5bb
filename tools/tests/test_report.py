"""`ticklab report`: data files, figures and the HTML page, on whole and damaged captures."""
import json
import os
import subprocess

import pytest

from fullrun import full_run_bytes, full_run_lines, full_run_records
from pages import (check_png_file, check_svg_file, inline_pngs, parse_html, read_csv,
                   read_jsonl)
from streams import join, record
from ticklablib import dataset, plots

TICKLAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ticklab")
ALL_FIGURES = [name for name, _, _ in plots.FIGURES]


def report(tmp_path, data, *extra, name="serial.log"):
    """Run `ticklab report` on data; returns (exit code, stdout, out dir)."""
    log = tmp_path / name
    log.write_bytes(data)
    out = tmp_path / "out"
    p = subprocess.run([TICKLAB, "report", str(log), "-o", str(out), *extra],
                       capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode() + p.stderr.decode(), out


def page_of(out):
    return parse_html((out / "report.html").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def full_report(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full")
    code, text, out = report(tmp, full_run_bytes())
    assert code == 0, text
    return out, text


# --- a whole run with every experiment ------------------------------------------------

def test_every_figure_drawn_as_png_and_svg(full_report):
    out, text = full_report
    assert "7 figure(s); capture ok" in text and "not drawn" not in text
    for name in ALL_FIGURES:
        w, h = check_png_file(out / "plots" / (name + ".png"))
        assert w == 750 and 400 <= h <= 1300  # panels add height, two to a row
        check_svg_file(out / "plots" / (name + ".svg"))


def test_html_parses_and_embeds_every_figure(full_report):
    out, _ = full_report
    page = page_of(out)
    assert len(inline_pngs(page)) == len(ALL_FIGURES)
    assert {"fig-" + n for n in ALL_FIGURES} <= page.ids
    assert [i["alt"] for i in page.images] == [
        "Calibration disagreement per method", "hrtimer against jiffies timer",
        "Periodic jitter distributions", "Interval timer error",
        "Sleep error against requested time per tick size", "Tick overhead against tick size",
        "Wakeup latency histograms per device"]
    for section in ("verdict", "capture", "inventory", "calibration", "experiments", "absent"):
        assert section in page.ids
    # self-contained: nothing but the data URIs is loaded (links to files are fine)
    html = (out / "report.html").read_text()
    assert "<script" not in html and "src=\"http" not in html


def test_html_shows_inventory_verdict_and_what_a_figure_leaves_out(full_report):
    text = page_of(full_report[0]).text
    assert "ticklab report: Test CPU @ 3.00GHz" in text
    assert "hrtimer_beats_jiffies true" in text          # the verdict record's claims
    assert "Error records (1)" in text and "bogus=1" in text
    assert "No histogram in the record of rtc irq" in text
    assert "1 row(s) with a zero, negative or missing value cannot be shown" in text
    assert "1 method(s) skipped or failed" in text
    assert "Nothing: every experiment and figure is present." in text


def test_csv_columns_match_record_keys(full_report):
    out, _ = full_report
    sent = full_run_records()
    csvs = sorted(p for p in os.listdir(out / "data") if p.endswith(".csv"))
    groups = {}
    for rec in sent:
        stem = "result-" + rec["exp"] if rec["type"] == "result" else rec["type"]
        groups.setdefault(stem, []).append(rec)
    assert csvs == sorted(stem + ".csv" for stem in groups)
    for stem, recs in groups.items():
        header, rows = read_csv(out / "data" / (stem + ".csv"))
        keys = list(dict.fromkeys(k for r in recs for k in r))
        assert header == ["capture_line"] + keys, stem
        assert len(rows) == len(recs)
        assert read_jsonl(out / "data" / (stem + ".jsonl")) == recs
    header, rows = read_csv(out / "data" / "result-wakeup-latency.csv")
    hist = json.loads(rows[1][header.index("hist")])  # hpet's
    assert hist["counts"][2] == 700
    assert rows[3][header.index("hist")] == ""            # rtc row has none
    assert read_jsonl(out / "data" / "records.jsonl") == sent


# --- tolerance ------------------------------------------------------------------------

def test_only_some_experiments_says_what_is_absent(tmp_path):
    recs = [r for r in full_run_records() if r.get("exp") in (None, "period-compare")]
    recs[-1] = {"type": "end", "records": len(recs) - 1, "status": "ok"}
    code, text, out = report(tmp_path, join(record(r) for r in recs))
    assert code == 0
    assert "2 figure(s); not drawn: wakeup_latency, sleep_error, tick_overhead, " \
           "periodic_jitter, itimer_error" in text
    page = page_of(out)
    assert len(inline_pngs(page)) == 2
    assert ("Experiments with no result records: periodic-jitter, itimer-error, "
            "sleep-accuracy, tick-overhead, hrtimer-cost, wakeup-latency, hwlat, tsc-sync, "
            "percpu-latency.") in page.text
    assert "no sleep-accuracy result records in this run" in page.text
    assert sorted(os.listdir(out / "plots")) == ["calibration.png", "calibration.svg",
                                                 "period_compare.png", "period_compare.svg"]


def test_odd_values_never_crash(tmp_path):
    """Strings that are not numbers, wrong types, broken histograms: reported, not fatal."""
    odd = [{"type": "result", "exp": "wakeup-latency", "device": "x", "hist": {"edges_ns": [3, 1],
                                                                            "counts": [1]}},
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
    recs = [{"type": "boot", "version": "9"}] + odd
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    code, text, out = report(tmp_path, join(record(r) for r in recs))
    assert code == 0, text
    page = page_of(out)
    assert "sleep-accuracy rows have no positive request_ns and mean_err_ns" in page.text
    assert "tick-overhead rows have no tick_ns > 0 with an overhead_pct" in page.text
    assert "period-compare rows carry no err_ns list" in page.text
    assert "brand-new" in page.ids or "exp-brand-new" in page.ids
    assert "exp-(no exp)" in page.ids
    assert "The records carry no histogram: their percentiles are drawn instead." in page.text
    for name in ("wakeup_latency", "calibration", "periodic_jitter", "itimer_error"):
        check_png_file(out / "plots" / (name + ".png"))


def test_no_record_at_all_exits_3(tmp_path):
    code, text, out = report(tmp_path, b"BdsDxe: no ticklab here\n")
    assert code == 3 and "no verified record in the capture" in text
    assert not out.exists()


def test_run_selection(tmp_path):
    two = full_run_bytes(brand="First") + full_run_bytes(brand="Second")
    code, text, out = report(tmp_path, two)
    assert code == 0 and "report: run 2 of 2" in text
    assert "ticklab report: Second" in page_of(out).text
    code, text, out = report(tmp_path, two, "--run", "1")
    assert code == 0 and "ticklab report: First" in page_of(out).text
    assert report(tmp_path, two, "--run", "3")[0] == 3


# --- damaged on purpose: exact problems, still reported ---------------------------------

LINES = full_run_lines()
REC = [i for i, line in enumerate(LINES) if line.startswith(b"TLR ")]  # record indexes
WAKE = next(i for i in REC if b'"exp":"wakeup-latency"' in LINES[i])   # first wakeup row
END = len(LINES)                                                        # 1-based line


def flip(line, at=-10, mask=0x04):
    b = bytearray(line)
    b[at] ^= mask
    return bytes(b)


def truncated():
    data = join(LINES)
    cut = data.index(LINES[WAKE]) + 40
    return data[:cut]


def firmware_noise():
    noise = [b"\x1b[2J\x1b[01;01HBdsDxe: loading Boot0001 \"UEFI QEMU DVD-ROM\"",
             b"\x1b[0m\x1b[37m\x1b[40mWelcome to GRUB!", b"\r\x1b[K  Booting `ticklab full'"]
    lines = list(LINES)
    lines[REC[0]] = b"\x1b[1;1H\x1b[0m" + lines[REC[0]]  # noise on the boot record's line
    return join(noise + lines + [b"\xff\x00 after the run"], b"\r\n")


# name: (bytes, expected exit, [(kind, 1-based line)], figures drawn)
DAMAGE = {
    "intact": (join(LINES), 0, [], 7),
    "crlf": (join(LINES, b"\r\n"), 0, [], 7),
    "firmware-noise": (firmware_noise(), 0, [], 7),
    "truncated": (truncated(), 1, [("bad-crc", WAKE + 1), ("missing-end", WAKE + 1)], 1),
    "flipped-byte": (join(LINES[:WAKE] + [flip(LINES[WAKE])] + LINES[WAKE + 1:]), 1,
                     [("bad-crc", WAKE + 1)], 7),
    "line-dropped": (join(LINES[:WAKE] + LINES[WAKE + 1:]), 1,
                     [("count-mismatch", END - 1)], 7),
    "line-duplicated": (join(LINES[:WAKE + 1] + LINES[WAKE:]), 1,
                        [("count-mismatch", END + 1)], 7),
    "two-runs": (join(LINES) + join(LINES), 0, [], 7),
    "reboot-mid-run": (join(LINES[:WAKE + 3]) + join(LINES), 1,
                       [("missing-end", WAKE + 3 + REC[0] + 1)], 7),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_check_and_report_on_damaged_logs(tmp_path, name):
    data, code, expected, figures = DAMAGE[name]
    log = tmp_path / "serial.log"
    log.write_bytes(data)
    p = subprocess.run([TICKLAB, "check", str(log), "--json"], capture_output=True, timeout=60)
    doc = json.loads(p.stdout)
    got = [(q["kind"], q["line"]) for run in doc["runs"] for q in run["problems"]]
    assert (p.returncode, got) == (code, expected)

    rcode, text, out = report(tmp_path, data)
    assert rcode == code
    assert "%d figure(s)" % figures in text
    page = page_of(out)
    assert len(inline_pngs(page)) == figures
    for kind, line in expected:  # every problem on the terminal and on the page
        assert "serial.log:%d: %s: " % (line, kind) in text
        assert "%d %s" % (line, kind) in page.text
    if not expected:
        assert "No problem: every record line verified and every run is whole." in page.text


def test_damaged_row_is_left_out_and_the_rest_reported(tmp_path):
    data = DAMAGE["flipped-byte"][0]
    _, _, out = report(tmp_path, data)
    rows = read_jsonl(out / "data" / "result-wakeup-latency.jsonl")
    assert [r["device"] for r in rows] == ["hpet", "pit", "rtc"]  # lapic's line was damaged
    assert "NOT whole: 1 problem(s)" in page_of(out).text


def test_dataset_numbers_from_strings():
    assert dataset.num("0.9870") == 0.987 and dataset.num("12") == 12
    assert dataset.num(True) is None and dataset.num("nan") is None and dataset.num([]) is None
    H = plots.Hist
    assert plots.parse_hist({"edges_ns": [1, 2, 4], "counts": [5, 6]}) == H([1, 2, 4], [5, 6])
    assert plots.parse_hist({"edges_ns": [0, 16, 32], "counts": [1, 2, 3]}) == \
        H([0, 16, 32, 64], [1, 2, 3])                     # include/ticklab/hist.h: lower edges
    assert plots.parse_hist({"lo_ns": -20, "bucket_ns": 10, "counts": [7, 1, 2, 3, 9]}) == \
        H([-20, -10, 0, 10], [1, 2, 3], below=7, above=9)  # periodic-jitter: outer buckets
    assert plots.parse_hist([{"lo_ns": 1, "hi_ns": 2, "count": 3}]) == H([1, 2], [3])
    assert plots.parse_hist([[1, 3], [2, 4]]) == H([1, 2, 4], [3, 4])
    assert plots.parse_hist({"lo_ns": 0, "bucket_ns": 0, "counts": [1, 2, 3]}) is None
    assert plots.parse_hist({"edges_ns": [2, 1], "counts": [1]}) is None
