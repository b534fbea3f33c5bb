"""`ticklab report LOG`: one run of a capture as data files, figures and one HTML page.

Written into the output directory:
  report.html             self-contained page: verdict, capture integrity, inventory,
                          calibration, each experiment (table and figures), other records,
                          what was absent
  data/records.jsonl      every verified record of the run, in stream order, as sent
  data/result-<exp>.*     one JSONL and one CSV per experiment (its result rows)
  data/<type>.*           one JSONL and one CSV per other record type
  plots/<figure>.png|svg  every figure the run's records support

A damaged capture is still reported: what verified is used, and every problem of every run
in the capture is listed with its line. The exit code is `check`'s verdict on the capture.
"""

import argparse
import csv
import datetime
import json
import os
import sys

from . import EXIT_USAGE, check, dataset, htmlpage, provenance, records
from .htmlpage import esc, key_values, state, table

NAME = "report"
HELP = "turn a capture into JSON Lines, CSV, PNG/SVG plots and one HTML page"

EPILOG = """\
exit status (the capture's verdict, as `ticklab check`; the report is written for 0-2):
  0  whole, ok    1  damaged or incomplete (reported from what verified)
  2  whole, but a run ended "failed"    3  usage error, unreadable LOG, no record at all"""

# Inventory records shown as key/value tables, in order, when present.
INVENTORY_ONE = ("boot", "cpu", "memory", "console", "paging", "lapic", "interrupts",
                 "irq_check", "acpi_summary", "fadt", "hpet_table", "clocksource_selected",
                 "tick", "hrtimer_base")
# Inventory records with one row per thing, shown as tables.
INVENTORY_ROWS = ("clocksource", "clockevent", "ioapic", "acpi")
# Figures that belong to an experiment's section; the rest stand in their own sections.
FIGURE_OF_EXP = {"wakeup-latency": "wakeup_latency", "sleep-accuracy": "sleep_error",
                 "tick-overhead": "tick_overhead", "periodic-jitter": "periodic_jitter",
                 "period-compare": "period_compare", "itimer-error": "itimer_error"}
SHOWN_ELSEWHERE = set(INVENTORY_ONE) | set(INVENTORY_ROWS) | {
    "result", "calibration", "verdict", "error", "end", "madt_more", "acpi_dump", "exp_start"}


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("log", metavar="LOG", help="raw serial capture")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="output directory (default: LOG without its extension + -report)")
    p.add_argument("--run", type=int, metavar="N",
                   help="report the N'th run of the capture (default: the last that booted)")
    p.set_defaults(func=run)


def default_outdir(log):
    base = log[:-4] if log.endswith(".log") else log
    return base + "-report"


def choose(datas, wanted):
    """The run to report: the N'th, or the last with a boot record, or the last with any
    record. Returns (RunData or None, error text)."""
    if wanted is not None:
        if 1 <= wanted <= len(datas):
            return datas[wanted - 1], None
        return None, "--run %d: the capture has %d run(s)" % (wanted, len(datas))
    booted = [d for d in datas if d.run.boot is not None]
    candidates = booted or dataset.reportable(datas)
    if not candidates:
        return None, "no verified record in the capture"
    return candidates[-1], None


# --- data files ---------------------------------------------------------------------

def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def write_csv(path, rows):
    """CSV with a `capture_line` column, then the union of the rows' keys; lists and
    objects as compact JSON, booleans as true/false, absent keys empty."""
    keys = dataset.columns(rows)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["capture_line"] + keys)
        for row in rows:
            w.writerow([row.line] + [dataset.cell(row.get(k)) for k in keys])


def safe_name(text):
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(text)) or "_"


def write_data(data, outdir):
    """Write the run's records; returns the written paths relative to outdir."""
    ddir = os.path.join(outdir, "data")
    os.makedirs(ddir, exist_ok=True)
    written = ["data/records.jsonl"]
    write_jsonl(os.path.join(ddir, "records.jsonl"), data.run.records)
    groups = [("result-" + name, rows) for name, rows in data.results.items()]
    groups += [(t, rows) for t, rows in data.by_type.items() if t != "result"]
    for stem, rows in groups:
        stem = safe_name(stem)
        write_jsonl(os.path.join(ddir, stem + ".jsonl"), rows)
        write_csv(os.path.join(ddir, stem + ".csv"), rows)
        written += ["data/%s.jsonl" % stem, "data/%s.csv" % stem]
    return written


# --- the page -----------------------------------------------------------------------

def headline(data, runs, result, capture=None):
    boot, cpu, end = data.boot, data.one("cpu"), data.run.end
    title = "ticklab report: %s" % (cpu.get("brand") or "unknown CPU")
    env = provenance.describe(capture, boot, cpu, data.one("environment"))
    rows = [("environment", env["headline"]), ("how it was started", env["how_started"]),
            ("capture", "%s, run %d of %d (lines %d-%d)" % (
                data.source, data.index, len(runs), data.run.first_line, data.run.last_line)),
            ("kernel", "%s (%s)" % (boot.get("version", "?"), boot.get("git", "?"))),
            ("boot", "%s via %s, firmware %s%s" % (
                boot.get("boot", "?"), boot.get("loader") or "?", boot.get("firmware", "?"),
                ", under QEMU" if boot.get("qemu") else "")),
            ("command line", boot.get("cmdline", "")),
            ("profile, hz", "%s, %s" % (boot.get("profile", "?"), boot.get("hz", "?")))]
    out = ["<h1>%s</h1>" % esc(title), "<table>"]
    out += ["<tr><th>%s</th><td>%s</td></tr>" % (esc(k), esc(v)) for k, v in rows]
    run_state = ("whole" if data.run.whole else "NOT whole: %d problem(s)"
                 % len(data.run.problems))
    out.append("<tr><th>this run</th><td>%s; end status %s</td></tr>" % (
        state(run_state, data.run.whole),
        state(json.dumps(end.get("status")) if end else "none (no end record)",
              bool(end) and end.get("status") == "ok")))
    out.append("<tr><th>capture verdict</th><td>%s (as <code>ticklab check</code>)</td></tr>"
               % state(result, result == records.OK))
    out.append("</table>")
    return title, out


def verdict_section(data):
    out = ["<h2 id=\"verdict\">Verdict</h2>"]
    recs = data.by_type.get("verdict", [])
    if not recs:
        out.append("<p class=\"warn\">No verdict record in this run (the kernel sends one "
                   "after its experiments).</p>")
    if len(recs) == 1:
        out.append(key_values(recs[0]))
    elif recs:
        out.append(table(recs))
    errors = data.by_type.get("error", [])
    out.append("<h3>Error records (%d)</h3>" % len(errors))
    out.append(table(errors) if errors else "<p class=\"note\">None.</p>")
    return out


def integrity_section(runs, data):
    out = ["<h2 id=\"capture\">Capture integrity</h2>",
           "<p>Every run found in the capture, and every problem, by capture line. Damaged "
           "lines are not used; everything that verified is.</p>",
           "<table><tr><th>run</th><th>lines</th><th>boot</th><th>records</th>"
           "<th>damaged</th><th>end status</th><th>state</th></tr>"]
    for i, run in enumerate(runs, 1):
        mark = " (this report)" if i == data.index else ""
        out.append("<tr><td>%d%s</td><td>%d-%d</td><td>%s</td><td class=\"num\">%d</td>"
                   "<td class=\"num\">%d</td><td>%s</td><td>%s</td></tr>" % (
                       i, esc(mark), run.first_line, run.last_line,
                       esc(check.describe(run).split(": ", 1)[1].split(";")[0]),
                       len(run.records), run.damaged, esc(json.dumps(run.status)),
                       state("whole" if run.whole else "not whole", run.whole)))
    out.append("</table>")
    problems = [(i, p) for i, run in enumerate(runs, 1) for p in run.problems]
    if problems:
        out.append("<table><tr><th>run</th><th>line</th><th>problem</th><th>detail</th></tr>")
        out += ["<tr><td>%d</td><td class=\"num\">%d</td><td class=\"bad\">%s</td><td>%s"
                "</td></tr>" % (i, p.line, esc(p.kind), esc(p.message)) for i, p in problems]
        out.append("</table>")
    else:
        out.append("<p class=\"ok\">No problem: every record line verified and every run "
                   "is whole.</p>")
    if len(runs) > 1:
        out.append("<p class=\"note\">Other runs: <code>ticklab report --run N</code>; "
                   "side by side: <code>ticklab compare</code>.</p>")
    return out


def inventory_section(data):
    out = ["<h2 id=\"inventory\">Inventory</h2>"]
    for rtype in INVENTORY_ROWS:
        if rtype in data.by_type:
            out += ["<h3>%s</h3>" % esc(rtype), table(data.by_type[rtype])]
    for rtype in INVENTORY_ONE:
        for rec in data.by_type.get(rtype, []):
            out += ["<h3>%s</h3>" % esc(rtype), key_values(rec)]
    return out


def experiment_sections(data, figures):
    out = ["<h2 id=\"calibration\">Calibration</h2>"]
    out.append(table(data.by_type.get("calibration", [])))
    if "calibration" in figures:
        out.append(figures["calibration"])
    out.append("<h2 id=\"experiments\">Experiments</h2>")
    for name in data.experiments_present():
        exp = dataset.EXPERIMENT_BY_NAME.get(name)
        title = exp.title if exp else name
        out.append("<h3 id=\"exp-%s\">%s <code>%s</code></h3>" % (esc(name), esc(title),
                                                                   esc(name)))
        starts = [r for r in data.by_type.get("exp_start", []) if r.get("exp") == name]
        if starts and isinstance(starts[0].get("summary"), str):
            out.append("<p>%s.</p>" % esc(starts[0]["summary"].rstrip(".")))
        elif exp:
            out.append("<p>%s.</p>" % esc(exp.about[0].upper() + exp.about[1:]))
        out.append(table(data.results[name], drop=("type", "exp")))
        if FIGURE_OF_EXP.get(name) in figures:
            out.append(figures[FIGURE_OF_EXP[name]])
    if not data.results:
        out.append("<p class=\"warn\">No experiment result in this run.</p>")
    return out


def other_section(data):
    others = [t for t in data.by_type if t not in SHOWN_ELSEWHERE]
    out = ["<h2 id=\"other\">Other measurements</h2>"]
    for rtype in others:
        out += ["<h3>%s</h3>" % esc(rtype), table(data.by_type[rtype])]
    hidden = [t for t in ("madt_more", "acpi_dump") if t in data.by_type]
    if hidden:
        out.append("<p class=\"note\">Also in the data files, not shown here: %s.</p>"
                   % esc(", ".join("%s (%d)" % (t, len(data.by_type[t])) for t in hidden)))
    return out


def absent_section(data, absent):
    out = ["<h2 id=\"absent\">Absent from this run</h2>"]
    missing = data.experiments_absent()
    if missing:
        out.append("<p>Experiments with no result records: %s.</p>" % ", ".join(
            "<code>%s</code>" % esc(m) for m in missing))
    if absent:
        out.append("<table><tr><th>figure</th><th>why it is not drawn</th></tr>")
        out += ["<tr><td>%s</td><td>%s</td></tr>" % (esc(title), esc(why))
                for _, title, why in absent]
        out.append("</table>")
    if not missing and not absent:
        out.append("<p class=\"ok\">Nothing: every experiment and figure is present.</p>")
    return out


def build_page(data, runs, result, plots, absent, files, capture=None):
    figures = {p.name: htmlpage.figure(p, "plots/") for p in plots}
    title, out = headline(data, runs, result, capture)
    out.append("<p class=\"note\">Made by <code>ticklab report</code> on %s. Sections: "
               "<a href=\"#verdict\">verdict</a>, <a href=\"#capture\">capture</a>, "
               "<a href=\"#inventory\">inventory</a>, <a href=\"#calibration\">calibration"
               "</a>, <a href=\"#experiments\">experiments</a>, <a href=\"#other\">other</a>, "
               "<a href=\"#absent\">absent</a>.</p>" % esc(
                   datetime.datetime.now().strftime("%Y-%m-%d %H:%M")))
    out += verdict_section(data)
    out += integrity_section(runs, data)
    out += inventory_section(data)
    out += experiment_sections(data, figures)
    out += other_section(data)
    out += absent_section(data, absent)
    out.append("<h2>Files</h2><p class=\"note\">%s</p>" % ", ".join(
        "<a href=\"%s\">%s</a>" % (esc(f), esc(f)) for f in files))
    return htmlpage.page(title, out)


def run(args):
    try:
        runs, datas = dataset.load(args.log)
    except OSError as e:
        print("ticklab report: cannot read %s: %s" % (args.log, e.strerror or e),
              file=sys.stderr)
        return EXIT_USAGE
    data, why = choose(datas, args.run)
    if data is None:
        print("ticklab report: %s: %s" % (args.log, why), file=sys.stderr)
        return EXIT_USAGE
    outdir = args.output or default_outdir(args.log)
    from . import plots  # matplotlib is slow to import: only when drawing
    try:
        files = write_data(data, outdir)
        drawn, absent = plots.render(data, os.path.join(outdir, "plots"))
        files += ["plots/%s.%s" % (p.name, ext) for p in drawn for ext in ("png", "svg")]
        result = records.verdict(runs)
        capture, _ = provenance.load(args.log)
        page = build_page(data, runs, result, drawn, absent, files, capture)
        with open(os.path.join(outdir, "report.html"), "w", encoding="utf-8") as f:
            f.write(page)
    except OSError as e:
        print("ticklab report: cannot write to %s: %s" % (outdir, e), file=sys.stderr)
        return EXIT_USAGE
    for p in sorted((p for r in runs for p in r.problems), key=lambda p: p.line):
        print("%s:%d: %s: %s" % (args.log, p.line, p.kind, p.message))
    print("report: run %d of %d (%d records); %d figure(s)%s; capture %s" % (
        data.index, len(runs), len(data.run.records), len(drawn),
        "; not drawn: " + ", ".join(a[0] for a in absent) if absent else "", result))
    print("report: %s" % os.path.join(outdir, "report.html"))
    return check.EXIT_CODES[result]
