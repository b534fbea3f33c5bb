"""Every figure as it is rendered (issue 27): no TeX printed raw in any text of any figure
(log axes printed `$\\mathdefault{10^{7}}$` while text.parse_math was off), and no two
labels on top of each other (the tick-overhead and hrtimer-cost bar labels ran into each
other). Checked on the figures of the synthetic full run and of the real exact-mode and
plain-emulation quick runs, by reading the SVG files' text and the report's own record of
colliding labels (summary.json, from plots.overlapping_labels on the drawn figure)."""
import json
import os
import re

import pytest

from ticklablib import plots

# TeX a reader would see raw: matplotlib's mathdefault, or a $...$ span holding TeX syntax
RAW_TEX = re.compile(r"\\mathdefault|\\times|\$[^$]*[\\^_{}][^$]*\$")


def svg_texts(path):
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    return ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("}text")]


def folders(full_report, real_reports):
    return [("synthetic full run", full_report[0])] + [
        ("real %s run" % mode, out) for mode, (out, _) in real_reports.items()]


def test_no_raw_tex_in_any_figure(full_report, real_reports):
    checked = 0
    for what, out in folders(full_report, real_reports):
        svgs = [f for f in os.listdir(out / "plots") if f.endswith(".svg")]
        assert len(svgs) >= 10, what
        for name in svgs:
            texts = svg_texts(out / "plots" / name)
            assert texts, (what, name)
            raw = [t for t in texts if RAW_TEX.search(t)]
            assert not raw, (what, name, raw[:3])
            checked += 1
    assert checked >= 40


def test_no_label_collides_with_another(full_report, real_reports):
    for what, out in folders(full_report, real_reports):
        doc = json.loads((out / "summary.json").read_text())
        assert doc["figures"], what
        for fig in doc["figures"]:
            assert fig["overlapping_labels"] == [], (what, fig["name"],
                                                     fig["overlapping_labels"][:3])


def test_log_axes_are_labelled_in_words(real_reports):
    """The plain run's sleep-error axes run from -10 ms to 10 ms, in words."""
    texts = svg_texts(real_reports["plain"][0] / "plots" / "sleep_error.svg")
    assert "10 ms" in texts and "-1 us" in texts and "100 us" in texts


def test_the_checks_can_fail(tmp_path):
    """matplotlib's own log labels are caught as raw TeX; two texts in one place as a
    collision."""
    fig = plots.new_figure("a log axis, matplotlib's labels")
    ax = fig.add_subplot()
    ax.plot([1, 10, 1e6], [1, 2, 3])
    ax.set_xscale("log")
    ax.text(0.5, 0.5, "here", transform=ax.transAxes)
    ax.text(0.5, 0.5, "here too", transform=ax.transAxes)
    path = tmp_path / "raw.svg"
    fig.savefig(path, format="svg")
    assert any(RAW_TEX.search(t) for t in svg_texts(path))
    assert ("here", "here too") in plots.overlapping_labels(fig)
    plots.plain_ticks(fig)
    fig.savefig(path, format="svg")
    assert not any(RAW_TEX.search(t) for t in svg_texts(path))


@pytest.mark.parametrize("value,words", [(0, "0"), (1500, "1.5 us"), (-10000000, "-10 ms"),
                                         (250, "250 ns")])
def test_durations_in_words(value, words):
    assert plots.duration_text(value) == words


def test_record_dollars_stay_text(tmp_path):
    """A record's "$" is not TeX: text.parse_math stays off for record text."""
    fig = plots.new_figure("device $\\no{$")
    fig.add_subplot().plot([1, 2], [1, 2])
    fig.savefig(tmp_path / "d.svg", format="svg")
    assert "device $\\no{$" in svg_texts(tmp_path / "d.svg")
