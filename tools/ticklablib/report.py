"""`ticklab report LOG`: each run of a capture as data files, figures and one HTML page.

Written into the output folder (built fresh, moved into place when complete; an existing
one is replaced only with --force and only if it is a ticklab report folder):
  report.html             self-contained page: the summary (environment, one line per
                          device and path, the verdict, the experiments), each experiment,
                          calibration, errors, capture integrity, what is absent, inventory
  summary.json            the summary as data, shaped like `cyclictest --json`
  results.csv             every measured number, one per row, its unit named
  histograms.csv, .txt    the latency series' histograms: long CSV, and rt-tests' -h shape
  samples.csv             the kernel's raw samples, one row each (when it sent them)
  latency-hist-us.txt,    the same samples in the layout of cyclictest -h, bins of 1 us
  latency-hist-ns.txt       and of 1 ns (when it sent them)
  data/records.jsonl      every verified record of the run, in stream order, as sent
  data/result-<exp>.*     one JSONL and one CSV per experiment (its result rows)
  data/<type>.*           one JSONL and one CSV per other record type (names made safe)
  plots/<figure>.png      every figure the run's records support (drawn once, in
                          parallel where there are CPUs; .svg beside each with --svg)
A log holding several runs gets one such folder per run (run-1/, run-2/ ...) and an index
report.html linking them: two boots are never reported as one.

A damaged capture is still reported: what verified is used, and every problem of every run
is listed with its line. The exit code is `check`'s verdict on the capture.
"""

import argparse
import os
import sys

from . import (EXIT_USAGE, check, dataset, experiments, exports, figdata, figures, inputs,
               outdir, provenance, records, reportpage)
from . import summary as summary_mod

NAME = "report"
HELP = "turn a capture into JSON, CSV, PNG plots and one HTML page per run"

EPILOG = """\
exit status (the capture's verdict, as `ticklab check`; the report is written for 0-2):
  0  whole, ok    1  damaged or incomplete, or no run at all (reported from what verified)
  2  whole, but a run ended "failed"    3  usage error, unreadable LOG, unwritable folder
the last lines printed are the verdict, one line per question, then the absolute path of
report.html"""


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_input_options(p)
    p.add_argument("--log-counts", action="store_true",
                   help="histogram counts on a log axis")
    p.add_argument("--svg", action="store_true",
                   help="also write every figure as SVG (text kept as text; slower)")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="draw in N processes at once (default: one for a single run's "
                   "PNGs; the CPUs, at most 4, for several runs or with --svg)")
    p.add_argument("--summary", action="store_true",
                   help="print the per-device latency table and the verdict's evidence too "
                   "(the kernel's console showed both during the run; the page has them)")
    p.set_defaults(func=run)


def add_input_options(p):
    """The options `report` and `export` share: the log, the folder, the run."""
    p.add_argument("log", metavar="LOG",
                   help='raw serial capture (gzipped or not), or "-" for standard input')
    p.add_argument("-o", "--output", metavar="DIR",
                   help="output folder (default: LOG without .gz and .log, plus -%s; "
                   "stdin-%s for -)" % (p.prog.split()[-1], p.prog.split()[-1]))
    p.add_argument("--run", type=int, metavar="N",
                   help="only the N'th run of the capture (default: every run)")
    p.add_argument("--force", action="store_true",
                   help="replace DIR if it holds an earlier ticklab report or export")


def options_summary(args):
    return getattr(args, "summary", False)


def default_outdir(log, kind="report"):
    return "%s-%s" % (inputs.base_name(log), kind)


def chosen_runs(datas, wanted):
    """The runs to report: the N'th, or every run with a boot record (else every run with
    a record). Returns ([RunData], error text or None)."""
    if wanted is not None:
        if 1 <= wanted <= len(datas):
            return [datas[wanted - 1]], None
        return None, "--run %d: the capture has %d run(s)" % (wanted, len(datas))
    booted = [d for d in datas if d.run.boot is not None]
    return booted or dataset.reportable(datas), None


def write_data(folder, data, runs, log, capture, capture_problem):
    """One run's data files (no figure): returns (summary, files written, stems)."""
    os.makedirs(folder, exist_ok=True)
    s = summary_mod.build(data, runs, capture, capture_problem, log)
    files = ["summary.json", "results.csv", "histograms.csv", "histograms.txt"]
    written, stems = exports.write_data(data, folder)
    exports.write_results(data, folder)
    files += written
    name = experiments.latency().name
    lat = dataset.measured(data.results.get(name, []))
    exports.write_histogram_csv(data, folder, name)
    exports.write_histogram_text(data, folder, name,
                                 figdata.clock_words(data, lat) if lat else "")
    for made in (exports.write_samples_csv(data, folder),
                 exports.write_cyclictest_histogram(data, folder, "us", name),
                 exports.write_cyclictest_histogram(data, folder, "ns", name)):
        if made:
            files.append(made)
    return s, files, stems


def figure_entry(p):
    return {"name": p.name, "title": p.title, "png": "plots/%s.png" % p.name,
            "svg": "plots/%s.svg" % p.name if p.svg else None, "clock": p.clock,
            "overlapping_labels": [list(o) for o in p.overlaps],
            "legends_on_data": list(p.legends_on_data), "axes": list(p.axes)}


def write_run(folder, data, runs, log, capture, capture_problem, options):
    """One run's folder; returns its summary and the figures drawn and not drawn."""
    s, files, stems = write_data(folder, data, runs, log, capture, capture_problem)
    drawn, absent = figures.render(data, os.path.join(folder, "plots"), figdata.Options(
        log_counts=options.log_counts, svg=options.svg,
        workers=options.jobs))
    s["figures"] = [figure_entry(p) for p in drawn]
    s["figures_not_drawn"] = [{"name": k, "title": t, "why": w} for k, t, w in absent]
    exports.write_summary(s, folder)
    files += ["plots/%s.png" % p.name for p in drawn]
    files += ["plots/%s.svg" % p.name for p in drawn if p.svg]
    page = reportpage.build(data, runs, s, drawn, absent, files, log, stems)
    with open(os.path.join(folder, "report.html"), "w", encoding="utf-8") as f:
        f.write(page)
    return s, drawn, absent


class Progress:
    """`report: run k of N ...` on standard error for a log of several runs (on a terminal
    one line rewritten; elsewhere a line each)."""

    def __init__(self, total):
        self.total = total
        self.tty = sys.stderr.isatty()

    def say(self, k, data):
        if self.total < 2:
            return
        text = "report: run %d of %d (lines %d-%d, %d records)" % (
            k, self.total, data.run.first_line, data.run.last_line, len(data.run.records))
        if self.tty:
            sys.stderr.write("\r\033[K" + text)
            if k == self.total:
                sys.stderr.write("\n")
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()


def load(args, command):
    """(raw what, runs, datas, chosen, capture, capture_problem, result) or an exit code."""
    try:
        raw = inputs.read(args.log)
    except inputs.InputError as e:
        print("ticklab %s: %s" % (command, e), file=sys.stderr)
        return EXIT_USAGE
    name = inputs.name_of(args.log)
    runs, datas = dataset.parse(raw, name.rsplit("/", 1)[-1])
    chosen, why = chosen_runs(datas, args.run)
    if chosen is None:
        print("ticklab %s: %s: %s" % (command, name, why), file=sys.stderr)
        return EXIT_USAGE
    capture, capture_problem = provenance.load(args.log)
    what = inputs.what_it_is(raw) if not runs else None
    return what, runs, datas, chosen, capture, capture_problem, records.verdict(runs)


def run(args):
    got = load(args, NAME)
    if isinstance(got, int):
        return got
    what, runs, datas, chosen, capture, capture_problem, result = got
    folder = args.output or default_outdir(args.log)
    name = os.path.basename(inputs.name_of(args.log))
    done = []
    progress = Progress(len(chosen))
    if not args.jobs:
        args.jobs = figures.default_workers(len(chosen), args.svg)
    try:
        with outdir.removed_when_stopped(), outdir.Fresh(folder, args.force) as tmp:
            if not chosen:
                with open(os.path.join(tmp, "report.html"), "w", encoding="utf-8") as f:
                    f.write(reportpage.empty_page(name, runs, result, what))
            elif len(chosen) == 1:
                done.append((chosen[0], write_run(tmp, chosen[0], runs, name, capture,
                                                  capture_problem, args)))
            else:
                pages = []
                for k, data in enumerate(chosen, 1):
                    progress.say(k, data)
                    sub = "run-%d" % data.index
                    got = write_run(os.path.join(tmp, sub), data, runs, name, capture,
                                    capture_problem, args)
                    done.append((data, got))
                    pages.append((data.index, sub + "/report.html", got[0]))
                with open(os.path.join(tmp, "report.html"), "w", encoding="utf-8") as f:
                    f.write(reportpage.index_page(name, runs, pages))
    except outdir.Stopped as e:
        print("ticklab report: stopped by %s: nothing written" % e, file=sys.stderr)
        return e.code
    except (outdir.OutdirError, OSError) as e:
        print("ticklab report: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    print_terminal(args, runs, result, what, done)
    print(os.path.join(os.path.abspath(folder), "report.html"))
    return check.EXIT_CODES[result]


def print_terminal(args, runs, result, what, done):
    """The problems, each run's short summary and figures, then the verdict last: one line
    per question, right above the page's path."""
    log = inputs.name_of(args.log)
    for p in sorted((p for r in runs for p in r.problems), key=lambda p: p.line):
        print("%s:%d: %s: %s" % (log, p.line, p.kind, p.message))
    if what:
        print("report: %s is %s: no run in it" % (log, what))
    elif not done:
        print("report: no run in %s (no verified record); capture %s" % (log, result))
    for data, (s, drawn, absent) in done:
        for line in summary_mod.terminal_lines(s, brief=not options_summary(args)):
            print(line)
        print("report: run %d of %d (%d records); %d figure(s)%s; capture %s" % (
            data.index, len(runs), len(data.run.records), len(drawn),
            "; not drawn: " + ", ".join(a[0] for a in absent) if absent else "", result))
        for p in drawn:  # the tool's own defects: said, never hidden
            if p.overlaps:
                print("report: figure %s: labels collide: %s" % (p.name, "; ".join(
                    "%r / %r" % pair for pair in p.overlaps[:3])))
            if p.legends_on_data:
                print("report: figure %s: a legend lies on the data" % p.name)
    for data, (s, _, _) in done:
        if len(done) > 1:
            print("run %d:" % data.index)
        for line in summary_mod.verdict_terminal(s):
            print(line)
