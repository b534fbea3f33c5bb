"""The experiments the host knows, one module each, in the kernel's order
(kernel/exp/registry.c). Adding an experiment is its module and a line here; the rest of the
tool reaches experiments only through this list and the fields of spec.Experiment.
"""

from .. import tables
from . import (hrtimer_cost, hwlat, itimer_error, percpu_latency, period_compare,
               periodic_jitter, sleep_accuracy, tick_overhead, tsc_sync, wakeup_latency)

EXPERIMENTS = tuple(m.EXPERIMENT for m in (
    period_compare,
    periodic_jitter,
    itimer_error,
    sleep_accuracy,
    tick_overhead,
    hrtimer_cost,
    wakeup_latency,
    hwlat,
    tsc_sync,
    percpu_latency,
))
BY_NAME = {e.name: e for e in EXPERIMENTS}


def get(name):
    """The experiment of that `exp` name, or None for one this tool does not know."""
    return BY_NAME.get(name) if isinstance(name, str) else None


def latency():
    """The experiment whose rows are latency series with raw samples (the report's summary
    table, the cyclictest-shaped files, compare's overlaid CDFs)."""
    return next(e for e in EXPERIMENTS if e.latency_series)


def published_entries():
    """Every published figure of every experiment, in the registry's order."""
    return tuple(p for e in EXPERIMENTS for p in e.published)


def sources():
    """Every publication quoted, once each, in the order first quoted."""
    return tuple(dict.fromkeys(p.source for p in published_entries()))


def table(name, rows):
    """The experiment's compact table: its grid, its columns, or for an experiment this tool
    does not know its scalar keys; None where its rows are shown elsewhere (the latency
    series) or nothing was measured."""
    exp = get(name)
    if exp is None:
        return tables.generic(None, rows)
    if exp.no_table:
        return None
    if exp.grid is not None:
        return exp.grid(rows)
    if exp.columns:
        return tables.plain(exp, rows, exp.columns)
    return tables.generic(exp, rows)
