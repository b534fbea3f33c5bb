"""wakeup-latency (kernel/exp/wakeup_latency.c): the time from a timer's deadline to the
interrupt entry, the device's event function or the hrtimer callback, per clock event
device. Its rows are the report's latency series: the summary's table, the raw samples,
the cyclictest-shaped files and compare's overlaid CDFs (all drawn by the generic latency
modules, which find this experiment by `latency_series`)."""

from .spec import Experiment, Figure

NAME = "wakeup-latency"

# What a row's `path` and `wait` mean, in one line each (shown wherever a path is).
PATHS = {
    "irq": "the device programmed directly: deadline to the interrupt entry stub",
    "event": "the device programmed directly: deadline to the device's event function",
    "hrtimer_irq": "an hrtimer on the device: its expiry to the interrupt entry stub",
    "callback": "an hrtimer on the device: its expiry to the callback's first instruction",
}
WAITS = {"hlt": "the CPU waits in HLT", "poll": "the CPU spins with interrupts on"}

# Figures measured by ticklab's developers for scale: not publications, and never shown as
# one (text, where it comes from).
REFERENCES = (
    ("Linux 6.1 under the same QEMU settings: a cyclictest thread wakes in 3.8 us (p99 "
     "4.35 us); timerlat sees the timer IRQ 0.73 us after the deadline (p99 0.78 us)",
     "measured for ticklab, docs/experiments.md"),
)


def drawn_by(function, *args):
    """A figure drawn by plots_latency's `function`, imported when it is drawn (the
    registry is read without matplotlib)."""
    def draw(data, options):
        from .. import plots_latency
        return getattr(plots_latency, function)(data, options, NAME, *args)
    return draw


FIGURES = (
    Figure("wakeup_latency", "Wakeup latency histograms per device",
           drawn_by("histograms", "wakeup_latency")),
    Figure("wakeup_cdf", "Wakeup latency CDF per device",
           drawn_by("cdfs", "wakeup_cdf", "wakeup_latency")),
    Figure("wakeup_timeline", "Wakeup latency over the run per device",
           drawn_by("timelines", "wakeup_timeline")),
)


EXPERIMENT = Experiment(
    NAME, "Wakeup latency", ("device", "path", "wait"),
    "time from a timer's deadline to the interrupt entry, the device's event "
    "function or the hrtimer callback, per clock event device",
    no_table=True,
    figures=FIGURES,
    reads=("min_ns", "p50_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns", "samples", "lost",
           "stale", "early", "hist", "clock"),
    references=REFERENCES,
    never_negative=("min_ns", "p50_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns"),
    never_negative_kind="latency",
    latency_series=True, paths=PATHS, waits=WAITS,
    typical_s={"quick": 1.2}, typical_icount_wall_s={"quick": 2.0})
