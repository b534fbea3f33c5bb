"""What each experiment's measurement windows ran on: the core's clock (APERF/MPERF) and the
SMIs in them, from the `window_events` records (docs/report-format.md), or why they are not
known (the `core_clock` record). Shown beside each experiment's figures on the report page,
since a figure in TSC cycles depends on the core's clock and an SMI can be any latency's tail.
"""


def _mhz(hz):
    return "%.0f MHz" % (hz / 1e6)


def summary(windows, core_clock):
    """One sentence for a set of window_events records (one experiment's), or None when the
    run states nothing about its core clock (a kernel before the core_clock record)."""
    if core_clock is None:
        return None
    clocks = [w.get("core_clock", {}) for w in windows]
    known = [c for c in clocks if "effective_hz" in c]
    if known:
        busy = [c["effective_hz"] for c in known if c["effective_hz"]]
        clock = ("core clock %s..%s over %d window(s)" % (_mhz(min(busy)), _mhz(max(busy)),
                                                          len(known))
                 if busy else "the core never left HLT in its windows")
        req, parts = known[0], []
        if "hwp_min" in req:
            parts.append("HWP request min %d max %d desired %d" % (
                req["hwp_min"], req["hwp_max"], req["hwp_desired"]))
        elif "perf_ctl_ratio" in req:
            parts.append("P-state ratio %d" % req["perf_ctl_ratio"])
        if "turbo" in req:
            parts.append("turbo %s" % ("on" if req["turbo"] else "off"))
        if parts:
            clock += " (%s)" % ", ".join(parts)
    else:
        clock = "core clock not known: %s" % core_clock.get("clock_reason", "not stated")
    smis = [w["smi"] for w in windows if "smi" in w]
    if core_clock.get("smi_count"):
        smi = "%d SMI(s) in its windows" % sum(smis) if windows else \
            "SMIs counted, no window recorded"
    else:
        smi = "SMIs not counted: %s" % core_clock.get("smi_reason", "not stated")
    return "%s; %s." % (clock[0].upper() + clock[1:], smi)


def experiment_note(data, exp_name):
    """The sentence for one experiment of a run (RunData), or None."""
    cc = data.by_type.get("core_clock", [])
    windows = [w for w in data.by_type.get("window_events", []) if w.get("exp") == exp_name]
    return summary(windows, cc[0] if cc else None)
