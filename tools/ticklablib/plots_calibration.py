"""The calibration's figure: each method's rate against the chosen one (plots.py has the
shared machinery; each experiment's figures are in its module, experiments/)."""

from .figdata import Absent, unique_names
from .plots import Drawn, name_clock, new_figure, symlog_y
from .values import num


def calibration(data, options):
    rows = [r for r in data.by_type.get("calibration", [])
            if r.get("status") == "ok" and num(r.get("disagreement_ppb")) is not None]
    if not rows:
        raise Absent("no calibration record with status ok and a disagreement_ppb")
    fig = new_figure("Calibration: each method's disagreement with the chosen rate")
    ax = fig.add_subplot()
    names = unique_names(["%s by %s/%s" % (r.get("target"), r.get("method"), r.get("ref"))
                          for r in rows])
    ppm = [num(r.get("disagreement_ppb")) / 1000 for r in rows]
    err = [(num(r.get("uncertainty_ppb")) or 0) / 1000 for r in rows]
    for i, r in enumerate(rows):
        chosen = r.get("chosen") is True
        colour = "tab:green" if chosen else ("tab:red" if r.get("agrees") is False
                                             else "tab:blue")
        ax.errorbar([i], [ppm[i]], yerr=[err[i]], marker="D" if chosen else "o",
                    markersize=7 if chosen else 5, color=colour, capsize=4, linewidth=1.4)
        ax.annotate("chosen" if chosen else "%+.3g ppm" % ppm[i], (i, ppm[i]),
                    textcoords="offset points", xytext=(8, 4), fontsize=7, color=colour)
    ax.axhline(0, color="black", linewidth=0.8)
    floor = min([e for e in err if e > 0] or [1.0])
    symlog_y(ax, max(floor, 0.1), [p + e for p, e in zip(ppm, err)]
             + [p - e for p, e in zip(ppm, err)])
    ax.set_xticks(range(len(rows)), names, rotation=25, fontsize=8)
    ax.set_ylabel("off the chosen rate\n(ppm, symlog)")  # two lines: the panel is short
    ax.set_xlim(-0.6, len(rows) - 0.4)
    clock = ("clock: each counter timed against its reference (the TSC against hpet, acpi_pm, "
             "pit; the LAPIC against the TSC); resolution: each bar, its uncertainty bound")
    name_clock(fig, clock)
    other = len(data.by_type.get("calibration", [])) - len(rows)
    caption = ("Each method's rate against the chosen one (green diamond at 0, its bar the "
               "chosen method's own bound); red: the two intervals do not overlap.")
    if other:
        caption += " %d method(s) skipped or failed (see the table)." % other
    return [Drawn("calibration", "Calibration disagreement per method", fig, caption, clock)]


FIGURES = (("calibration", "Calibration disagreement per method", calibration),)
