"""The report's HTML page for one run: the summary a reader needs first (how the run was
made, one line per clock event device and path, the verdict in plain words, the
experiments), then each experiment with its table, published figures and figures, then
the calibration, the errors, the capture's integrity, what is absent, and the inventory
folded away at the bottom."""

import datetime
import json

from . import check, dataset, htmlpage, published
from .htmlpage import esc, key_values, plain_table, state, table

# Inventory records shown as key/value tables, in order, when present.
INVENTORY_ONE = ("boot", "cpu", "memory", "console", "paging", "lapic", "interrupts",
                 "irq_check", "acpi_summary", "fadt", "hpet_table", "hpet_boot_state", "madt",
                 "clocksource_selected", "tick", "hrtimer_base", "environment", "plan")
# Inventory records with one row per thing, shown as tables.
INVENTORY_ROWS = ("clocksource", "clockevent", "cpu_start", "ioapic", "acpi")
SHOWN_ELSEWHERE = set(INVENTORY_ONE) | set(INVENTORY_ROWS) | {
    "result", "calibration", "verdict", "error", "end", "madt_more", "acpi_dump", "exp_start",
    "exp_end"}
NAV = (("summary", "summary"), ("experiments", "experiments"), ("calibration", "calibration"),
       ("errors", "errors"), ("capture", "capture"), ("absent", "absent"), ("other", "other"),
       ("inventory", "inventory"), ("files", "files"))


def fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return "%.4g" % value
    return str(int(value)) if isinstance(value, (int, float)) else str(value)


def summary_section(s):
    env, run = s["environment"], s["run"]
    out = ["<div class=\"summary\" id=\"summary\">",
           "<p class=\"env\">%s</p>" % esc(env["headline"]),
           "<table><tr><th>how it was started</th><td>%s</td></tr>" % esc(env["how_started"])]
    for d in env["details"]:
        out.append("<tr><th>the kernel</th><td>%s</td></tr>" % esc(d))
    for w in env["warnings"]:
        out.append("<tr><th>warning</th><td class=\"bad\">%s</td></tr>" % esc(w))
    out.append("<tr><th>this run</th><td>%s (run %d of %d, lines %d-%d; %d records: the "
               "end record counts the %s before it)</td></tr>" % (
                   state(run["words"], run["whole"] and run["status"] == "ok"), run["index"],
                   run["of"], run["first_line"], run["last_line"], run["records"],
                   esc(fmt(run["records_before_end"]))))
    out.append("<tr><th>capture verdict</th><td>%s (as <code>ticklab check</code>, exit %d)"
               "</td></tr></table>" % (state(s["capture_verdict"],
                                             s["capture_verdict"] == "ok"), s["return_code"]))
    if s["impossible"]:
        out.append("<p class=\"bad\">Impossible figures: %d, a negative latency, cost or "
                   "overhead, or a tick rate no PC runs (a defect of the kit or of the "
                   "machine's clocks):</p>"
                   "<ul class=\"bad\">%s</ul>" % (len(s["impossible"]), "".join(
                       "<li>%s</li>" % esc(x) for x in s["impossible"])))
    out += latency_section(s["latency"])
    out += verdict_section(s["verdict"])
    out += experiment_list(s)
    out.append("</div>")
    return out


def latency_section(rows):
    out = ["<h2 id=\"latency\">Wakeup latency per clock event device and path</h2>"]
    if not rows:
        out.append("<p class=\"warn\">No wakeup-latency row in this run.</p>")
        return out
    header = ["device", "path", "wait", "min", "p50", "p99", "max", "samples", "lost",
              "stale", "clock", "resolution"]
    body = []
    for r in rows:
        res = "-" if r["resolution_ns"] is None else "%s ns (%s)" % (
            fmt(r["resolution_ns"]), r["resolution_from"])
        body.append([str(r.get("device")), str(r.get("path")) + (" (partial)" if r["partial"]
                                                                 else ""),
                     str(r.get("wait", "-"))] + [fmt(r[k]) for k in (
                         "min_ns", "p50_ns", "p99_ns", "max_ns", "samples", "lost", "stale")]
                    + [r["clock_words"] or "-", res])
    numeric = set(range(3, 10))
    if any("variant" in r for r in rows):  # the kernel's faithful / ticklab variants
        header = header[:3] + ["variant"] + header[3:]
        body = [b[:3] + [str(r.get("variant", "-"))] + b[3:] for b, r in zip(body, rows)]
        numeric = set(range(4, 11))
    out.append("<p class=\"note\">Deadline to handler, in ns: the fastest, the median, the "
               "99th percentile and the slowest wake-up of each series.</p>")
    out.append(plain_table(header, body, numeric=numeric))
    paths = dict.fromkeys(r.get("path") for r in rows if isinstance(r.get("path"), str))
    waits = dict.fromkeys(r.get("wait") for r in rows if isinstance(r.get("wait"), str))
    out.append("<ul class=\"note\">%s%s</ul>" % (
        "".join("<li><b>%s</b>: %s</li>" % (esc(p), esc(dataset.PATHS[p]))
                for p in paths if p in dataset.PATHS),
        "".join("<li>wait <b>%s</b>: %s</li>" % (esc(w), esc(dataset.WAITS[w]))
                for w in waits if w in dataset.WAITS)))
    thin = [r for r in rows if r["samples"] is not None and r["samples"] < 1000
            and r["p999_ns"] is not None and r["p999_ns"] == r["max_ns"]]
    if thin:
        out.append("<p class=\"note\">p99.9 is not shown: %d series have fewer than 1000 "
                   "samples, so their p99.9 is their max.</p>" % len(thin))
    negative = [r for r in rows if (r["min_ns"] or 0) < 0 or (r["early"] or 0) > 0]
    if negative:
        out.append("<p class=\"bad\">%d series report wake-ups before their deadline "
                   "(negative min or early &gt; 0): an impossible figure, a defect of the kit "
                   "or of the machine's clocks.</p>" % len(negative))
    return out


def verdict_section(lines):
    out = ["<h2 id=\"verdict\">Verdict</h2>"]
    if not lines:
        out.append("<p class=\"warn\">No verdict record in this run (the kernel sends them "
                   "after its experiments).</p>")
        return out
    out.append(plain_table(["question", "answer", "from"],
                           [[v["label"], v["claim"], v["from"] or "-"] for v in lines]))
    return out


def experiment_list(s):
    out = ["<h2 id=\"experiment-list\">Experiments</h2>",
           "<p class=\"note\">Planned from %s.</p>" % esc(s["experiments_planned_from"])]
    rows = [[e["exp"], e["state"], str(e["rows"]), fmt(e["duration_ns"] / 1e9) + " s"
             if e["duration_ns"] is not None else "-", str(e["errors"]), e["note"]]
            for e in s["experiments"]]
    out.append(plain_table(["experiment", "state", "rows", "machine time", "errors", "what "
                            "became of it"], rows, numeric={2, 3, 4}))
    return out


def published_cell(exp):
    def cell(row):
        pub = published.for_row(exp, row)
        if pub is None:
            return ""
        mine = row.get(pub["key"]) if pub.get("key") else None
        return esc("this machine %s; published %s (%s)" % (
            dataset.cell(mine) if mine is not None else "-", pub["text"], pub["source"]))
    return cell


def experiment_sections(data, figures):
    out = ["<h2 id=\"experiments\">Experiment by experiment</h2>"]
    states = data.experiments()
    for st in states:
        if not st.rows and st.state == "absent":
            continue
        exp = dataset.EXPERIMENT_BY_NAME.get(st.name)
        out.append("<h3 id=\"exp-%s\">%s <code>%s</code></h3>" % (esc(st.name), esc(st.title),
                                                                   esc(st.name)))
        summary = (st.start or {}).get("summary")
        if isinstance(summary, str) and summary:
            out.append("<p>%s.</p>" % esc(summary.rstrip(".")))
        elif exp:
            out.append("<p>%s.</p>" % esc(exp.about[0].upper() + exp.about[1:]))
        cls = "bad" if st.state == "partial" else "note"
        out.append("<p class=\"%s\">%s.</p>" % (cls, esc(st.describe()[0].upper()
                                                         + st.describe()[1:])))
        for text, source in published.notes(st.name):
            out.append("<p class=\"note\">Published: %s (%s).</p>" % (esc(text), esc(source)))
        for err in st.errors:
            out.append("<p class=\"bad\">error record (line %d): %s</p>" % (
                err.line, esc(" ".join("%s=%s" % (k, dataset.cell(v)) for k, v in err.items()
                                       if k != "type"))))
        extra = []
        if any(published.for_row(st.name, r) for r in st.rows):
            extra = [("published", published_cell(st.name))]
        out.append(table(st.rows, drop=("type", "exp"),
                         row_class="partial" if st.state == "partial" else None, extra=extra))
        for plot in figures.get(st.name, []):
            out.append(plot)
    if not data.results:
        out.append("<p class=\"warn\">No experiment result in this run.</p>")
    return out


def calibration_section(data, figures):
    out = ["<h2 id=\"calibration\">Calibration</h2>"]
    out.append(table(data.by_type.get("calibration", [])))
    out += figures.get(None, [])
    return out


def errors_section(data):
    errors = data.by_type.get("error", [])
    out = ["<h2 id=\"errors\">Error records (%d)</h2>" % len(errors)]
    out.append(table(errors) if errors else "<p class=\"note\">None.</p>")
    return out


def integrity_section(runs, data, log):
    out = ["<h2 id=\"capture\">Capture integrity</h2>",
           "<p>Every run found in the capture, and every problem, by capture line. Damaged "
           "lines are not used; everything that verified is.</p>"]
    rows = []
    for i, run in enumerate(runs, 1):
        rows.append(["%d%s" % (i, " (this report)" if i == data.index else ""),
                     "%d-%d" % (run.first_line, run.last_line),
                     check.describe(run).split(": ", 1)[1].split(";")[0], str(len(run.records)),
                     str(run.damaged), json.dumps(run.status),
                     "whole" if run.whole else "not whole"])
    out.append(plain_table(["run", "lines", "boot", "records", "damaged", "end status",
                            "state"], rows, numeric={3, 4}))
    problems = [(i, p) for i, run in enumerate(runs, 1) for p in run.problems]
    if problems:
        out.append(plain_table(["run", "line", "problem", "detail"],
                               [[str(i), "%s:%d" % (log, p.line), p.kind, p.message]
                                for i, p in problems]))
    else:
        out.append("<p class=\"ok\">No problem: every record line verified and every run "
                   "is whole.</p>")
    if len(runs) > 1:
        out.append("<p class=\"note\">Each run is reported on its own page; side by side: "
                   "<code>ticklab compare</code>.</p>")
    return out


def absent_section(data, absent):
    out = ["<h2 id=\"absent\">Absent from this run</h2>"]
    states = data.experiments()
    _, planned_from = data.planned()
    missing = [s.name for s in states if s.state == "absent"]
    partial = [s for s in states if s.state == "partial"]
    if missing:
        out.append("<p>Experiments with no result records: %s (planned from %s).</p>" % (
            ", ".join("<code>%s</code>" % esc(m) for m in missing), esc(planned_from)))
    for s in partial:
        out.append("<p class=\"bad\"><code>%s</code>: %s.</p>" % (esc(s.name),
                                                                    esc(s.describe())))
    if absent:
        out.append(plain_table(["figure", "why it is not drawn"],
                               [[title, why] for _, title, why in absent]))
    if not missing and not absent and not partial:
        out.append("<p class=\"ok\">Nothing: every experiment and figure is present.</p>")
    return out


def other_section(data):
    others = [t for t in data.by_type if t not in SHOWN_ELSEWHERE]
    out = ["<h2 id=\"other\">Other records</h2>"]
    for rtype in others:
        out += ["<h3>%s</h3>" % esc(rtype), table(data.by_type[rtype])]
    if not others:
        out.append("<p class=\"note\">None.</p>")
    hidden = [t for t in ("madt_more", "acpi_dump", "exp_end") if t in data.by_type]
    if hidden:
        out.append("<p class=\"note\">Also in the data files, not shown here: %s.</p>"
                   % esc(", ".join("%s (%d)" % (t, len(data.by_type[t])) for t in hidden)))
    return out


def inventory_section(data):
    body = []
    count = 0
    for rtype in INVENTORY_ROWS:
        if rtype in data.by_type:
            count += len(data.by_type[rtype])
            body += ["<h3>%s</h3>" % esc(rtype), table(data.by_type[rtype])]
    for rtype in INVENTORY_ONE:
        for rec in data.by_type.get(rtype, []):
            count += 1
            body += ["<h3>%s</h3>" % esc(rtype), key_values(rec)]
    return ["<h2>Inventory</h2>", htmlpage.details(
        "Inventory: %d records (what the kernel found: CPU, ACPI, clocks, devices)" % count,
        body, id_="inventory")]


def build(data, runs, summary, plots, absent, files, log):
    by_exp = {}
    for p in plots:
        by_exp.setdefault(p.exp, []).append(htmlpage.figure(p, "plots/"))
    cpu = data.one("cpu")
    title = "ticklab report: %s" % (cpu.get("brand") or "unknown CPU")
    out = ["<h1>%s</h1>" % esc(title),
           "<p class=\"note\">%s, run %d of %d; made by <code>ticklab report</code> on %s. "
           "Sections: %s.</p>" % (esc(log), data.index, len(runs), esc(
               datetime.datetime.now().strftime("%Y-%m-%d %H:%M")), ", ".join(
                   "<a href=\"#%s\">%s</a>" % (a, t) for a, t in NAV))]
    out += summary_section(summary)
    out += experiment_sections(data, by_exp)
    out += calibration_section(data, by_exp)
    out += errors_section(data)
    out += integrity_section(runs, data, log)
    out += absent_section(data, absent)
    out += other_section(data)
    out += inventory_section(data)
    out.append("<h2 id=\"files\">Files</h2><p class=\"note\">%s</p>" % ", ".join(
        "<a href=\"%s\">%s</a>" % (esc(f), esc(f)) for f in files))
    return htmlpage.page(title, out)


def index_page(log, runs, pages):
    """The page for a log of several runs: one line each, linking to its own report."""
    out = ["<h1>ticklab report: %s holds %d runs</h1>" % (esc(log), len(runs)),
           "<p>Each run is reported on its own page, never mixed with another.</p>"]
    rows = []
    for index, href, summary in pages:
        run = summary["run"] if summary else None
        rows.append("<tr><td><a href=\"%s\">run %d</a></td><td>%s</td><td>%s</td><td>%s</td>"
                    "</tr>" % (esc(href), index, esc(summary["environment"]["headline"]
                                                     if summary else "-"),
                               esc(run["words"] if run else "-"),
                               esc(summary["settings"]["cpu"] or "-" if summary else "-")))
    out.append("<div class=\"scroll\"><table><tr><th>run</th><th>environment</th><th>state"
               "</th><th>CPU</th></tr>%s</table></div>" % "".join(rows))
    problems = [(i, p) for i, run in enumerate(runs, 1) for p in run.problems]
    out.append("<h2 id=\"capture\">Capture integrity</h2>")
    if problems:
        out.append(plain_table(["run", "line", "problem", "detail"],
                               [[str(i), "%s:%d" % (log, p.line), p.kind, p.message]
                                for i, p in problems]))
    else:
        out.append("<p class=\"ok\">No problem: every record line verified and every run "
                   "is whole.</p>")
    return htmlpage.page("ticklab report: %s" % log, out)


def empty_page(log, runs, result):
    out = ["<h1>ticklab report: %s</h1>" % esc(log),
           "<p class=\"bad\">No run in this capture: no verified record (capture verdict %s, "
           "as <code>ticklab check</code>).</p>" % esc(result)]
    problems = [p for run in runs for p in run.problems]
    if problems:
        out.append(plain_table(["line", "problem", "detail"],
                               [["%s:%d" % (log, p.line), p.kind, p.message]
                                for p in problems]))
    return htmlpage.page("ticklab report: %s" % log, out)

