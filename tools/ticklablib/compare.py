"""`ticklab compare LOG LOG...`: what changed between runs (two settings, two PCs, a lab's
machines), most important first.

Every run with a boot record in each capture is a column ([1], [2], ...; a capture holding
several runs gives several). The answer comes in the order a reader asks: how each run was
made and whether it is whole, then the settings (those that differ first), then the
verdicts, then the measured values that changed beyond their noise, largest change first
(comparemodel.py says how noise is judged), then how many differ only within noise, and
the rows present in some runs only. With -o DIR: compare.html (the same tables, every
run's latency CDFs overlaid on one axis, and each run's figures side by side) and
compare.csv.
"""

import argparse
import csv
import os
import sys

from . import (EXIT_USAGE, check, comparemodel, dataset, experiments, htmlpage, inputs,
               outdir, provenance, records)
from .comparemodel import number_text
from .htmlpage import esc
from .summary import aligned, verdict_lines

NAME = "compare"
HELP = "compare runs: settings, verdicts, then the values that changed beyond their noise"

EPILOG = """\
exit status: the worst verdict of the captures, as `ticklab check` (0 whole and ok,
1 some capture damaged or incomplete, 2 some run failed); 3 usage error, unreadable
LOG, unwritable DIR, or fewer than two runs in all."""

# What describes a run's set-up: (label, where, key); where is a record type or "capture".
SETUP = (("accelerator", "capture", "accel"), ("icount shift", "capture", "icount_shift"),
         ("machine", "capture", "machine"), ("QEMU CPU model", "capture", "cpu_model"),
         ("CPUs (QEMU)", "capture", "smp"), ("memory", "capture", "mem"),
         ("firmware (QEMU)", "capture", "firmware"), ("boot path", "capture", "boot"),
         ("QEMU", "capture", "qemu_version"), ("host CPU", "capture", "host_cpu"),
         ("serial port", "capture", "serial_device"),
         ("command line", "boot", "cmdline"), ("profile", "boot", "profile"),
         ("hz", "boot", "hz"), ("kernel", "boot", "version"), ("git", "boot", "git"),
         ("entered by", "boot", "boot"), ("firmware", "boot", "firmware"),
         ("loader", "boot", "loader"), ("CPU", "cpu", "brand"),
         ("hypervisor", "cpu", "hypervisor_signature"),
         ("invariant TSC", "cpu", "invariant_tsc"),
         ("clocksource", "clocksource_selected", "name"), ("tick device", "tick", "device"),
         ("tick hz", "tick", "hz_actual"), ("hrtimer device", "hrtimer_base", "device"),
         ("end status", "end", "status"))


TEXT_CHANGES = 50    # changes listed on the terminal without --all (compare.csv has all)
HTML_CHANGES = 300


def per_section(values):
    counts = {}
    for v in values:
        name = v.section.replace("result ", "")
        counts[name] = counts.get(name, 0) + 1
    return ", ".join("%s %d" % kv for kv in sorted(counts.items(), key=lambda kv: -kv[1]))


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("logs", nargs="+", metavar="LOG",
                   help='raw serial captures (gzipped or not; "-": standard input, once)')
    p.add_argument("-o", "--output", metavar="DIR",
                   help="also write DIR/compare.html, DIR/compare.csv and the figures")
    p.add_argument("--force", action="store_true",
                   help="replace DIR if it holds an earlier ticklab compare")
    p.add_argument("--all", action="store_true",
                   help="list the values within noise and the equal ones too")
    p.add_argument("--figures", action="store_true",
                   help="with -o: also draw each run's figures side by side (slow: every "
                   "figure of every run; the runs' own reports have them)")
    p.set_defaults(func=run)


class Run:
    """One column: the run's data, its capture record, its label."""

    def __init__(self, data, capture, label):
        self.data, self.capture, self.label = data, capture, label
        self.env = provenance.describe(capture, data.boot, data.one("cpu"),
                                       data.one("environment"))

    def state(self):
        run = self.data.run
        whole = "whole" if run.whole else "NOT whole (%d problems)" % len(run.problems)
        return "lines %d-%d, %d records, %s, ended %s" % (
            run.first_line, run.last_line, len(run.records), whole, run.status or "(no end)")


def load_all(paths):
    """Every booted run of every capture. Returns ([Run], worst verdict)."""
    by_name = len({os.path.basename(p) for p in paths}) == len(paths)
    found, verdicts = [], []
    if sum(p == inputs.STDIN for p in paths) > 1:
        raise inputs.InputError("standard input (-) can be read once only")
    for path in paths:
        runs, datas = dataset.load(path)
        capture, _ = provenance.load(path)
        verdicts.append(records.verdict(runs))
        booted = [d for d in datas if d.run.boot is not None]
        name = os.path.basename(inputs.name_of(path)) if by_name else inputs.name_of(path)
        for d in booted:
            d.source = name
            found.append(Run(d, capture, d.label if len(booted) > 1 else name))
    rank = {records.OK: 0, records.FAILED: 1, records.DAMAGED: 2}
    return found, max(verdicts, key=rank.get)


def setup_values(runs):
    """[(label, [value per run], differs)], the differing ones first (the same ones are
    collapsed into one line by the callers: same_line)."""
    rows = []
    for text, where, key in SETUP:
        if where == "capture":
            values = [(r.capture or {}).get(key) for r in runs]
        elif where == "end":
            values = [(r.data.run.end or {}).get(key) for r in runs]
        else:
            values = [r.data.one(where).get(key) for r in runs]
        if any(v is not None for v in values):
            rows.append((text, values, any(v != values[0] for v in values[1:])))
    return [r for r in rows if r[2]] + [r for r in rows if not r[2]]


def verdict_values(runs):
    """[(topic label, [(choice, claim) per run], differs)]. A verdict too close to call
    (`decided` false, choice `too_close`) contradicts nothing: it is shown, and marked
    "~" when it is all that differs, but only decided verdicts that differ count."""
    per = [{v["topic"]: v for v in verdict_lines(r.data)} for r in runs]
    topics = list(dict.fromkeys(t for p in per for t in p))
    out = []
    for topic in topics:
        cells = [(p[topic]["choice"], p[topic]["claim"]) if topic in p else (None, "absent")
                 for p in per]
        label = next(p[topic]["label"] for p in per if topic in p)
        decided = [p[topic]["choice"] if topic in p else None for p in per
                   if topic not in p or p[topic].get("decided") is not False]
        differs = any(c != decided[0] for c in decided[1:])
        if not differs and any(c[0] != cells[0][0] for c in cells[1:]):
            differs = "~"
        out.append((label, cells, differs))
    return out


def cell(value):
    return "-" if value is None else dataset.cell(value)


def same_line(setup):
    """The settings every run shares, in one line: "accelerator tcg; machine q35; ..."."""
    return "; ".join("%s %s" % (t, short(cell(vals[0]), 60)) for t, vals, d in setup
                     if not d)


MODE_NAMES = {"icount": "exact mode (icount: instruction counts)", "tcg":
              "plain emulation (TCG: host noise)", "kvm": "KVM (real time, VM exits)",
              "hardware": "real hardware", "other-vm": "another hypervisor",
              None: "mode unknown"}


def mode_warning(runs):
    """None when every run was made in one timing mode; else the warning that says the
    runs' timings are of different kinds (an instruction count is no wall-clock time) and
    which run is which."""
    modes = [r.env["mode"] for r in runs]
    if len(set(modes)) == 1:
        return None
    return ("these runs were made in different timing modes (%s): their timings are of "
            "different kinds (an instruction count is no host's time), so a difference "
            "between them says more about the mode than about the machine; the noise floor "
            "below is the runs' own spread, wide for that reason" % ", ".join(
                "[%d] %s%s" % (i, MODE_NAMES.get(m, m), " (from %s)" % r.env["mode_from"]
                               if r.env.get("mode_from") else "")
                for i, (r, m) in enumerate(zip(runs, modes), 1)))


def mark(differs):
    """A verdict row's mark: * decided verdicts differ, ~ only an undecided one does."""
    return "~" if differs == "~" else "*" if differs else ""


def short(text, width=48):
    text = str(text)
    return text if len(text) <= width else text[:width - 3] + "..."


def value_rows(values, n):
    rows = []
    for v in values:
        rows.append([v.section.replace("result ", ""), v.name, v.key]
                    + [cell(x) for x in v.values]
                    + [number_text(comparemodel.delta(v, i), signed=True)
                       for i in range(1, n)]
                    + [ratio_text(comparemodel.ratio(v, i)) for i in range(1, n)]
                    + ["%.3g" % v.noise if v.status in ("changed", "noise") else "",
                       "inf" if v.score == float("inf") else "%.3g" % v.score])
    return rows


def ratio_text(r):
    return "" if r is None else "%.3g" % r


def value_header(cols):
    return ["section", "row", "key"] + cols + ["%s-[1]" % c for c in cols[1:]] + [
        "%s/[1]" % c for c in cols[1:]] + ["noise", "score"]


def print_text(runs, values, show_all, floor, written):
    n = len(runs)
    cols = ["[%d]" % i for i in range(1, n + 1)]
    print("runs:")
    for i, r in enumerate(runs, 1):
        print("  [%d] %s: %s" % (i, r.label, r.state()))
        print("      environment: %s" % r.env["headline"])
    warning = mode_warning(runs)
    if warning:
        print("WARNING: " + warning)
    setup = setup_values(runs)
    differ = [s for s in setup if s[2]]
    print("\nsettings (%d differ):" % len(differ))
    if differ:
        for line in aligned(["", "setting"] + cols,
                            [["*", t] + [short(cell(v), 40) for v in vals]
                             for t, vals, d in differ]):
            print("  " + line)
    if len(differ) < len(setup):
        print("  the same in every run: " + same_line(setup))
    verdicts = verdict_values(runs)
    if verdicts:
        print("\nverdicts (%d differ, * ):" % sum(v[2] is True for v in verdicts))
        if any(v[2] == "~" for v in verdicts):
            print("  (~: only a verdict too close to call differs; it contradicts nothing)")
        for line in aligned(["", "question"] + cols,
                            [[mark(d), t] + [cell(c[0]) for c in cells]
                             for t, cells, d in verdicts]):
            print("  " + line)
        for t, cells, d in verdicts:
            if d:
                for i, c in enumerate(cells, 1):
                    print("    %s [%d]: %s" % (t, i, c[1]))
    changed = [v for v in values if v.status == "changed"]
    noise = [v for v in values if v.status == "noise"]
    absent = [v for v in values if v.status == "absent"]
    internal = [v for v in values if v.status == "internal"]
    print("\nnoise floor: " + floor.words())
    print("\nchanges beyond noise, largest first: %d of %d values" % (len(changed),
                                                                     len(values)))
    header = value_header(cols)
    if changed:
        shown = changed if show_all else changed[:TEXT_CHANGES]
        for line in aligned(header, value_rows(shown, n)):
            print("  " + line)
        if len(shown) < len(changed):
            print("  ... %d more (--all lists them%s)" % (
                len(changed) - len(shown), "; compare.csv has every one" if written else ""))
        print("\nchanged per section: " + per_section(changed))
    print("\nwithin noise: %d value(s) differ by no more than their noise%s" % (
        len(noise), "" if show_all else " (--all lists them)"))
    if show_all and noise:
        for line in aligned(header, value_rows(noise, n)):
            print("  " + line)
    presence = comparemodel.row_presence(values, n)
    rows_absent = [k for k, have in presence.items() if not all(have)]
    keys_absent = [v for v in absent if all(presence[(v.section, v.name)])]
    print("internal: %d value(s) differ that follow from others (clocksource mult and shift, "
          "interrupts per vector, ids): compared, not ranked%s" % (
              len(internal), "" if show_all or not internal else " (--all lists them)"))
    if show_all and internal:
        for line in aligned(header, value_rows(internal, n)):
            print("  " + line)
    print("absent: %d row(s) present in some runs only" % len(rows_absent))
    for section, name in rows_absent[:40]:
        have = [i + 1 for i, x in enumerate(presence[(section, name)]) if x]
        print("  %s %s: only in %s" % (section.replace("result ", ""), name or "(one row)",
                                      " ".join("[%d]" % i for i in have)))
    if len(rows_absent) > 40:
        print("  ... and %d more%s" % (len(rows_absent) - 40, " (compare.csv has them all)"
                                       if written else ""))
    if keys_absent:
        # a row every run has, with a key only some kernels send: compared where both have
        # it, and said apart from the rows that are missing
        print("keys in some runs only: %d value(s) of rows every run has (a key one kernel "
              "sends and another does not)%s" % (len(keys_absent), "" if show_all else
                                                 " (--all lists them)"))
        if show_all:
            for v in keys_absent:
                have = [i + 1 for i, x in enumerate(v.values) if x is not None]
                print("  %s %s %s: only in %s" % (v.section.replace("result ", ""), v.name,
                                                 v.key, " ".join("[%d]" % i for i in have)))
    print("\ncompare: %d run(s), %d value(s) compared: %d changed beyond noise (%.1f %%), %d "
          "within noise, %d equal, %d internal, %d in some runs only; %s" % (
              n, len(values), len(changed), 100.0 * len(changed) / max(len(values), 1),
              len(noise), sum(v.status == "equal" for v in values), len(internal),
              len(absent), floor.mode))


def write_csv(path, runs, values):
    """compare.csv: one row per value; every column after the text ones a number (the
    difference from run 1 and the ratio to it each in a column of its own)."""
    n = len(runs)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["section", "row", "key", "kind"] + [r.label for r in runs]
                   + ["delta_%s" % r.label for r in runs[1:]]
                   + ["ratio_%s" % r.label for r in runs[1:]] + ["noise", "score", "status"]
                   + (["score_%s" % r.label for r in runs[1:]] if n > 2 else []))
        for v in values:
            w.writerow([v.section, v.name, v.key, v.kind] + [dataset.cell(x) for x in v.values]
                       + [number_text(comparemodel.delta(v, i)) for i in range(1, n)]
                       + [number_text(comparemodel.ratio(v, i)) for i in range(1, n)]
                       + ["%g" % v.noise, "%g" % v.score, v.status]
                       + (["" if sc is None else "%g" % sc for sc in v.scores[1:]]
                          if n > 2 else []))


def html_values(values, n, header):
    return htmlpage.plain_table(header, value_rows(values, n),
                                numeric=set(range(3, 3 + 3 * n + 1)))


_RENDER = {}


def _render_one(i):
    """Child process: one run's figures (PNG only, labels not measured: a side-by-side
    view; each run's own report has them all)."""
    from . import figures
    from . import figdata
    folder, runs = _RENDER["folder"], _RENDER["runs"]
    return figures.render(runs[i].data, os.path.join(folder, "plots", "run%d" % (i + 1)),
                          figdata.Options(workers=1), measure=False)[0]


def render_runs(runs, folder):
    """Every run's figures, drawn in up to two processes at once (drawing is most of a
    compare's time; two quick runs take seconds, not minutes)."""
    import multiprocessing
    from . import figures
    _RENDER.update(folder=folder, runs=runs)
    try:
        ctx = multiprocessing.get_context("fork")
        figures.figures()  # matplotlib imported once, before the fork
        with ctx.Pool(min(figures.workers(), len(runs)),
                      initializer=outdir.child_signals) as pool:
            return pool.map(_render_one, range(len(runs)))
    except (OSError, ValueError):  # no fork here: one after the other
        return [_render_one(i) for i in range(len(runs))]
    finally:
        _RENDER.clear()


def write_html(folder, runs, values, show_all, floor, each_run=False, logs=()):
    from . import figdata
    n = len(runs)
    cols = ["[%d]" % i for i in range(1, n + 1)]
    body = ["<h1>ticklab compare: %d runs</h1>" % n, "<ol>"]
    for r in runs:
        body.append("<li><b>%s</b>: %s<br><span class=\"env\">%s</span><br>"
                    "<span class=\"note\">%s</span></li>" % (
                        esc(r.label), esc(r.state()), esc(r.env["headline"]),
                        esc(r.env["how_started"])))
    body.append("</ol>")
    warning = mode_warning(runs)
    if warning:
        body.append("<p class=\"bad\">Warning: %s.</p>" % esc(warning))
    body.append("<h2 id=\"settings\">Settings</h2>")
    setup = setup_values(runs)
    differ = [x for x in setup if x[2]]
    if differ:
        body.append(htmlpage.plain_table(["", "setting"] + cols, [
            ["*", t] + [cell(v) for v in vals] for t, vals, d in differ]))
    if len(differ) < len(setup):
        body.append("<p><b>The same in every run:</b> %s.</p>" % esc(same_line(setup)))
    body.append("<h2 id=\"verdicts\">Verdicts</h2>")
    body.append(htmlpage.plain_table(["", "question"] + cols, [
        [mark(d), t] + ["%s: %s" % (cell(c[0]), c[1]) for c in cells]
        for t, cells, d in verdict_values(runs)]))
    header = value_header(cols)
    changed = [v for v in values if v.status == "changed"]
    noise = [v for v in values if v.status == "noise"]
    body.append("<h2 id=\"changes\">Changes beyond noise (%d of %d values), largest first"
                "</h2>" % (len(changed), len(values)))
    body.append("<p><b>Noise floor:</b> %s.</p>" % esc(floor.words()))
    body.append("<p class=\"note\">A value's noise: twice its clock's resolution, its stated "
                "uncertainty, the spread between runs of one set-up, twice its last digit, or "
                "2 for a count (none for a count of trouble in exact mode), and outside exact "
                "mode the runs' own spread; the score is |difference| / noise. Internal values "
                "(%d differ) are not ranked.</p>" % sum(v.status == "internal" for v in values))
    body.append("<p>Changed per section: %s.</p>" % esc(per_section(changed) or "none"))
    body.append(html_values(changed[:HTML_CHANGES], n, header))
    if len(changed) > HTML_CHANGES:
        body.append("<p class=\"note\">... and %d more in compare.csv.</p>"
                    % (len(changed) - HTML_CHANGES))
    body.append("<h2 id=\"noise\">Within noise (%d values)</h2>" % len(noise))
    body.append(html_values(noise, n, header) if show_all else
                "<p class=\"note\">Listed with --all, and in compare.csv.</p>")
    drawn = []
    latency = experiments.latency().name
    overlay_dir = os.path.join(folder, "plots", "overlay")
    os.makedirs(overlay_dir, exist_ok=True)
    try:
        from . import plots, plots_latency  # matplotlib only when figures are wanted
        made = plots_latency.cdf_overlay([r.data for r in runs], [r.label for r in runs],
                                         figdata.Options(), latency)
    except (figdata.Absent, ImportError):
        made = []
    for d in made:
        saved = plots.save(d, overlay_dir, measure=False)
        drawn.append(figdata.Plot(d.name, d.title, d.caption, saved.png, None))
    body.append("<h2 id=\"overlay\">Every run on one axis</h2>")
    body += [htmlpage.figure(p, "plots/overlay/", "overlay-") for p in drawn] or [
        "<p class=\"note\">No run has %s rows.</p>" % latency]
    body.append("<h2 id=\"figures\">Each run's figures</h2>")
    if not each_run:
        # drawing every run's figures again is most of a compare's time; the runs' own
        # reports have them, and the overlays above are what compares them
        body.append("<p class=\"note\">Each run's own figures are in its report "
                    "(<code>ticklab report LOG</code>; side by side here with "
                    "<code>compare --figures</code>): %s.</p>" % "; ".join(
                        own_report(i, r, logs) for i, r in enumerate(runs, 1)))
        with open(os.path.join(folder, "compare.html"), "w", encoding="utf-8") as f:
            f.write(htmlpage.page("ticklab compare", body))
        return
    per_run = [{p.name: p for p in got} for got in render_runs(runs, folder)]
    names = list(dict.fromkeys(name for d in per_run for name in d))
    for name in names:
        title = next(d[name].title for d in per_run if name in d)
        body.append("<h3>%s</h3><div class=\"scroll\"><table><tr>" % esc(title))
        for i, d in enumerate(per_run, 1):
            html = (htmlpage.figure(d[name], "plots/run%d/" % i, "run%d-" % i) if name in d
                    else "<p class=\"warn\">absent in this run</p>")
            body.append("<td style=\"min-width:420px\"><b>[%d] %s</b>%s</td>"
                        % (i, esc(runs[i - 1].label), html))
        body.append("</tr></table></div>")
    with open(os.path.join(folder, "compare.html"), "w", encoding="utf-8") as f:
        f.write(htmlpage.page("ticklab compare", body))


def own_report(i, run, logs):
    """Where run i's own report is, as HTML: a link to LOG's default report folder when
    it is there."""
    log = next((p for p in logs if os.path.basename(p) == run.data.source.split("#")[0]), None)
    page = os.path.join("%s-report" % inputs.base_name(log), "report.html") if log else None
    if page and os.path.exists(page):
        return "[%d] <a href=\"%s\">%s</a>" % (i, esc("file://" + os.path.abspath(page)),
                                               esc(page))
    return "[%d] %s: no report beside it yet" % (i, esc(run.label))


def run(args):
    try:
        runs, worst = load_all(args.logs)
    except inputs.InputError as e:
        print("ticklab compare: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    if len(runs) < 2:
        print("ticklab compare: need at least two runs with a boot record; found %d"
              % len(runs), file=sys.stderr)
        return EXIT_USAGE
    if args.output:
        try:
            outdir.check(args.output, args.force)
        except outdir.OutdirError as e:
            print("ticklab compare: %s" % e, file=sys.stderr)
            return EXIT_USAGE
    values = comparemodel.collect([r.data for r in runs])
    signatures = [comparemodel.setup_signature(r.data, r.capture) for r in runs]
    floor = comparemodel.judge(values, signatures, [r.env["mode"] for r in runs])
    values = comparemodel.ranked(values)
    print_text(runs, values, args.all, floor, bool(args.output))
    if args.output:
        try:
            with outdir.Fresh(args.output, args.force) as tmp:
                write_csv(os.path.join(tmp, "compare.csv"), runs, values)
                write_html(tmp, runs, values, args.all, floor, args.figures, args.logs)
        except (outdir.OutdirError, OSError) as e:
            print("ticklab compare: cannot write %s: %s" % (args.output, e), file=sys.stderr)
            return EXIT_USAGE
        print(os.path.join(os.path.abspath(args.output), "compare.html"))
    return check.EXIT_CODES[worst]
