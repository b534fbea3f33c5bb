"""`ticklab export LOG`: a run's data without drawing: the same data files `report`
writes (summary.json, results.csv, histograms.csv and .txt, samples.csv and the
cyclictest-shaped histograms when the kernel sent raw samples, data/*.jsonl and *.csv),
and no figure or page, so it needs no matplotlib and takes a fraction of a second. A log of
several runs gets a folder per run (run-1/, run-2/ ...), as `report` does.
"""

import argparse
import os
import sys

from . import EXIT_USAGE, check, exports, inputs, outdir, report

NAME = "export"
HELP = "write a capture's data (JSON, CSV) without drawing: no figure, no page"

EPILOG = """\
exit status: the capture's verdict, as `ticklab check` (the data is written for 0-2);
3 usage error, unreadable LOG, unwritable folder. The last line printed is the folder."""


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    report.add_input_options(p)
    p.set_defaults(func=run)


def write_one(folder, data, runs, log, capture, capture_problem):
    s, files, _ = report.write_data(folder, data, runs, log, capture, capture_problem)
    s["figures"] = []
    s["figures_not_drawn"] = [{"name": "figures", "title": "every figure",
                               "why": "ticklab export draws none (ticklab report does)"}]
    exports.write_summary(s, folder)
    return s, files


def run(args):
    got = report.load(args, NAME)
    if isinstance(got, int):
        return got
    what, runs, _, chosen, capture, capture_problem, result = got
    log = inputs.name_of(args.log)
    if not chosen:
        print("ticklab export: %s: %s" % (log, "%s: no run in it" % what if what else
                                          "no run (no verified record)"), file=sys.stderr)
        return check.EXIT_CODES[result]
    folder = args.output or report.default_outdir(args.log, NAME)
    name = os.path.basename(log)
    try:
        with outdir.removed_when_stopped(), outdir.Fresh(folder, args.force) as tmp:
            for k, data in enumerate(chosen, 1):
                sub = tmp if len(chosen) == 1 else os.path.join(tmp, "run-%d" % data.index)
                s, files = write_one(sub, data, runs, name, capture, capture_problem)
                print("export: run %d of %d: %d files%s" % (
                    data.index, len(runs), len(files) + 1, "" if len(chosen) == 1 else
                    " in run-%d/" % data.index))
    except outdir.Stopped as e:
        print("ticklab export: stopped by %s: nothing written" % e, file=sys.stderr)
        return e.code
    except (outdir.OutdirError, OSError) as e:
        print("ticklab export: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    for p in sorted((p for r in runs for p in r.problems), key=lambda p: p.line):
        print("%s:%d: %s: %s" % (log, p.line, p.kind, p.message))
    print(os.path.abspath(folder))
    return check.EXIT_CODES[result]
