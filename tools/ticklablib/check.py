"""`ticklab check LOG`: is this capture a complete, trustworthy record of passing runs?

The exit code is the answer, so scripts and the QEMU boot tests can gate on it; the text
says which line is wrong and why, in the compiler-like LOG:LINE form editors can jump to.
"""

import argparse
import json
import sys

from . import EXIT_USAGE, inputs, provenance, records

NAME = "check"
HELP = "verify a serial capture: framing, CRCs, boot/end, record counts, status"

EXIT_CODES = {records.OK: 0, records.DAMAGED: 1, records.FAILED: 2}

EPILOG = """\
exit status:
  0  at least one run, and every run is whole and ended with status "ok"
  1  the capture is damaged or incomplete: no run at all, or some run is not whole
     (a damaged record line, no boot first, no end, lost/duplicated lines caught by
     the end count, records after an end, an end status other than ok/failed)
  2  every run is whole, but at least one ended with status "failed": the capture is
     trustworthy and reports that the kernel's own checks failed
  3  usage error, or LOG cannot be read
A run is whole when its boot record comes first, its end record is present, the
end's "records" equals the record lines that arrived, and no line is damaged.
Text and firmware noise between records are ignored."""

# Boot record keys worth a glance in the one-line run summary, when present.
BOOT_SUMMARY_KEYS = ("version", "boot", "firmware", "loader")


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("log", metavar="LOG", help='raw serial capture (gzipped or not), or "-" '
                   'for standard input')
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (verdict, exit code, how the run was started "
                   "from LOG.capture.json, runs, problems) instead")
    p.set_defaults(func=run)


def run(args):
    name = inputs.name_of(args.log)
    try:
        data = inputs.read(args.log)
    except inputs.InputError as e:
        print("ticklab check: %s" % e, file=sys.stderr)
        return EXIT_USAGE
    runs = records.parse_stream(data)
    result = records.verdict(runs)
    code = EXIT_CODES[result]
    what = inputs.what_it_is(data) if not runs else None
    if args.json:
        capture, problem = provenance.load(args.log)
        json.dump({"log": name, "verdict": result, "exit_code": code,
                   "how_started": provenance.how_started(capture), "capture": capture,
                   "capture_problem": problem, "input": what,
                   "runs": [r.summary() for r in runs]},
                  sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print_text(name, runs, result, what)
    return code


def describe(run):
    """One line per run: where it is, what booted, how many records, how it ended."""
    if run.boot is None:
        what = "no boot record"
    else:
        what = " ".join("%s=%s" % (k, run.boot[k]) for k in BOOT_SUMMARY_KEYS
                        if k in run.boot) or "boot"
    status = "no end" if run.end is None else "status %s" % json.dumps(run.status)
    state = "whole" if run.whole else "NOT whole, %d problem(s)" % len(run.problems)
    return "lines %d-%d: %s; %d records, %s; %s" % (
        run.first_line, run.last_line, what, len(run.records), status, state)


def print_text(name, runs, result, what=None):
    for i, run in enumerate(runs, 1):
        print("%s: run %d, %s" % (name, i, describe(run)))
        for p in run.problems:
            print("%s:%d: %s: %s" % (name, p.line, p.kind, p.message))
    if what:  # an empty or binary file is no damaged capture: say what it is
        print("%s: %s: no run in it" % (name, what))
        return
    bad = sum(not r.whole for r in runs)
    failed = sum(r.whole and r.status == "failed" for r in runs)
    detail = "no run found" if not runs else "%d run(s), %d not whole, %d failed" % (
        len(runs), bad, failed)
    print("%s: %s (%s)" % (name, result, detail))


# --- what was asked for and did not happen -------------------------------------------------

def refused_words(run):
    """The command-line words the kernel refused or ignored, from its `error` records
    (what: cmdline): ["'exp=none,bogus': not one of the choices (default used)", ...]."""
    out = []
    for rec in run.records:
        if rec.type != "error" or rec.get("what") != "cmdline":
            continue
        word = rec.get("word")
        text = "%r: %s" % (word, rec.get("reason") or "refused") if word is not None else \
            str(rec.get("reason") or rec.get("detail") or "a word refused")
        if rec.get("action"):
            text += " (%s)" % rec.get("action")
        out.append(text)
        more = rec.get("not_reported")
        if isinstance(more, int) and more > 0:
            out.append("%d more word(s) the kernel did not list" % more)
    return out


def unrun_experiments(run):
    """Experiments the command line's exp= named that sent no record (none, when exp= was
    refused: the kernel then ran its default)."""
    words = dict(w.split("=", 1) for w in str((run.boot or {}).get("cmdline") or "").split()
                 if "=" in w)
    asked = [n for n in words.get("exp", "").split(",") if n and n not in ("none", "all")]
    if not asked or any(rec.type == "error" and rec.get("what") == "cmdline"
                        and str(rec.get("word", "")).startswith("exp=") for rec in run.records):
        return []
    ran = {rec.get("exp") for rec in run.records if rec.type in ("exp_start", "result")}
    return [n for n in asked if n not in ran]


def unmet(runs):
    """Lines saying what the user asked for that did not happen, every run's."""
    out = []
    for i, run in enumerate(runs, 1):
        where = "run %d: " % i if len(runs) > 1 else ""
        for text in refused_words(run):
            out.append("%sthe kernel refused or ignored the command-line word %s" % (where, text))
        for name in unrun_experiments(run):
            out.append("%sexp= asked for %s, which sent no record" % (where, name))
    return out
