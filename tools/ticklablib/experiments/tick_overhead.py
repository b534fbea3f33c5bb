"""tick-overhead (kernel/exp/tick_overhead.c): the share of the CPU a periodic tick takes,
against a tickless baseline and against the 10 ms tick; Koster's empty-loop figures, its
bounds below resolution, and the tick that costs more than its period."""

from ..figdata import Absent, clock_words, fmt_ns, partial_note, rows_of, text_of
from ..published import KOSTER, About, Published, value_for
from ..tables import number
from ..values import num
from .spec import Experiment, Figure

NAME = "tick-overhead"
FULL_CPU_PCT = 100.0   # no tick takes more than the whole CPU


def _published():
    """Koster's overhead of the empty loop at 100 us and 1 ms ticks."""
    loop = ("the source's overhead is its empty loop's time against the same loop's at a "
            "10 ms tick, as ticklab's faithful rows measure it. Its 10.2 % is 3.3 times its "
            "3.1 %, where a cost the same for every tick gives 11 times (9,900 ticks a "
            "second beyond the 10 ms tick's against 900), as ticklab's rows do. Per tick "
            "beyond the 10 ms tick's it comes to 9.3 us at 100 us and 33.4 us at 1 ms: the "
            "source's ticks cost more the further apart they came, which it does not "
            "explain and a fixed handler per tick cannot give")
    return (
        Published(NAME, (("variant", "faithful"), ("tick_ns", About(100000))),
                  "overhead_pct", "10.2% for the empty loop (11.9% for a kernel make)",
                  KOSTER, ("At a tick granularity of 100 $\\mu$ s there is an overhead of "
                           "10.2% compared to 10ms tick size for the loop, and 11.9% for the "
                           "kernel make.",), value=10.2, section="3.3 Performance",
                  setup=(("tick_ns", "At a tick granularity of 100 $\\mu$ s", "="),),
                  note=loop),
        Published(NAME, (("variant", "faithful"), ("tick_ns", About(1000000))),
                  "overhead_pct", "3.1% for the empty loop (3.2% for a kernel make)",
                  KOSTER, ("With interrupts every 1ms the overhead is 3.1% and 3.2%, "
                           "respectively.",), value=3.1, section="3.3 Performance",
                  setup=(("tick_ns", "With interrupts every 1ms", "="),),
                  note=loop),
    )


PUBLISHED = _published()


def draw_overhead(data, options):
    """The overhead against the tick period, and where one tick's cycles go."""
    from ..plots import Drawn, legend_beside, mark_published, name_clock, new_figure
    rows = rows_of(data, NAME)
    pts = [r for r in rows if (num(r.get("tick_ns")) or 0) > 0
           and (num(r.get("overhead_pct")) is not None
                or num(r.get("overhead_bound_pct")) is not None)]
    if not pts:
        raise Absent("%s rows have no tick_ns > 0 with an overhead_pct" % NAME)
    parts = ("entry_cyc", "handler_cyc", "eoi_cyc", "return_cyc")
    split = [r for r in pts if any(num(r.get(p)) is not None for p in parts)]
    split = list({num(r.get("tick_ns")): r for r in split}.values())  # one per tick size
    fig = new_figure("Tick overhead against tick size")
    ax = fig.add_subplot(1, 2 if split else 1, 1)
    bounds = measured = 0
    beyond = []   # (tick, value, what): a share above 100 % of the CPU cannot be true
    pub_x, pub_y = [], []
    variants = list(dict.fromkeys(text_of(r.get("variant"), "") for r in pts))
    for i, variant in enumerate(variants):
        colour = ("tab:blue", "tab:orange", "tab:green")[i % 3]
        vrows = sorted((r for r in pts if text_of(r.get("variant"), "") == variant),
                       key=lambda r: num(r.get("tick_ns")))
        name = {"ticklab": "vs no tick", "faithful": "vs 10 ms tick"}.get(
            variant, variant or "overhead")
        got = [(num(r.get("tick_ns")), num(r.get("overhead_pct")),
                num(r.get("overhead_uncertainty_pct")) or 0) for r in vrows
               if r.get("below_resolution") is not True
               and num(r.get("overhead_pct")) is not None]
        if got:
            measured += len(got)
            ax.errorbar([g[0] for g in got], [g[1] for g in got], yerr=[g[2] for g in got],
                        marker="o", capsize=3, color=colour, label=name)
            beyond += [(g[0], g[1], "measured") for g in got if g[1] > FULL_CPU_PCT]
        top = [(num(r.get("tick_ns")), num(r.get("overhead_bound_pct"))) for r in vrows
               if r.get("below_resolution") is True
               and num(r.get("overhead_bound_pct")) is not None]
        if top:
            bounds += len(top)
            ax.plot([t[0] for t in top], [t[1] for t in top], marker="v", markersize=8,
                    linestyle="none", color=colour, markerfacecolor="none",
                    label="%s: at most" % name)
            beyond += [(t[0], t[1], "bound") for t in top if t[1] > FULL_CPU_PCT]
        for r in vrows:
            value = value_for(PUBLISHED, r)
            if value is not None:
                pub_x.append(num(r.get("tick_ns")))
                pub_y.append(value)
    mark_published(ax, pub_x, pub_y)
    ax.set_xscale("log")
    ys = [y for line in ax.get_lines() for y in line.get_ydata() if y > 0]
    if ys and max(ys) / min(ys) > 30:
        ax.set_yscale("log")
        ax.set_ylim(min(ys) / 3, max(ys) * 3)
    else:
        ax.set_ylim(0, max(ys or [1]) * 1.3)
    if beyond:
        # the tick cannot take more than the whole CPU: the region is marked on the
        # figure, and each such point crossed out, so no one reads it as a measurement
        ax.axhspan(FULL_CPU_PCT, ax.get_ylim()[1], color="tab:red", alpha=0.08, zorder=0)
        ax.axhline(FULL_CPU_PCT, color="tab:red", linewidth=0.9)
        ax.plot([b[0] for b in beyond], [b[1] for b in beyond], marker="x", markersize=10,
                linestyle="none", color="tab:red", label="impossible: above 100 %")
        ax.annotate("above 100 %% of the CPU: impossible (%d point%s)" % (
            len(beyond), "s" * (len(beyond) > 1)), (0.01, 0.99), xycoords="axes fraction",
            va="top", fontsize=7, color="tab:red")
    ax.set_xlabel("tick period (ns, log)")
    ax.set_ylabel("CPU time taken by the tick (%)")
    legend_beside(ax)
    caption = ("Share of a busy loop's time lost to the tick: circles measured (bars: the "
               "spread of the rounds)")
    caption += ("; hollow triangles where the difference was below the measurement's "
                "resolution: the most the rounds allow, not a measured value (%d)" % bounds
                if bounds else "")
    caption += "; black stars: the publication's figures." if pub_x else "."
    if beyond:
        caption += (" Red crosses: %d figure(s) above 100 %% of the CPU (%s), which no tick "
                    "can take: a bound that wide says the rounds could not resolve the "
                    "overhead, a measured value that high says ticks or time went missing; "
                    "neither is a measurement." % (len(beyond), ", ".join(
                        "%s at %s" % ("%.4g %%" % b[1], fmt_ns(b[0])) for b in beyond)))
    if split:
        bx = fig.add_subplot(1, 2, 2)
        split.sort(key=lambda r: num(r.get("tick_ns")))
        names = [fmt_ns(r.get("tick_ns")) for r in split]
        left = [0.0] * len(split)
        for part in parts:
            vals = [num(r.get(part)) or 0 for r in split]
            bx.barh(names, vals, left=left, label=part[:-4])
            left = [a + v for a, v in zip(left, vals)]
        bx.set_xlabel("TSC cycles per tick interrupt (median)")
        bx.set_ylabel("tick period")
        legend_beside(bx)
        caption += " Right: where one tick interrupt's TSC cycles go (median of each part)."
    clock = clock_words(data, pts)
    name_clock(fig, clock)
    return [Drawn("tick_overhead", "Tick overhead against tick size", fig,
                  caption + partial_note(data, NAME), clock)]


def bound_cell(row, key):
    """A figure below the measurement's resolution is shown as its bound, never as 0."""
    if row.get("below_resolution") is not True:
        return None
    if key == "overhead_pct":
        return "<= %s" % number(row.get("overhead_bound_pct"))
    if key == "per_tick_ns":
        return "<= %s" % number(row.get("per_tick_uncertainty_ns"))
    return None


def dearer_than_period(data, rows, names):
    """A tick that costs more than its period: ticks went missing while it was measured."""
    out = []
    for name, row in zip(names, rows):
        cost, period = num(row.get("per_tick_ns")), num(row.get("tick_ns"))
        if cost is not None and period and cost > period and row.get("below_resolution") \
                is not True:
            out.append("%s %s: per_tick_ns=%s, more than the tick's period "
                       "(tick_ns=%s): ticks went missing while it was measured"
                       % (NAME, name, row.get("per_tick_ns"), row.get("tick_ns")))
    return out


EXPERIMENT = Experiment(
    NAME, "Tick overhead", ("variant", "tick_ns", "mode"),
    "share of the CPU a periodic tick takes, against a tickless baseline (ticklab) "
    "and against the 10 ms tick (faithful, as the 1998 source)",
    columns=("variant", "tick_ns", "device", "mode", "ticks", "overhead_pct", "per_tick_ns",
             "total_cyc"),
    cell=bound_cell,
    figures=(Figure("tick_overhead", "Tick overhead against tick size", draw_overhead),),
    reads=("below_resolution", "overhead_bound_pct", "per_tick_uncertainty_ns",
           "overhead_uncertainty_pct"),
    published=PUBLISHED,
    never_negative=("overhead_pct", "per_tick_ns", "entry_cyc", "handler_cyc", "eoi_cyc",
                    "return_cyc", "total_cyc"),
    impossible=dearer_than_period, impossible_kind="tick",
    typical_s={"quick": 5.9}, typical_icount_wall_s={"quick": 10.3})
