"""The answer first, wherever a person looks, and a report that is quick and honest: the
defects found by trying the tool as a new user would, each pinned by a test named after it.
(The page's first screen in a browser is checked in test_browser.py.)"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fullrun import full_run_records, small_run_lines, small_run_records
from pages import parse_html
from streams import join, record
from tooling import TICKLAB, run_tool


def summary_of(out):
    return json.loads((out / "summary.json").read_text())


# --- the terminal -------------------------------------------------------------------------

def test_report_ends_with_the_verdict_one_line_per_question_then_the_path(real_reports):
    out, text = real_reports["exact"]
    lines = text.rstrip("\n").splitlines()
    assert lines[-1] == str(out.resolve() / "report.html")
    verdict = [line for line in lines if line.startswith("verdict: ")]
    assert lines[-1 - len(verdict):-1] == verdict      # right above the path
    doc = summary_of(out)
    assert len(verdict) == len(doc["answer"])           # one line per question
    assert verdict[0].startswith("verdict: Which timer (clock event device): hpet (")
    assert "p99" in verdict[0] and "max" in verdict[0]
    assert verdict[1].startswith("verdict: Which clock (clocksource): hpet (")


# --- the report's speed, and what a stopped report leaves -----------------------------------

def test_each_figure_is_drawn_once_and_png_only_by_default(real_logs, tmp_path,
                                                            monkeypatch):
    """`report` drew every figure twice or more (PNG, SVG, and once more to measure its
    labels): 97 % of its 6.7 s of CPU."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from ticklablib import dataset, figdata, figures
    calls = []
    real = FigureCanvasAgg.draw

    def counted(self):
        calls.append(id(self.figure))
        return real(self)
    monkeypatch.setattr(FigureCanvasAgg, "draw", counted)
    runs, datas = dataset.load(str(real_logs["plain"]))
    drawn, _ = figures.render(datas[0], str(tmp_path / "plots"), figdata.Options(workers=1))
    assert len(drawn) >= 12
    assert len(calls) == len(drawn) == len(set(calls))   # one drawing each
    assert not [f for f in os.listdir(tmp_path / "plots") if not f.endswith(".png")]
    drawn, _ = figures.render(datas[0], str(tmp_path / "svg"), figdata.Options(svg=True))
    assert all(p.svg and os.path.exists(p.svg) for p in drawn)   # SVG on request


def test_two_processes_draw_the_same_figures_as_one(real_logs, tmp_path):
    """The forked drawing (several runs, --svg, --jobs) gives what one process gives: the
    same figures, byte for byte, in the same order, with the same measurements."""
    from ticklablib import dataset, figdata, figures
    _, datas = dataset.load(str(real_logs["plain"]))
    one, gone1 = figures.render(datas[0], str(tmp_path / "one"), figdata.Options(workers=1))
    two, gone2 = figures.render(datas[0], str(tmp_path / "two"), figdata.Options(workers=2))
    assert [p.name for p in one] == [p.name for p in two] and gone1 == gone2
    for a, b in zip(one, two):
        with open(a.png, "rb") as fa, open(b.png, "rb") as fb:
            assert fa.read() == fb.read(), a.name
        assert (a.overlaps, a.legends_on_data, a.axes) == (b.overlaps, b.legends_on_data,
                                                           b.axes)


def test_one_process_draws_a_single_run_unless_told():
    """A single run's PNGs are drawn in this process (a second one cost more CPU than the
    wall time it saved); several runs or SVGs use the CPUs."""
    from ticklablib import figures
    assert figures.default_workers(1, False) == 1
    assert figures.default_workers(3, False) == figures.workers()
    assert figures.default_workers(1, True) == figures.workers()


def test_a_log_of_several_runs_shows_progress(tmp_path):
    log = tmp_path / "three.log"
    log.write_bytes(b"".join(join(small_run_lines(brand="CPU %d" % i)) for i in range(3)))
    code, _, err = run_tool("report", log, "-o", tmp_path / "rep", "--jobs", "1")
    assert code == 0
    assert [line.split(" (")[0] for line in err.splitlines()] == [
        "report: run 1 of 3", "report: run 2 of 3", "report: run 3 of 3"]


@pytest.mark.parametrize("after_s", [0.0, 0.5])
def test_a_stopped_report_leaves_nothing_behind(tmp_path, after_s):
    """A report of a log of many runs, killed, left a 197 MB hidden folder behind; killed
    as its folder appears (matplotlib still being imported), it ended in a traceback."""
    log = tmp_path / "many.log"
    log.write_bytes(b"".join(join(small_run_lines(brand="CPU %d" % i)) for i in range(40)))
    p = subprocess.Popen([sys.executable, TICKLAB, "report", str(log), "-o",
                          str(tmp_path / "rep")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not any(f.startswith(".rep.new-") for f in os.listdir(tmp_path)):
        assert p.poll() is None and time.monotonic() < deadline, "no folder appeared"
        time.sleep(0.05)
    time.sleep(after_s)   # 0.5 s: well into drawing
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM: nothing written" in err.decode()
    assert sorted(os.listdir(tmp_path)) == ["many.log"]


def _stop_self():
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)   # the handler raises long before


def test_a_stop_turned_into_another_error_still_stops(tmp_path):
    """A SIGTERM during matplotlib's import came out as a ValueError (its rc validation
    catches even a BaseException and raises its own): the report ended in a traceback,
    exit 1, instead of stopping cleanly."""
    from ticklablib import outdir
    with pytest.raises(outdir.Stopped) as got:
        with outdir.removed_when_stopped(), outdir.Fresh(str(tmp_path / "rep"), False):
            try:
                _stop_self()
            except BaseException as e:  # noqa: BLE001  as matplotlib does
                raise ValueError("not a valid cycler construction: %s" % e) from e
    assert got.value.code == 128 + signal.SIGTERM
    assert os.listdir(tmp_path) == []


def test_a_swallowed_stop_puts_no_folder_in_place(tmp_path):
    """A stop swallowed on its way (a broad except that goes on) must not let the
    unfinished folder be put in place as if the report were complete."""
    from ticklablib import outdir
    with pytest.raises(outdir.Stopped):
        with outdir.removed_when_stopped(), outdir.Fresh(str(tmp_path / "rep"), False):
            try:
                _stop_self()
            except BaseException:  # noqa: BLE001
                pass
    assert os.listdir(tmp_path) == []


def test_a_figure_that_swallows_a_stop_does_not_go_on_drawing(real_logs, tmp_path):
    """draw_one takes any Exception of a figure function as odd values and goes on to the
    next figure; a stop signal caught inside one ends the drawing instead."""
    from ticklablib import dataset, figures, figdata, outdir
    _, datas = dataset.load(str(real_logs["plain"]))

    def drawing_that_converts(data, options):
        try:
            _stop_self()
        except BaseException as e:  # noqa: BLE001
            raise RuntimeError(str(e)) from e
    entry = ("converts", "a figure that converts a stop", drawing_that_converts, None)
    with pytest.raises(outdir.Stopped):
        with outdir.removed_when_stopped():
            figures.draw_one(datas[0], figdata.Options(), str(tmp_path), entry)


# --- what the page says of a damaged line --------------------------------------------------

def flipped(lines, at, mask=0x04, pos=-10):
    b = bytearray(lines[at])
    b[pos] ^= mask
    return lines[:at] + [bytes(b)] + lines[at + 1:]


def test_a_damaged_lines_lost_row_is_named_and_marked_missing(tmp_path):
    """A flipped byte removed a row from the latency table; the page said only "1
    problem" and a line number."""
    lines = small_run_lines()
    at = next(i for i, line in enumerate(lines) if b'"wait":"poll"' in line
              and b'"path":"irq"' in line)
    log = tmp_path / "flip.log"
    log.write_bytes(join(flipped(lines, at)))
    code, out, _ = run_tool("report", log, "-o", tmp_path / "rep")
    assert code == 1
    page = parse_html((tmp_path / "rep" / "report.html").read_text())
    assert "lapic irq (MISSING: line %d damaged) poll missing missing" % (at + 1) in page.text
    assert "1 row(s) missing: line %d: device=lapic path=irq wait=poll" % (at + 1) in page.text
    assert "its wakeup-latency row device=lapic path=irq wait=poll (as its damaged bytes " \
        "say)" in page.text
    doc = summary_of(tmp_path / "rep")
    assert doc["lost_rows"] == [{"line": at + 1, "kind": "bad-crc", "exp": "wakeup-latency",
                                 "row": "device=lapic path=irq wait=poll",
                                 "keys": {"device": "lapic", "path": "irq", "wait": "poll"}}]


def test_a_damaged_experiment_row_is_named_under_its_table(tmp_path):
    lines = small_run_lines()
    at = next(i for i, line in enumerate(lines) if b'"exp":"period-compare"' in line
              and b'"type":"result"' in line)
    log = tmp_path / "flip.log"
    log.write_bytes(join(flipped(lines, at, pos=20)))   # the key names themselves hit
    run_tool("report", log, "-o", tmp_path / "rep")
    text = parse_html((tmp_path / "rep" / "report.html").read_text()).text
    assert "Missing from this table: timer=" in text and "(line %d)" % (at + 1) in text


# --- figures and tables that hid or misled ------------------------------------------------

def test_p999_only_from_1000_samples(real_reports):
    """summary.json's p999_ns equalled max_ns for 500-sample series."""
    doc = summary_of(real_reports["exact"][0])
    assert doc["latency"] and all(r["samples"] < 1000 for r in doc["latency"])
    assert all(r["p999_ns"] is None for r in doc["latency"])


@pytest.mark.parametrize("mode", ["exact", "plain"])
def test_no_legend_on_the_data_and_no_raw_json_on_the_page(mode, real_reports):
    out, text = real_reports[mode]
    doc = summary_of(out)
    assert len(doc["figures"]) >= 12
    assert [f["name"] for f in doc["figures"] if f["legends_on_data"]] == []
    assert "a legend lies on the data" not in text
    page = parse_html((out / "report.html").read_text()).text
    for raw in ('{"', '":', '["', "[{"):     # {"status":"off",...} was in the inventory
        assert raw not in page, page[max(0, page.find(raw) - 200):page.find(raw) + 100]


def test_clipped_jitter_histogram_shows_its_overflow(real_reports):
    """+-20 us was shown while 343 of 494 periods of timer 0 lay beyond it, uncounted."""
    doc = summary_of(real_reports["plain"][0])
    jitter = next(f for f in doc["figures"] if f["name"] == "periodic_jitter")
    page = parse_html((real_reports["plain"][0] / "report.html").read_text()).text
    assert "Beyond the buckets (hatched, at the edges): deadlines on a 5 us grid, ten: " \
        in page
    assert "periods (" in page and "below, " in page and "above)" in page
    assert jitter["overlapping_labels"] == []


def test_an_impossible_tick_overhead_is_marked_on_its_figure(real_reports):
    """Tick overheads of 150-160 % (bounds of rounds that resolved nothing) were plotted
    as figures, with no flag."""
    page = parse_html((real_reports["plain"][0] / "report.html").read_text()).text
    assert "Red crosses: " in page and "above 100 % of the CPU" in page
    exact = parse_html((real_reports["exact"][0] / "report.html").read_text()).text
    assert "Red crosses: " not in exact


def test_latency_figures_share_their_axes(real_reports):
    """The PIT and LAPIC histograms had a linear latency axis, the HPET's a log one."""
    for mode in ("exact", "plain"):
        doc = summary_of(real_reports[mode][0])
        axes = [(a["x"], tuple(round(v, 6) for v in a["xlim"])) for f in doc["figures"]
                if f["name"].startswith(("wakeup_latency_", "wakeup_cdf"))
                for a in f["axes"]]
        assert len(axes) >= 6 and len(set(axes)) == 1, (mode, set(axes))
