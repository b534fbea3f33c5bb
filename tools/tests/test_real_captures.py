"""The tool on two real captures of the quick profile (fixtures/README.md): one under
icount, one in plain emulation, each with the capture record `capture` wrote beside it."""
import gzip
import json
import os
import shutil

import pytest

from pages import parse_html
from tooling import run_tool
from ticklablib import dataset, provenance, reportpage, summary

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def unpack(tmp_path, name):
    log = tmp_path / name
    with gzip.open(os.path.join(FIXTURES, name + ".gz"), "rb") as f:
        log.write_bytes(f.read())
    shutil.copy(os.path.join(FIXTURES, name + ".capture.json"), str(log) + ".capture.json")
    return log


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("real")
    return unpack(tmp, "icount0-quick.log"), unpack(tmp, "tcg-quick.log")


def test_icount_report_says_instruction_counts(logs, tmp_path):
    code, out, err = run_tool("report", logs[0], "-o", tmp_path / "rep", "--summary")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1] == "environment: virtual time (icount shift=0): figures are instruction counts"
    assert any(line.split() == ["lapic", "irq", "hlt", "173", "182", "191", "191", "500", "0",
                                "0"] for line in lines)
    assert "IMPOSSIBLE" not in out
    assert "experiments: 10 of 10 ran to their end" in out
    page = parse_html((tmp_path / "rep" / "report.html").read_text())
    assert "virtual time (icount shift=0): figures are instruction counts" in page.text
    assert "-icount shift=0" in page.text and "AMD EPYC" in page.text
    # the overlay of every device first, one tail figure; no per-CPU figure from one CPU
    assert len(page.images) == 12
    assert "the figure compares CPUs, and this run measured one" in page.text
    doc = json.loads((tmp_path / "rep" / "summary.json").read_text())
    assert doc["environment"]["mode"] == "icount" and doc["capture"]["exit_code"] == 33
    assert len(doc["latency"]) == 24


def test_plain_emulation_summary_says_host_noise_and_flags_the_impossible(logs):
    """The summary and the page without drawing the figures (the icount test draws)."""
    runs, datas = dataset.load(str(logs[1]))
    capture, problem = provenance.load(str(logs[1]))
    s = summary.build(datas[0], runs, capture, problem, "tcg-quick.log")
    out = "\n".join(summary.terminal_lines(s))
    assert out.splitlines()[1] == "environment: plain emulation (TCG): figures are host noise"
    assert "IMPOSSIBLE FIGURES (negative latency, cost or overhead, a tick costing more " \
        "than its period, an early sleep): 6 row(s)" in out
    assert "verdict tick_rate: HZ=10000000 keeps the tick under 1 %" in out
    assert "wakeup-latency device=hpet path=hrtimer_irq wait=hlt: min_ns=-98442" in out
    page = parse_html(reportpage.build(datas[0], runs, s, [], [], [], "tcg-quick.log"))
    assert "1 series report wake-ups before their deadline" in page.text
    assert "plain emulation (TCG): figures are host noise" in page.text


def test_compare_icount_with_plain_emulation(logs):
    code, out, err = run_tool("compare", *logs)
    assert code == 0, err
    # the modes differ, and it is said before anything else
    assert out.index("WARNING: these runs were made in different timing modes ([1] exact "
                     "mode") < out.index("settings (")
    settings = out[out.index("settings ("):out.index("verdicts (")].splitlines()
    assert settings[0] == "settings (1 differ):"
    assert settings[2].split() == ["*", "icount", "shift", "0", "-"]
    assert settings[3].startswith("  the same in every run: accelerator tcg; machine q35;")
    verdicts = out[out.index("verdicts ("):out.index("changes beyond")]
    assert "verdicts (4 differ, * ):" in verdicts
    assert "fastest clock event device [2]: pit:" in verdicts
    changes = out[out.index("changes beyond"):].splitlines()
    # icount against plain emulation: the floor is the pair's own spread, so what stands
    # out is what flipped sign, the plain run's impossible negative tick overheads
    assert changes[2].split()[:2] == ["tick-overhead", "tick_ns=10000000"]
    assert "noise floor: plain emulation (TCG) with exact mode: timings move" in out
    assert "in some runs only" in out and ", 0 in some runs only" in out.splitlines()[-1]
