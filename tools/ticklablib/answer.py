"""The answer a person boots ticklab for, in the few lines that come first wherever they
look (the page's first screen, the terminal's last lines): which clock event device to use
on this machine and how good it is (its p50, p99 and max, and the interval the verdict
judged by), which clocksource, and the other questions' answers one line each. Built from
the summary (summary.py) and the run's records; every figure is the kernel's.

A comparative verdict that did not decide reads "undecided here" with its reason: the
intervals overlap, so this run cannot tell the devices apart.
"""

from .values import cell, num

# The questions, first the two the report leads with.
LEAD = ("clockevent", "clocksource")
QUESTIONS = {
    "clockevent": "Which timer (clock event device)",
    "clocksource": "Which clock (clocksource)",
}


def fmt_ns(v):
    if v is None:
        return "-"
    v = float(v)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(v) >= scale:
            return "%.3g %s" % (v / scale, unit)
    return "%d ns" % round(v)


def ns_in(v, ref):
    """v in ref's unit (the one fmt_ns picks for ref) with ref's three significant figures,
    and the unit's name: ns_in(2801000, 2924872) is ("2.80", "ms"), as the kernel writes an
    interval's ends."""
    ref = abs(float(ref))
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ref >= scale:
            decimals = 2 if ref < 10 * scale else 1 if ref < 100 * scale else 0
            return "%.*f" % (decimals, float(v) / scale), unit
    return "%d" % round(float(v)), "ns"


def fmt_interval(lo, hi, ref):
    """"[2.80, 3.12] ms": an interval in its figure's unit."""
    (a, unit), (b, _) = ns_in(lo, ref), ns_in(hi, ref)
    return "[%s, %s] %s" % (a, b, unit)


def evidence_keys(verdict_rec):
    """The row keys a verdict's evidence names ("result:<exp>:path=callback" ->
    {"path": "callback"})."""
    out = {}
    for item in verdict_rec.get("evidence") or ():
        if isinstance(item, str) and item.startswith("result:"):
            for part in item.split(":")[2:]:
                if "=" in part:
                    k, v = part.split("=", 1)
                    out[k] = v
    return out


def choice_row(latency, device, keys):
    """The latency row of the chosen device on the verdict's path: the halted wait first
    (what an idle system does), else the first."""
    rows = [r for r in latency if r.get("device") == device
            and all(str(r.get(k)) == v for k, v in keys.items())]
    rows.sort(key=lambda r: (r.get("wait") != "hlt",))
    return rows[0] if rows else None


def interval_of(v, device):
    """The verdict's interval for the device's figure: (value, lo, hi) or None."""
    for i in v.get("intervals") or ():
        if str(i.get("what", "")).split(" ")[0] == device:
            return i
    return None


def clockevent_answer(v, rec, latency):
    keys = evidence_keys(rec)
    choice = v.get("choice")
    device = choice if isinstance(choice, str) and choice not in ("too_close",) else None
    decided = v.get("decided")
    if decided is False or choice == "too_close":
        others = "; ".join("%s %s in %s" % (i["what"], fmt_ns(i["value_ns"]),
                                          fmt_interval(i["lo_ns"], i["hi_ns"],
                                                       i["value_ns"] if i["value_ns"]
                                                       is not None else i["hi_ns"]))
                           for i in v.get("intervals") or ())
        return {"answer": "undecided here", "decided": False,
                "figures": others or v["claim"],
                "why": "the 95 % intervals overlap: this run cannot tell the devices apart "
                       "(a longer run or a quieter machine narrows them)"}
    if device is None:
        return {"answer": "not measured", "decided": None, "figures": v["claim"], "why": ""}
    row = choice_row(latency, device, keys)
    parts = []
    if row is not None:
        where = " ".join(str(row.get(k)) for k in ("path", "wait") if row.get(k))
        parts.append("%s: p50 %s, p99 %s, max %s" % (
            where, fmt_ns(row["p50_ns"]), fmt_ns(row["p99_ns"]), fmt_ns(row["max_ns"])))
        if row.get("samples") is not None:
            parts.append("%s wake-ups" % cell(row["samples"]))
    iv = interval_of(v, device)
    if iv is not None:
        parts.append("p99 95 %% interval [%s, %s]" % (fmt_ns(iv["lo_ns"]),
                                                       fmt_ns(iv["hi_ns"])))
        rest = sorted((i for i in v.get("intervals") or () if i is not iv
                       and i.get("value_ns") is not None), key=lambda i: i["value_ns"])
        if rest:
            parts.append("next %s %s [%s, %s]" % (rest[0]["what"], fmt_ns(rest[0]["value_ns"]),
                                                  fmt_ns(rest[0]["lo_ns"]),
                                                  fmt_ns(rest[0]["hi_ns"])))
    elif decided is None:
        parts.append("no interval: this kernel does not send one, so how sure the choice is "
                     "is not known")
    return {"answer": device, "decided": decided, "figures": "; ".join(parts) or v["claim"],
            "why": "its interval lies below every other device's" if decided else ""}


def clocksource_answer(v, data):
    choice = v.get("choice")
    if not isinstance(choice, str) or not choice:
        return {"answer": "not measured", "decided": None, "figures": v["claim"], "why": ""}
    rec = next((r for r in data.by_type.get("clocksource", []) if r.get("name") == choice),
               {})
    parts = []
    if num(rec.get("freq_hz")):
        parts.append("%s MHz" % ("%.6g" % (num(rec["freq_hz"]) / 1e6)))
    if rec.get("read_cost_median_tsc_cyc") is not None:
        parts.append("read in %s TSC counts (median)" % cell(rec["read_cost_median_tsc_cyc"]))
    if rec.get("resolution_ns") is not None:
        parts.append("resolution %s" % fmt_ns(num(rec["resolution_ns"])))
    if rec.get("backward_steps") is not None:
        parts.append("%s backward step(s) in %s reads" % (cell(rec["backward_steps"]),
                                                          cell(rec.get("mono_reads", "?"))))
    return {"answer": choice, "decided": v.get("decided"),
            "figures": "; ".join(parts) or v["claim"], "why": ""}


def build(data, summary):
    """[{topic, question, answer, figures, decided, why}]: the two lead questions first
    (each present, "no verdict" when the kernel sent none), then one line per other
    verdict, its claim."""
    recs = {r.get("topic"): r for r in data.by_type.get("verdict", [])}
    lines = {v["topic"]: v for v in summary["verdict"]}
    out = []
    for topic in LEAD:
        v = lines.get(topic)
        if v is None:
            got = {"answer": "no verdict", "decided": None,
                   "figures": "the kernel sent none (it sends them after its experiments)",
                   "why": ""}
        elif topic == "clockevent":
            got = clockevent_answer(v, recs.get(topic, {}), summary["latency"])
        else:
            got = clocksource_answer(v, data)
        got.update(topic=topic, question=QUESTIONS[topic])
        out.append(got)
    for v in summary["verdict"]:
        if v["topic"] in LEAD:
            continue
        out.append({"topic": v["topic"], "question": v["label"], "answer": v["choice"]
                    if isinstance(v["choice"], str) else None, "figures": v["claim"],
                    "decided": v.get("decided"), "why": ""})
    return out


def env_line(summary):
    """The environment in one line: the kind of figures, then the machine."""
    env, st = summary["environment"], summary["settings"]
    cap = summary.get("capture") or {}
    parts = [env["headline"]]
    if cap.get("source") == "qemu":
        parts.append("QEMU %s %s%s" % ((cap.get("qemu_version") or "").split(" ")[0],
                                       cap.get("machine") or "", ", %s CPU(s)" % cap["smp"]
                                       if cap.get("smp") else ""))
    elif cap.get("source") == "serial":
        parts.append("captured on %s" % cap.get("serial_device"))
    if st.get("cpu"):
        parts.append(str(st["cpu"]))
    if st.get("profile"):
        parts.append("profile %s" % st["profile"])
    return " · ".join(parts)


def terminal(summary):
    """The verdict for a terminal's last lines: one line per question."""
    rows = summary.get("answer") or []
    if not rows:
        return ["verdict: none sent (the kernel sends one after its experiments)"]
    out = []
    for r in rows:
        lead = r["topic"] in LEAD
        text = "%s: %s%s" % (r["question"], r["answer"] + " (" if lead and r.get("answer")
                             else "", r["figures"])
        if lead and r.get("answer"):
            text += ")"
        if lead and r.get("decided") is False:
            text += "; %s" % r["why"]
        elif lead and r.get("decided"):
            text += "; decided"
        out.append("verdict: " + text)
    return out
