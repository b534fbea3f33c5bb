"""A synthetic run with every record the report knows, shaped like the kernel's.

The values are invented but plausible (a PC with HPET, PM timer, PIT and LAPIC, the
experiments of the full profile), with decimals both as JSON numbers and as strings, as
the kernel may send them. `full_run_records` is the list of objects; `full_run_lines`
puts human text between them like the kernel's console does.
"""
import samplegen
from streams import join, record


def samples_device_records():
    """One more wakeup-latency device, with the kernel's raw samples (samples records)."""
    values = [600 + (i * 37) % 90 + (4000 if i % 97 == 50 else 0) for i in range(300)]
    return [samplegen.row_of("wakeup-latency", "tsc_deadline", "irq", "poll", values)] + \
        samplegen.samples_records("wakeup-latency", "tsc_deadline", "irq", "poll", values)


def log_hist(base_ns, peak):
    edges = [base_ns * 2 ** i for i in range(11)]
    counts = [0, 3, peak, peak // 3, 40, 9, 2, 1, 0, 1]
    return {"edges_ns": edges, "counts": counts}


def kernel_hist():
    """The kernel's form (lib/hist.c): 22 lower edges 0, 16, 32 ... 2^24 ns, the last open."""
    counts = [0] * 22
    counts[5:12] = [3, 700, 233, 40, 9, 2, 1]
    return {"edges_ns": [0] + [16 << k for k in range(21)], "counts": counts}


def one_bucket_hist(value_ns, samples):
    """The kernel's log2 form with every sample in the bucket that holds value_ns."""
    edges = [0] + [16 << k for k in range(21)]
    counts = [0] * 22
    counts[max(i for i, e in enumerate(edges) if e <= value_ns)] = samples
    return {"edges_ns": edges, "counts": counts}


def experiment_rows(scale=1.0):
    """The experiment result records; `scale` multiplies the latencies (a slower PC)."""
    rows = []
    for device, path, base in (("lapic", "irq", 250), ("hpet", "irq", 400),
                               ("pit", "callback", 900)):
        b = int(base * scale)
        rows.append({"type": "result", "exp": "wakeup-latency", "device": device,
                     "path": path, "clock": "time_ns", "samples": 1000, "min_ns": b,
                     "p50_ns": 2 * b,
                     "p99_ns": 9 * b, "p999_ns": 30 * b, "max_ns": 80 * b,
                     "hist": log_hist(b // 2, 700) if device != "lapic" else kernel_hist()})
    rows.append({"type": "result", "exp": "wakeup-latency", "device": "rtc", "path": "irq",
                 "samples": 50, "min_ns": 4000, "p50_ns": 5000, "p99_ns": 9000,
                 "p999_ns": 9000, "max_ns": 12000})  # no hist: must be said, not dropped

    for mode, tick in (("tick", 10000000), ("tick", 1000000), ("hrtimer", 1000000)):
        for req in (10000, 100000, 1000000, 10000000, 100000000):
            late = (tick - req % tick if mode == "tick" else 2000) * scale
            rows.append({"type": "result", "exp": "sleep-accuracy", "mode": mode,
                         "tick_ns": tick, "request_ns": req, "runs": 20,
                         "mean_err_ns": int(late), "min_err_ns": int(late * 0.8),
                         "max_err_ns": int(late * 1.3)})
    rows.append({"type": "result", "exp": "sleep-accuracy", "mode": "select",
                 "tick_ns": 1000000, "request_ns": 0, "runs": 20, "mean_err_ns": 0,
                 "min_err_ns": 0, "max_err_ns": 0})  # cannot be on log axes: said so
    for tick, pct in ((0, "0.000"), (10000000, "0.041"), (1000000, "0.410"),
                      (100000, "4.120"), (10000, "41.500")):
        row = {"type": "result", "exp": "tick-overhead", "tick_ns": tick, "clock": "tsc",
               "loop_ns": 2000000000,
               "baseline_ns": 2000000000, "overhead_pct": pct}
        if tick:
            row.update(entry_cyc=120, handler_cyc=int(800 * scale), eoi_cyc=60, return_cyc=90)
        rows.append(row)
    for tset, avg in (("alone", 800), ("ten", 5200)):
        rows.append({"type": "result", "exp": "periodic-jitter", "set": tset,
                     "hres_ns": 1, "period_ns": 1000000, "samples": 1000,
                     "avg_ns": int(avg * scale), "stddev_ns": int(avg / 3),
                     "p_within_5us": "0.9870" if tset == "alone" else 0.412,
                     "p_within_10us": "0.9990" if tset == "alone" else 0.883})
        if tset == "alone":  # periodic-jitter's linear form: outer buckets are overflow
            rows[-1]["hist"] = {"lo_ns": -20000, "bucket_ns": 1000,
                                "counts": [2] + [0] * 15 + [90, 800, 95] + [1] * 21 + [3]}
    rows.append({"type": "result", "exp": "period-compare", "timer": "hrtimer",
                 "clock": "time_ns", "hz": 250, "samples": 4, "period_ns": 1000000000,
                 "err_ns": [540, 610, 580, 600], "err_mean_ns": 582, "err_stddev_ns": 26,
                 "err_min_ns": 540, "err_max_ns": 610})
    rows.append({"type": "result", "exp": "period-compare", "timer": "jiffies",
                 "clock": "time_ns", "hz": 250, "samples": 4, "period_ns": 1000000000,
                 "err_ns": [56990, 56990, 56991, 56990], "err_mean_ns": 56990,
                 "err_stddev_ns": 0, "err_min_ns": 56990, "err_max_ns": 56991})
    rows.append({"type": "result", "exp": "period-compare", "timer": "jiffies_linux",
                 "clock": "time_ns", "hz": 250, "samples": 4, "period_ns": 1000000000,
                 "err_ns": [24058360, 24058360, 24058360, 24058340], "err_mean_ns": 24058355,
                 "err_stddev_ns": 10, "err_min_ns": 24058340, "err_max_ns": 24058360})
    for mode in ("tick", "ns"):
        rows.append({"type": "result", "exp": "itimer-error", "mode": mode, "period_us": 500,
                     "counted": 1990 if mode == "tick" else 2000, "expected": 2000,
                     "error_pct": "-0.500" if mode == "tick" else "0.000"})
    for op in ("start", "cancel"):
        rows.append({"type": "result", "exp": "hrtimer-cost", "op": op, "device": "hpet",
                     "n": 1000, "median_cyc": int(140 * scale), "p99_cyc": 400})
    rows.append({"type": "result", "exp": "hwlat", "window_ns": 1000000000,
                 "threshold_ns": 10000, "gaps": 2, "max_gap_ns": 52000, "smi_delta": 2})
    rows.append({"type": "result", "exp": "tsc-sync", "status": "skip",
                 "reason": "one CPU online: nothing to compare", "mode": "ipi"})
    # two CPUs' rows (the per-CPU figure compares CPUs), one device on each
    for cpu, (device, p50) in enumerate((("lapic", 426), ("hpet", 238))):
        rows.append({"type": "result", "exp": "percpu-latency", "cpu": cpu, "apic_id": cpu,
                     "load": "idle", "device": device, "clock": "time_ns", "samples": 200,
                     "min_ns": p50 - 9, "p50_ns": int(p50 * scale), "p99_ns": p50 + 8,
                     "max_ns": p50 + 8, "jitter_timers": 10, "jitter_stddev_max_ns": 129})
    return rows


def full_run_records(scale=1.0, brand="Test CPU @ 3.00GHz", cmdline="profile=full"):
    recs = [{"type": "boot", "version": "0.1.0", "git": "abc1234", "boot": "multiboot2",
             "firmware": "uefi", "loader": "GRUB 2.06", "cmdline": cmdline, "qemu": False,
             "profile": "full", "hz": 1000},
            {"type": "cpu", "vendor": "GenuineIntel", "brand": brand, "family": 6,
             "model": 158, "stepping": 10, "invariant_tsc": True,
             "leaf15": {"valid": True, "crystal_hz": 24000000, "tsc_hz": 3000000000}},
            {"type": "memory", "usable_bytes": 8589934592, "map_entries": 12}]
    for name, rating in (("tsc", 300), ("hpet", 250), ("acpi_pm", 200), ("pit", 110)):
        recs.append({"type": "clocksource", "name": name, "present": True, "usable": True,
                     "rating": rating, "read_cost_median_tsc_cyc": int(rating * scale)})
    recs.append({"type": "clocksource_selected", "name": "tsc", "requested": None})
    for method, ref, ppb, chosen in (("measured", "hpet", 0, True),
                                     ("measured", "acpi_pm", 1800, False),
                                     ("measured", "pit", -25000, False),
                                     ("cpuid15", "crystal", 310, False)):
        recs.append({"type": "calibration", "target": "tsc", "method": method, "ref": ref,
                     "status": "ok", "freq_hz": 3000000000 + ppb * 3, "uncertainty_ppb": 900,
                     "chosen": chosen, "disagreement_ppb": ppb, "agrees": abs(ppb) < 1800})
    recs.append({"type": "calibration", "target": "tsc", "method": "cpuid16", "ref": "nominal",
                 "status": "skip", "reason": "leaf 0x16 not enumerated", "err": -95})
    for name in ("lapic", "hpet", "pit"):
        recs.append({"type": "clockevent", "name": name, "present": True, "usable": True,
                     "features": ["periodic", "oneshot"], "min_delta_ns": 1000})
    recs.append({"type": "tick", "device": "lapic", "mode": "periodic", "hz_requested": 1000,
                 "period_ns": 1000000, "hz_actual": "1000.000"})
    recs.append({"type": "error", "what": "cmdline", "word": "bogus=1",
                 "reason": "unknown key", "accepted": None, "action": "default used"})
    recs += experiment_rows(scale)
    recs.append({"type": "verdict", "claims": {"hrtimer_beats_jiffies": True,
                                               "tickless_saves_cpu": True},
                 "passed": 2, "failed": 0})
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    return recs


def full_run_lines(**kw):
    lines = [b"ticklab: timers found, running the experiments"]
    for i, rec in enumerate(full_run_records(**kw)):
        lines.append(record(rec))
        if i % 7 == 3:
            lines.append(b"  table row %d   123   456" % i)
    return lines


def full_run_bytes(**kw):
    return join(full_run_lines(**kw))


def small_run_records(brand="Small CPU"):
    """A short run: inventory, one calibration, period-compare and one device's
    wakeup-latency rows between exp_start/exp_end, a verdict, the end (4 figures)."""
    recs = [{"type": "boot", "version": "0.1.0", "git": "abc1234", "boot": "multiboot1",
             "firmware": "bios", "loader": "qemu", "cmdline": "exp=period-compare,"
             "wakeup-latency", "qemu": True, "profile": "quick", "hz": 1000},
            {"type": "cpu", "vendor": "AuthenticAMD", "brand": brand, "hypervisor": True,
             "hypervisor_signature": "TCGTCGTCGTCG"},
            {"type": "clocksource", "name": "hpet", "present": True, "usable": True,
             "rating": 250, "resolution_ns": 10},
            {"type": "clocksource_selected", "name": "hpet", "requested": None},
            {"type": "calibration", "target": "tsc", "method": "measured", "ref": "hpet",
             "status": "ok", "freq_hz": 1000000000, "uncertainty_ppb": 1000, "chosen": True,
             "disagreement_ppb": 0, "agrees": True},
            {"type": "exp_start", "exp": "period-compare", "summary": "1 s timers",
             "profile": "quick"}]
    recs += [r for r in experiment_rows() if r["exp"] == "period-compare"
             and r["timer"] != "jiffies_linux"]
    recs += [{"type": "exp_end", "exp": "period-compare", "clock": "tsc",
              "duration_ns": 4000000000, "hrtimer_rescued": 0},
             {"type": "exp_start", "exp": "wakeup-latency", "summary": "wake-ups",
              "profile": "quick"}]
    for path, base in (("irq", 173), ("callback", 384)):
        for wait in ("hlt", "poll"):
            recs.append({"type": "result", "exp": "wakeup-latency", "device": "lapic",
                         "path": path, "wait": wait, "clock": "time_ns", "samples": 500,
                         "early": 0, "stale": 0, "lost": 0, "min_ns": base,
                         "p50_ns": base + 9, "p99_ns": base + 18, "p999_ns": base + 18,
                         "max_ns": base + 18, "mean_ns": base + 9,
                         "hist": one_bucket_hist(base, 500)})
    recs += [{"type": "exp_end", "exp": "wakeup-latency", "clock": "tsc",
              "duration_ns": 900000000, "hrtimer_rescued": 0},
             {"type": "verdict", "topic": "clockevent", "choice": "lapic",
              "claim": "lapic: the lowest hrtimer callback latency",
              "evidence": ["result:wakeup-latency:path=callback"]}]
    recs.append({"type": "end", "records": len(recs), "status": "ok"})
    return recs


def small_run_lines(**kw):
    lines = [b"ticklab: a small run"]
    for i, rec in enumerate(small_run_records(**kw)):
        lines.append(record(rec))
        if i % 5 == 2:
            lines.append(b"  table row %d   123   456" % i)
    return lines
