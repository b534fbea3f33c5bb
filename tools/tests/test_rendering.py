"""Every figure as it is rendered: no TeX printed raw in any text of any figure
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


def _crowded_figure():
    """Five panels, three to a row, with what pushes a layout hardest: long tick labels,
    a legend beside, one below, titles, a two-line clock line."""
    fig = plots.new_figure("five panels and their labels", panels=5, cols=3)
    axes = plots.panel_axes(fig, 5)
    for k, ax in enumerate(axes):
        ax.plot([1, 2, 3], [10 ** k, 2 * 10 ** (k + 3), 3 * 10 ** k], label="series %d" % k)
        ax.set_title("panel %d" % k)
        ax.set_xlabel("requested sleep (ns, log)")
        ax.set_ylabel("woke - requested (ns)")
        ax.set_xscale("log")
    plots.legend_beside(axes[2])
    plots.legend_below(axes[3], ncol=1)
    plots.name_clock(fig, "clock: time_ns() on hpet, resolution 10 ns " * 5)
    return fig, axes


def test_grid_layout_keeps_labels_inside_and_apart(tmp_path):
    """The panels' own layout: no label on another or past the figure's edge, no legend
    on data, the columns as wide as each other and the rows as tall, every panel below
    the title and above the clock line."""
    fig, axes = _crowded_figure()
    saved = plots.save(plots.Drawn("crowded", "crowded", fig, "", "clock"), str(tmp_path))
    assert saved.overlaps == () and saved.legends_on_data == ()
    boxes = [ax.get_window_extent() for ax in axes]
    assert len({round(b.width, 3) for b in boxes}) == 1
    assert len({round(b.height, 3) for b in boxes}) == 1
    title = fig._suptitle.get_window_extent()
    clock = fig._supxlabel.get_window_extent()
    for ax, b in zip(axes, boxes):
        tight = ax.get_tightbbox()
        assert tight.y1 <= title.y0 and tight.y0 >= clock.y1, ax.get_title()
    assert boxes[0].x0 > 40   # room for the tick labels and the y label


def test_a_label_past_the_edge_is_caught():
    """A text the layout does not place, reaching out of the figure, is reported against
    the figure's edge."""
    fig, _ = _crowded_figure()
    fig.text(0.97, 0.5, "a note that runs off the right of the figure")
    assert ("a note that runs off the right of the figure", plots.EDGE) in \
        plots.overlapping_labels(fig)


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


def test_below_resolution_is_drawn_as_its_bound():
    """The tick-overhead plot drew "below resolution" as 0 % while the table said "at most
    118.96 %": such a row is a hollow triangle at its bound; an hrtimer-cost batch
    mean below resolution a hollow hatched bar to its uncertainty."""
    from streams import join, record
    from ticklablib import dataset, figdata, records
    from tooling import figure
    recs = [{"type": "boot"},
            {"type": "result", "exp": "tick-overhead", "variant": "ticklab", "tick_ns": 100000,
             "clock": "tsc", "below_resolution": True, "overhead_pct": "0.0000",
             "overhead_bound_pct": "118.9600"},
            {"type": "result", "exp": "tick-overhead", "variant": "ticklab", "tick_ns": 1000000,
             "clock": "tsc", "below_resolution": False, "overhead_pct": "0.0328",
             "overhead_uncertainty_pct": "0.0010", "overhead_bound_pct": "0.0338"},
            {"type": "result", "exp": "hrtimer-cost", "op": "restart", "device": "pit",
             "variant": "batch", "clock": "tsc", "mean_cyc": "3.00", "uncertainty_cyc": "9.50",
             "below_resolution": True}]
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    data = dataset.group(records.parse_stream(join(record(r) for r in recs))[0], 1, "b")
    tick = figure("tick_overhead")(data, figdata.Options())[0].fig.axes[0]
    points = {(line.get_marker(), x, y) for line in tick.get_lines()
              for x, y in zip(line.get_xdata(), line.get_ydata())}
    assert ("v", 100000, 118.96) in points and ("o", 1000000, 0.0328) in points
    assert not any(y == 0 for _, _, y in points)
    bar = figure("hrtimer_cost")(data, figdata.Options())[0].fig.axes[0].patches[0]
    assert bar.get_width() == 9.5 and not bar.get_fill() and bar.get_hatch() == "//"


def test_png_holds_the_canvas_pixel_for_pixel(tmp_path):
    """The figure's PNG, read back by PIL, is the drawn canvas without its alpha, every
    pixel; an odd size and colours in every channel included."""
    import numpy as np
    from PIL import Image
    fig = plots.new_figure("pixels")
    ax = fig.add_subplot()
    ax.plot([0, 1, 2], [3, 1, 2], color="#12ab7f")
    ax.fill_between([0, 1], [0, 1], color="#fe0310", alpha=0.5)
    fig.set_size_inches(3.33, 1.77)
    fig.canvas.draw()
    path = tmp_path / "f.png"
    plots.write_png(fig, str(path))
    canvas = np.asarray(fig.canvas.buffer_rgba())
    with Image.open(path) as img:
        assert img.mode == "RGB" and img.size == (canvas.shape[1], canvas.shape[0])
        assert (np.asarray(img) == canvas[:, :, :3]).all()
