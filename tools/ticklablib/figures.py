"""Every figure of the report, in its order, and `render`, which draws them to disk.

The figure functions (the calibration's in plots_calibration.py, each experiment's in its
module, listed by the registry; the summary's overlay of every device in plots_overview.py)
each take a dataset.RunData and the drawing options and return a list of plots.Drawn
figures, or raise figdata.Absent with the reason they cannot draw any. This module is the
only one that knows them all; they know only plots.py (the machinery) and figdata.py (their
inputs), so no module imports one that imports it back. Without python3-matplotlib every
figure is absent with that reason and the rest of the report is still written.

Each figure is drawn once (plots.save); with options.workers > 1 the figure functions run
in that many forked processes at once, the results kept in the report's order.
"""

import contextlib
import gc
import os

from . import experiments
from . import outdir as outdir_mod
from .figdata import Absent, Options, Plot

NO_MATPLOTLIB = ("python3-matplotlib is not installed (scripts/setup-deps.sh installs it): "
                 "no figure can be drawn")
SUMMARY = "summary"   # the figures of the page's first screen (Plot.exp)


def figures():
    """(key, title, function, experiment) of every figure, in the report's order; raises
    ImportError without matplotlib."""
    from . import plots_calibration, plots_overview
    return tuple((key, title, draw, SUMMARY) for key, title, draw in plots_overview.FIGURES) \
        + tuple((key, title, draw, None) for key, title, draw in plots_calibration.FIGURES) \
        + tuple((f.key, f.title, f.draw, e.name) for e in experiments.EXPERIMENTS
                for f in e.figures)


def draw_one(data, options, outdir, entry, measure=True):
    """One figure function's figures written: ([Plot], [(key, title, why not drawn)])."""
    from . import plots
    key, title, draw, exp = entry
    try:
        made = draw(data, options)
    except Absent as e:
        return [], [(key, title, str(e))]
    except Exception as e:  # noqa: BLE001  odd values must not cost the whole report
        outdir_mod.raise_if_stopped()   # not odd values: a stop signal, caught on its way
        return [], [(key, title, "could not be drawn from these records: %s: %s"
                     % (type(e).__name__, e))]
    out = []
    for d in made:
        saved = plots.save(d, outdir, options.svg, measure)
        out.append(Plot(d.name, d.title, d.caption, saved.png, saved.svg, exp, d.clock,
                        saved.overlaps, saved.legends_on_data, saved.axes))
    return out, []


_JOB = {}


def _draw_job(i):
    """Child process: the i'th figure function of the job this process was forked for."""
    job = _JOB
    return draw_one(job["data"], job["options"], job["outdir"], job["known"][i],
                    job["measure"])


def render(data, outdir, options=None, measure=True):
    """Draw every figure this run supports into outdir as PNG (and SVG with options.svg;
    `measure`: look for colliding labels and legends on data). Returns ([Plot], [(key,
    title, reason not drawn)])."""
    options = options or Options()
    try:
        known = figures()
    except ImportError:
        return [], [("figures", "every figure", NO_MATPLOTLIB)]
    os.makedirs(outdir, exist_ok=True)
    with _few_collections():
        results = None
        if options.workers > 1 and len(known) > 1:
            results = _in_processes(data, options, outdir, known, measure)
        if results is None:
            results = [draw_one(data, options, outdir, entry, measure) for entry in known]
    drawn = [p for got, _ in results for p in got]
    absent = [a for _, gone in results for a in gone]
    return drawn, absent


@contextlib.contextmanager
def _few_collections():
    """Python's cycle collector kept out of the drawing's way: what is loaded already (the
    modules, the run's records) set aside where it is never traversed again, and a
    collection after 50,000 new objects, not 700. A figure makes hundreds of thousands of
    short-lived objects; with the defaults the collector took about 7 % of a report's
    instructions (callgrind), walking the same long-lived objects over and over."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(50000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def _in_processes(data, options, outdir, known, measure):
    """The figure functions in options.workers forked processes (matplotlib is imported
    already, so a child starts at once); None where fork is not to be had."""
    import multiprocessing
    from . import plots
    _JOB.update(data=data, options=options, outdir=outdir, known=known, measure=measure)
    try:
        # what every child would otherwise do again: the fonts loaded and a first text laid
        # out; and the parent's objects kept out of the collector's way, so a child's
        # collections do not write to (and copy) every page it inherited
        plots.warm_up()
        gc.freeze()   # what warm_up made, too
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(min(options.workers, len(known)),
                      initializer=outdir_mod.child_signals) as pool:
            return pool.map(_draw_job, range(len(known)), chunksize=1)
    except (OSError, ValueError):
        return None
    finally:
        _JOB.clear()


def default_workers(runs, svg):
    """Processes to draw one run's figures in when not told: one for a log of one run
    drawn as PNG, where a second process gains little (on a 2-CPU machine two saved 0.1 to
    0.4 s of a 2.5 to 2.9 s report and cost 1.0 to 1.4 s more CPU: each child pays its own
    start, and the serial part, reading and writing the run, does not shrink); workers()
    when there is more to draw (several runs, or SVG as well)."""
    return workers() if runs > 1 or svg else 1


def workers():
    """Processes to draw in: the CPUs this process may run on, at most 4 (a report draws
    about fifteen figures)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, 4))
