"""`ticklab compare LOG LOG...`: runs side by side (two PCs, or two settings), with the
differences.

Every run with a boot record in each capture becomes one column (a capture holding two
runs gives two). Rows are matched across runs by what names them (an experiment's row keys,
a clocksource's name, a calibration's target/method/reference: dataset.EXPERIMENTS and
dataset.RECORD_ROW_KEYS), and every numeric value is set side by side with its difference
from the first run. By default only values that differ are listed, and a row present in
one run and absent in another is a difference too. With -o, an HTML page and a CSV hold the
same tables, and every run's figures side by side.
"""

import argparse
import csv
import os
import sys
from dataclasses import dataclass

from . import EXIT_USAGE, check, dataset, htmlpage, records
from .htmlpage import esc

NAME = "compare"
HELP = "compare two or more runs side by side, with the differences"

EPILOG = """\
exit status: the worst verdict of the captures, as `ticklab check` (0 whole and ok,
1 some capture damaged or incomplete, 2 some run failed); 3 usage error, unreadable
LOG, or fewer than two runs in all."""

SKIP_TYPES = {"end", "acpi_dump", "madt_more", "verdict"}
# What describes a run's set-up: (label, record type, key).
SETUP = (("CPU", "cpu", "brand"), ("vendor", "cpu", "vendor"), ("family", "cpu", "family"),
         ("model", "cpu", "model"), ("hypervisor", "cpu", "hypervisor_signature"),
         ("invariant TSC", "cpu", "invariant_tsc"), ("kernel", "boot", "version"),
         ("git", "boot", "git"), ("entered by", "boot", "boot"),
         ("firmware", "boot", "firmware"), ("loader", "boot", "loader"),
         ("command line", "boot", "cmdline"), ("profile", "boot", "profile"),
         ("hz", "boot", "hz"), ("clocksource", "clocksource_selected", "name"),
         ("tick device", "tick", "device"), ("tick hz", "tick", "hz_actual"),
         ("hrtimer device", "hrtimer_base", "device"), ("end status", "end", "status"))


def register(subparsers):
    p = subparsers.add_parser(NAME, help=HELP, description=HELP[0].upper() + HELP[1:] + ".",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("logs", nargs="+", metavar="LOG", help="raw serial captures")
    p.add_argument("-o", "--output", metavar="DIR",
                   help="also write DIR/compare.html, DIR/compare.csv and the figures")
    p.add_argument("--all", action="store_true", help="list equal values too")
    p.set_defaults(func=run)


@dataclass
class Row:
    """One compared value: section (record type or experiment), the row's name, the key,
    the value in each run (None: absent)."""
    section: str
    name: str
    key: str
    values: list

    @property
    def differs(self):
        return any(v != self.values[0] for v in self.values[1:])


def keyed_rows(data):
    """(section, row keys, [records]) for every comparable group of the run."""
    groups = []
    for name, rows in data.results.items():
        exp = dataset.EXPERIMENT_BY_NAME.get(name)
        groups.append(("result " + name, exp.row_keys if exp else (), rows))
    for rtype, rows in data.by_type.items():
        if rtype not in SKIP_TYPES and rtype != "result":
            groups.append((rtype, dataset.RECORD_ROW_KEYS.get(rtype, ()), rows))
    return groups


def row_names(keys, rows):
    """Each record's name within its group: its row keys' values; the ordinal breaks ties
    (and names rows of groups without keys)."""
    bases = [" ".join("%s=%s" % (k, dataset.cell(rec.get(k))) for k in keys if k in rec)
             for rec in rows]
    total = {b: bases.count(b) for b in bases}
    names, seen = [], {}
    for base in bases:
        seen[base] = seen.get(base, 0) + 1
        names.append(base if total[base] == 1 else ("%s #%d" % (base, seen[base])).strip())
    return names


def numbers(datas):
    """Every numeric value of every run, aligned: [Row], in the first run's order."""
    table = {}
    for col, data in enumerate(datas):
        for section, keys, rows in keyed_rows(data):
            for name, rec in zip(row_names(keys, rows), rows):
                for key, value in rec.items():
                    if key in keys:
                        continue
                    value = dataset.num(value)
                    if value is None:
                        continue
                    row = table.setdefault((section, name, key),
                                           Row(section, name, key, [None] * len(datas)))
                    row.values[col] = value
    return list(table.values())


def setup_rows(datas):
    rows = []
    for text, rtype, key in SETUP:
        values = [data.one(rtype).get(key) if rtype != "end" else
                  (data.run.end or {}).get(key) for data in datas]
        if any(v is not None for v in values):
            rows.append(Row("setup", text, "", values))
    return rows


def delta(value, base):
    """(difference, percent) of value against base, as text."""
    if value is None or base is None:
        return "", ""
    diff = value - base
    rel = None if base == 0 else diff / abs(base)
    if rel is None:
        pct = ""
    elif rel != 0 and abs(rel) < 1e-4:  # calibrations differ in ppm, not percent
        pct = "%+.3g ppm" % (rel * 1e6)
    else:
        pct = "%+.2f%%" % (100.0 * rel)
    return ("%+g" % diff if isinstance(diff, float) else "%+d" % diff), pct


def fmt(value):
    if value is None:
        return "absent"
    if value == "":
        return '""'
    if isinstance(value, float):
        return "%g" % value
    return dataset.cell(value)


def labels(datas):
    """Column names: the capture's file name, with #N when it holds several runs."""
    counts = {}
    for d in datas:
        counts[d.source] = counts.get(d.source, 0) + 1
    return [d.label if counts[d.source] > 1 else d.source for d in datas]


def load_all(paths):
    """Every run with records from every capture. Returns ([RunData], worst verdict)."""
    # File names label the columns, unless two captures share one: then the paths do.
    by_name = len({os.path.basename(p) for p in paths}) == len(paths)
    datas, verdicts = [], []
    for path in paths:
        runs, found = dataset.load(path)
        verdicts.append(records.verdict(runs))
        for d in found:
            d.source = os.path.basename(path) if by_name else path
        datas += [d for d in found if d.run.boot is not None]
    rank = {records.OK: 0, records.FAILED: 1, records.DAMAGED: 2}
    return datas, max(verdicts, key=rank.get)


def print_text(datas, rows, show_all):
    names = labels(datas)
    for i, (name, data) in enumerate(zip(names, datas), 1):
        state = "whole" if data.run.whole else "NOT whole (%d problems)" % len(
            data.run.problems)
        print("[%d] %s: lines %d-%d, %d records, %s" % (i, name, data.run.first_line,
                                                       data.run.last_line,
                                                       len(data.run.records), state))
    section = None
    shown = 0
    for row in rows:
        if not (show_all or row.differs):
            continue
        if row.section != section:
            section = row.section
            print("\n== %s" % section)
        shown += 1
        head = "%s %s" % (row.name, row.key) if row.key else row.name
        parts = [fmt(v) for v in row.values]
        if row.key:
            for v in row.values[1:]:
                d, pct = delta(v, row.values[0])
                if d:
                    parts.append("d=%s %s" % (d, pct))
        print("  %-44s %s" % (head.strip(), " | ".join(parts)))
    differ = sum(r.differs for r in rows)
    print("\ncompare: %d run(s), %d value(s) compared, %d differ%s" % (
        len(datas), len(rows), differ, "" if show_all else " (shown; --all lists all)"))


def write_csv(path, datas, rows):
    names = labels(datas)
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["section", "row", "key"] + names + ["delta_%s" % n for n in names[1:]]
                   + ["differs"])
        for row in rows:
            deltas = [delta(v, row.values[0])[0] if row.key else "" for v in row.values[1:]]
            w.writerow([row.section, row.name, row.key] + [dataset.cell(v) for v in row.values]
                       + deltas + [int(row.differs)])


def html_table(datas, rows, show_all):
    names = labels(datas)
    out = ["<div class=\"scroll\"><table><tr><th>section</th><th>row</th><th>key</th>%s%s"
           "</tr>" % ("".join("<th>[%d] %s</th>" % (i, esc(n)) for i, n in enumerate(names, 1)),
                      "".join("<th>[%d] - [1]</th>" % i for i in range(2, len(names) + 1)))]
    for row in rows:
        if not (show_all or row.differs):
            continue
        deltas = ["%s %s" % delta(v, row.values[0]) if row.key else "" for v in row.values[1:]]
        out.append("<tr%s><td>%s</td><td>%s</td><td>%s</td>%s%s</tr>" % (
            " class=\"diff\"" if row.differs else "", esc(row.section), esc(row.name),
            esc(row.key), "".join(htmlpage.td(v) if v is not None else
                                  "<td class=\"warn\">absent</td>" for v in row.values),
            "".join("<td class=\"num\">%s</td>" % esc(d) for d in deltas)))
    out.append("</table></div>")
    return "".join(out)


def write_html(outdir, datas, setup, rows, show_all):
    from . import plots  # matplotlib only when figures are wanted
    names = labels(datas)
    body = ["<h1>ticklab compare: %d runs</h1>" % len(datas), "<ol>"]
    for name, data in zip(names, datas):
        body.append("<li>%s: lines %d-%d, %d records, %s</li>" % (
            esc(name), data.run.first_line, data.run.last_line, len(data.run.records),
            htmlpage.state("whole" if data.run.whole else "NOT whole: %d problem(s)"
                           % len(data.run.problems), data.run.whole)))
    body.append("</ol><h2>Set-up</h2>")
    body.append(html_table(datas, setup, True))
    differ = sum(r.differs for r in rows)
    body.append("<h2>Measurements</h2><p>%d values compared, %d differ%s. Differences are "
                "against run [1].</p>" % (len(rows), differ,
                                          "" if show_all else " (only those are listed)"))
    body.append(html_table(datas, rows, show_all))
    body.append("<h2>Figures side by side</h2>")
    drawn = []
    for i, data in enumerate(datas, 1):
        got, _ = plots.render(data, os.path.join(outdir, "plots", "run%d" % i))
        drawn.append({p.name: p for p in got})
    for name, title, _ in plots.FIGURES:
        if not any(name in d for d in drawn):
            continue
        body.append("<h3>%s</h3><div class=\"scroll\"><table><tr>" % esc(title))
        for i, d in enumerate(drawn, 1):
            cellhtml = (htmlpage.figure(d[name], "plots/run%d/" % i, "run%d-" % i) if name in d
                        else "<p class=\"warn\">absent in this run</p>")
            body.append("<td style=\"min-width:420px\"><b>[%d] %s</b>%s</td>"
                        % (i, esc(names[i - 1]), cellhtml))
        body.append("</tr></table></div>")
    with open(os.path.join(outdir, "compare.html"), "w", encoding="utf-8") as f:
        f.write(htmlpage.page("ticklab compare", body))


def run(args):
    try:
        datas, worst = load_all(args.logs)
    except OSError as e:
        print("ticklab compare: cannot read %s: %s" % (e.filename, e.strerror or e),
              file=sys.stderr)
        return EXIT_USAGE
    if len(datas) < 2:
        print("ticklab compare: need at least two runs with a boot record; found %d"
              % len(datas), file=sys.stderr)
        return EXIT_USAGE
    setup = setup_rows(datas)
    rows = numbers(datas)
    print_text(datas, setup + rows, args.all)
    if args.output:
        try:
            os.makedirs(args.output, exist_ok=True)
            write_csv(os.path.join(args.output, "compare.csv"), datas, setup + rows)
            write_html(args.output, datas, setup, rows, args.all)
        except OSError as e:
            print("ticklab compare: cannot write to %s: %s" % (args.output, e),
                  file=sys.stderr)
            return EXIT_USAGE
        print("compare: %s" % os.path.join(args.output, "compare.html"))
    return check.EXIT_CODES[worst]
