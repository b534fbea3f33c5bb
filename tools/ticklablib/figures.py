"""Every figure of the report, in its order, and `render`, which draws them to disk.

The figure functions (the calibration's in plots_calibration.py, each experiment's in its
module, listed by the registry) each take a dataset.RunData and the drawing options and
return a list of plots.Drawn figures, or raise figdata.Absent with the reason they cannot
draw any. This module is the only one that knows them all; they know only plots.py (the
machinery) and figdata.py (their inputs), so no module imports one that imports it back. Without python3-matplotlib every figure is absent with that reason and
the rest of the report is still written.
"""

import os

from . import experiments
from .figdata import Absent, Options, Plot

NO_MATPLOTLIB = ("python3-matplotlib is not installed (scripts/setup-deps.sh installs it): "
                 "no figure can be drawn")


def figures():
    """(key, title, function, experiment) of every figure, in the report's order; raises
    ImportError without matplotlib."""
    from . import plots_calibration
    return tuple((key, title, draw, None) for key, title, draw in plots_calibration.FIGURES) \
        + tuple((f.key, f.title, f.draw, e.name) for e in experiments.EXPERIMENTS
                for f in e.figures)


def render(data, outdir, options=None, svg=True, measure=True):
    """Draw every figure this run supports into outdir as PNG (and SVG unless `svg` is
    false; `measure`: look for colliding labels). Returns ([Plot], [(key, title, reason not
    drawn)])."""
    options = options or Options()
    try:
        known = figures()
        from . import plots
    except ImportError:
        return [], [("figures", "every figure", NO_MATPLOTLIB)]
    os.makedirs(outdir, exist_ok=True)
    drawn, absent = [], []
    for key, title, draw, exp in known:
        try:
            made = draw(data, options)
        except Absent as e:
            absent.append((key, title, str(e)))
            continue
        except Exception as e:  # noqa: BLE001  odd values must not cost the whole report
            absent.append((key, title, "could not be drawn from these records: %s: %s"
                           % (type(e).__name__, e)))
            continue
        for d in made:
            png, svgfile = plots.save(d, outdir, svg)
            drawn.append(Plot(d.name, d.title, d.caption + " " + d.clock[0].upper()
                              + d.clock[1:] + ".", png, svgfile, exp, d.clock,
                              tuple(plots.overlapping_labels(d.fig)) if measure else ()))
    return drawn, absent
