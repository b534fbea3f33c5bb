"""Checks for the experiments' `result` records, used by tests/qemu/cases.py.

Each check states the value exact virtual time predicts and why. Under -icount shift=0,
sleep=off one guest instruction is 1 ns, the TSC runs at exactly 1 GHz and every device
counts from the same virtual clock, so the figures are repeatable to the nanosecond; the
tolerances below cover the few instructions a handler's path may differ by, not noise.
"""
import os
import sys

EXPERIMENTS = ("period-compare", "periodic-jitter", "itimer-error", "sleep-accuracy",
               "tick-overhead", "hrtimer-cost", "wakeup-latency", "hwlat", "tsc-sync",
               "percpu-latency")
ONESHOT = ("pit", "lapic", "hpet")       # q35's one-shot devices under TCG


def results(ctx, exp):
    return [r for r in ctx.recs("result") if r.get("exp") == exp]


def every_experiment_reports(ctx):
    """Each experiment opens, reports at least one result row, and closes."""
    started = [r["exp"] for r in ctx.recs("exp_start")]
    ended = [r["exp"] for r in ctx.recs("exp_end")]
    if started != list(EXPERIMENTS) or ended != list(EXPERIMENTS):
        return "exp_start %r / exp_end %r, expected %r" % (started, ended, EXPERIMENTS)
    empty = [e for e in EXPERIMENTS if not results(ctx, e)]
    if empty:
        return "no result records from %r" % empty


def no_lost_events(ctx):
    """Under icount no device event is ever lost: nothing had to be rescued."""
    bad = [dict(r) for r in ctx.recs("exp_end") if r["hrtimer_rescued"]]
    if bad:
        return "hrtimer events rescued: %r" % bad


def quick_within_60s(ctx):
    """The quick profile spends at most 60 s of machine time on the experiments."""
    total = sum(r["duration_ns"] for r in ctx.recs("exp_end"))
    if total > 60e9:
        return "experiments took %.1f s of machine time" % (total / 1e9)


def period_compare_rows(ctx, tick_ns_x1000, jiffies_ns, linux_ns, samples=4):
    """period-compare at HZ=250 against figures computed by hand: the hrtimer is forwarded
    from its own expiry (each 1 s period within 1 us); the exact wheel's timer runs every
    250 ticks, the Linux-rounded one every 256 (250 jiffies rounded up to level 1's
    granularity of 8), so each period is that many real ticks less 1 s, within the tick
    handler's jitter (1 us). The tick's measured period (ps) within 1 ns of the hand figure,
    and no callback before its expiry."""
    r = {x["timer"]: x for x in results(ctx, "period-compare")}
    h, j, l = r.get("hrtimer"), r.get("jiffies"), r.get("jiffies_linux")
    if not h or not j or not l or any(x["samples"] != samples for x in (h, j, l)):
        return "period-compare rows %r" % r
    if h["hz"] != 250:
        return "period-compare ran at HZ=%r, not the source's 250" % h["hz"]
    if any(abs(e) >= 1000 for e in h["err_ns"]):
        return "hrtimer errors %r not within 1 us" % h["err_ns"]
    for x, want, ticks in ((j, jiffies_ns, 250), (l, linux_ns, 256)):
        if x.get("ticks_per_period") != ticks:
            return "%s: %r ticks a period, expected %d" % (x["timer"], x.get("ticks_per_period"), ticks)
        if abs(float(x["tick_measured_ns"]) * 1000 - tick_ns_x1000) > 1000:
            return "%s: tick measured %s ns, by hand %.3f" % (x["timer"], x["tick_measured_ns"],
                                                               tick_ns_x1000 / 1000)
        if abs(x["predicted_err_ns"] - want) > 1000:
            return "%s: predicted %r ns, by hand %r" % (x["timer"], x["predicted_err_ns"], want)
        if any(abs(e - want) > 1000 for e in x["err_ns"]):
            return "%s errors %r, expected %r +- 1 us each" % (x["timer"], x["err_ns"], want)
    for x in (h, j, l):
        if x["late_min_ns"] < 0:
            return "%s ran %d ns before its expiry" % (x["timer"], -x["late_min_ns"])


def period_compare(ctx):
    """The boot tick's device, the LAPIC, restarted at 4 ms: QEMU's periodic LAPIC counts
    initial count + 1, so a tick is 4,000,001 ns: +250 ns per 250 ticks (exact wheel),
    256 x 4,000,001 - 1e9 = +24,000,256 ns (Linux-rounded wheel)."""
    return period_compare_rows(ctx, 4000001000, 250, 24000256)


def itimer_error(ctx):
    """The PIT at HZ=1000 ticks every 1193 clocks = 999,847 ns. Rounded up to whole ticks,
    10000 us becomes 11 ticks = 10,998,317 ns: 10000000/10998317 - 1 = -9.077 %; 1000 us
    becomes 2 ticks = 1,999,694 ns: -49.992 %; 9998 us becomes 10 ticks = 9,998,470 ns:
    -0.005 %. The window starts mid-tick, which moves each by under 0.05 %. In ns mode
    the hrtimers are forwarded by exactly their period: within 0.01 %.
    The CPU-time modes: a busy loop of 7.12 s (the source's) gets a tick of CPU time at each
    of the window's 7,121 ticks (7.12e9 / 999,847, none lost), and the counts are what that
    CPU time holds: prof_tick a signal every ceil(period / tick) ticks, floor(7121 / 11) =
    647, floor(7121 / 10) = 712, floor(7121 / 2) = 3560 (the source: 646, 710, 3563);
    prof_ns one per period of charged CPU time, floor(7121 x 999,847 / period) = 711, 712,
    7119 (the source: 711, 710, 7123)."""
    rows = {(r["mode"], r["period_us"]): r for r in results(ctx, "itimer-error")}
    want = {("tick", 10000): -9.077, ("tick", 1000): -49.992, ("tick", 9998): -0.005}
    for key, pct in want.items():
        r = rows.get(key)
        if not r or r["device"] != "pit" or abs(float(r["error_pct"]) - pct) > 0.05:
            return "itimer %r: %r, expected %.3f %%" % (key, r and dict(r), pct)
    for us in (10000, 9998, 1000):
        r = rows.get(("ns", us))
        if not r or abs(float(r["error_pct"])) > 0.01:
            return "itimer ns %d: %r" % (us, r and dict(r))
    want = {("prof_tick", 10000): 647, ("prof_tick", 9998): 712, ("prof_tick", 1000): 3560,
            ("prof_ns", 10000): 711, ("prof_ns", 9998): 712, ("prof_ns", 1000): 7119}
    for key, count in want.items():
        r = rows.get(key)
        if not r or r["device"] != "pit" or abs(r["window_ns"] - 7120000000) > 20000 or \
                r["cpu_ticks"] != 7121 or r["lost_ticks"] != 0 or r["counted"] != count or \
                not r["matches_prediction"]:
            return "itimer %r: %r, expected %d counted over 7121 ticks" % (key, r and dict(r),
                                                                          count)


def sleep_accuracy(ctx):
    """ticklab (random phase): select() waits ceil(r/tick) + 1 ticks counted from the last
    tick: never early, at most two ticks late; plain tick rounding can end up to one tick
    early. faithful (back to back, each sleep requested just after a tick), against figures
    computed by hand: select ends (ceil(r/tick) + 1) x tick - r after its request, tick
    rounding ceil(r/tick) x tick - r (at least one tick), less the few hundred ns from the
    tick to the request (0..2 us), plus QEMU's LAPIC counting one more than its initial
    count (up to 2 ns a tick). The hrtimer sleep ends after the interrupt path and callback
    only: within 0..2 us of the request, whatever the tick and start."""
    rows = results(ctx, "sleep-accuracy")
    if len(rows) != 5 * 5 * 3 * 2:
        return "%d sleep-accuracy rows, expected 150" % len(rows)
    for r in rows:
        t, q = r["tick_ns"], r["request_ns"]
        if r["runs"] != 2:
            return "runs %r" % dict(r)
        if r["mode"] == "hrtimer":
            if not (0 <= r["min_err_ns"] and r["max_err_ns"] <= 2000):
                return "hrtimer sleep %r" % dict(r)
            continue
        if r["variant"] == "faithful":
            j = -(-q // t) + (1 if r["mode"] == "select" else 0)
            j = max(j, 1)
            want = j * t - q
            if r.get("jiffies") != j or not (want - 2000 <= r["min_err_ns"]
                                             and r["max_err_ns"] <= want + 2 * j + 100):
                return "faithful %s sleep %r, by hand %d jiffies, %d ns" % (
                    r["mode"], dict(r), j, want)
            continue
        if r["mode"] == "select" and not (0 <= r["min_err_ns"] and r["max_err_ns"] <= 2 * t + 2000):
            return "select sleep %r" % dict(r)
        if r["mode"] == "tick" and not (-t <= r["min_err_ns"] and r["max_err_ns"] <= t + 2000):
            return "tick sleep %r" % dict(r)


def tick_overhead(ctx):
    """The same loop loses more time the shorter the tick: under icount every round is the
    same, so each row is measured exactly (not below resolution, uncertainty within 1 ns a
    tick) and the overhead grows strictly as the tick shrinks, against no tick (ticklab) and
    against the 10 ms tick (faithful, the 1998 source's baseline: no row for 10 ms itself).
    Every tick interrupt is split into its four parts (one interrupt between two reads of
    the loop, always)."""
    rows = results(ctx, "tick-overhead")
    mine = sorted((r for r in rows if r.get("variant") == "ticklab"), key=lambda r: r["tick_ns"])
    faithful = sorted((r for r in rows if r.get("variant") == "faithful"),
                      key=lambda r: r["tick_ns"])
    if len(mine) != 5 or len(faithful) != 4 or any(r["tick_ns"] >= 10000000 for r in faithful):
        return "tick-overhead rows %r" % [dict(r) for r in rows]
    for set_ in (mine, faithful):
        pct = [float(r["overhead_pct"]) for r in set_]
        if not all(a > b for a, b in zip(pct, pct[1:])) or pct[-1] <= 0:
            return "overhead does not grow as the tick shrinks: %r" % pct
        for r in set_:
            if r["below_resolution"] or r["per_tick_uncertainty_ns"] > 1 or r["repeats"] != 5:
                return "tick-overhead row not exact under icount: %r" % dict(r)
    for r in mine:
        if not (r["ticks"] > 0 and 100 <= r["per_tick_ns"] <= 5000
                and r["split_samples"] == r["split_ticks"] > 0
                and r["entry_cyc"] > 0 and r["handler_cyc"] > 0 and r["return_cyc"] > 0):
            return "tick-overhead row %r" % dict(r)


def hrtimer_cost(ctx):
    """Every one-shot device is measured both ways; a start that makes the device be
    reprogrammed (an MMIO or port write) costs more than one that only queues. The batch
    rows (the source's method) are means over 1e6 operations in 5 batches (the device rows
    may be cut by time), never negative, with their uncertainty; under icount every batch
    of an operation costs the same, so the uncertainty is 0. The `_irqsave` rows are the
    same calls inside one irq_save()/irq_restore() pair: under icount each costs its plain
    row plus the pair's instructions, the same number for restart and cancel+restart, more
    than 0 and no more than the irq_save_restore row (which counts its loop's too)."""
    rows = {(r["op"], r["device"], r.get("variant")): r for r in results(ctx, "hrtimer-cost")
            if "median_cyc" in r or "mean_cyc" in r}
    for dev in ONESHOT:
        a, b = rows.get(("start_reprogram", dev, "per_op")), \
            rows.get(("start_no_reprogram", dev, "per_op"))
        if not a or not b or a["median_cyc"] <= b["median_cyc"] or a["n"] != 1000:
            return "hrtimer-cost %s: %r %r" % (dev, a and dict(a), b and dict(b))
        rr, r = rows.get(("restart_reprogram", dev, "batch")), rows.get(("restart", dev, "batch"))
        if not rr or not r or rr["mean_cyc"] <= r["mean_cyc"] or r["n"] != 1000000 \
                or rr["reprograms"] < rr["n"]:
            return "hrtimer-cost batch %s: %r %r" % (dev, rr and dict(rr), r and dict(r))
    for key in (("irq_save_restore", "none", "per_op"), ("irq_save_restore", "none", "batch"),
                ("queue_insert", "none", "batch")):
        if key not in rows:
            return "no %s row" % (key,)
    pair = float(rows[("irq_save_restore", "none", "batch")]["mean_cyc"])
    for dev in ONESHOT:
        got = {op: rows.get((op, dev, "batch")) for op in (
            "restart", "restart_irqsave", "cancel_restart", "cancel_restart_irqsave")}
        if not all(got.values()):
            return "hrtimer-cost %s: batch rows %r" % (dev, {k: v and dict(v)
                                                             for k, v in got.items()})
        mean = {op: float(r["mean_cyc"]) for op, r in got.items()}
        added = (mean["restart_irqsave"] - mean["restart"],
                 mean["cancel_restart_irqsave"] - mean["cancel_restart"])
        if added[0] != added[1] or not 0 < added[0] <= pair:
            return "hrtimer-cost %s: the interrupt pair adds %r to restart / cancel+restart, " \
                "expected the same, in (0, %s]" % (dev, added, pair)
    for r in rows.values():
        if r.get("variant") == "batch" and (r["mean_cyc"] < 0 or r["uncertainty_cyc"] != 0
                                            or r["batches"] != 5):
            return "hrtimer-cost batch row %r" % dict(r)


def wakeup_latency(ctx):
    """Never negative: nothing fires before its deadline. Every one-shot device is measured
    on all four paths, halted and polling; the RTC (periodic only) is a skip row. Under
    icount the whole path, deadline to callback, is a few hundred instructions: under 2 us,
    each sample known to +-5 ns at most.
    The quick profile takes 1000 samples a series, so each row has its p99.9.
    Where the run never halts its boot CPU (idle=auto under icount, the environment record's
    `idle`), each device's HLT series is one skip row that says so, and polling is measured."""
    rows = results(ctx, "wakeup-latency")
    seen = {(r["device"], r["path"], r["wait"]) for r in rows if "samples" in r}
    halts = ctx.one("environment").get("idle") == "halt"
    for dev in ONESHOT:
        for path in ("irq", "event", "hrtimer_irq", "callback"):
            for wait in ("hlt", "poll") if halts else ("poll",):
                if (dev, path, wait) not in seen:
                    return "no wakeup-latency row for %s %s %s" % (dev, path, wait)
        if not halts and not any(r.get("device") == dev and r.get("wait") == "hlt" and
                                 r.get("status") == "skip" for r in rows):
            return "idle %r but no HLT skip row for %s" % (ctx.one("environment").get("idle"),
                                                          dev)
    for r in rows:
        if r.get("status") == "skip":
            continue
        # 1000 samples a series, the fewest a p99.9 is written from
        if r["samples"] != 1000 or r["early"] != 0 or r["lost"] != 0 or r["min_ns"] < 0 \
                or r["max_ns"] > 2000 or not r["p99_ns"] <= r.get("p999_ns", -1) <= r["max_ns"]:
            return "wakeup-latency row %r" % dict(r)
        if sum(r["hist"]["counts"]) != r["samples"]:
            return "histogram does not hold every sample: %r" % dict(r)
        # the mapping's pairs, swept over the count's phases, always agree and narrow a
        # sample to a bracket (5 ns) plus rounding: +-4 ns (one pair alone gave +-8 or 9)
        if r.get("map_disagreements") != 0 or r["resolution_ns"] > 5:
            return "wakeup-latency mapping: %r" % dict(r)
    if not any(r.get("device") == "rtc" and r.get("status") == "skip" for r in rows):
        return "no skip row for the rtc"


def periodic_jitter(ctx):
    """With no grid the deadlines are exact and the intervals vary only by the interrupt
    path (well under 1 us); a 5000 ns grid moves each expiry by up to 5 us, so the spread
    is larger than with no grid, and an 800 ns grid's lies between. The rounding's phase
    moves by the same (L - T) mod 5 us every period (L: the constant time from an expiry to
    its re-arm under icount), so the stddev follows T mod 5 us: the two timers with T mod
    5 us = 0 (500 and 565 us) spread least, and none more than half the resolution (the
    two-valued intervals' most), give or take the other timers' callbacks (10 %)."""
    rows = results(ctx, "periodic-jitter")
    if len(rows) != 32:
        return "%d periodic-jitter rows, expected 32 (10 at 5000 ns, 11 at 800, 11 finest)" \
            % len(rows)
    for r in rows:
        first = 500000 if r["grid"] and r["hres_ns"] == 5000 else 600000
        want = first + 13000 * r["timer"] if r["set"] == "ten" else 600000
        if r["period_ns"] != want or (r["set"] == "alone" and r["hres_ns"] == 5000):
            return "periodic-jitter row not in the source's sets: %r" % dict(r)
    by = {}
    for r in rows:
        by.setdefault(r["grid"] and r["hres_ns"], []).append(r)
    fine = by.get(False, [])
    if not fine or any(r["stddev_ns"] >= 1000 or float(r["p_within_5us"]) != 1 for r in fine):
        return "finest grid rows %r" % [dict(r) for r in fine]
    sd = {k: max(r["stddev_ns"] for r in v if r["set"] == "ten") for k, v in by.items()}
    if not sd[5000] > sd[800] > sd[False]:
        return "spread by grid %r" % sd
    coarse = sorted((r["stddev_ns"], r["period_ns"]) for r in rows
                    if r["grid"] and r["hres_ns"] == 5000 and r["set"] == "ten")
    if sorted(p for _, p in coarse[:2]) != [500000, 565000] or coarse[-1][0] > 2750:
        return "5000 ns stddev against T mod 5 us: %r" % coarse
    for r in rows:
        want = 300e6 / r["period_ns"]
        if abs(r["samples"] - want) > 3:
            return "samples %r, expected about %d" % (dict(r), want)


def tick_period_measured(ctx):
    """The boot tick's record gives the period the device makes beside its cycles: QEMU's
    periodic LAPIC timer counts initial count + 1, so at HZ=1000 (10^6 cycles of the 1 GHz
    LAPIC clock under icount) the tick is 1,000,001 ns, measured over 100 periods of 10 ns
    HPET counts: to 0.1 ns."""
    t = ctx.one("tick")
    if t["device"] != "lapic" or t["period_ns"] != 1000000 or t.get("measured_periods") != 100 \
            or abs(float(t.get("period_measured_ns", 0)) - 1000001) > 0.1 \
            or t.get("measured_by") != "time_ns":
        return "tick record %r: expected period_measured_ns 1000001 over 100 periods" % dict(t)


def hwlat(ctx):
    """Under icount the TSC counts instructions, so no two reads can be 10 us apart."""
    r = results(ctx, "hwlat")
    if len(r) != 1 or r[0]["gaps"] != 0 or r[0]["reads"] == 0:
        return "hwlat %r" % [dict(x) for x in r]


def verdict(ctx):
    """One claim per topic, each naming its evidence."""
    topics = [r["topic"] for r in ctx.recs("verdict")]
    want = ["environment", "clocksource", "clockevent", "hpet", "tsc_deadline", "tick_rate",
            "stalls", "tsc_sync"]
    if topics != want:
        return "verdict topics %r, expected %r" % (topics, want)
    for r in ctx.recs("verdict"):
        if r["topic"] not in ("tsc_deadline", "tsc_sync") and not r["evidence"]:
            return "verdict without evidence: %r" % dict(r)


def cpus_online(n):
    """Every CPU the machine has is started and says so (cpu_start records)."""
    def check(ctx):
        rs = ctx.recs("cpu_start")
        if len(rs) != n or not all(r["online"] for r in rs) or \
                [r["cpu"] for r in rs] != list(range(n)):
            return "cpu_start %r, expected %d CPUs online" % ([dict(r) for r in rs], n)
    return check


def percpu_timers_own_cpu(n):
    """On every application processor, ten hrtimers on its own LAPIC timer all fire, on that
    CPU (the callback reads its APIC ID), never early; and the same on its own HPET
    comparator: q35's HPET has three, so CPUs 1 and 2 get comparators 1 and 2, CPU 3 none."""
    def check(ctx):
        rs = ctx.recs("percpu_timer_check")
        want = [(c, "lapic") for c in range(1, n)] + [(c, "hpet") for c in range(1, min(n, 3))]
        if sorted((r["cpu"], r["device"]) for r in rs) != sorted(want):
            return "percpu_timer_check for %r, expected %r" % (
                [(r["cpu"], r["device"]) for r in rs], want)
        for r in rs:
            if r["fired"] != 10 or r["on_own_cpu"] != 10 or r["early"] != 0:
                return "percpu_timer_check %r" % dict(r)
    return check


def every_cpu_has_its_timers(n):
    """Each application processor's cpu_start says it has an hrtimer base on its LAPIC timer;
    one without an HPET comparator of its own says why (hpet_reason)."""
    def check(ctx):
        for r in ctx.recs("cpu_start"):
            if r["cpu"] == 0:
                continue
            if r.get("hrtimer_base") is not True:
                return "cpu %d has no hrtimer base: %r" % (r["cpu"], dict(r))
            if r.get("hpet_comparator") is None and not r.get("hpet_reason"):
                return "cpu %d has no HPET comparator and no reason" % r["cpu"]
        if len(ctx.recs("cpu_start")) != n:
            return "%d cpu_start records, expected %d" % (len(ctx.recs("cpu_start")), n)
    return check


def tsc_warp_check_clean(n):
    """The boot check pairs the boot CPU with each other CPU, every round completes, no warp
    (one clock under icount), so the TSC is not demoted."""
    def check(ctx):
        rs = ctx.recs("tsc_warp_check")
        if sorted(r["cpu_b"] for r in rs) != list(range(1, n)):
            return "tsc_warp_check pairs %r" % [r["cpu_b"] for r in rs]
        for r in rs:
            if r["backward_steps"] or r["timed_out"] or r["rounds"] != 64:
                return "tsc_warp_check %r" % dict(r)
        if ctx.recs("clocksource_demoted"):
            return "the TSC was demoted: %r" % dict(ctx.recs("clocksource_demoted")[0])
    return check


def tsc_sync(n):
    """Every pair of CPUs: the ping-pong completes and no TSC read is ever behind the other
    CPU's read that came before it."""
    def check(ctx):
        rows = [r for r in results(ctx, "tsc-sync") if r.get("mode") == "ipi" and "rounds" in r]
        if len(rows) != n * (n - 1) // 2:
            return "%d ipi pairs, expected %d" % (len(rows), n * (n - 1) // 2)
        for r in rows:
            if r["rounds"] != 100 or r["backward_steps"] != 0:
                return "tsc-sync pair %r" % dict(r)
        adj = [r for r in results(ctx, "tsc-sync") if "tsc_adjust" in r]
        if len(adj) != n:
            return "tsc_adjust rows %r" % [dict(r) for r in adj]
    return check


def percpu_latency(n, exact=True):
    """One idle row per CPU and device (LAPIC timer; HPET comparator, a skip row where none
    is left) and one busy row for the boot CPU; never early. Under icount (exact) the idle
    rows' periodic timers run their 200 ms (~3600 intervals); in real time (plain emulation,
    KVM) how many intervals fit depends on the host's load, so only some are required. The
    busy row's may get far fewer: on a 2-core host, plain emulation of 4 CPUs with 3 spinning
    starves the fourth, which is the point of the measurement, so only its wake-ups are
    required."""
    least = 1000 if exact else 1
    def check(ctx):
        rows = results(ctx, "percpu-latency")
        idle = sorted((r["cpu"], r["device"]) for r in rows if r["load"] == "idle")
        busy = [r["cpu"] for r in rows if r["load"] == "busy"]
        if idle != sorted([(c, d) for c in range(n) for d in ("lapic", "hpet")]) or \
                busy != ([0] if n > 1 else []):
            return "percpu-latency rows %r" % [dict(r) for r in rows]
        skips = sorted(r["cpu"] for r in rows if r.get("status") == "skip")
        if skips != list(range(3, n)):
            return "skip rows for CPUs %r, expected %r" % (skips, list(range(3, n)))
        for r in rows:
            if r.get("status") == "skip":
                continue
            if r["samples"] != 200 or r["min_ns"] < 0 or (
                    r["load"] == "idle" and r["jitter_intervals"] < least):
                return "percpu-latency row %r" % dict(r)
    return check


def raw_samples_agree(ctx):
    """Every measured wakeup-latency row's raw samples came (`samples` records, base-32
    offsets), once each in order, and the host's nearest-rank percentiles of them equal the
    row's own min, p50, p99, p99.9 and max (tools/ticklablib/samples.py reads them)."""
    from ticklablib import dataset, samples
    data = dataset.group(ctx.runs[0], 1, "boot")
    rows = [r for r in data.results.get("wakeup-latency", []) if r.get("status") is None]
    if not rows:
        return "no measured wakeup-latency row"
    for r in rows:
        s = samples.for_row(data, r)
        if s is None:
            return "no samples records for %s %s %s" % (r["device"], r["path"], r["wait"])
        d = samples.disagreements(s, r)
        if d:
            return "%s %s %s: the samples disagree with the row: %s" % (
                r["device"], r["path"], r["wait"], "; ".join(d))


QUICK_ICOUNT = [every_experiment_reports, no_lost_events, quick_within_60s, period_compare, itimer_error,
                sleep_accuracy, tick_overhead, hrtimer_cost, wakeup_latency, periodic_jitter,
                hwlat, verdict, raw_samples_agree, tick_period_measured]


# ---- truth in real time (plain emulation, KVM) ------------------------------------------

SHARED_IMPOSSIBLE = "/work/shared/tools/impossible-figures"


def _huge(value, path):
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [path] if value >= 1 << 63 else []
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _huge(v, "%s.%s" % (path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _huge(v, "%s[%d]" % (path, i))]
    return []


def wrapped_counts(ctx):
    """A count, duration or figure of an experiment at 2^63 or more is a negative number
    printed unsigned (seen: exp_end hrtimer_spurious 18446744073709551614, a difference of
    two counters taken the wrong way round)."""
    out = []
    for r in ctx.recs("result") + ctx.recs("exp_end"):
        for k, v in r.items():
            out += ["line %d %s %s: %s = %s" % (r.line, r.type, r.get("exp"), p, v)
                    for p in _huge(v, k)]
    return out


def no_impossible_figures(ctx):
    """No negative latency, cost or overhead and no tick-rate verdict beyond belief, as the
    host tool's report lists them (ticklablib.summary.impossible) and, where it is
    installed, as the shared impossible-figures scan of the raw log finds them. A run in
    real time may be slow; it may never be impossible."""
    import subprocess
    from ticklablib import dataset, summary
    found = ["report: " + f for f in summary.impossible(dataset.group(ctx.runs[0], 1, ctx.log))]
    found += wrapped_counts(ctx)
    if os.path.exists(SHARED_IMPOSSIBLE):
        p = subprocess.run([sys.executable, SHARED_IMPOSSIBLE, ctx.log], capture_output=True,
                           text=True, timeout=60)
        found += [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
    if found:
        return "%d impossible figure(s): %s" % (len(found), "; ".join(found[:6]))


def _decided(recs):
    """topic -> verdict record, for the comparative verdicts that decided."""
    return {r["topic"]: r for r in recs if r.get("type") == "verdict" and r.get("decided")}


def verdict_contradiction(a, b):
    """Why two runs' decided verdicts contradict each other, or None. "too close to call"
    (decided false) stands against anything. clockevent: two different fastest devices.
    hpet / tsc_deadline: "helps" against "no". tick_rate: one run's rate above which the tick
    surely costs over 1 % (hz_over) at or below the other's rate that surely keeps it under
    (hz_safe)."""
    da, db = _decided(a), _decided(b)
    for topic in sorted(set(da) & set(db)):
        x, y = da[topic], db[topic]
        if topic == "tick_rate":
            for p, q in ((x, y), (y, x)):
                if p.get("hz_over") and q.get("hz_safe") and p["hz_over"] <= q["hz_safe"]:
                    return "tick_rate: HZ=%s surely costs over 1 %% in one run, HZ=%s surely " \
                        "under in the other (%r / %r)" % (p["hz_over"], q["hz_safe"],
                                                          p["claim"], q["claim"])
        elif {x["choice"], y["choice"]} == {"helps", "no"} or \
                (topic == "clockevent" and x["choice"] != y["choice"]):
            return "%s: %r against %r" % (topic, x["claim"], y["claim"])
    return None


def verdict_without_basis(verdicts):
    """A comparative verdict that chose something and does not say whether it decided and
    on what (None: every one does). Not measured (choice null), unknown and only-one-device
    verdicts choose nothing."""
    for r in verdicts:
        if r["topic"] in ("clockevent", "hpet", "tsc_deadline", "tick_rate") and \
                r["choice"] not in (None, "unknown", "only") and \
                ("decided" not in r or "method" not in r or "intervals" not in r):
            return "comparative verdict without decided/method/intervals: %r" % r
    return None


def verdicts_agree(ctx):
    """Plain emulation, where every figure is the host's noise: two more runs of the same
    image at once; no decided verdict of any of the three contradicts a decided verdict of
    another. Every comparative verdict says whether it decided and on what."""
    from ticklablib import records
    first = [dict(r) for r in ctx.recs("verdict")]
    why = verdict_without_basis(first)
    if why:
        return why
    runs = [first]
    for data in ctx.rerun(together=2):
        parsed = records.parse_stream(data)
        if not parsed or not parsed[0].whole:
            return "a rerun's stream is not whole"
        runs.append([dict(r) for r in parsed[0].records if r.type == "verdict"])
    for i in range(len(runs)):
        for k in range(i + 1, len(runs)):
            why = verdict_contradiction(runs[i], runs[k])
            if why:
                return "runs %d and %d contradict: %s" % (i + 1, k + 1, why)
    return None
