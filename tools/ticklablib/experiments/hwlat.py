"""hwlat (kernel/exp/hwlat.c): gaps in a busy loop reading the clock, the time the CPU was
taken away (SMIs and the like)."""

from .spec import Experiment

NAME = "hwlat"

EXPERIMENT = Experiment(
    NAME, "Hardware latency (SMI) detector", ("window_ns", "threshold_ns"),
    "gaps in a busy loop reading the clock: time the CPU was taken away",
    columns=("window_ns", "windows", "threshold_ns", "reads", "gaps", "max_gap_ns",
             "total_gap_ns", "smi_delta"),
    typical_s={"quick": 0.11}, typical_icount_wall_s={"quick": 0.2})
