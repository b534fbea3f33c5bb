"""The report's HTML page for one run. Its first screen (1400 x 900) is the answer: which
clock event device and clocksource to use here with their figures and the verdict's
interval (or why it is undecided), the environment in one line, and one figure of every
device on shared axes. Then the summary (how the run was made, one line per clock event
device and path, the experiments, the verdict with what it rests on), each experiment with
its table, published figures and figures, the calibration, the errors, the capture's
integrity, what is absent, and the inventory folded away at the bottom."""

import datetime

from . import answer, check, dataset, experiments, figures as figures_mod, htmlpage, \
    published, samples, tables, windows
from .htmlpage import esc, key_values, plain_table, readable, state, table
from .summary import basis_words, duration

# Inventory records shown as key/value tables, in order, when present.
INVENTORY_ONE = ("boot", "cpu", "memory", "console", "serial_ports", "paging", "lapic", "interrupts",
                 "irq_check", "acpi_summary", "fadt", "hpet_table", "hpet_boot_state", "madt",
                 "clocksource_selected", "tick", "hrtimer_base", "environment", "plan",
                 "core_clock", "acpi_mode")
# Inventory records with one row per thing, shown as tables.
INVENTORY_ROWS = ("clocksource", "clockevent", "cpu_start", "ioapic", "acpi", "serial_port",
                  "usb_handoff")
SHOWN_ELSEWHERE = set(INVENTORY_ONE) | set(INVENTORY_ROWS) | {
    "result", "calibration", "verdict", "error", "end", "madt_more", "acpi_dump", "exp_start",
    "exp_end", "samples", "sample_detail"}
NAV = (("answer", "answer"), ("summary", "summary"), ("verdict", "verdict"),
       ("experiments", "experiments"), ("calibration", "calibration"),
       ("errors", "errors"), ("capture", "capture"), ("absent", "absent"), ("other", "other"),
       ("inventory", "inventory"), ("files", "files"))


def fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return "%.4g" % value
    return str(int(value)) if isinstance(value, (int, float)) else str(value)


def answer_section(s, plots):
    """The first screen: the answer, the environment in one line, the overlay figure."""
    out = ["<div class=\"answer\" id=\"answer\">",
           "<p class=\"envline\">%s</p>" % esc(s["environment_line"])]
    run = s["run"]
    if not (run["whole"] and run["status"] == "ok"):
        out.append("<p class=\"bad\">This run: %s.</p>" % esc(run["words"]))
    rows = []
    for a in s["answer"]:
        lead = a["topic"] in answer.LEAD
        shown = a["answer"] if a.get("answer") else "-"
        mark = ""
        if lead and a.get("decided") is False:
            mark = " <span class=\"warn\">(%s)</span>" % esc(a["why"])
        elif lead and a.get("decided"):
            mark = " <span class=\"ok\">decided</span>"
        rows.append("<tr class=\"%s\"><th>%s</th><td class=\"choice\">%s</td><td%s>%s%s"
                    "</td></tr>" % ("lead" if lead else "other", esc(a["question"]),
                                    esc(shown) if lead else "",
                                    "" if lead else " class=\"claim\" title=\"%s\""
                                    % esc(a["figures"]), esc(a["figures"]), mark))
    out.append("<table class=\"answer\">%s</table>" % "".join(rows))
    notes = []
    if s["impossible"]:
        notes.append("<a class=\"bad\" href=\"#impossible\">%d impossible figure(s)</a>"
                     % len(s["impossible"]))
    if s.get("lost_rows"):
        notes.append("<a class=\"bad\" href=\"#capture\">%d row(s) lost with damaged "
                     "lines</a>" % len(s["lost_rows"]))
    if run["problems"] and not s.get("lost_rows"):
        notes.append("<a class=\"bad\" href=\"#capture\">%d problem(s) in the capture</a>"
                     % run["problems"])
    notes.append("<a href=\"#verdict\">each answer's evidence and method</a>")
    notes.append("<a href=\"#latency\">every device and path</a>")
    out.append("<p class=\"note\">%s</p>" % " · ".join(notes))
    out.append(htmlpage.figures(plots, "plots/", wide=True) if plots else
               "<p class=\"note\">No figure of every device: %s.</p>" % esc(
                   s.get("overview_absent") or "no latency series"))
    out.append("</div>")
    return out


def summary_section(s):
    env, run = s["environment"], s["run"]
    out = ["<div class=\"summary\" id=\"summary\">",
           "<p class=\"env\">%s</p>" % esc(env["headline"]),
           "<table><tr><th>how it was started</th><td>%s</td></tr>" % esc(env["how_started"])]
    if env["details"]:
        out.append("<tr><th>the kernel</th><td>%s</td></tr>" % esc("; ".join(env["details"])))
    for w in env["warnings"]:
        out.append("<tr><th>warning</th><td class=\"bad\">%s</td></tr>" % esc(w))
    for w in s.get("unmet", []):
        out.append("<tr><th>not done</th><td class=\"bad\">%s</td></tr>" % esc(w))
    out.append("<tr><th>this run</th><td>%s (run %d of %d, lines %d-%d; %d records: the "
               "end record counts the %s before it)</td></tr>" % (
                   state(run["words"], run["whole"] and run["status"] == "ok"), run["index"],
                   run["of"], run["first_line"], run["last_line"], run["records"],
                   esc(fmt(run["records_before_end"]))))
    if s.get("console"):
        out.append("<tr><th>the output's own cost</th><td%s>%s</td></tr>" % (
            "" if s["console"]["ok"] else " class=\"bad\"", esc(s["console"]["line"])))
    out.append("<tr><th>capture verdict</th><td>%s (as <code>ticklab check</code>, exit %d)"
               "</td></tr></table>" % (state(s["capture_verdict"],
                                             s["capture_verdict"] == "ok"), s["return_code"]))
    if s["impossible"]:
        out.append("<p class=\"bad\" id=\"impossible\">Impossible figures: %d, a negative "
                   "latency, cost or "
                   "overhead, a tick costing more than its period, a sleep earlier than its "
                   "contract, or a tick rate no PC runs (a defect of the kit, of the "
                   "machine's clocks, or a host that held the guest):</p>"
                   "<ul class=\"bad\">%s</ul>" % (len(s["impossible"]), "".join(
                       "<li>%s</li>" % esc(x) for x in s["impossible"])))
    # the per-device table and the list of experiments side by side where the width
    # allows (each is narrower than half the page), the verdict under both
    out.append("<div class=\"flow\"><div class=\"tab\">%s</div><div class=\"tab\">%s</div>"
               "</div>" % ("".join(latency_section(s["latency"], s.get("samples_note", ""),
                                                   s.get("lost_rows", ()))),
                           "".join(experiment_list(s))))
    out += verdict_section(s["verdict"])
    out.append("</div>")
    return out


def latency_section(rows, samples_note="", lost=()):
    lat = experiments.latency()
    out = ["<h2 id=\"latency\">Wakeup latency per clock event device and path</h2>"]
    lost = [x for x in lost if x["exp"] == lat.name]
    if not rows and not lost:
        out.append("<p class=\"warn\">No %s row in this run.</p>" % lat.name)
        return out
    header = ["device", "path", "wait", "min (ns)", "p50 (ns)", "p99 (ns)", "p99.9 (ns)",
              "max (ns)", "samples", "lost", "stale", "+- (ns)"]
    clocks = dict.fromkeys(r["clock_words"] or "clock not named" for r in rows)
    body = []
    for r in rows:
        body.append([str(r.get("device")), str(r.get("path")) + (" (partial)" if r["partial"]
                                                                 else ""),
                     str(r.get("wait", "-"))] + [tables.number(r[k]) for k in (
                         "min_ns", "p50_ns", "p99_ns")] + [p999_cell(r)] + [
                         tables.number(r[k]) for k in ("max_ns", "samples", "lost", "stale",
                                                       "resolution_ns")])
    numeric = set(range(3, 12))
    if len(clocks) > 1:
        header.append("clock")
        body = [b + [r["clock_words"] or "-"] for b, r in zip(body, rows)]
    if any("variant" in r for r in rows):  # the kernel's faithful / ticklab variants
        header = header[:3] + ["variant"] + header[3:]
        body = [b[:3] + [str(r.get("variant", "-"))] + b[3:] for b, r in zip(body, rows)]
        numeric = {i + 1 for i in numeric}
    # a row whose line was damaged: in its place, marked missing, its line named
    lines = [r["line"] for r in rows]
    for x in lost:
        k = x["keys"]
        body.append([str(k.get("device", "?")), "%s (MISSING: line %d damaged)" % (
            k.get("path", "?"), x["line"]), str(k.get("wait", "-"))]
            + ["missing"] * (len(header) - 3))
        lines.append(x["line"])
    wheres = dict.fromkeys(r["resolution_from"] for r in rows if r["resolution_from"])
    out.append("<p class=\"note\">Deadline to handler, in ns: the fastest, the median, the "
               "99th and 99.9th percentiles and the slowest wake-up of each series; clock %s; "
               "+-: the resolution of each figure (%s).%s</p>" % (
                   esc(" / ".join(clocks)), esc("; ".join(wheres) or "not known"),
                   esc(samples_note)))
    out.append(plain_table(header, body, numeric=numeric, lines=lines,
                           row_class="partial" if any(r["partial"] for r in rows) else None,
                           classes=["missing" if i >= len(rows) else None
                                    for i in range(len(body))]))
    if lost:
        out.append("<p class=\"bad\">%d row(s) missing: %s. Their lines are damaged (the "
                   "CRC does not match), so their figures are not used; the names come from "
                   "what the damaged bytes still say.</p>" % (len(lost), esc("; ".join(
                       "line %d: %s" % (x["line"], x["row"]) for x in lost))))
    paths = dict.fromkeys(r.get("path") for r in rows if isinstance(r.get("path"), str))
    waits = dict.fromkeys(r.get("wait") for r in rows if isinstance(r.get("wait"), str))
    out.append("<p class=\"note\">%s</p>" % "; ".join(
        ["<b>%s</b>: %s" % (esc(p), esc(lat.paths[p])) for p in paths if p in lat.paths]
        + ["wait <b>%s</b>: %s" % (esc(w), esc(lat.waits[w])) for w in waits
           if w in lat.waits]))
    thin = [r for r in rows if not samples.p999_computable(r["samples"])]
    if thin:
        out.append("<p class=\"note\">p99.9 not computable for %d series: fewer than %d "
                   "samples (its nearest rank would be the max or next to it).</p>" % (
                       len(thin), samples.P999_MIN_SAMPLES))
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
    methods = list(dict.fromkeys(v["method"] for v in lines if v.get("method")))

    def method_cell(m):  # its first words beside the verdict, the whole sentence below
        if not m:
            return "-"
        return "%s [m%d]" % (m.split(" (")[0].split(";")[0].split(":")[0],
                             methods.index(m) + 1)
    rows = [[v["label"], v["claim"], basis_words(v) or "-", method_cell(v.get("method")),
             v["from"] or "-"] for v in lines]
    header = ["question", "answer", "rests on (95 % intervals)", "method", "from"]
    if not any(v.get("intervals") or v.get("method") or v.get("decided") is not None
               for v in lines):  # an older kernel's verdicts: they say nothing of it
        header = [header[0], header[1], header[4]]
        rows = [[r[0], r[1], r[4]] for r in rows]
    out.append(plain_table(header, rows))
    out += ["<p class=\"note\">[m%d] %s</p>" % (i, esc(m)) for i, m in enumerate(methods, 1)]
    undecided = [v["label"] for v in lines if v.get("decided") is False]
    if undecided:
        out.append("<p class=\"note\">Too close to call here: %s. The intervals overlap, "
                   "so this run cannot tell the figures apart; a longer run (more samples) "
                   "or a quieter machine narrows them.</p>" % esc(", ".join(undecided)))
    return out


def experiment_list(s):
    out = ["<h2 id=\"experiment-list\">Experiments</h2>",
           "<p class=\"note\">Planned from %s; a name leads to its section.</p>"
           % esc(s["experiments_planned_from"])]
    body = []
    for e in s["experiments"]:
        name = esc(e["exp"])
        link = "<a href=\"#exp-%s\">%s</a>" % (name, name) if e["state"] != "absent" else name
        note = e["note"] if e["state"] != "done" or e.get("invalid") else ""
        if e["errors"]:
            note = ("%s error record(s). " % e["errors"]) + note
        cells = [link, state(e["state"], e["state"] in ("done", "skipped")),
                 esc(duration(e["duration_ns"])), esc(note)]
        body.append("<tr>%s</tr>" % "".join(
            "<td%s>%s</td>" % ({2: ' class="num"', 3: ' class="wrap"'}.get(i, ""), c)
            for i, c in enumerate(cells)))
    out.append("<div class=\"scroll\"><table><tr><th>experiment</th><th>state</th><th>machine "
               "time</th><th>note</th></tr>%s</table></div>" % "".join(body))
    return out


def experiment_table(name, rows, stems, partial=False, lost=()):
    """The experiment's compact table (tables.py), its notes, the rows damaged lines took
    with them, and where every key is."""
    t = experiments.table(name, rows)
    if t is None:
        return []
    out = []
    lost = [x for x in lost if x["exp"] == name]
    if lost:
        out.append("<p class=\"bad\">Missing from this table: %s (each line damaged: its "
                   "CRC does not match, so its figures are not used).</p>" % esc("; ".join(
                       "%s (line %d)" % (x["row"] or "a row", x["line"]) for x in lost)))
    if t.rows:
        pub = {i for i, h in enumerate(t.header) if h.startswith("published")}
        out.append(plain_table(t.header, t.rows, numeric=t.numeric, lines=t.lines, pub=pub,
                               row_class="partial" if partial else None))
    out += ["<p class=\"note\">%s</p>" % esc(n) for n in t.notes]
    if t.quotes:
        out.append(htmlpage.details(
            "<span class=\"note\">The sources' own words behind each published figure "
            "(%d quotations)</span>" % len(t.quotes),
            [plain_table(["source", "quoted from its file, word for word"],
                         [[m, "\u201c%s\u201d" % q] for m, q in t.quotes])]))
    out.append("<p class=\"note\">Every key of every row: <a href=\"data/%s.csv\">data/%s.csv"
               "</a>.</p>" % (esc(stems.get(name, "")), esc(stems.get(name, ""))))
    return out


def samples_section(data):
    """What the raw samples are, and the worst wake-ups with where their time went."""
    series = samples.collect(data)
    name = experiments.latency().name
    rows = dataset.measured(data.results.get(name, []))
    if not rows:
        return []
    if not series:
        return ["<p class=\"note\">The kernel sent no raw samples (no <code>samples</code> "
                "records): the histograms and CDFs are drawn from its power-of-two buckets, "
                "and no latency-over-time figure or worst-wake-up table can be made.</p>"]
    out = []
    whole = sum(s.complete for s in series.values())
    total = sum(len(s.values) for s in series.values())
    out.append("<p class=\"note\">Raw samples: %s series, %s samples, %s complete "
               "(<a href=\"samples.csv\">samples.csv</a>, one row each; "
               "<a href=\"latency-hist-us.txt\">latency-hist-us.txt</a> in cyclictest's -h "
               "layout).</p>" % (tables.number(len(series)), tables.number(total),
                                 "all" if whole == len(series) else "%d" % whole))
    for s in series.values():
        for p in s.problems:
            out.append("<p class=\"bad\">samples of %s %s %s: %s</p>" % (
                esc(s.device), esc(s.path), esc(dataset.cell(s.wait)), esc(p)))
    for row in rows:
        s = samples.for_row(data, row)
        if s is None:
            continue
        off = samples.disagreements(s, row)
        if off:
            out.append("<p class=\"bad\">%s %s %s: the row and its samples disagree: %s</p>"
                       % (esc(row.get("device")), esc(row.get("path")),
                          esc(dataset.cell(row.get("wait"))), esc("; ".join(off))))
    worst = samples.worst_wakeups(data, name)
    if worst:
        out.append("<h4>The worst wake-up of each series, and where its time went</h4>")
        out.append(plain_table(*worst_table([w[0] for w in worst if w]),
                               numeric={3, 4, 5, 6, 7}))
        more = [x for w in worst for x in w[1:]]
        if more:
            header, body = worst_table(more)
            out.append(htmlpage.details("The next %d worst of each series" % (
                len(worst[0]) - 1), [plain_table(header, body, numeric={3, 4, 5, 6, 7})]))
    return out


def worst_table(wakeups):
    header = ["device", "wait", "series", "wake-up (seq of n)", "deadline to handler (ns)",
              "to entry (ns)", "entry to handler (ns)", "neighbours' median (ns)",
              "what the kernel knows"]
    body = []
    for w in wakeups:
        d = w.detail
        known = ", ".join("%s %s" % (k.replace("_", " "), tables.number(d[k]))
                          for k in ("stale", "lost_before", "rescued", "max_gap_ns",
                                    "delay_ns", "at_ns", "try") if d.get(k) is not None)
        body.append([w.device, dataset.cell(w.wait), w.kind,
                     "%d of %d (%d %%)" % (w.seq, w.n, 100 * w.seq // max(w.n, 1)),
                     tables.number(w.total_ns), tables.number(w.entry_ns),
                     tables.number(w.total_ns - w.entry_ns) if w.entry_ns is not None else "-",
                     tables.number(w.neighbours_ns), known or "nothing sent (no "
                     "sample_detail record)"])
    return header, body


def experiment_sections(data, figures, stems, lost=()):
    out = ["<h2 id=\"experiments\">Experiment by experiment</h2>"]
    for st in data.experiments():
        if not st.rows and st.state == "absent":
            continue
        exp = experiments.get(st.name)
        out.append("<div class=\"exp\"><h3 id=\"exp-%s\">%s <code>%s</code></h3>" % (
            esc(st.name), esc(st.title), esc(st.name)))
        summary = (st.start or {}).get("summary")
        about = summary.rstrip(".") if isinstance(summary, str) and summary else (
            exp.about[0].upper() + exp.about[1:] if exp else "")
        cls = "bad" if st.state == "partial" else "note"
        out.append("<p>%s. <span class=\"%s\">%s.</span></p>" % (
            esc(about), cls, esc(st.describe()[0].upper() + st.describe()[1:])))
        for text, source in published.notes(exp.published if exp else ()):
            out.append("<p class=\"note\">Published: %s (%s).</p>" % (esc(text), esc(source)))
        for text, where in exp.references if exp else ():
            out.append("<p class=\"note\">For scale, not a publication: %s (%s).</p>" % (
                esc(text), esc(where)))
        ran_on = windows.experiment_note(data, st.name)
        if ran_on:
            out.append("<p class=\"note\">Ran on: %s</p>" % esc(ran_on))
        for err in st.errors:
            out.append("<p class=\"bad\">error record (line %d): %s</p>" % (
                err.line, esc("; ".join("%s: %s" % (k, readable(v)) for k, v in err.items()
                                        if k != "type"))))
        if exp is not None and exp.latency_series:
            out += samples_section(data)
            out.append(htmlpage.figures(figures.get(st.name, []), "plots/"))
        else:
            out.append(htmlpage.flow(experiment_table(st.name, st.rows, stems,
                                                      st.state == "partial", lost),
                                     figures.get(st.name, []), "plots/"))
        out.append("</div>")
    if not data.results:
        out.append("<p class=\"warn\">No experiment result in this run.</p>")
    return out


CALIBRATION = ("target", "method", "ref", "status", "freq_hz", "uncertainty_ppb",
               "disagreement_ppb", "agrees", "chosen", "window_ns", "retries", "reason")


def calibration_section(data, figures):
    out = ["<h2 id=\"calibration\">Calibration</h2>"]
    rows = data.by_type.get("calibration", [])
    keys = [k for k in CALIBRATION if any(k in r for r in rows)]
    body = [[tables.number(r.get(k)) if k != "reason" else readable(r.get(k))
             for k in keys] for r in rows]
    numeric = {i for i, k in enumerate(keys) if k.endswith(("_hz", "_ppb", "_ns"))
               or k == "retries"}
    out.append(plain_table([tables.header_of(k) for k in keys], body, numeric=numeric,
                           lines=[r.line for r in rows]) if rows else
               "<p class=\"note\">No calibration record.</p>")
    out.append(htmlpage.figures(figures.get(None, []), "plots/"))
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
                     str(run.damaged), run.status if isinstance(run.status, str) else
                     readable(run.status) or "(no end)",
                     "whole" if run.whole else "not whole"])
    out.append(plain_table(["run", "lines", "boot", "records", "damaged", "end status",
                            "state"], rows, numeric={3, 4}))
    problems = [(i, p) for i, run in enumerate(runs, 1) for p in run.problems]
    if problems:
        out.append(plain_table(["run", "line", "problem", "detail", "what it took with it"],
                               [[str(i), "%s:%d" % (log, p.line), p.kind, p.message,
                                 lost_words(p.unverified)] for i, p in problems]))
    else:
        out.append("<p class=\"ok\">No problem: every record line verified and every run "
                   "is whole.</p>")
    if len(runs) > 1:
        out.append("<p class=\"note\">Each run is reported on its own page; side by side: "
                   "<code>ticklab compare</code>.</p>")
    return out


def lost_words(rec):
    """What a damaged line was, as far as its bytes say: "the wakeup... row device=pit
    path=irq wait=poll (unverified)"; "-" when nothing is known."""
    if not rec:
        return "-"
    kind = rec.get("type")
    if kind in ("result", None) and isinstance(rec.get("exp"), str):
        keys = dataset.identity_keys(rec["exp"], rec)
        return "its %s row %s (as its damaged bytes say)" % (rec["exp"], " ".join(
            "%s=%s" % (k, dataset.cell(rec[k])) for k in keys) or "(unnamed)")
    if isinstance(kind, str):
        return "a %s record (as its damaged bytes say)" % kind
    return "-"


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
    hidden = [t for t in ("madt_more", "acpi_dump", "exp_end", "samples", "sample_detail")
              if t in data.by_type]
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


def build(data, runs, summary, plots, absent, files, log, stems=None):
    by_exp = {}
    for p in plots:
        by_exp.setdefault(p.exp, []).append(p)
    cpu = data.one("cpu")
    title = "ticklab report: %s" % (cpu.get("brand") or "unknown CPU")
    out = ["<h1>%s</h1>" % esc(title),
           "<p class=\"note\">%s, run %d of %d; made by <code>ticklab report</code> on %s. "
           "Sections: %s.</p>" % (esc(log), data.index, len(runs), esc(
               datetime.datetime.now().strftime("%Y-%m-%d %H:%M")), ", ".join(
                   "<a href=\"#%s\">%s</a>" % (a, t) for a, t in NAV))]
    out += answer_section(summary, by_exp.get(figures_mod.SUMMARY, []))
    out += summary_section(summary)
    out += experiment_sections(data, by_exp, stems or {}, summary.get("lost_rows", ()))
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


def empty_page(log, runs, result, what=None):
    out = ["<h1>ticklab report: %s</h1>" % esc(log)]
    if what:
        out.append("<p class=\"bad\">No run: %s is %s.</p>" % (esc(log), esc(what)))
    else:
        out.append("<p class=\"bad\">No run in this capture: no verified record (capture "
                   "verdict %s, as <code>ticklab check</code>).</p>" % esc(result))
    problems = [p for run in runs for p in run.problems]
    if problems:
        out.append(plain_table(["line", "problem", "detail"],
                               [["%s:%d" % (log, p.line), p.kind, p.message]
                                for p in problems]))
    return htmlpage.page("ticklab report: %s" % log, out)



def p999_cell(r):
    """A series' p99.9, or why it has none."""
    if r["p999_ns"] is not None:
        return tables.number(r["p999_ns"])
    return "n < %d" % samples.P999_MIN_SAMPLES if r["samples"] is not None else "-"
