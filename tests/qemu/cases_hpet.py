"""Boot-test cases for the HPET's ways out: each comparator's interrupt on the
best route the machine offers (drivers/hpet.h, kernel/timers/ce_devices.c), fire-checked
and named in its `clockevent` record, and the firmware state recorded and quieted before the
interrupt check (`hpet_boot_state`). Kept apart from cases.py, which adds them to its list.

QEMU 7.2 shows each route: `-global hpet.msi=on` offers FSB delivery on every comparator;
`-global hpet.hpet-intcap=...` sets the inputs they can drive (q35's default is IRQ 2, 8 and
GSI 16-23, pc's IRQ 2 only). A cap whose low byte is 0 (such as 0xf00000, GSI 20-23 alone)
is replaced by the machine's default (pc.c reads the property into a uint8_t to tell "set"
from "unset"), so the PCH-like case uses 0xf00004: GSI 2, which the PIT owns, and 20-23.
Timing is asserted only under -icount shift=0,sleep=off.
"""
from cases import CLEAN, EXIT_OK, Case, has_record, tick, tick_exact
import exp_checks

MSI = ("-global", "hpet.msi=on")
PCH_INTCAP = ("-global", "hpet.hpet-intcap=0xf00004")


def hpet_record(ctx, name="hpet"):
    rs = [r for r in ctx.recs("clockevent") if r.get("name") == name]
    return rs[0] if len(rs) == 1 else None


def hpet_route(route, **want):
    """The boot CPU's HPET comparator 0 is usable, fired at the first try of its fire check,
    on `route`, with the record's other route members as given (a callable checks a value)."""
    def check(ctx):
        r = hpet_record(ctx)
        if not r or not r.get("usable") or r.get("fire_check_attempts") != 1 or \
                r.get("route") != route or r.get("comparator") != 0:
            return "hpet clockevent not usable on route %s at the first fire: %r" % (
                route, r and dict(r))
        for k, v in want.items():
            if not (v(r.get(k)) if callable(v) else r.get(k) == v):
                return "hpet clockevent %s = %r: %r" % (k, r.get(k), dict(r))
        if r.get("etime_margin_cyc", 0) < 128:
            return "the -ETIME margin is below its floor of 128 clocks: %r" % dict(r)
    return check


def msi_message(ctx):
    """The message is the LAPIC's format: 0xFEE00000 with the boot CPU's APIC ID (0), and
    the vector as data."""
    r = hpet_record(ctx)
    if r.get("msi_address") != "0xfee00000" or r.get("msi_data") != hex(r.get("vector", -1)):
        return "FSB message %r / %r for vector %r" % (r.get("msi_address"), r.get("msi_data"),
                                                     r.get("vector"))


def wakeup_on_hpet(ctx):
    """wakeup-latency measured the HPET comparator on every path, halted: every sample the
    profile asks for (1000, enough for a p99.9), none early or lost, the whole path under
    2 us of virtual time."""
    rows = [r for r in exp_checks.results(ctx, "wakeup-latency")
            if r.get("device") == "hpet" and "samples" in r]
    paths = {(r["path"], r["wait"]) for r in rows}
    for p in ("irq", "event", "hrtimer_irq", "callback"):
        if (p, "hlt") not in paths:
            return "no wakeup-latency row for hpet %s hlt: %r" % (p, sorted(paths))
    for r in rows:
        if r["samples"] != 1000 or r["early"] != 0 or r["lost"] != 0 or r["min_ns"] < 0 or \
                r["max_ns"] > 2000:
            return "wakeup-latency hpet row %r" % dict(r)


def hpet_events_exact(ctx):
    """cecheck on the HPET under icount: 1000 periodic events, every interval the period to
    10 ns; 1000 one-shots never early, late by at most two HPET clocks and 1 us of interrupt
    path (cases.clockevents_exact's bounds)."""
    by = {r["mode"]: r for r in ctx.recs("clockevent_check") if r["device"] == "hpet"}
    p, o = by.get("periodic"), by.get("oneshot")
    if not p or p["events"] != 1000 or max(abs(p["min_ns"]), abs(p["max_ns"])) > 10:
        return "hpet periodic: %r" % (p and dict(p))
    if not o or o["events"] != 1000 or o["early"] != 0 or o["min_ns"] < 0 or \
            o["max_ns"] > 2 * 10 + 1000:
        return "hpet one-shot: %r" % (o and dict(o))


def hrtimers_on_hpet(ctx):
    """hrtcheck=1000 on the HPET: all fire, in order, never early, late under 5 us."""
    c = ctx.one("hrtimer_check")
    if c.get("device") != "hpet" or c["fired"] != 1000 or c["early"] != 0 or \
            c["out_of_order"] != 0 or c["late_max_ns"] >= 5000:
        return "hrtimer_check %r" % dict(c)


def verdict_names_route(words):
    """The verdict's HPET claim says which route it measured."""
    def check(ctx):
        v = [r for r in ctx.recs("verdict") if r.get("topic") == "hpet"]
        if len(v) != 1 or words not in (v[0].get("claim") or ""):
            return "hpet verdict does not name %r: %r" % (words, v and dict(v[0]))
    return check


def boot_state_clean(ctx):
    """SeaBIOS leaves the HPET alone: recorded, nothing armed, quieted anyway."""
    b = ctx.one("hpet_boot_state")
    want = {"present": True, "address": "0xfed00000", "comparators": 3,
            "legacy_replacement": False, "left_armed": 0, "quieted": True}
    bad = {k: b.get(k) for k, v in want.items() if b.get(k) != v}
    if bad:
        return "hpet_boot_state differs: %r" % bad


def boot_state_before_irq_check(ctx):
    """The firmware's HPET is quieted before the interrupt check (the record comes first)."""
    types = [r.type for r in ctx.runs[0].records]
    if "hpet_boot_state" not in types or "irq_check" in types and \
            types.index("hpet_boot_state") > types.index("irq_check"):
        return "hpet_boot_state missing or after irq_check: %r" % types[:20]


def absent_because(name, words):
    def check(ctx):
        rs = [r for r in ctx.recs("clockevent") if r.get("name") == name]
        if not rs or rs[0].get("usable") or words not in (rs[0].get("reason") or ""):
            return "%s should be unusable because %r: %r" % (name, words, rs and dict(rs[0]))
    return check


def fsb_on_every_cpu(n):
    """Every application processor's own comparator fired on it (percpu check) by FSB: the
    message carries that CPU's APIC ID, no IOAPIC input involved."""
    def check(ctx):
        for c in ctx.recs("cpu_start"):
            if c["cpu"] and c.get("hpet_route") != "fsb":
                return "cpu %d's comparator not by FSB: %r" % (c["cpu"], dict(c))
        rs = [r for r in ctx.recs("percpu_timer_check") if r.get("device") == "hpet"]
        if sorted(r["cpu"] for r in rs) != list(range(1, n)):
            return "percpu hpet checks %r" % [dict(r) for r in rs]
        for r in rs:
            if r["fired"] != 10 or r["on_own_cpu"] != 10 or r["early"] != 0:
                return "percpu_timer_check %r" % dict(r)
    return check


HPET_CASES = [
    # FSB/MSI: the clean way, no pin. wakeup-latency measures the comparator on it, and the
    # verdict says so.
    Case("hpet-msi-fsb-icount", "-global hpet.msi=on: comparator 0 delivers its own message "
         "(FSB) to the LAPIC, fire-checked, measured in wakeup-latency, named by the verdict",
         icount=0, timeout_s=300, args="exp=wakeup-latency idle=halt", qemu_extra=MSI,
         checks=[hpet_route("fsb"), msi_message, wakeup_on_hpet,
                 verdict_names_route("hpet (FSB message, vector"), boot_state_clean] + CLEAN),
    # An Intel PCH's HPET: inputs 20-23 only, shared with PCI there, so level-triggered and
    # active low with the status bit checked in the handler. 1000 periodic events (each
    # period's level interrupt taken once) and 1000 one-shots exact, then 1000 hrtimers on
    # it in order, never early.
    Case("hpet-pch-gsi20-23-level-icount", "HPET routable only to GSI 20-23 (hpet-intcap "
         "0xf00004: GSI 2 is the PIT's): comparator 0 on GSI 20, level, active low; periodic "
         "and one-shot events exact, 1000 hrtimers on it in order", icount=0,
         qemu_extra=PCH_INTCAP, args="exp=none cecheck=1000 hrtcheck=1000",
         checks=[hpet_route("ioapic", gsi=lambda g: g in (20, 21, 22, 23), trigger="level",
                            polarity="low", foreign_irqs=0, route_cap="0xf00004"),
                 boot_state_before_irq_check, hpet_events_exact,
                 has_record("hrtimer_base", device="hpet"), hrtimers_on_hpet] + CLEAN),
    # Regression (one early tick when the tick took the HPET after the clock event checks):
    # QEMU fires a comparator the counter has passed as soon as its interrupt is enabled, and
    # the checks' last value was still in it. The periodic tick on the level input now counts
    # exactly, nothing early, nothing lost.
    Case("hpet-tick-after-cecheck-icount", "the tick on the HPET (GSI 20, level) after "
         "cecheck used it: exact tick count, no early tick", icount=0, qemu_extra=PCH_INTCAP,
         args="exp=none cecheck=1000 hz=1000 clockevent=hpet tickcheck_ms=2500",
         checks=[hpet_route("ioapic", gsi=lambda g: g in (20, 21, 22, 23), trigger="level"),
                 tick("hpet", 1000000), tick_exact(),
                 lambda ctx: None if ctx.one("tick_check")["early"] == 0
                 else "early ticks: %r" % dict(ctx.one("tick_check"))] + CLEAN),
    # pc: every comparator can drive only GSI 2, the PIT's. With FSB delivery offered the
    # HPET needs no pin at all, and the PIT keeps IRQ0.
    Case("hpet-pc-msi-icount", "pc with hpet.msi=on: comparator 0 by FSB while the PIT keeps "
         "IRQ0; 1000 hrtimers on the HPET in order, never early", machine="pc", icount=0,
         qemu_extra=MSI, args="exp=none hrtcheck=1000",
         checks=[hpet_route("fsb"), msi_message,
                 has_record("clockevent", name="pit", usable=True),
                 has_record("clockevent", name="rtc", usable=True),
                 has_record("hrtimer_base", device="hpet"), hrtimers_on_hpet] + CLEAN),
    # pc with the PIT gone: comparator 0 takes IRQ0 by legacy replacement (the only way it
    # has), which also blocks the RTC's IRQ8; both are named.
    Case("hpet-pc-pit-off-legacy", "pc,pit=off: comparator 0 by legacy replacement on IRQ0, "
         "fire-checked; the PIT and the RTC say why they have no interrupt",
         machine="pc,pit=off", args="exp=none",
         checks=[hpet_route("legacy", isa_irq=0, gsi=2, trigger="edge"),
                 absent_because("pit", "ports read all ones: no PIT"),
                 absent_because("rtc", "legacy replacement")] + CLEAN),
    # Two CPUs with FSB delivery: CPU 1's own comparator sends its message to CPU 1's APIC.
    Case("hpet-smp2-msi-icount", "-smp 2 with hpet.msi=on: each CPU's own comparator by FSB "
         "to its own APIC; all its hrtimers fire on it", smp=2, icount=0, timeout_s=300,
         qemu_extra=MSI, args="exp=none",
         checks=[hpet_route("fsb"), exp_checks.cpus_online(2), fsb_on_every_cpu(2)] + CLEAN),
]

assert all(c.exit_code == EXIT_OK for c in HPET_CASES)
