"""tsc-sync (kernel/exp/tsc_sync.c): a TSC ping-pong between every pair of CPUs, its
backward steps and offsets."""

from .spec import Experiment

NAME = "tsc-sync"

EXPERIMENT = Experiment(
    NAME, "TSC synchronisation", ("cpu", "cpu_a", "cpu_b", "mode"),
    "TSC ping-pong between every pair of CPUs: backward steps and offsets",
    columns=("cpu", "cpu_a", "cpu_b", "mode", "tsc_adjust", "rounds", "backward_steps",
             "max_backward_cyc", "offset_cyc", "offset_uncertainty_cyc", "rtt_min_cyc"),
    verdict_topics={"tsc_sync": "one TSC on every CPU"},
    typical_s={"quick": 0.01}, typical_icount_wall_s={"quick": 0.05})
