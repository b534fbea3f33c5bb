"""The figures' faults once found, each checked on the axes themselves, drawn from the
real icount and plain-emulation captures (fixtures/) without writing files."""
import gzip
import os

import pytest

from ticklablib import dataset, figdata, plots_calibration, records
from tooling import figure

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def run_of(name):
    with gzip.open(os.path.join(FIXTURES, name), "rb") as f:
        runs = records.parse_stream(f.read())
    return dataset.group(runs[0], 1, name)


@pytest.fixture(scope="module")
def icount():
    return run_of("icount0-quick.log.gz")


@pytest.fixture(scope="module")
def tcg():
    return run_of("tcg-quick.log.gz")


def drawn(fn, data, name=None):
    made = fn(data, figdata.Options())
    return next(d for d in made if name is None or d.name == name)


def row(data, exp, **keys):
    return next(r for r in data.results[exp] if all(r.get(k) == v for k, v in keys.items()))


def test_latency_histogram_axis_fitted_to_the_data(icount):
    """At 19bd55f the x axis ran 10 ns to 16 ms for data under 2 us, log2 buckets on it.
    It is fitted to every device's data, one axis for all (the PIT's and LAPIC's were
    linear and the HPET's log, each on its own range, so no two could be compared)."""
    every = figure("wakeup_latency")(icount, figdata.Options())
    d = next(x for x in every if x.name == "wakeup_latency_lapic")
    irq = d.fig.axes[0]
    assert irq.get_title() == "path irq" and irq.get_xscale() == "linear"
    lo, hi = irq.get_xlim()
    rows = [r for r in icount.results["wakeup-latency"] if r.get("min_ns") is not None]
    least, most = min(r["min_ns"] for r in rows), max(r["max_ns"] for r in rows)
    assert least - 0.1 * (most - least) <= lo < least and most < hi <= most * 1.1
    assert {(ax.get_xscale(), ax.get_xlim()) for x in every for ax in x.fig.axes} == {
        ("linear", (lo, hi))}   # shared: every panel of every device
    hlt, poll = row(icount, "wakeup-latency", device="lapic", path="irq", wait="hlt"), \
        row(icount, "wakeup-latency", device="lapic", path="irq", wait="poll")
    bars = [p for p in irq.patches]
    assert min(b.get_x() for b in bars) == hlt["min_ns"]  # clipped to the measured min
    lines = {round(x) for line in irq.get_lines() for x in line.get_xdata()}
    marks = {round(r[k]) for r in (hlt, poll) for k in ("p50_ns", "p99_ns", "max_ns")}
    assert len(marks) >= 4 and marks <= lines  # p50/p99/max marked for both waits
    assert "clock: time_ns() on hpet, resolution 10 ns" in d.clock


def test_tails_of_every_device_in_one_figure_with_markers(icount):
    """The CDFs were linear 0-1, one figure per device: everything past p99 lay flat
    against 1. One figure now, a panel per device, the share later than each latency on a
    log axis down to p99.9."""
    d = drawn(figure("wakeup_cdf"), icount, "wakeup_cdf")
    assert [ax.get_title() for ax in d.fig.axes] == ["pit", "lapic", "hpet"]
    assert {ax.get_yscale() for ax in d.fig.axes} == {"log"}
    assert all(ax.get_ylim()[0] < 1e-3 for ax in d.fig.axes)   # p99.9 is on the axis
    pit = d.fig.axes[0]
    curves = [line for line in pit.get_lines() if len(line.get_xdata()) > 1
              and line.get_linestyle() != ":"]
    assert len(curves) == 8   # one curve per path and wait
    legend = d.fig.axes[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [
        "path irq", "path event", "path hrtimer_irq", "path callback", "wait hlt",
        "wait poll"]
    irq = row(icount, "wakeup-latency", device="pit", path="irq", wait="hlt")
    curve = curves[0]
    assert curve.get_ydata()[0] == 1   # every wake-up is later than the min
    at = list(curve.get_xdata()).index(irq["p50_ns"])   # the kernel's p50 is on the curve
    assert abs(curve.get_ydata()[at] - 0.5) < 1e-9
    p99 = [line for line in pit.get_lines() if line.get_marker() == "^"]
    assert irq["p99_ns"] in [line.get_xdata()[0] for line in p99]


def test_tails_go_log_for_a_long_tail(tcg):
    d = drawn(figure("wakeup_cdf"), tcg, "wakeup_cdf")
    assert {ax.get_xscale() for ax in d.fig.axes} == {"log"}
    assert "before the deadline" in d.caption  # hpet hrtimer_irq min -98442 ns


def test_sleep_error_shows_early_wake_ups(icount):
    """At 19bd55f negative errors could not sit on the log axis and were left out."""
    d = drawn(figure("sleep_error"), icount)
    tick = next(ax for ax in d.fig.axes if ax.get_title() == "mode tick")
    assert tick.get_yscale() == "symlog" and tick.get_ylim()[0] < -100000
    early = row(icount, "sleep-accuracy", mode="tick", tick_ns=1000000, request_ns=100000000)
    assert early["mean_err_ns"] < 0
    ys = [y for line in tick.get_lines() for y in line.get_ydata()]
    assert early["mean_err_ns"] in ys
    assert "woke early at least once" in d.caption


def test_calibration_chosen_is_visible(icount):
    """The chosen method's bar had zero height."""
    d = drawn(plots_calibration.calibration, icount)
    ax = d.fig.axes[0]
    chosen = [t for t in ax.texts if t.get_text() == "chosen"]
    assert len(chosen) == 2  # tsc and lapic
    markers = [line.get_marker() for line in ax.get_lines()]
    assert markers.count("D") == 2


def test_period_compare_whole_periods_and_own_scales(icount):
    d = drawn(figure("period_compare"), icount)
    assert [ax.get_title() for ax in d.fig.axes] == ["timer hrtimer", "timer jiffies"]
    for ax in d.fig.axes:
        assert ax.get_yscale() == "linear"
        ticks = [t for t in ax.get_xticks() if 1 <= t <= 4]
        assert ticks and all(float(t).is_integer() for t in ticks)


def test_periodic_jitter_axis_fitted_and_stddev_shown(icount):
    d = drawn(figure("periodic_jitter"), icount)
    titles = [ax.get_title() for ax in d.fig.axes]
    assert titles[-1] == "interval stddev per timer"
    assert "no grid (the device's 10 ns cycle)" in titles
    fine = d.fig.axes[titles.index("no grid (the device's 10 ns cycle)")]
    lo, hi = fine.get_xlim()
    assert -3000 <= lo and hi <= 3000  # not the whole +-20 us


def test_tick_overhead_names_the_tsc(icount):
    d = drawn(figure("tick_overhead"), icount)
    assert d.fig.axes[1].get_xlabel() == "TSC cycles per tick interrupt (median)"
    assert d.clock.startswith("clock: TSC at ")


def test_a_record_s_clock_device_names_the_clock(icount):
    """Where a row names the device behind its clock (`clock_device`) and its resolution,
    the figure says them; rows without them name the selected source, as before."""
    plain = {"clock": "time_ns"}
    assert dataset.clock_of(icount, plain)[1] == "time_ns() on hpet"
    named = {"clock": "time_ns", "clock_device": "acpi_pm", "clock_resolution_ns": 280}
    clock, words, res, where = dataset.clock_of(icount, named)
    assert (words, res) == ("time_ns() on acpi_pm", 280) and "record" in where
    assert figdata.clock_words(icount, [named]).startswith(
        "clock: time_ns() on acpi_pm, resolution 280 ns")
    other = {"clock": "counter", "clock_device": "pit"}
    assert dataset.clock_of(icount, other)[1] == "counter on pit"
    assert dataset.clock_of(icount, {"clock": "tsc", "clock_device": "tsc"})[1].startswith("TSC")
    assert dataset.clock_of(icount, {"clock_device": "hpet"})[1] == "hpet"
    # the kernel's own keys: time_ns's device and resolution on every result row, used only
    # where the row's clock is time_ns (a TSC row stays the TSC's)
    kernel = {"clock": "time_ns", "time_ns_device": "acpi_pm", "time_ns_resolution_ns": 280}
    assert dataset.clock_of(icount, kernel)[1:3] == ("time_ns() on acpi_pm", 280)
    tsc_row = {"clock": "tsc", "time_ns_device": "acpi_pm", "time_ns_resolution_ns": 280}
    assert dataset.clock_of(icount, tsc_row)[1].startswith("TSC")
