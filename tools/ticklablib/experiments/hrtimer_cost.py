"""hrtimer-cost (kernel/exp/hrtimer_cost.c): the cycles one hrtimer operation costs, as
means over a million operations (the source's batch) and each timed alone (per_op); NuttX's
cycles beside them, its table one column per device, and its bars."""

from ..figdata import Absent, clock_words, partial_note, rows_of, text_of
from ..published import Published, Source, for_row, value_for
from ..tables import Sources, Table, number, pub_text, skip_notes
from ..values import cell, measured, num
from .spec import Experiment, Figure

NAME = "hrtimer-cost"

NUTTX = Source(
    "Fix-Point on apache/nuttx PR #17675, NuttX non-SMP on its intel64:nsh configuration "
    "(github.com/apache/nuttx/pull/17675#issuecomment-3701557519)",
    "nuttx-pr17675-hrtimer-cost.txt",
    ("Fix-Point commented on PR #17675",
     "https://github.com/apache/nuttx/pull/17675#issuecomment-3701557519", "intel64:nsh",
     "non-SMP"))

def _nuttx(op, text, quote, value=None, lo=None, note=""):
    return Published(NAME, (("op", op), ("variant", "batch")), "mean_cyc", text,
                     NUTTX, (quote,), value=value, lo=lo, note=note)


# What NuttX's restart includes: its interrupt pair (its 48 = about 13 + 35). ticklab's
# hrtimer calls take no pair, so its `restart` and `cancel_restart` rows stand beside the
# figure without it, and the `_irqsave` rows, the same inside irq_save() / irq_restore(),
# beside the figures with it.
PAIR_NOTE = ("the source's 48 and 73 include its interrupt pair (35 cycles: 48 - 35 is its "
             "\"about 13\"); ticklab's calls take none, its _irqsave rows add the pair")
CANCEL_NOTE = ("the source does not say whether its cancel + restart takes one pair or one "
               "per call: ticklab's takes one around both (with two, 73 - 70 would leave 3 "
               "cycles for a cancel and a restart, fewer than its restart alone); it gives no "
               "cancel + restart without the pair, so ticklab's cancel_restart row has none")


def _published():
    """NuttX's cycles per operation, each beside the row that does what the figure counts."""
    return (
        _nuttx("restart", "about 13 cycles, excluding synchronization",
               "In other words, excluding synchronization, the average overhead for restart "
               "is only about 13 cycles (queue insertion)", 13, note=PAIR_NOTE),
        _nuttx("restart_irqsave", "48 CPU cycles (~23 ns)",
               "the average overhead for both implementation tests running 1 million times "
               "is 48 CPU cycles (~23 ns)", 48, note=PAIR_NOTE),
        _nuttx("cancel_restart_irqsave", "73 cycles (~35 ns)",
               "the overhead for `cancel + restart` (including the synchronization), when no "
               "hardware timer reprogramming is involved, is only 73 cycles (~35 ns)", 73,
               note=CANCEL_NOTE),
        _nuttx("restart_reprogram", "over 1000 CPU cycles",
               "reprogramming the actual hardware timer (over 1000 CPU cycles)", lo=1000),
        _nuttx("irq_save_restore", "35 cycles",
               "the time consumed by enabling/disabling interrupts "
               "(`up_irq_save`/`up_irq_restore`) is 35 cycles", 35),
    )


PUBLISHED = _published()


# What a row's "cycles" are (hrtimer-cost's `unit`): the TSC counts guest instructions
# under QEMU's -icount (virtual time) and CPU cycles on a real CPU.
COST_UNITS = {"instructions": "instructions: the TSC counts them under -icount",
              "tsc_cycles": "TSC cycles"}


def cost_unit(rows):
    """(the unit of the rows' cycle figures in words, a warning when they are not the CPU
    cycles a publication counts, or None)."""
    units = list(dict.fromkeys(cell(r.get("unit")) for r in rows
                               if r.get("unit") is not None))
    if not units:
        return ("TSC counts", "the records do not say what their TSC counted (cycles on a "
                "real CPU, instructions under QEMU -icount: a newer kernel says so in `unit`); "
                "NuttX's figures are CPU cycles")
    words = " / ".join(COST_UNITS.get(u, u) for u in units)
    if "instructions" in units:
        return (words, "this run's figures are guest instructions, NuttX's CPU cycles: "
                "different units, set side by side for scale only")
    return words, None


def grid_table(rows):
    """One row per variant and operation, one column per device: the batch mean (+- its
    uncertainty, or a bound below resolution) or the per-operation median, in the rows'
    unit (TSC cycles, or instructions under -icount), NuttX's figure beside it."""
    shown = measured(rows)
    devices = list(dict.fromkeys(cell(r.get("device")) for r in shown))
    groups = {}
    for r in shown:
        groups.setdefault((cell(r.get("variant")), cell(r.get("op"))),
                          {})[cell(r.get("device"))] = r
    sources = Sources()
    unit, warning = cost_unit(shown)
    header = ["variant", "operation (%s)" % unit] + devices + ["published (NuttX: CPU "
                                                                "cycles)"]
    body, lines = [], []
    for (variant, op), by_dev in groups.items():
        cells = [variant or "-", op or "-"]
        pub = None
        for d in devices:
            r = by_dev.get(d)
            cells.append(cost_cell(r) if r else "")
            pub = pub or (for_row(PUBLISHED, r) if r else None)
        cells.append(pub_text(pub, sources) if pub else "")
        body.append(cells)
        lines.append(min(r.line for r in by_dev.values()))
    notes = ["batch: the mean over up to 1e6 operations +- half the batches' spread; per_op: "
             "the median of each operation timed alone (p99 in the figure)"]
    if warning and any(b[-1] for b in body):
        notes.insert(0, "units: " + warning)
    return Table(header, body, set(range(2, 2 + len(devices))),
                 skip_notes(rows, ("op", "device")) + notes + sources.notes(), lines,
                 sources.quotes())


def cost_cell(r):
    if num(r.get("mean_cyc")) is not None:
        if r.get("below_resolution") is True:
            return "<= %s" % number(r.get("uncertainty_cyc"))
        unc = num(r.get("uncertainty_cyc"))
        return number(r.get("mean_cyc")) + (" +- %s" % number(r.get("uncertainty_cyc"))
                                            if unc else "")
    return number(r.get("median_cyc"))


def draw_costs(data, options):
    """Each operation's cost per device: the batch means, then each operation alone."""
    from ..plots import Drawn, legend_beside, mark_published, name_clock, new_figure, \
        panel_axes
    rows = rows_of(data, NAME)
    batch = [r for r in rows if num(r.get("mean_cyc")) is not None]
    per_op = [r for r in rows if num(r.get("median_cyc")) is not None]
    if not batch and not per_op:
        raise Absent("%s rows carry neither mean_cyc nor median_cyc" % NAME)
    panels = [p for p in (("batch", batch), ("per_op", per_op)) if p[1]]
    # the two kinds side by side, one row a little taller than a plain figure: up to seven
    # operations of four devices' bars each
    fig = new_figure("hrtimer operation cost per device", len(panels))
    fig.set_figheight(4.6)
    pub = 0
    every = list(dict.fromkeys(text_of(r.get("device")) for r in batch + per_op))
    colour = {d: "C%d" % (i % 10) for i, d in enumerate(every)}
    unit_words, warning = cost_unit(batch + per_op)
    unit_words = unit_words.split(":")[0]
    axes = panel_axes(fig, len(panels))
    for ax, (kind, prows) in zip(axes, panels):
        ops = list(dict.fromkeys(text_of(r.get("op")) for r in prows))
        devices = [d for d in every if any(text_of(r.get("device")) == d for r in prows)]
        height = 0.8 / max(len(devices), 1)
        key = "mean_cyc" if kind == "batch" else "median_cyc"
        for j, device in enumerate(devices):
            got = [(ops.index(text_of(r.get("op"))), r) for r in prows
                   if text_of(r.get("device")) == device]
            ys = [i + (j - (len(devices) - 1) / 2) * height for i, _ in got]
            # a batch mean below its resolution is drawn as its bound: a hollow bar to the
            # uncertainty ("at most"), never as a measured value
            bound = [kind == "batch" and r.get("below_resolution") is True for _, r in got]
            vals = [num(r.get("uncertainty_cyc")) or 0 if b else num(r.get(key))
                    for (_, r), b in zip(got, bound)]
            if kind == "batch":
                err = [0 if b else num(r.get("uncertainty_cyc")) or 0
                       for (_, r), b in zip(got, bound)]
            else:
                err = [[0] * len(got), [max(0, (num(r.get("p99_cyc")) or v) - v)
                                        for (_, r), v in zip(got, vals)]]
            bars = ax.barh(ys, vals, height, xerr=err, label=device, capsize=2,
                           color=colour[device])
            for bar, b in zip(bars, bound):
                if b:
                    bar.set_fill(False)
                    bar.set_hatch("//")
                    bar.set_edgecolor(colour[device])
        px, py = [], []
        for r in prows:
            value = value_for(PUBLISHED, r)
            if value is not None:
                px.append(ops.index(text_of(r.get("op"))))
                py.append(value)
        pub += len(px)
        mark_published(ax, px, py, horizontal=True)
        ax.set_yticks(range(len(ops)), ops, fontsize=8)
        ax.invert_yaxis()
        vals = [num(r.get(key)) for r in prows if (num(r.get(key)) or 0) > 0]
        if vals and max(vals) / min(vals) > 30:
            ax.set_xscale("log")
        ax.set_xlabel("%s per operation (%s)" % (unit_words,
            "mean over the batches, +- half their spread" if kind == "batch"
            else "median, whisker to p99"))
        ax.set_title("%s: %s" % (kind, "means over up to 1e6 operations, as the source"
                                 if kind == "batch" else "each operation timed alone"),
                     fontsize=10)
    keep = {}
    for ax in axes:   # each device once, and the published star where it is drawn
        for h, label in zip(*ax.get_legend_handles_labels()):
            keep.setdefault(label, h)
    legend_beside(axes[-1], list(keep.values()), list(keep))
    clock = clock_words(data, batch + per_op)
    name_clock(fig, clock)
    return [Drawn("hrtimer_cost", "hrtimer operation cost", fig,
                  "%s of one operation, per device: the source's batch means (left) and " % (
                      unit_words[0].upper() + unit_words[1:]) +
                  "each operation alone, its median with a whisker to its p99 (the ordered "
                  "TSC pair included); a hatched hollow bar: a batch mean below its "
                  "resolution, drawn to its bound" + (
                      "; black stars: the publication's figures (NuttX, CPU cycles%s)."
                      % ("; " + warning if warning else "") if pub else ".")
                  + partial_note(data, NAME), clock)]


EXPERIMENT = Experiment(
    NAME, "hrtimer operation cost", ("op", "device", "variant"),
    "cycles per hrtimer operation: means over 1e6 operations (batch, as the "
    "source) and each operation timed alone (per_op)",
    grid=grid_table,
    figures=(Figure("hrtimer_cost", "hrtimer operation cost", draw_costs),),
    reads=("unit", "mean_cyc", "median_cyc", "p99_cyc", "uncertainty_cyc",
           "below_resolution"),
    published=PUBLISHED,
    never_negative=("min_cyc", "median_cyc", "p99_cyc", "max_cyc", "mean_cyc"),
    typical_s={"quick": 3.4}, typical_icount_wall_s={"quick": 12.5})
