"""The boot-test cases (tests/qemu/boottest.py runs them).

A case names a QEMU configuration and the checks its record stream must pass. Checks are
functions of a Context returning None (pass) or a message (fail); they look at the records
through the same reader users run (tools/ticklablib). Add a case per behaviour, named after
what it proves; a regression case is named after the bug it pins.
"""
from dataclasses import dataclass, field
from typing import Callable, List, Optional

import exp_checks

EXIT_OK, EXIT_FAILED = 33, 35     # isa-debug-exit: (0x10 << 1) | 1, (0x11 << 1) | 1


@dataclass
class Case:
    name: str
    doc: str
    machine: str = "q35"
    firmware: str = "bios"         # bios (SeaBIOS) | uefi (OVMF)
    boot: str = "kernel"           # kernel (-kernel, Multiboot1) | iso (GRUB, Multiboot2) |
                                   # efi, efi-shell (ticklab.efi; boottest.build_efi_dir) |
                                   # usb (a stick on xHCI; boottest.build_stick)
    stick: str = ""                # boot=usb: make-usb | hybrid | efi-img (build_stick)
    accel: str = "tcg"             # tcg | kvm (the KVM tier: skipped where KVM is not usable)
    args: str = ""
    kernel: str = "ticklab.elf"    # boot=kernel: the image under build/ (minimal.elf: the
                                   # example kernel that links only libticklab.a)
    icount: Optional[int] = None
    smp: int = 1
    mem: str = "256M"
    exit_code: int = EXIT_OK
    expect_stream: bool = True     # a whole run (boot ... end, CRCs, count) is required
    serial_on_com2: bool = False
    no_serial: bool = False
    # The serial wiring instead of one COM1 captured: QEMU arguments in which "{log}" is the
    # capture file (the chardev whose bytes the case reads), e.g. a pci-serial's chardev.
    serial: tuple = ()
    # (case) -> more QEMU arguments, made before the boot (e.g. an ACPI table written under
    # build/test for -acpitable: cases_serial.py).
    prepare: Optional[Callable] = None
    qemu_extra: tuple = ()
    timeout_s: int = 120
    end_grace_s: int = 30          # after the end record QEMU must exit within this
    checks: List[Callable] = field(default_factory=list)
    screenshot_min_pixels: int = 0   # >0: no serial; check the screen console drew text
    screenshot_wait_s: float = 3.0
    # A boot procedure of its own instead of one QEMU run (cases_secureboot.py: several runs,
    # firmware menus answered): run(case, log, harness) -> (exit code or None, stderr, why
    # it was stopped or None), as boottest.run_qemu; harness: boottest.HARNESS.
    run: Optional[Callable] = None
    requires: Optional[Callable] = None   # () -> None, or why the case cannot run here (SKIP)
    # boot="iso": (case) -> environment for scripts/mkiso.sh (KERNEL_ELF, GRUB_PRE), made
    # before the image is built
    iso_env: Optional[Callable] = None


@dataclass
class Context:
    case: Case
    data: bytes
    runs: list
    log: str
    rc: int
    rerun: Callable = None
    boot_other: Callable = None   # boot_other(Case) -> runs: a reference boot for comparisons

    def recs(self, rtype):
        return [r for r in self.runs[0].records if r.type == rtype] if self.runs else []

    def one(self, rtype):
        rs = self.recs(rtype)
        if len(rs) != 1:
            raise AssertionError("expected one %s record, found %d" % (rtype, len(rs)))
        return rs[0]


# ---- checks -------------------------------------------------------------------------------

def boot_is(path, firmware):
    def check(ctx):
        b = ctx.runs[0].boot
        if b.get("boot") != path or b.get("firmware") != firmware:
            return "boot record says boot=%r firmware=%r, expected %r %r" % (
                b.get("boot"), b.get("firmware"), path, firmware)
    return check


def end_status(status):
    def check(ctx):
        e = ctx.runs[0].end
        if e.get("status") != status:
            return "end status %r, expected %r" % (e.get("status"), status)
    return check


def no_errors(ctx):
    errs = ctx.recs("error")
    if errs:
        return "unexpected error records: %s" % [dict(e) for e in errs]


def cmdline_errors(words):
    """Exactly one cmdline error record per bad word, in order."""
    def check(ctx):
        got = [e.get("word") for e in ctx.recs("error") if e.get("what") == "cmdline"]
        if got != words:
            return "cmdline error words %r, expected %r" % (got, words)
        for e in ctx.recs("error"):
            if e.get("what") == "cmdline" and not e.get("reason"):
                return "cmdline error without a reason: %r" % dict(e)
    return check


def has_record(rtype, **want):
    def check(ctx):
        for r in ctx.recs(rtype):
            if all(r.get(k) == v for k, v in want.items()):
                return None
        return "no %s record with %r; got %r" % (rtype, want, [dict(r) for r in ctx.recs(rtype)])
    return check


def fault(vector, **want):
    def check(ctx):
        f = ctx.one("fault")
        if f.get("vector") != vector:
            return "fault vector %r, expected %r" % (f.get("vector"), vector)
        for k, v in want.items():
            if f.get(k) != v:
                return "fault %s=%r, expected %r (record %r)" % (k, f.get(k), v, dict(f))
        for k in ("rip", "rsp", "cr2", "error_code", "regs"):
            if k not in f:
                return "fault record lacks %s" % k
    return check


def serial_silent(ctx):
    if ctx.data:
        return "expected no serial output, got %d bytes" % len(ctx.data)


def inventory_core(ctx):
    """The inventory so far: memory, console and paging records."""
    for t in ("memory", "console", "paging"):
        if not ctx.recs(t):
            return "no %s record" % t
    if ctx.one("memory").get("usable_bytes", 0) < 64 << 20:
        return "less than 64 MiB usable memory reported: %r" % dict(ctx.one("memory"))


def madt_qemu(cpus=1):
    """The MADT QEMU gives on pc and q35 (../shared/notes/qemu-facts.md)."""
    def check(ctx):
        m = ctx.one("madt")
        want_ovr = {"bus": 0, "irq": 0, "gsi": 2, "polarity": "conforms", "trigger": "conforms"}
        if m.get("lapic_addr") != "0xfee00000":
            return "MADT LAPIC address %r" % m.get("lapic_addr")
        if m.get("ioapics") != [{"id": 0, "addr": "0xfec00000", "gsi_base": 0}]:
            return "MADT IOAPICs %r" % m.get("ioapics")
        if want_ovr not in m.get("overrides", []):
            return "no IRQ0 -> GSI2 override in %r" % m.get("overrides")
        levels = sorted(o["irq"] for o in m.get("overrides", []) if o.get("trigger") == "level")
        if levels != [5, 9, 10, 11]:
            return "level-triggered IRQs %r, expected [5, 9, 10, 11]" % levels
        if len(m.get("cpus", [])) != cpus:
            return "MADT lists %r CPUs, expected %d" % (m.get("cpus"), cpus)
    return check


def hpet_table_qemu(ctx):
    h = ctx.one("hpet_table")
    want = {"present": True, "address": "0xfed00000", "comparators": 3, "counter_64bit": True,
            "legacy_capable": True}
    bad = {k: h.get(k) for k, v in want.items() if h.get(k) != v}
    if bad:
        return "hpet_table differs: %r" % bad


def pm_timer_qemu(ctx):
    f = ctx.one("fadt")
    if (f.get("pm_timer_present"), f.get("pm_timer_port"), f.get("pm_timer_32bit")) != (
            True, "0x608", False):
        return "PM timer %r" % dict(f)


def routed_through_ioapic(ctx):
    i = ctx.one("interrupts")
    if i.get("mode") != "ioapic" or not i.get("self_ipi_delivered"):
        return "interrupts %r" % dict(i)
    c = ctx.one("irq_check")
    if (c.get("path"), c.get("gsi"), c.get("delivered")) != ("ioapic", 2, True):
        return "PIT IRQ0 check %r" % dict(c)
    io = ctx.one("ioapic")
    if (io.get("usable"), io.get("pins")) != (True, 24):
        return "ioapic %r" % dict(io)


def cpu_flags(**want):
    def check(ctx):
        c = ctx.one("cpu")
        bad = {k: c.get(k) for k, v in want.items() if c.get(k) != v}
        if bad:
            return "cpu record differs: %r" % bad
        for leaf in ("leaf15", "leaf16"):
            if not c[leaf]["valid"] and not c[leaf].get("reason"):
                return "%s invalid without a reason" % leaf
    return check


SOURCES = ("tsc", "hpet", "acpi_pm", "pit", "lapic")


def clocksources_present(names=SOURCES, absent=()):
    """One clocksource record per source; present ones usable, monotonic, with a read cost."""
    def check(ctx):
        by = {r["name"]: r for r in ctx.recs("clocksource")}
        for n in names:
            r = by.get(n)
            if not r or not r.get("present") or not r.get("usable"):
                return "clocksource %s not present and usable: %r" % (n, r and dict(r))
            if r.get("backward_steps") != 0 or r.get("mono_reads", 0) < 1000:
                return "clocksource %s monotonicity: %r" % (n, dict(r))
            if not r.get("freq_hz") or r.get("read_cost_median_tsc_cyc") is None:
                return "clocksource %s lacks frequency or read cost: %r" % (n, dict(r))
        for n in absent:
            r = by.get(n)
            if not r or r.get("present") or not r.get("reason"):
                return "clocksource %s should be absent with a reason: %r" % (n, r and dict(r))
    return check


# Under -icount shift=0,sleep=off the TSC and the LAPIC timer run at exactly 1 GHz and the
# references (PIT 1193182 Hz, PM timer 3579545 Hz, HPET 100 MHz) are exact, so every measured
# calibration must land on 1e9 Hz; the bound is +-50 ppm, and each result must also
# contain the truth within its own stated uncertainty.
def calibration_exact(refs=("hpet", "acpi_pm", "pit")):
    def check(ctx):
        cal = {(r["target"], r["ref"]): r for r in ctx.recs("calibration")}
        for key in [("tsc", ref) for ref in refs] + [("lapic", "tsc")]:
            r = cal.get(key)
            if not r or r.get("status") != "ok":
                return "calibration %s by %s did not run ok: %r" % (key[0], key[1], r and dict(r))
            err_ppb = abs(r["freq_hz"] - 10**9) * 10**9 // 10**9
            if err_ppb > 50000:
                return "%s by %s: %d Hz is %d ppb from 1e9" % (key + (r["freq_hz"], err_ppb))
            if err_ppb > r["uncertainty_ppb"]:
                return "%s by %s: error %d ppb outside its stated +-%d ppb" % (
                    key + (err_ppb, r["uncertainty_ppb"]))
        for r in ctx.recs("calibration"):
            if r.get("method", "").startswith("cpuid") and r.get("status") != "skip":
                return "CPUID leaves are absent under TCG, expected skip: %r" % dict(r)
    return check


def wraps_crossed(names):
    def check(ctx):
        by = {r["name"]: r for r in ctx.recs("clocksource")}
        for n in names:
            w = by.get(n, {}).get("wrap_check", {})
            if w.get("status") != "ok" or w.get("wraps", 0) < 2:
                return "wrap check of %s: %r" % (n, w)
    return check


def selected(name, requested=None):
    def check(ctx):
        s = ctx.one("clocksource_selected")
        if s.get("name") != name or s.get("requested") != requested:
            return "clocksource_selected %r, expected %s (requested %r)" % (dict(s), name, requested)
    return check


def clockevents_qemu(ctx):
    """q35 under TCG: PIT, LAPIC, HPET, RTC measured and usable; TSC-deadline absent."""
    by = {r["name"]: r for r in ctx.recs("clockevent")}
    for n in ("pit", "lapic", "hpet", "rtc"):
        r = by.get(n)
        if not r or not r.get("usable") or r.get("min_delta_cyc", 0) < 1 or \
                r.get("program_cost_median_tsc_cyc") is None:
            return "clockevent %s not measured and usable: %r" % (n, r and dict(r))
    d = by.get("tsc_deadline")
    if not d or d.get("present") or "CPUID" not in (d.get("reason") or ""):
        return "tsc_deadline should be absent with the CPUID reason: %r" % (d and dict(d))


def tick(device, period_ns, hz_actual=None):
    def check(ctx):
        t = ctx.one("tick")
        if t.get("device") != device or t.get("period_ns") != period_ns:
            return "tick %r, expected %s with period %d ns" % (dict(t), device, period_ns)
        if hz_actual is not None and t.get("hz_actual") != hz_actual:
            return "tick hz_actual %r, expected %r" % (t.get("hz_actual"), hz_actual)
    return check


# Exact virtual time: the tick count matches the elapsed time to within the one tick of
# phase between the start of the run and the first tick; nothing is lost; the run starts
# 2 s before the 32-bit jiffies wrap and lasts 2.5 s, so it crosses it.
def tick_exact(crosses_wrap=True):
    def check(ctx):
        c = ctx.one("tick_check")
        # No interrupt may be lost. One that comes late shows as a "lost" period caught up
        # at once and an "early" successor that advances nothing: delayed, not lost. So
        # lost == early, and the handler ran once per period.
        if c.get("lost") != c.get("early") or abs(c["ticks"] - c["expected_ticks"]) > 1:
            return "tick_check %r" % dict(c)
        if crosses_wrap and not c.get("crossed_32bit_wrap"):
            return "jiffies did not cross the 32-bit wrap: %r" % dict(c)
        if not c.get("wheel_1s_fired") or c.get("wheel_1s_late_jiffies") != 0:
            return "1 s wheel timer: %r" % dict(c)
        # The timer fires on the tick where jiffies reaches now + HZ. Added between two
        # ticks, it runs up to one period short of 1 s (the jiffies it was added in had
        # already begun); never later than 1 s + the period's rounding.
        err = c["wheel_1s_error_ns"]
        if not -c["period_ns"] - 1000000 <= err <= 1000000:
            return "1 s wheel timer error %d ns outside (-1 period, +1 ms]" % err
    return check


# Exact virtual time (icount shift=0): what each device must deliver for 1000 events.
# Periodic: every interval equals the period the device makes, to within 10 ns (the PIT's
# 999847 ns is really 999847.7 ns: a few ns of rounding). One-shot: never early; late by at
# most two device cycles (rounding the delta up to whole cycles, and the cycle in progress)
# plus 1 us for the interrupt path (shift 0: about 300 instructions).
def clockevents_exact(ctx):
    by = {(r["device"], r["mode"]): r for r in ctx.recs("clockevent_check")}
    cycle_ns = {"pit": 839, "lapic": 1, "hpet": 10}
    for dev in ("pit", "lapic", "hpet"):
        p, o = by.get((dev, "periodic")), by.get((dev, "oneshot"))
        if not p or p["events"] != 1000 or max(abs(p["min_ns"]), abs(p["max_ns"])) > 10:
            return "%s periodic: %r" % (dev, p and dict(p))
        bound = 2 * cycle_ns[dev] + 1000
        if not o or o["events"] != 1000 or o["early"] != 0 or o["min_ns"] < 0 or \
                o["max_ns"] > bound:
            return "%s one-shot (bound %d ns): %r" % (dev, bound, o and dict(o))
    # QEMU's RTC under icount: all 1000 arrive, at half the programmed rate (see the tick
    # case below), so only the count is checked.
    r = by.get(("rtc", "periodic"))
    if not r or r["events"] != 1000:
        return "rtc periodic: %r" % (r and dict(r))


def minimal_intervals(ctx):
    """examples/minimal: ten 1 ms intervals by its TSC; the first two may be late by the
    start-up (up to 2 us), none early beyond the TSC's calibration error."""
    import re
    iv = [int(m) for m in re.findall(rb"minimal: interval \d+ (\d+) ns", ctx.data)]
    hz = re.search(rb"minimal: TSC (\d+) Hz", ctx.data)
    if not hz or len(iv) != 10 or b"minimal: done" not in ctx.data:
        return "intervals %r; output %r" % (iv, ctx.data[-600:])
    tol = 2 + abs(int(hz.group(1)) - 1000000000) * 1000000 // 1000000000 + 1
    if not all(1000000 - tol <= v <= 1002000 for v in iv[:2]) or \
            not all(abs(v - 1000000) <= tol for v in iv[2:]):
        return "intervals %r beyond 1 ms +- %d ns (TSC %s Hz)" % (iv, tol, hz.group(1).decode())


CLEAN = [end_status("ok"), no_errors, inventory_core]
DISCOVERY = [madt_qemu(), hpet_table_qemu, pm_timer_qemu, routed_through_ioapic,
             cpu_flags(hypervisor=True, hypervisor_signature="TCGTCGTCGTCG", tsc_deadline=False,
                       x2apic=False, invariant_tsc=False)]

# ---- cases --------------------------------------------------------------------------------

ALL = [
    # Plain emulation runs every experiment in real time: about 20 s alone, several times
    # that on a loaded host, hence the generous timeout (the run's own bounds end it). Slow
    # is allowed; an impossible figure (a negative latency, cost or overhead) never is.
    Case("kernel-q35", "QEMU -kernel (Multiboot1) on q35, plain emulation: clean end, full "
         "discovery, every experiment reports; two more runs at once, and no decided verdict "
         "of the three contradicts another's", timeout_s=300,
         checks=[boot_is("multiboot1", "bios"), exp_checks.every_experiment_reports,
                 has_record("acpi_summary", rsdp_source="bios_rom", xsdt_used=False),
                 exp_checks.no_impossible_figures] + CLEAN + DISCOVERY +
                [exp_checks.verdicts_agree]),
    # On pc the HPET cannot interrupt (it can only reach GSI 2, the PIT's): the hrtimers run
    # on the PIT and the tick on the LAPIC; every experiment still reports (plain emulation).
    Case("kernel-pc", "QEMU -kernel (Multiboot1) on pc: clean end, full discovery, every "
         "experiment reports, the verdict says the HPET was not measured", machine="pc", timeout_s=300,
         checks=[boot_is("multiboot1", "bios")] + CLEAN + DISCOVERY + [
             exp_checks.every_experiment_reports, exp_checks.no_impossible_figures,
             lambda ctx: None if any(r["topic"] == "hpet" and r["choice"] == "unknown"
                                     for r in ctx.recs("verdict"))
             else "the verdict does not say the HPET was not measured: %r"
             % [dict(r) for r in ctx.recs("verdict")]]),
    Case("clocks-icount-exact", "icount: every calibration within 50 ppm of the exact 1 GHz, "
         "no backward step, PM/PIT/LAPIC wraps crossed", icount=0,
         args="exp=none wrapcheck=on",
         checks=[calibration_exact(), clocksources_present(),
                 wraps_crossed(("acpi_pm", "pit", "lapic")), selected("hpet")] + CLEAN),
    Case("clocks-q35", "plain emulation: every source present, calibrations ran, sane",
         args="exp=none", checks=[clocksources_present(), selected("hpet")] + CLEAN),
    Case("clocks-pc", "plain emulation on pc: every source present", machine="pc",
         args="exp=none", checks=[clocksources_present(), selected("hpet")] + CLEAN),
    Case("clocks-hpet-off", "hpet=off: HPET rows say why; the rest works; PM timer chosen",
         machine="q35,hpet=off", args="exp=none",
         checks=[clocksources_present(("tsc", "acpi_pm", "pit", "lapic"), absent=("hpet",)),
                 has_record("calibration", target="tsc", ref="hpet", status="skip"),
                 selected("acpi_pm")] + CLEAN),
    Case("clocksource-requested", "clocksource=pit is honoured", args="exp=none clocksource=pit",
         checks=[selected("pit", "pit")] + CLEAN),
    Case("clocksource-unusable-request", "clocksource=hpet without an HPET: error, best used",
         machine="q35,hpet=off", args="exp=none clocksource=hpet",
         checks=[selected("acpi_pm", "hpet"), has_record("error", what="clocksource"),
                 end_status("ok")]),
    Case("clockevents-q35", "every clock event device measured: min delta, programming cost; "
         "the HPET on q35's first free PCI-range input, level and active low; its boot state "
         "recorded", args="exp=none", checks=[clockevents_qemu] + CLEAN),
    # Regression: on pc the HPET's comparators can only drive GSI 2, the PIT's. Routing it
    # there overwrote the PIT's IOAPIC entry and both fell silent. One owner per pin: the
    # PIT keeps GSI 2 and the HPET is reported absent with the reason.
    Case("clockevents-pc-shared-gsi2", "pc: the PIT keeps GSI 2 (no legacy replacement while "
         "it counts), the HPET says why it cannot interrupt; hrtimers run on the PIT", machine="pc", args="exp=none hrtcheck=20",
         checks=[has_record("clockevent", name="pit", usable=True),
                 has_record("clockevent", name="hpet", present=False),
                 lambda ctx: None if "from the PIT, whose counter counts" in next(
                     (r.get("reason") or "" for r in ctx.recs("clockevent")
                      if r.get("name") == "hpet"), "") else "hpet's reason does not say the "
                 "PIT keeps IRQ0 (no legacy replacement while the PIT counts)",
                 has_record("hrtimer_base", device="pit")] + CLEAN),
    Case("tick-pit-1000-icount", "HZ=1000 on the PIT: 1193 clocks, 999847 ns, 1000.153 Hz; "
         "exact tick count, wrap crossed", icount=0,
         args="exp=none hz=1000 clockevent=pit tickcheck_ms=2500",
         checks=[tick("pit", 999847, 1000.153), tick_exact()] + CLEAN),
    Case("tick-hz250-wheel-icount", "HZ=250 (LAPIC): a 1 s wheel timer fires 0 jiffies late",
         icount=0, args="exp=none hz=250 tickcheck_ms=2500",
         checks=[tick("lapic", 4000000), tick_exact()] + CLEAN),
    Case("tick-oneshot-rearm-icount", "tickmode=oneshot on the HPET: re-armed each tick at "
         "absolute deadlines, exact count, nothing lost", icount=0,
         args="exp=none hz=1000 clockevent=hpet tickmode=oneshot tickcheck_ms=2500",
         checks=[tick("hpet", 1000000), has_record("tick", mode="oneshot_rearm"),
                 tick_exact()] + CLEAN),
    Case("tick-hpet-icount", "the tick on an HPET comparator, periodic", icount=0,
         args="exp=none hz=1000 clockevent=hpet tickcheck_ms=2500",
         checks=[tick("hpet", 1000000), tick_exact()] + CLEAN),
    # Measured here (QEMU 7.2): under -icount sleep=off the emulated RTC (even with
    # -rtc clock=vm) delivers exactly half its periodic rate, at every rate tried; plain TCG
    # and the host model deliver the full rate. The kernel must notice: every missing
    # interrupt is a gap of two periods on time_ns(), counted as lost and caught up, so
    # jiffies still match the elapsed time.
    Case("tick-rtc-icount-lost-detected", "RTC tick under icount: QEMU drops every other "
         "interrupt; the tick counts them as lost and jiffies keep pace", icount=0,
         args="exp=none hz=1024 clockevent=rtc tickcheck_ms=2500 idle=halt",   # the drop is HLT's
         qemu_extra=("-rtc", "clock=vm"),
         checks=[tick("rtc", 976563), end_status("ok"), lambda ctx: (
             None if (lambda c: c["lost"] > 1000 and
                      abs(c["ticks"] + c["lost"] - c["expected_ticks"]) <= 2 and
                      abs((c["jiffies_end"] - c["jiffies_start"]) - c["expected_ticks"]) <= 2)(
                 ctx.one("tick_check"))
             else "lost ticks not accounted: %r" % dict(ctx.one("tick_check")))]),
    Case("clockevents-1000-icount", "every device: 1000 periodic events at ~1 ms and 1000 "
         "one-shots at pseudo-random deltas, exact under icount",
         icount=0, args="exp=none cecheck=1000 tickcheck_ms=2500", qemu_extra=("-rtc", "clock=vm"),
         checks=[clockevents_exact, tick_exact()] + CLEAN),
    # Regression (time_ns_lost_pm_wrap_during_checks): with the 24-bit PM timer as the
    # clocksource and no tick yet, six seconds of clock event checks outlasted its 4.69 s
    # wrap and an RTC interval came out as -4.685 s. Every interval must now be positive and
    # near the period, and the LAPIC/PIT checks exact as on the HPET.
    Case("time-ns-pm-timer-long-checks", "hpet=off: time_ns on the PM timer stays right "
         "through 6 s of checks before the tick", machine="q35,hpet=off", icount=0,
         args="exp=none cecheck=1000", qemu_extra=("-rtc", "clock=vm"),
         checks=[selected("acpi_pm"), end_status("ok"), lambda ctx: next((
             "%s %s: %r" % (r["device"], r["mode"], dict(r)) for r in ctx.recs("clockevent_check")
             if r["events"] != 1000 or r["min_ns"] < -300 or r["max_ns"] > 2000000), None)]),
    # 1000 hrtimers at fixed-seed random deadlines on the HPET (the tick runs on the LAPIC):
    # all fire, in deadline order, never early; late by the interrupt path and the callback
    # chain only (about 1-2 us at shift 0), bounded here at 5 us. Each start that becomes
    # the earliest deadline, and each expiry, reprograms the comparator. The comparator is
    # level-triggered on an IOAPIC input here, so its status bit proves each exact arming's
    # moment: nearly every interrupt runs its timers without a clock read first (`proven`;
    # 984 at this writing: the rest were armed closer than the minimum delta, by a delay),
    # and none of them early or out of order.
    Case("hrtimers-1000-icount", "1000 hrtimers: in order, never early, late < 5 us",
         icount=0, args="exp=none hrtcheck=1000",
         checks=[has_record("hrtimer_base", device="hpet"), end_status("ok"), no_errors,
                 has_record("clockevent", name="hpet", trigger="level"),
                 lambda ctx: (lambda h: None if h["fired"] == 1000 and h["out_of_order"] == 0
                              and h["early"] == 0 and 0 <= h["late_min_ns"]
                              and h["late_max_ns"] <= 5000 and h["proven"] >= 900
                              else "hrtimer_check %r" % dict(h))(
                     ctx.one("hrtimer_check")),
                 ]),
    # Tickless idle: one idle second with a wheel timer half way. nohz=on stops the tick
    # between events: it wakes for the timer's jiffy and once more when the idle ends (2 tick
    # interrupts, against ~1000), jiffies are caught up to the elapsed time, the timer runs
    # on its jiffy. nohz=off takes every tick.
    Case("nohz-idle-second-icount", "nohz=on: an idle second takes 2 tick interrupts, "
         "jiffies caught up, wheel timer on time", icount=0,
         args="exp=none idlecheck_ms=1000 nohz=on",
         checks=[end_status("ok"), no_errors, lambda ctx: (lambda c: None if (
             c["tick_interrupts"] <= 3 and abs(c["jiffies_advanced"] - c["expected_jiffies"]) <= 1
             and c["wheel_timer_fired"] and c["wheel_timer_late_jiffies"] == 0)
             else "idle_check %r" % dict(c))(ctx.one("idle_check"))]),
    Case("nohz-off-idle-second-icount", "nohz=off: the same idle second takes every tick",
         icount=0, args="exp=none idlecheck_ms=1000 nohz=off",
         checks=[end_status("ok"), no_errors, lambda ctx: (lambda c: None if (
             c["tick_interrupts"] >= 999 and c["nohz_stops"] == 0 and
             c["wheel_timer_late_jiffies"] == 0) else "idle_check %r" % dict(c))(
             ctx.one("idle_check"))]),
    # period-compare at HZ=250 on the PIT, exact virtual time, against figures computed by
    # hand: a tick is 4773 PIT clocks = 4773e9 / 1193182 = 4,000,227.962 ns, so the exact
    # wheel's 250-tick period is +56,990 ns and the Linux-rounded wheel's 256 ticks
    # +24,058,358 ns (the published +24 ms); the hrtimer within 1 us of 1 s.
    Case("exp-period-compare-icount", "hrtimer within 1 us per 1 s period; jiffies timer "
         "+56,990 ns (PIT rounding at HZ=250), Linux-rounded wheel +24,058,358 ns",
         icount=0, args="exp=period-compare clockevent=pit",
         checks=[end_status("ok"), no_errors,
                 lambda ctx: exp_checks.period_compare_rows(ctx, 4000227962, 56990, 24058358)]),
    # Every experiment in the quick profile under exact virtual time: each yields its
    # records and the figures are what exact time predicts (tests/qemu/exp_checks.py says
    # why for each).
    Case("exp-quick-all-icount", "quick profile, every experiment: records, predicted "
         "figures, verdict", icount=0, timeout_s=300,
         checks=[end_status("ok"), no_errors] + exp_checks.QUICK_ICOUNT),
    # An experiment whose interrupts stop: mask_irq=hpet masks the HPET's line at the IOAPIC
    # before the experiments, so the hrtimers (on the HPET) never fire. period-compare's
    # TSC bound ends its wait with an error record, and the next experiment still runs.
    Case("exp-stuck-interrupts-bounded", "the tick stops during an experiment: an error "
         "record, the next experiment runs, the run ends", icount=0, timeout_s=300,
         args="exp=period-compare,hwlat mask_irq=hpet",
         checks=[end_status("ok"),
                 lambda ctx: None if any(e.get("what") == "period-compare"
                                         for e in ctx.recs("error"))
                 else "no error record from period-compare: %r" % [dict(e) for e in ctx.recs("error")],
                 lambda ctx: None if exp_checks.results(ctx, "hwlat")
                 else "hwlat did not run after the stuck experiment"]),
    # examples/minimal: a separate kernel linking only libticklab.a starts a 1 ms periodic
    # hrtimer (forwarded from its expiry) on the LAPIC timer and prints 10 intervals by the
    # TSC. Under icount each expiry is the deadline plus the same path, so from the third on
    # the intervals are 1,000,000 ns to within the TSC calibration's rounding (1 ns); the
    # first two carry the one-time extra instructions of the first interrupt (< 2 us).
    # The intervals are measured by the TSC as the example calibrated it against the PIT
    # (exact to its stated uncertainty, a few ppm in 50 ms: which PIT tick an endpoint falls
    # in moves with the code's length), so each may be off 1 ms by that error, plus 2 ns.
    Case("example-minimal-icount", "the example kernel (only libticklab.a) prints 10 exact "
         "1 ms intervals", kernel="minimal.elf", icount=0, expect_stream=False, timeout_s=60,
         checks=[lambda ctx: minimal_intervals(ctx)]),
    # Absolute programming when time_ns() does not run on the device's counter: with
    # clocksource=tsc the HPET comparator is armed through a pair of readings (time_ns, HPET
    # count), so its hrtimer entry stays within the HPET's 10 ns granularity plus the stub
    # and the pairing's few instructions (under 50 ns). The LAPIC timer counts a delay; it is
    # armed in line from the TSC's count of the moment (clockevent.h count_reg), so only the
    # counter difference, its conversion and the write (14 instructions) lie between the
    # clock read and the device's start: under 50 ns as well (it was over 100 while the whole
    # ns conversion and a call into the driver lay there).
    Case("exp-hpet-abs-on-tsc-icount", "clocksource=tsc: the HPET is still armed by absolute "
         "count, the LAPIC in line from the TSC's count (entry p99 < 50 ns both)", icount=0,
         timeout_s=200,
         args="exp=wakeup-latency clocksource=tsc idle=halt",   # its checks read the hlt rows
         checks=[end_status("ok"), no_errors, has_record("clocksource_selected", name="tsc"),
                 lambda ctx: (lambda r: None if r[("hpet", "hrtimer_irq")]["p99_ns"] < 50 and
                              r[("lapic", "hrtimer_irq")]["p99_ns"] < 50
                              else "entry p99 hpet %r lapic %r" % (
                                  r[("hpet", "hrtimer_irq")]["p99_ns"],
                                  r[("lapic", "hrtimer_irq")]["p99_ns"]))(
                     {(x["device"], x["path"]): x for x in exp_checks.results(ctx, "wakeup-latency")
                      if x.get("wait") == "hlt"})]),
    Case("tick-stops-no-hang", "the RTC on the host clock under icount: ticks stop coming, "
         "the backup wake-up ends the wait; the run still ends", icount=0,
         args="exp=none hz=1024 clockevent=rtc tickcheck_ms=500 idle=halt", timeout_s=60,
         qemu_extra=("-rtc", "clock=host"),
         checks=[end_status("ok"), lambda ctx: None if ctx.one("tick_check").get("run_ns", 0)
                 >= 500000000 else "tick_check ended early: %r" % dict(ctx.one("tick_check"))]),
    Case("tick-hz-20000-lapic", "hz=20000 (outside 100..10000) is accepted when a device "
         "makes it: the LAPIC ticks every 50 us", icount=0,
         args="exp=none hz=20000 tickcheck_ms=300",
         checks=[tick("lapic", 50000), end_status("ok"), no_errors]),
    Case("tick-hz-storm-refused", "hz=1000000 (a 1 us tick: an interrupt storm) is refused "
         "with an error record and the tick runs at 1000; regression: it hung",
         args="exp=none hz=1000000 clockevent=pit", timeout_s=60,
         checks=[has_record("error", what="hz", requested=1000000),
                 tick("pit", 999847), end_status("ok")]),
    Case("tick-rtc-bad-hz", "clockevent=rtc cannot make HZ=1000: error, another device ticks",
         args="exp=none hz=1000 clockevent=rtc",
         checks=[has_record("error", what="clockevent", requested="rtc"),
                 tick("lapic", 1000000), end_status("ok")]),
    Case("discover-q35-ovmf", "UEFI: RSDP rev 2 from GRUB's tag, XSDT used, same facts",
         boot="iso", firmware="uefi", args="exp=none", timeout_s=180,
         checks=[has_record("acpi_summary", rsdp_source="multiboot2", revision=2,
                            xsdt_used=True)] + CLEAN + DISCOVERY),
    Case("discover-hpet-off", "-machine hpet=off: HPET absent with the reason, rest works",
         machine="q35,hpet=off", args="exp=none",
         checks=[has_record("hpet_table", present=False, reason="no table"), pm_timer_qemu,
                 routed_through_ioapic] + CLEAN),
    Case("discover-cpu-qemu64", "-cpu qemu64: no ARAT, timers still routed", args="exp=none",
         qemu_extra=("-cpu", "qemu64"),
         checks=[cpu_flags(arat=False, tsc=True, apic=True), routed_through_ioapic] + CLEAN),
    Case("discover-cpu-max", "-cpu max: ARAT advertised, TSC-deadline still not (TCG)",
         args="exp=none", qemu_extra=("-cpu", "max"),
         checks=[cpu_flags(arat=True, tsc_deadline=False), routed_through_ioapic] + CLEAN),
    Case("discover-smp2", "-smp 2: the MADT lists both CPUs; the second is started",
         smp=2, args="exp=none", checks=[madt_qemu(cpus=2), routed_through_ioapic] + CLEAN
         + [exp_checks.cpus_online(2)]),
    # Many CPUs. Each application processor starts (INIT-SIPI-SIPI), runs ten
    # hrtimers on its own LAPIC timer and they all fire on it; tsc-sync's ping-pong sees no
    # backward TSC step (under icount every CPU's TSC is the one instruction count; under
    # plain emulation QEMU derives every CPU's TSC from one host clock); percpu-latency
    # reports every CPU idle and the boot CPU with the others busy.
    # idle=poll needs one CPU (kernel/main.c): with two, one error record says so and every
    # wait halts, so the per-CPU timers still all fire on their own CPU.
    Case("smp2-idle-poll-refused", "-smp 2 with idle=poll: an error record, then HLT; the "
         "per-CPU timers all fire", smp=2, icount=0, timeout_s=300,
         args="exp=percpu-latency idle=poll",
         checks=[end_status("ok"), has_record("error", what="idle"),
                 exp_checks.cpus_online(2), exp_checks.percpu_timers_own_cpu(2)]),
    Case("smp2-icount", "-smp 2, icount: both CPUs up, per-CPU timers on their own CPU, "
         "no TSC warp, per-CPU latency rows", smp=2, icount=0, timeout_s=300,
         args="exp=tsc-sync,percpu-latency",
         checks=[end_status("ok"), no_errors, exp_checks.cpus_online(2),
                 exp_checks.percpu_timers_own_cpu(2), exp_checks.tsc_sync(2),
                 exp_checks.percpu_latency(2)]),
    Case("smp4-plain", "-smp 4, plain emulation: four CPUs up, per-CPU timers on their own "
         "CPU, no TSC warp across the six pairs", smp=4, timeout_s=300,
         args="exp=tsc-sync,percpu-latency",
         checks=[end_status("ok"), no_errors, exp_checks.cpus_online(4),
                 exp_checks.percpu_timers_own_cpu(4), exp_checks.tsc_sync(4),
                 exp_checks.percpu_latency(4, exact=False)]),
    Case("smp4-icount", "-smp 4, icount: four CPUs up, per-CPU timers, no TSC warp, per-CPU "
         "latency rows", smp=4, icount=0, timeout_s=400, args="exp=tsc-sync,percpu-latency",
         checks=[end_status("ok"), no_errors, exp_checks.cpus_online(4),
                 exp_checks.percpu_timers_own_cpu(4), exp_checks.tsc_sync(4),
                 exp_checks.percpu_latency(4)]),
    # Eight CPUs: every one has an hrtimer base on its own LAPIC timer and fires
    # its own timers there (no cap on bases below the CPU count); the HPET's three
    # comparators go to the boot CPU and CPUs 1 and 2, and the others say why they have none.
    Case("smp8-icount", "-smp 8, icount: eight CPUs up, each with a base on its own LAPIC "
         "timer firing its own timers, the boot TSC warp check passing", smp=8, icount=0,
         mem="512M", timeout_s=300, args="exp=none",
         checks=[end_status("ok"), no_errors, exp_checks.cpus_online(8),
                 exp_checks.percpu_timers_own_cpu(8), exp_checks.every_cpu_has_its_timers(8),
                 exp_checks.tsc_warp_check_clean(8)]),
    Case("smp2-plain", "-smp 2, plain emulation: both CPUs up, per-CPU timers, no TSC warp",
         smp=2, timeout_s=300, args="exp=tsc-sync,percpu-latency",
         checks=[end_status("ok"), no_errors, exp_checks.cpus_online(2),
                 exp_checks.percpu_timers_own_cpu(2), exp_checks.tsc_sync(2),
                 exp_checks.percpu_latency(2, exact=False)]),
    Case("smp2-ap-not-started", "-smp 2 cpus=1: the second CPU is reported not started, "
         "with the reason, and the run ends cleanly", smp=2, args="exp=tsc-sync cpus=1",
         checks=[end_status("ok"), no_errors, lambda ctx: None if [
             (r["cpu"], r["online"], r["reason"]) for r in ctx.recs("cpu_start")] == [
             (0, True, None), (1, False, "cpus= on the command line")]
             else "cpu_start %r" % [dict(r) for r in ctx.recs("cpu_start")],
             lambda ctx: None if any(r.get("status") == "skip" for r in
                                     exp_checks.results(ctx, "tsc-sync"))
             else "tsc-sync did not skip with one CPU"]),
    # The late AP race: CPU 1 answers after the boot CPU gave up on it (the test
    # aid gives up before its STARTUP IPI). Before, it took the start page's one set of
    # parameters, by then CPU 2's: two CPUs on one stack. Now it finds its own slot
    # abandoned and halts, named in a cpu_late record, and CPUs 2 and 3 run as themselves.
    Case("smp4-late-ap-halted", "-smp 4 smp_abandon=1: CPU 1 answers after the boot CPU gave "
         "up on it and halts (cpu_late); CPUs 2 and 3 start with their own parameters, their "
         "timers fire on them", smp=4, args="exp=none smp_abandon=1",
         checks=[end_status("ok"), no_errors,
                 lambda ctx: None if [(r["cpu"], r["online"]) for r in ctx.recs("cpu_start")] == [
                     (0, True), (1, False), (2, True), (3, True)]
                 else "cpu_start %r" % [dict(r) for r in ctx.recs("cpu_start")],
                 lambda ctx: None if [(r.get("cpu"), r.get("apic_id")) for r in
                                      ctx.recs("cpu_late")] == [(1, 1)]
                 else "cpu_late %r" % [dict(r) for r in ctx.recs("cpu_late")],
                 lambda ctx: None if sorted((r["cpu"], r["apic_id"], r["on_own_cpu"])
                                            for r in ctx.recs("percpu_timer_check")
                                            if r["device"] == "lapic") == [(2, 2, 10), (3, 3, 10)]
                 else "percpu_timer_check %r" % [dict(r) for r in ctx.recs("percpu_timer_check")]]),
    # The other half: CPU 2 takes its parameters, then (test aid) stalls before coming online
    # until the boot CPU, after its bounds and 100 ms of grace, gives up on it: it must halt in
    # ap_entry instead of coming online behind the boot CPU's back.
    Case("smp4-slow-ap-halted", "-smp 4 smp_slow_ap=2: CPU 2 stalls after taking its start "
         "parameters; the boot CPU gives up, CPU 2 halts in ap_entry (cpu_late), 1 and 3 run",
         smp=4, args="exp=none smp_slow_ap=2",
         checks=[end_status("ok"), no_errors,
                 lambda ctx: None if [(r["cpu"], r["online"], r["reason"])
                                      for r in ctx.recs("cpu_start")] == [
                     (0, True, None), (1, True, None),
                     (2, False, "it took its start parameters but did not come online within "
                                "100 ms more: told to halt"), (3, True, None)]
                 else "cpu_start %r" % [dict(r) for r in ctx.recs("cpu_start")],
                 lambda ctx: None if [(r.get("cpu"), r["reason"].split(":")[1].strip())
                                      for r in ctx.recs("cpu_late")] == [
                     (2, "halted in the kernel's entry for it, on its own stack, interrupts off; "
                         "not used")]
                 else "cpu_late %r" % [dict(r) for r in ctx.recs("cpu_late")],
                 lambda ctx: None if sorted(r["cpu"] for r in ctx.recs("percpu_timer_check")
                                            if r["device"] == "lapic" and
                                            r["on_own_cpu"] == 10) == [1, 3]
                 else "percpu_timer_check %r" % [dict(r) for r in ctx.recs("percpu_timer_check")]]),
    Case("iso-seabios-q35", "GRUB image (Multiboot2) under SeaBIOS", boot="iso",
         args="exp=none", checks=[boot_is("multiboot2", "bios")] + CLEAN),
    Case("iso-seabios-pc", "GRUB image (Multiboot2) under SeaBIOS on pc", boot="iso",
         machine="pc", args="exp=none", checks=[boot_is("multiboot2", "bios")] + CLEAN),
    Case("iso-ovmf-q35", "GRUB image (Multiboot2) under OVMF (UEFI)", boot="iso",
         firmware="uefi", args="exp=none", timeout_s=180,
         checks=[boot_is("multiboot2", "uefi"), has_record("console", screen="rgb")] + CLEAN),
    Case("cmdline-bad-words", "hz=abc nosuchkey=1 =x: one error each, defaults, clean end",
         args="exp=none hz=abc nosuchkey=1 =x",
         checks=[cmdline_errors(["hz=abc", "nosuchkey=1", "=x"]), end_status("ok"),
                 has_record("boot", hz=1000)]),
    Case("cmdline-adversarial", "empty value, huge number, non-ASCII, bad console, long word",
         args="hz= hz=99999999999999999999 profile=\xe9t\xe9 console=com9 exp=nosuch " +
              "x" * 300 + " hz=250",
         checks=[end_status("ok"), has_record("boot", hz=250),
                 lambda ctx: None if len([e for e in ctx.recs("error")
                                          if e.get("what") == "cmdline"]) == 6
                 else "expected 6 cmdline errors, got %r" % [dict(e) for e in ctx.recs("error")]]),
    Case("cmdline-iso-passed", "GRUB passes the command line through Multiboot2", boot="iso",
         args="hz=250 profile=full exp=none",
         checks=[has_record("boot", hz=250, profile="full", cmdline="hz=250 profile=full exp=none"),
                 end_status("ok")]),
    Case("fault-invalid-opcode", "crash=ud: a fault record (vector 6) and a failed run",
         args="crash=ud", exit_code=EXIT_FAILED,
         checks=[fault(6, name="invalid_opcode"), end_status("failed")]),
    Case("fault-page", "crash=pf: page fault reported with CR2", args="crash=pf",
         exit_code=EXIT_FAILED,
         checks=[fault(14, name="page_fault", cr2="0xffff900000000000"), end_status("failed")]),
    Case("fault-null", "crash=null: page 0 is unmapped, a NULL read faults", args="crash=null",
         exit_code=EXIT_FAILED, checks=[fault(14, cr2="0x0"), end_status("failed")]),
    Case("fault-divide", "crash=div0: divide error", args="crash=div0", exit_code=EXIT_FAILED,
         checks=[fault(0, name="divide_error"), end_status("failed")]),
    Case("fault-stack-overflow", "crash=overflow: the guard page turns overflow into a report",
         args="crash=overflow", exit_code=EXIT_FAILED,
         checks=[fault(8, name="double_fault", cause="stack_overflow", guard="boot"),
                 end_status("failed")]),
    Case("console-com2", "console=com2 sends the records to the second port",
         args="exp=none console=com2", serial_on_com2=True,
         checks=[has_record("console", serial_port="0x2f8", serial_present=True)] + CLEAN),
    # A PC without a serial port: the screen must show the output. console=none keeps the
    # serial port silent, qemu_exit=0 leaves the last screen up: the summary
    # (kernel/summary.c), four lines with exp=none, which light about 5300 pixels in
    # EGA text and 3400 in GRUB's UEFI framebuffer; the SeaBIOS banner alone, which stays if
    # our console draws nothing, about 1000.
    Case("screen-ega-text", "console=none: the VGA text console shows the run (screendump)",
         args="console=none qemu_exit=0 exp=none qr=off", expect_stream=False,
         screenshot_min_pixels=3000),
    Case("screen-uefi-framebuffer", "UEFI GOP framebuffer via GRUB: text drawn (screendump)",
         boot="iso", firmware="uefi", args="console=none qemu_exit=0 exp=none qr=off",
         expect_stream=False, screenshot_min_pixels=3000, screenshot_wait_s=12.0),
    Case("no-uart-no-hang", "no UART at 0x3F8: the probe says so and the run still ends",
         args="exp=none", no_serial=True, expect_stream=False, checks=[serial_silent]),
]


# The EFI application's cases live in cases_efi.py (they use the checks above).
from cases_efi import EFI_CASES  # noqa: E402
ALL += EFI_CASES

# The USB stick (cases_usb.py) and the KVM tier (cases_kvm.py; boottest.py skips it where
# KVM is not usable). boottest.py runs the longest first, whatever the order here.
from cases_usb import USB_CASES, KVM_USB_CASES  # noqa: E402
from cases_kvm import KVM_CASES  # noqa: E402
ALL += USB_CASES + KVM_CASES + KVM_USB_CASES

# The HPET's routes and its firmware state (cases_hpet.py).
from cases_hpet import HPET_CASES, boot_state_clean, hpet_route  # noqa: E402
ALL += HPET_CASES
# q35 without FSB delivery: comparator 0 on the first free input from 16, level and active
# low (the PCI range); SeaBIOS leaves the HPET quiet, and it is recorded so.
next(c for c in ALL if c.name == "clockevents-q35").checks += [
    hpet_route("ioapic", gsi=16, trigger="level", polarity="low", route_cap="0xff0104",
               fsb_capable=False),
    boot_state_clean]

# Repeatability under icount (cases_repeat.py): the quick profile here, the full profile in
# the long tier (boottest.py --long, `make test-long`).
from cases_repeat import REPEAT_CASES, LONG  # noqa: E402
ALL += REPEAT_CASES

# Output that never disturbs a measurement: a paced UART (cases_console.py); the whole quick
# profile's comparison is in the long tier.
from cases_console import CONSOLE_CASES, LONG_CONSOLE  # noqa: E402
ALL += CONSOLE_CASES
LONG += LONG_CONSOLE

# Serial ports where the firmware says they are: SPCR, PCI cards, several at once
# (cases_serial.py).
from cases_serial import SERIAL_CASES  # noqa: E402
ALL += SERIAL_CASES

# The platform tier: QEMU's odd machines and CPUs, long command lines (cases_platform.py).
from cases_platform import PLATFORM_CASES  # noqa: E402
ALL += PLATFORM_CASES

# The records as QR codes on the last screen, read back from screendumps (cases_qr.py).
from cases_qr import QR_CASES, QR_LONG  # noqa: E402
ALL += QR_CASES
LONG += QR_LONG

# Which PC this is: the SMBIOS tables from each place an entry point reaches the kernel
# (cases_smbios.py).
from cases_smbios import SMBIOS_CASES  # noqa: E402
ALL += SMBIOS_CASES

# Secure Boot left on: shim, MokManager, a signed ticklab.efi (cases_secureboot.py); SKIP
# where their packages are not installed (make test-secureboot installs them).
from cases_secureboot import SECUREBOOT_CASES  # noqa: E402
ALL += SECUREBOOT_CASES

# What a real PC sends that QEMU does not by itself: NMIs, stray and stuck interrupts,
# machine checks, watchdogs, firmware memory (tests/qemu/cases_pc.py).
from cases_pc import PC_CASES  # noqa: E402
ALL += PC_CASES


def pit_first_attempt(ctx):
    """Under -icount the PIT's IRQ0 check must succeed at its first, one-shot attempt: a
    second attempt would be an edge lost again (regression: the count was loaded before the
    IOAPIC line was unmasked, and the retries hid it)."""
    for c in ctx.recs("irq_check"):
        if c.get("attempts") != 1 or c.get("attempt_modes") != ["oneshot:ok"]:
            return "irq_check under icount needed %r attempts: %r" % (
                c.get("attempts"), c.get("attempt_modes"))


for _c in ALL:
    if _c.icount is not None and _c.expect_stream and _c.kernel == "ticklab.elf":
        _c.checks.append(pit_first_attempt)
