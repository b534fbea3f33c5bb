"""What a reader needs first about one run, as data: how it was made, one line per clock
event device and path (cyclictest's `T: Min Avg Max`, rtla's top table), the verdict in
plain words, the experiments and what became of each. The report's page heads with it,
the terminal summary prints it, and summary.json holds it for other tools.
"""

from . import TOOL_VERSION, answer, check, dataset, experiments, provenance, records, samples
from .dataset import num

# The verdict topics in words (docs/report-format.md, `verdict`); an experiment's own topics
# are in its module (verdict_topics).
TOPICS = {
    "environment": "what machine, and what a clock read costs on it",
    "clocksource": "clock source",
    "clockevent": "fastest clock event device",
    "hpet": "does the HPET help",
    "tsc_deadline": "does TSC-deadline help",
    "tick_rate": "cost of the tick",
    "stalls": "does the machine stall",
    "rdtsc": "cost of reading the TSC",
    "clock_read": "cost of a clock read",
}
TOPICS.update({t: w for e in experiments.EXPERIMENTS for t, w in e.verdict_topics.items()})
LATENCY_KEYS = ("min_ns", "p50_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns")


def latency_rows(data):
    """One entry per measured row of the latency experiment (device, path, wait)."""
    name = experiments.latency().name
    partial = data.partial(name)
    out = []
    for row in data.results.get(name, []):
        if row.get("status") in dataset.NOT_MEASURED:
            continue
        clock, words, res, where = dataset.clock_of(data, row)
        entry = {k: row.get(k) for k in ("device", "path", "wait", "variant") if k in row}
        entry.update({k: num(row.get(k)) for k in LATENCY_KEYS})
        if not samples.p999_computable(num(row.get("samples"))):
            entry["p999_ns"] = None
        entry.update({"samples": num(row.get("samples")), "lost": num(row.get("lost")),
                      "stale": num(row.get("stale")), "early": num(row.get("early")),
                      "clock": clock, "clock_words": words, "resolution_ns": res,
                      "resolution_from": where, "partial": partial, "line": row.line})
        out.append(entry)
    return out


def samples_summary(data):
    """The raw samples the kernel sent: how many series and samples, how many complete, and
    what was wrong with the others (samples.py)."""
    series = samples.collect(data)
    return {"series": len(series), "samples": sum(len(s.values) for s in series.values()),
            "complete": sum(s.complete for s in series.values()),
            "problems": ["%s %s %s: %s" % (s.device, s.path, s.wait, p)
                         for s in series.values() for p in s.problems]}


def evidence_words(evidence):
    """The verdict's evidence references as a reader says them."""
    if not isinstance(evidence, list):
        return ""
    words = []
    for item in evidence:
        if not isinstance(item, str):
            continue
        parts = item.split(":")
        if parts[0] == "result" and len(parts) >= 2:
            words.append("%s%s" % (parts[1], " (%s rows)" % ", ".join(parts[2:])
                                   if len(parts) > 2 else ""))
        elif len(parts) == 2:
            words.append("the %s record %s" % (parts[0], parts[1].split("=", 1)[-1]))
        else:
            words.append("the %s records" % parts[0])
    return ", ".join(dict.fromkeys(words))


def verdict_lines(data):
    out = []
    for rec in data.by_type.get("verdict", []):
        topic = rec.get("topic")
        topic = topic if isinstance(topic, str) else (dataset.cell(topic) or None)
        label = TOPICS.get(topic, topic.replace("_", " ") if topic else "(no topic)")
        claim = rec.get("claim")
        if not isinstance(claim, str) or not claim:
            claim = "; ".join("%s %s" % (k, dataset.cell(v)) for k, v in rec.items()
                              if k not in ("type", "line")) or "(empty)"
        decided = rec.get("decided")
        decided = decided if isinstance(decided, bool) else None
        if rec.get("choice") == "too_close":
            decided = False
        if decided is False and "too close to call" not in claim:
            claim = "too close to call here: " + claim
        method = rec.get("method")
        out.append({"topic": topic, "label": label, "choice": rec.get("choice"),
                    "claim": claim, "from": evidence_words(rec.get("evidence")),
                    "measured": rec.get("choice") is not None, "decided": decided,
                    "method": method if isinstance(method, str) and method else None,
                    "intervals": intervals_of(rec.get("intervals")),
                    "hz_safe": num(rec.get("hz_safe")), "hz_over": num(rec.get("hz_over"))})
    return out


def intervals_of(value):
    """A verdict's `intervals` as [{"what", "value_ns", "lo_ns", "hi_ns"}], from the
    kernel's list of objects or from {what: [lo, hi]}; whatever is unusable left out."""
    items = []
    if isinstance(value, list):
        items = [(v.get("what"), v.get("value_ns"), v.get("lo_ns"), v.get("hi_ns"))
                 for v in value if isinstance(v, dict)]
    elif isinstance(value, dict):
        items = [(k, None, v[0], v[1]) for k, v in value.items()
                 if isinstance(v, list) and len(v) == 2]
    out = []
    for what, mid, lo, hi in items:
        lo, hi = num(lo), num(hi)
        if lo is None or hi is None:
            continue
        out.append({"what": dataset.cell(what) if what is not None else "?",
                    "value_ns": num(mid), "lo_ns": lo, "hi_ns": hi})
    return out


def basis_words(v):
    """What a verdict rests on, in words: each interval, the rates for the tick, and how
    it was decided; "" for a verdict that says nothing of it (an older kernel's, or not a
    comparison)."""
    parts = []
    if v.get("intervals"):
        parts.append("; ".join(
            "%s %s%s" % (i["what"], "%s " % answer.fmt_ns(i["value_ns"])
                         if i["value_ns"] is not None else "",
                         "in " + answer.fmt_interval(
                             i["lo_ns"], i["hi_ns"],
                             i["value_ns"] if i["value_ns"] is not None else i["hi_ns"]))
            for i in v["intervals"]))
    if v.get("hz_safe") is not None:
        parts.append("surely under 1 %% of the CPU at HZ=%s or less" % fmt(v["hz_safe"])
                     + ("; surely more above HZ=%s" % fmt(v["hz_over"])
                        if v.get("hz_over") is not None else ""))
    if v.get("decided") is not None:
        parts.append("decided" if v["decided"] else "not decided: too close to call here")
    return "; ".join(parts)


def settings(data):
    boot, cpu = data.boot, data.one("cpu")
    tick = data.one("tick")
    online = [r for r in data.by_type.get("cpu_start", []) if r.get("online") is True]
    return {"cpu": cpu.get("brand"), "cpus_online": len(online) or None,
            "kernel": boot.get("version"), "git": boot.get("git"),
            "entered_by": boot.get("boot"), "firmware": boot.get("firmware"),
            "loader": boot.get("loader"), "cmdline": boot.get("cmdline"),
            "profile": boot.get("profile"), "hz": boot.get("hz"),
            "clocksource": data.one("clocksource_selected").get("name"),
            "tick_device": tick.get("device"), "tick_hz": tick.get("hz_actual"),
            "tick_hz_measured": tick.get("hz_measured"),
            "hrtimer_device": data.one("hrtimer_base").get("device")}


def run_state(data, runs):
    run, end = data.run, data.run.end or {}
    kernel_count = end.get("records")
    if not run.whole:
        words = "NOT whole: %d problem(s) in this run" % len(run.problems)
    elif run.status == "ok":
        words = "whole, ended ok"
    else:
        words = "whole, but the kernel ended it %s%s" % (
            run.status, ": %s" % end.get("reason") if end.get("reason") else "")
    if run.mixed:
        words += "; its lines mix two boots (mixed-runs): its figures are not one machine's"
    return {"index": data.index, "of": len(runs), "first_line": run.first_line,
            "last_line": run.last_line, "whole": run.whole, "status": run.status,
            "reason": end.get("reason"), "records": len(run.records),
            "records_before_end": kernel_count if isinstance(kernel_count, int) else None,
            "damaged": run.damaged, "problems": len(run.problems), "mixed": run.mixed,
            "words": words}


# The kinds of impossible figure, in the order the report lists them (its heading names
# them so): a negative latency, a negative cost or overhead, a tick costing more than its
# period, a sleep ending before its request.
IMPOSSIBLE_KINDS = ("latency", "cost", "tick", "sleep")
# A tick rate no PC can run: the verdict's HZ beyond this is noise read as a fact.
HZ_BEYOND_BELIEF = 100000


def impossible(data):
    """["<exp> <row>: key=value", ...] for every figure an experiment says cannot be
    negative and is (a latency, a cost, an overhead: the kernel should never send one),
    every other figure its rows cannot hold (the experiment's `impossible`: a tick costing
    more than its period, a sleep ending before its request), and a tick-rate verdict
    beyond HZ_BEYOND_BELIEF."""
    out = []
    named = [(exp, rows, dataset.row_names(exp.name, rows)) for exp, rows in
             ((e, data.results.get(e.name, [])) for e in experiments.EXPERIMENTS)]
    for kind in IMPOSSIBLE_KINDS:
        for exp, rows, names in named:
            if exp.never_negative_kind == kind:
                out += negatives(exp, rows, names)
            if exp.impossible is not None and exp.impossible_kind == kind:
                out += exp.impossible(data, rows, names)
    for rec in data.by_type.get("verdict", []):
        hz = num(rec.get("choice"))
        if rec.get("topic") == "tick_rate" and hz is not None and hz > HZ_BEYOND_BELIEF:
            out.append("verdict tick_rate: HZ=%s keeps the tick under 1 %%, beyond any PC's "
                       "%d" % (rec.get("choice"), HZ_BEYOND_BELIEF))
    return out


def negatives(exp, rows, names):
    """"<exp> <row>: key=value" for each row with a negative never_negative figure."""
    out = []
    for name, row in zip(names, rows):
        bad = ["%s=%s" % (k, row.get(k)) for k in exp.never_negative
               if (num(row.get(k)) or 0) < 0]
        if bad:
            out.append("%s %s: %s" % (exp.name, name, ", ".join(bad)))
    return out


def duration(ns):
    """ns as people read a duration: 5.1 s, 468 ms, 77 us (3 significant figures), 512 ns
    (rounded, never truncated)."""
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(ns) >= scale:
            return "%.3g %s" % (ns / scale, unit)
    return "%d ns" % round(ns)


def console_cost(data):
    """What the run's own output cost it (`console_cost`, `screen_scroll`): one line, and
    whether it met the goal (no console time inside a measurement window). None for a run
    that does not say."""
    cost = (data.by_type.get("console_cost") or [None])[-1]
    if not cost:
        return None
    scroll = (data.by_type.get("screen_scroll") or [None])[-1]
    in_window = num(cost.get("in_window_ns"))
    line = ("longest interrupts-off stretch of the output path %s (%s); console time inside "
            "measurement windows %s%s; serial %s at %s baud%s" % (
                duration(num(cost.get("irqoff_max_ns"))), cost.get("irqoff_max_phase") or "-",
                duration(in_window), "" if in_window == 0 else " (the goal is 0)",
                "paced" if cost.get("paced") else "not paced", fmt(cost.get("serial_baud")),
                "" if cost.get("buffered", True) else ", written at once (console_log=off)"))
    if scroll:
        line += "; one screen scroll %s (%sx%s cells)" % (
            duration(num(scroll.get("redraw_ns"))), fmt(scroll.get("cols")),
            fmt(scroll.get("rows")))
    line += "; clock tsc"
    return {"line": line, "ok": in_window == 0 and not num(cost.get("lost_bytes"))}


def build(data, runs, capture, capture_problem=None, log=None):
    """The run's summary, JSON-ready."""
    env = provenance.describe(capture, data.boot, data.one("cpu"), data.one("environment"))
    if capture_problem:
        env["warnings"].append(capture_problem)
    result = records.verdict(runs)
    exps = data.experiments()
    _, planned_from = data.planned()
    out = {
        "file_version": 1,
        "tool": "ticklab report", "tool_version": TOOL_VERSION,
        "log": log, "capture_verdict": result, "return_code": check.EXIT_CODES[result],
        "start_time": (capture or {}).get("started_utc"),
        "sysinfo": {"host_kernel": (capture or {}).get("host_kernel"),
                    "host_cpu": (capture or {}).get("host_cpu")},
        "run": run_state(data, runs),
        "environment": env,
        "capture": capture,
        "settings": settings(data),
        "latency": latency_rows(data),
        "impossible": impossible(data),
        "unmet": check.unmet([data.run]),
        "samples": samples_summary(data),
        "verdict": verdict_lines(data),
        "console": console_cost(data),
        "experiments_planned_from": planned_from,
        "experiments": [{"exp": s.name, "title": s.title, "state": s.state,
                         "note": s.describe(), "rows": len(s.rows),
                         "duration_ns": s.duration_ns, "errors": len(s.errors),
                         "invalid": s.invalid}
                        for s in exps],
        "problems": [{"line": p.line, "kind": p.kind, "message": p.message}
                     for p in data.run.problems],
        "lost_rows": lost_rows(data),
    }
    out["answer"] = answer.build(data, out)
    out["environment_line"] = answer.env_line(out)
    return out


def lost_rows(data):
    """The rows a damaged line took with it, as far as its unverified bytes say: [{line,
    kind, exp, row, keys}] (records.Problem.unverified)."""
    out = []
    for p in data.run.problems:
        rec = p.unverified
        if not rec or not isinstance(rec.get("exp"), str):
            continue
        keys = {k: rec[k] for k in dataset.identity_keys(rec["exp"], rec)}
        # a result row by its type, or (the flip hit "type") by the keys naming its row
        if rec.get("type") != "result" and not (rec.get("type") is None and keys):
            continue
        out.append({"line": p.line, "kind": p.kind, "exp": rec["exp"],
                    "row": " ".join("%s=%s" % (k, dataset.cell(v)) for k, v in keys.items()),
                    "keys": keys})
    return out


def verdict_terminal(summary):
    """The verdict, one line per question, for a terminal's last lines."""
    return answer.terminal(summary)


# --- the terminal -----------------------------------------------------------------------

def fmt(value):
    if value is None:
        return "-"
    if isinstance(value, float) and not value.is_integer():
        return "%.4g" % value
    return str(int(value)) if isinstance(value, (int, float)) else str(value)


def aligned(header, rows, right=()):
    """Text table: columns padded to their widest cell; `right`: right-aligned columns."""
    cells = [header] + [[fmt(c) if not isinstance(c, str) else c for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for r in cells:
        out.append("  ".join(c.rjust(w) if i in right else c.ljust(w)
                             for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    return out


def latency_table(rows):
    """The per-device lines for a terminal; the clock and resolution columns only when
    they differ between rows (otherwise said once above the table)."""
    header = ["device", "path", "wait", "min", "p50", "p99", "max", "samples", "lost",
              "stale", "clock", "resolution"]
    body = [[str(r.get("device")), str(r.get("path")), str(r.get("wait", "-")),
             r["min_ns"], r["p50_ns"], r["p99_ns"], r["max_ns"], r["samples"], r["lost"],
             r["stale"], r["clock_words"] or "-",
             "%s ns" % fmt(r["resolution_ns"]) if r["resolution_ns"] is not None else "-"]
            for r in rows]
    uniform = len({(b[10], b[11]) for b in body}) == 1
    if uniform:
        header, body = header[:10], [b[:10] for b in body]
    if any("variant" in r for r in rows):  # the kernel's faithful / ticklab variants
        header = header[:3] + ["variant"] + header[3:]
        body = [b[:3] + [str(r.get("variant", "-"))] + b[3:] for b, r in zip(body, rows)]
        return aligned(header, body, right=set(range(4, 11))), uniform
    return aligned(header, body, right=set(range(3, 10))), uniform


def terminal_lines(summary, brief=False):
    """The summary as text; `brief`: without the per-device table and the verdict (the
    kernel printed both on the console as the run went: `make run` shows each once)."""
    run, env = summary["run"], summary["environment"]
    out = ["run %d of %d (lines %d-%d): %s; %d records (the end record counts the %s before "
           "it)" % (run["index"], run["of"], run["first_line"], run["last_line"], run["words"],
                    run["records"], fmt(run["records_before_end"]))]
    out.append("environment: " + env["headline"])
    out.append("  how it was started: " + env["how_started"])
    out += ["  " + d for d in env["details"]]
    out += ["  WARNING: " + w for w in env["warnings"]]
    if summary["latency"] and not brief:
        table, uniform = latency_table(summary["latency"])
        first = summary["latency"][0]
        out.append("wakeup latency, ns from the deadline to the handler%s:" % (
            "; clock %s, resolution %s ns (%s)" % (first["clock_words"],
                                                  fmt(first["resolution_ns"]),
                                                  first["resolution_from"])
            if uniform and first["resolution_ns"] is not None else
            "; clock %s" % first["clock_words"] if uniform else ""))
        out += ["  " + line for line in table]
        shown = dict.fromkeys(r.get("path") for r in summary["latency"]
                              if isinstance(r.get("path"), str))
        paths = experiments.latency().paths
        out += ["  path %s: %s" % (p, paths[p]) for p in shown if p in paths]
    if summary["impossible"]:
        out.append("IMPOSSIBLE FIGURES (negative latency, cost or overhead, a tick costing "
                   "more than its period, an early sleep): %d row(s)"
                   % len(summary["impossible"]))  # tick-rate verdicts beyond belief too
        out += ["  " + line for line in summary["impossible"][:10]]
    if brief:
        pass
    elif summary["verdict"]:
        out.append("verdict:")
        width = max(len(v["label"]) for v in summary["verdict"])
        for v in summary["verdict"]:
            out.append("  %s  %s" % (v["label"].ljust(width), v["claim"]))
            basis = basis_words(v)
            if basis:
                out.append("  %s    rests on: %s" % (" " * width, basis))
            if v.get("method"):
                out.append("  %s    method: %s" % (" " * width, v["method"]))
    else:
        out.append("verdict: none sent (the kernel sends one after its experiments)")
    if summary.get("console"):
        out.append("output: " + summary["console"]["line"])
    exps = summary["experiments"]
    done = sum(e["state"] in ("done", "skipped") for e in exps)
    out.append("experiments: %d of %d ran to their end (planned from %s)" % (
        done, len(exps), summary["experiments_planned_from"]))
    out += ["  %s: %s" % (e["exp"], e["note"]) for e in exps
            if e["state"] not in ("done",) or e["errors"] or e.get("invalid")]
    out += ["NOT DONE: " + line for line in summary.get("unmet", [])]
    return out
