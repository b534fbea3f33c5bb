"""percpu-latency (kernel/exp/percpu_latency.c): each CPU's own timers, their wake-ups and
periodic jitter, idle and with the other CPUs loaded."""

from ..figdata import Absent, clock_words, partial_note, rows_with, text_of
from ..values import num
from .spec import Experiment, Figure

NAME = "percpu-latency"


def draw_percentiles(data, options):
    """p50, p99 and max of each CPU and device."""
    from ..plots import Drawn, legend_beside, name_clock, new_figure
    from ..plots_latency import COLOURS, MARKS
    rows = rows_with(data, NAME, "p50_ns")
    cpus = {text_of(r.get("cpu")) for r in rows}
    if len(cpus) < 2:
        raise Absent("%s: the figure compares CPUs, and this run measured %s; its rows are "
                     "in the table" % (NAME, "one" if cpus else "none"))
    fig = new_figure("Per-CPU wake-up latency: p50, p99 and max per CPU and device")
    ax = fig.add_subplot()
    names = ["cpu %s %s %s" % (text_of(r.get("cpu")), text_of(r.get("device")),
                               text_of(r.get("load"))) for r in rows]
    for i, (key, text, _, marker) in enumerate(MARKS):
        ax.plot(range(len(rows)), [num(r.get(key)) for r in rows], marker=marker,
                linestyle="none", label=text, color=COLOURS[i])
    ax.set_xticks(range(len(rows)), names, rotation=20, fontsize=8)
    ax.set_ylabel("deadline to callback (ns)")
    values = [num(r.get(k)) for r in rows for k, _, _, _ in MARKS if num(r.get(k))]
    if values and min(values) > 0 and max(values) / min(values) > 30:
        ax.set_yscale("log")
    legend_beside(ax, fontsize=8)
    clock = clock_words(data, rows)
    name_clock(fig, clock)
    return [Drawn("percpu_latency", "Per-CPU wake-up latency", fig,
                  "Each CPU's own timers, idle and with the other CPUs busy." +
                  partial_note(data, NAME), clock)]


EXPERIMENT = Experiment(
    NAME, "Per-CPU latency", ("cpu", "device", "load"),
    "each CPU's own timers: wake-ups and periodic jitter, idle and loaded",
    columns=("cpu", "device", "load", "samples", "min_ns", "p50_ns", "p99_ns", "max_ns",
             "jitter_stddev_max_ns"),
    figures=(Figure("percpu_latency", "Per-CPU wake-up latency", draw_percentiles),),
    never_negative=("min_ns", "p50_ns", "p99_ns", "max_ns"), never_negative_kind="latency",
    typical_s={"quick": 0.6}, typical_icount_wall_s={"quick": 0.2})
