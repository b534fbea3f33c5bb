"""The platform tier: QEMU's odd machines, as a tester or a 2020s PC shows them.

Each case ends `ok` with the missing or odd hardware named and the rest measured, or, where
nothing can be measured at all (no clock to calibrate, no local APIC, no TSC, no long mode),
with one error record naming why, an `end` record and QEMU's exit: never a fault or a hang.
What QEMU cannot show (a PIT whose ports answer but whose clock is gated, a MADT listing a
CPU twice, firmware leaving the HPET armed) is in the host tests; docs/real-hardware.md has
the table of quirks, what ticklab does and where each is tested.

Timing is asserted nowhere here. The two quick profiles run in plain emulation (under
-icount a run with time_ns on the PIT, three port accesses a read, takes many minutes): on
a loaded host the vCPU thread is away for more than a quarter of the PIT's 54.9 ms wrap
again and again, which the calibration (wraps_inferred) and time_ns (its wrap guard) must
both survive, so the host's load is part of what they test.
"""
import os
import re

import exp_checks
from cases import (Case, EXIT_FAILED, calibration_exact, end_status, has_record,
                   inventory_core, no_errors, tick, tick_exact)


# ---- checks -------------------------------------------------------------------------------

def boot_record_fits(ctx):
    """The boot record came whole (it is the run's first record) and the command line it
    carries, with its cmdline_part records, is the line as the kernel read it."""
    b = ctx.runs[0].boot
    if b is None:
        return "no boot record"
    parts = ctx.recs("cmdline_part")
    if len(parts) != b.get("cmdline_parts", 0):
        return "boot says %r cmdline_part records, found %d" % (b.get("cmdline_parts"), len(parts))
    line, at = b.get("cmdline", ""), len(b.get("cmdline", "").encode("utf-8"))
    for p in parts:
        if p["offset"] != at:
            return "cmdline_part at %r, expected %d" % (p["offset"], at)
        line += p["text"]
        at += len(p["text"].encode("utf-8"))
    if at != b.get("cmdline_bytes"):
        return "command line pieces add to %d bytes, boot says %r" % (at, b.get("cmdline_bytes"))


def the_line_is(want):
    def check(ctx):
        b = ctx.runs[0].boot
        line = b.get("cmdline", "") + "".join(p["text"] for p in ctx.recs("cmdline_part"))
        if line != want:
            return "command line carried as %r... (%d chars), sent %r... (%d chars)" % (
                line[:40], len(line), want[:40], len(want))
    return check


def errors_only(*allowed):
    """Error records only of these (what, substring of detail/reason) kinds, each present."""
    def check(ctx):
        errs = ctx.recs("error")
        for e in errs:
            text = "%s %s" % (e.get("detail", ""), e.get("reason", ""))
            if not any(e.get("what") == w and s in text for w, s in allowed):
                return "unexpected error record %r" % dict(e)
        for w, s in allowed:
            if not any(e.get("what") == w and s in "%s %s" % (e.get("detail", ""),
                                                               e.get("reason", "")) for e in errs):
                return "no %s error saying %r in %r" % (w, s, [dict(e) for e in errs])
    return check


def pit_absent(why):
    """The PIT named absent, with the reason, as an interrupt check, a clock event device and
    (channel 2) a clocksource; interrupts proven by another device."""
    def check(ctx):
        c = [r for r in ctx.recs("irq_check") if r.get("device") == "pit"]
        if len(c) != 1 or c[0].get("delivered") or why not in (c[0].get("reason") or ""):
            return "PIT irq_check %r, expected not delivered: %r" % ([dict(r) for r in c], why)
        others = [r for r in ctx.recs("irq_check") if r.get("device") != "pit"
                  and r.get("delivered")]
        if not others:
            return "no other device proved interrupt delivery: %r" % [
                dict(r) for r in ctx.recs("irq_check")]
        ce = [r for r in ctx.recs("clockevent") if r.get("name") == "pit"]
        if len(ce) != 1 or ce[0].get("present") or why not in (ce[0].get("reason") or ""):
            return "PIT clockevent %r" % [dict(r) for r in ce]
        cs = [r for r in ctx.recs("clocksource") if r.get("name") == "pit"]
        if len(cs) != 1 or cs[0].get("usable"):
            return "PIT clocksource %r, expected unusable" % [dict(r) for r in cs]
        t = ctx.recs("tick")
        if t and t[0].get("device") == "pit":
            return "the tick names the absent PIT: %r" % dict(t[0])
    return check


def interrupts_mode(mode):
    def check(ctx):
        i = ctx.one("interrupts")
        if i.get("mode") != mode:
            return "interrupts %r, expected mode %r" % (dict(i), mode)
        pit = [r for r in ctx.recs("irq_check") if r.get("device") == "pit"]
        if not pit or not pit[0].get("delivered") or pit[0].get("path") != mode:
            return "PIT irq_check %r" % [dict(r) for r in pit]
    return check


def stopped_early(what, reason_part):
    """One error naming why, then the end: failed, with that reason; nothing measured."""
    def check(ctx):
        errs = [e for e in ctx.recs("error") if e.get("what") == what]
        if not errs or not any(reason_part in (e.get("detail") or "") for e in errs):
            return "no %s error saying %r: %r" % (what, reason_part,
                                                   [dict(e) for e in ctx.recs("error")])
        end = ctx.runs[0].end
        if end.get("status") != "failed" or reason_part not in (end.get("reason") or ""):
            return "end %r, expected failed: %r" % (dict(end), reason_part)
        if ctx.recs("fault"):
            return "a fault record: %r" % dict(ctx.recs("fault")[0])
        if ctx.recs("exp_start"):
            return "an experiment started"
    return check


def wrap_guard(ctx):
    """time_ns on the 16-bit PIT: the TSC counts its wraps (clocksource_selected says so)."""
    s = ctx.one("clocksource_selected")
    if s.get("name") != "pit" or s.get("wrap_guard") != "tsc":
        return "clocksource_selected %r, expected pit guarded by tsc" % dict(s)


def cpus_in_packages(started, per_package, listed=None):
    """`started` CPUs online (cpu_start), `per_package` of them in each package by its APIC
    ID (QEMU numbers package p's CPUs from p << package_shift), every one placed in the
    package its APIC ID says; the rest (listed - started) not started, with the reason."""
    def check(ctx):
        rs = ctx.recs("cpu_start")
        on = [r for r in rs if r["online"]]
        if len(on) != started:
            return "%d CPUs online, expected %d" % (len(on), started)
        shift = ctx.one("cpu")["topology"]["package_shift"]
        wrong = [dict(r) for r in on if r.get("package") != r["apic_id"] >> shift]
        if wrong:
            return "placed in the wrong package: %r" % wrong[:3]
        counts = {}
        for r in on:
            counts[r["package"]] = counts.get(r["package"], 0) + 1
        if sorted(counts.values()) != sorted(per_package):
            return "online per package %r, expected %r" % (counts, per_package)
        if sorted(r["cpu"] for r in rs) != list(range(len(rs))):
            return "cpu indices %r, expected each of 0..%d once" % ([r["cpu"] for r in rs],
                                                                  len(rs) - 1)
        if listed is not None:
            off = [r for r in rs if not r["online"]]
            if len(rs) != listed or any(r["reason"] != "cpus= on the command line" for r in off):
                return "cpu_start for %d CPUs, not started: %r" % (len(rs), [dict(r) for r in off][:3])
        plan = ctx.one("cpu_plan")
        if plan.get("cpus") != (listed or started) or plan.get("chosen") != started or \
                plan.get("packages") != len(per_package) or plan.get("dropped") != 0:
            return "cpu_plan %r" % dict(plan)
    return check


# A DMAR of our own (QEMU adds none without an IOMMU): width 39 bits, flags INTR_REMAP and
# X2APIC_OPT_OUT (tests/qemu/acpi/dmar-x2apic-opt-out.body: the bytes after the header).
DMAR_OPT_OUT = ("-acpitable", "sig=DMAR,rev=1,data=" + os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "acpi", "dmar-x2apic-opt-out.body"))


def lapic_mode(mode, reason):
    """The lapic record: the mode in use and why."""
    def check(ctx):
        r = ctx.one("lapic")
        if r.get("mode") != mode or r.get("mode_reason") != reason:
            return "lapic %r, expected mode %r because %r" % (dict(r), mode, reason)
    return check


# Over 4096 bytes through ticklab.efi's command-line file (QEMU's -kernel keeps only 4096
# bytes, image path included): "hz=250" starts at byte 4093, so the parser's 4096-byte limit
# cuts it to "hz=" (valid-looking pieces such as "hz=2" were the bug); it must be refused
# and named, the earlier "hz=100" holding.
LINE_ACROSS_4096 = "exp=none " * 454 + "hz=100 " + "hz=250"
assert LINE_ACROSS_4096.index("hz=250") == 4093
# 632 control characters and ~1.2 KB of words: escaped, about 4.5 KB of JSON.
LINE_2K = "exp=none " + "".join(chr(1 + i % 31) for i in range(632)) + " " + "k=v " * 300
LINE_5K = "exp=none w=" + "z" * 5200


def smm_handoff(acpi_action, usb_kinds, usb_want=None):
    """One acpi_mode record with this action and its SMI fields; one usb_handoff record per
    controller kind, each with an action (usb_want: kind -> the action expected) and either
    both SMI counts or the reason they are not known."""
    def smis(r):
        if "smis_reason" in r:
            return None if r["smis_reason"] else "%s: empty smis_reason" % r["type"]
        if "smis_before" in r and "smis_after" in r:
            return None
        return "%s record without SMI counts or their reason: %r" % (r["type"], dict(r))

    def check(ctx):
        a = ctx.recs("acpi_mode")
        if len(a) != 1 or a[0].get("action") != acpi_action:
            return "acpi_mode records %r, expected one with action %r" % (
                [dict(r) for r in a], acpi_action)
        bad = smis(a[0])
        if bad:
            return bad
        u = ctx.recs("usb_handoff")
        kinds = sorted(r.get("kind") for r in u)
        if kinds != sorted(usb_kinds):
            return "usb_handoff kinds %r, expected %r (%r)" % (kinds, sorted(usb_kinds),
                                                               [dict(r) for r in u])
        for r in u:
            bad = smis(r)
            if bad:
                return bad
            want = (usb_want or {}).get(r.get("kind"))
            if want and r.get("action") != want:
                return "usb_handoff %s action %r, expected %r: %r" % (
                    r.get("kind"), r.get("action"), want, dict(r))
    return check


USB_ALL = ("-device", "usb-ehci", "-device", "qemu-xhci", "-device", "pci-ohci",
           "-device", "piix3-usb-uhci")


PLATFORM_CASES = [
    Case("platform-q35-smm-usb", "q35,smm=on with EHCI, xHCI, OHCI and UHCI: ACPI mode and "
         "each controller's handoff recorded with the SMI count around it",
         machine="q35,smm=on", args="exp=none", qemu_extra=USB_ALL,
         checks=[end_status("ok"), no_errors,
                 # SeaBIOS leaves legacy mode (SCI_EN clear) and owns no controller; QEMU's
                 # EHCI has USBLEGSUP at 0x68, its xHCI no legacy-support capability
                 smm_handoff("enabled", ["ehci", "xhci", "ohci", "uhci"],
                             {"ehci": "not_owned", "xhci": "none", "ohci": "not_owned",
                              "uhci": "not_owned"}),
                 has_record("acpi_mode", sci_en_before=False, sci_en_after=True),
                 has_record("usb_handoff", kind="ehci", legacy_cap="found",
                            cap_offset="0x68")]),
    Case("platform-q35-smm-usb-keep", "acpi_mode=keep usb_handoff=keep: legacy mode and "
         "every controller left as firmware left them, and recorded so",
         machine="q35,smm=on", args="exp=none acpi_mode=keep usb_handoff=keep",
         qemu_extra=USB_ALL,
         checks=[end_status("ok"), no_errors,
                 smm_handoff("kept", ["ehci", "xhci", "ohci", "uhci"],
                             {"ehci": "skipped", "xhci": "skipped", "ohci": "skipped",
                              "uhci": "skipped"}),
                 has_record("acpi_mode", sci_en_before=False, sci_en_after=False)]),
    Case("platform-q35-pit-off", "q35,pit=off: the PIT named absent everywhere, interrupts "
         "proven by the RTC, everything else measured, ok", machine="q35,pit=off",
         args="exp=none",
         checks=[pit_absent("ports read all ones"), end_status("ok"), no_errors,
                 inventory_core,
                 has_record("clockevent", name="hpet", usable=True),
                 has_record("clocksource", name="hpet", access_bits=64),   # QEMU: 64-bit reads
                 has_record("clocksource", name="acpi_pm", usable=True)]),
    # On a PC that is not QEMU the HPET is read 32 bits at a time, the low half once per
    # value as Linux reads it: forced here, the counter (a 32-bit clocksource, its wraps
    # carried by the time core), the calibrations against it and a tick on it stay exact.
    Case("platform-hpet-access32-icount", "hpet_access=32: the HPET's low half read once "
         "per value as on a PC; calibrations exact, the tick on it exact", icount=0,
         args="exp=none hpet_access=32 clockevent=hpet hz=1000 tickcheck_ms=2500",
         checks=[has_record("clocksource", name="hpet", access_bits=32, bits=32),
                 calibration_exact(), tick("hpet", 1000000), tick_exact(), end_status("ok"),
                 no_errors]),
    Case("platform-pc-pit-off", "pc,pit=off: the PIT absent, the rest measured, ok",
         machine="pc,pit=off", args="exp=none",
         checks=[pit_absent("ports read all ones"), end_status("ok"), inventory_core]),
    Case("platform-q35-hpet-off-pit-off", "q35 without HPET or PIT: the RTC proves delivery, "
         "time_ns on the PM timer, the LAPIC ticks, ok", machine="q35,hpet=off,pit=off",
         args="exp=none",
         checks=[pit_absent("ports read all ones"), end_status("ok"), no_errors,
                 has_record("clocksource_selected", name="acpi_pm")]),
    # No ACPI: the 8259 path (LINT0 as ExtINT), time_ns on the PIT with the TSC counting
    # its wraps, and the quick profile whole, every figure possible (plain emulation: see the top).
    Case("platform-pc-no-acpi-quick", "pc -no-acpi: the 8259 delivers, the quick "
         "profile runs whole, time_ns on the PIT guarded by the TSC", machine="pc",
         timeout_s=300, qemu_extra=("-no-acpi",),
         checks=[interrupts_mode("pic"), wrap_guard, end_status("ok"), no_errors,
                 exp_checks.every_experiment_reports, exp_checks.no_impossible_figures,
                 has_record("clocksource", name="hpet", present=False, reason="no table"),
                 has_record("clocksource", name="acpi_pm", present=False, reason="no FADT")]),
    Case("platform-pc-acpi-off", "pc,acpi=off: the 8259 path, ok", machine="pc,acpi=off",
         icount=0, args="exp=none", checks=[interrupts_mode("pic"), end_status("ok"),
                                             no_errors]),
    # microvm's MADT has no IRQ0 override while its PIT is wired to pin 2: the check finds
    # it there, says the table is wrong, and routes IRQ0 to GSI 2 from then on.
    Case("platform-microvm-quick", "microvm (ACPI on): IRQ0 found on GSI 2 despite "
         "the MADT, the quick profile runs whole", machine="microvm", timeout_s=300,
         checks=[end_status("ok"), exp_checks.every_experiment_reports,
                 exp_checks.no_impossible_figures,
                 errors_only(("madt", "no override for IRQ0")),
                 has_record("irq_check", device="pit", delivered=True, gsi=2)]),
    Case("platform-microvm-acpi-off", "microvm,acpi=off: the 8259 path, no HPET or PM timer "
         "named, ok", machine="microvm,acpi=off", icount=0, args="exp=none",
         checks=[interrupts_mode("pic"), end_status("ok"), no_errors]),
    Case("platform-microvm-pit-off", "microvm,pit=off: no clock to calibrate the TSC by and "
         "none to run time_ns on: one error naming why, the end, exit 35",
         machine="microvm,pit=off", args="exp=none", exit_code=EXIT_FAILED,
         checks=[stopped_early("clocksource", "no clock could be read or calibrated")]),
    Case("platform-microvm-nothing", "microvm,acpi=on,pit=off,pic=off,rtc=off: the same, "
         "and the tick is not said to run on the absent PIT",
         machine="microvm,acpi=on,pit=off,pic=off,rtc=off", args="exp=none",
         exit_code=EXIT_FAILED,
         checks=[stopped_early("clocksource", "no clock could be read or calibrated"),
                 lambda ctx: "a tick record: %r" % dict(ctx.recs("tick")[0])
                 if ctx.recs("tick") else None]),
    Case("platform-cpu-no-apic", "-cpu qemu64,-apic: one error naming the missing local "
         "APIC, the end, exit 35, no fault", args="exp=none", exit_code=EXIT_FAILED,
         qemu_extra=("-cpu", "qemu64,-apic"),
         checks=[stopped_early("lapic", "no usable local APIC")]),
    Case("platform-cpu-no-tsc", "-cpu qemu64,-tsc: one error naming the missing TSC, the "
         "end, exit 35", args="exp=none", exit_code=EXIT_FAILED,
         qemu_extra=("-cpu", "qemu64,-tsc"),
         checks=[stopped_early("tsc", "no TSC")]),
    # Before long mode: boot/entry.asm sends the text, then boot, error and end records it
    # framed and checksummed itself, and leaves QEMU through isa-debug-exit.
    Case("platform-cpu-pentium", "-cpu pentium (no long mode): boot, error and end records "
         "from the 32-bit entry, exit 35", machine="pc", args="exp=none",
         exit_code=EXIT_FAILED, timeout_s=30, qemu_extra=("-cpu", "pentium"),
         checks=[has_record("boot", boot="multiboot1", long_mode=False),
                 has_record("error", what="cpu"), end_status("failed")]),
    Case("platform-cpu-qemu32-grub", "-cpu qemu32 through GRUB (Multiboot2): the same from "
         "the 32-bit entry", machine="pc", boot="iso", args="exp=none",
         exit_code=EXIT_FAILED, timeout_s=60, qemu_extra=("-cpu", "qemu32"),
         checks=[has_record("boot", boot="multiboot2", long_mode=False),
                 has_record("error", what="cpu"), end_status("failed")]),
    # Two sockets: every CPU started and placed in its package by its APIC ID;
    # 32 CPUs boot in about 5 s under TCG. With cpus=8 of 64 (two threads a core), the eight
    # are spread: four per package, first threads only.
    Case("platform-smp32-two-sockets", "-smp 32,sockets=2: all 32 CPUs started, 16 in each "
         "package as their APIC IDs say, the boot TSC check on every one", mem="512M",
         smp="32,sockets=2,cores=16", args="exp=none", timeout_s=180,
         checks=[end_status("ok"), no_errors, exp_checks.cpus_online(32),
                 cpus_in_packages(32, [16, 16]), exp_checks.tsc_warp_check_clean(32)]),
    Case("platform-smp64-cpus8-spread", "-smp 64 (2 sockets, 2 threads a core) with cpus=8: "
         "four CPUs started in each package, no two on one core", mem="512M",
         smp="64,sockets=2,cores=16,threads=2", args="exp=none cpus=8", timeout_s=180,
         qemu_extra=("-cpu", "max"),
         checks=[end_status("ok"), no_errors, cpus_in_packages(8, [4, 4], listed=64),
                 lambda ctx: None if all(r["thread"] == 0 for r in ctx.recs("cpu_start")
                                         if r["online"])
                 else "a second thread started before every core's first"]),
    # TCG offers no x2APIC, so the mode cannot change here (the KVM tier's kvm-dmar-opt-out
    # shows it): the table is read, its flag recorded, the reason the CPUID one.
    Case("platform-dmar-x2apic-opt-out", "a DMAR with X2APIC_OPT_OUT (-acpitable): read and "
         "recorded; xAPIC mode, named as CPUID's doing under TCG", args="exp=none",
         qemu_extra=DMAR_OPT_OUT,
         checks=[has_record("dmar", present=True, x2apic_opt_out=True, intr_remap=True,
                            host_address_width=39),
                 lapic_mode("xapic", "CPUID offers no x2APIC"), end_status("ok"), no_errors]),
    Case("platform-cmdline-2k", "1.8 KB of command line, 632 control characters: the boot "
         "record fits, the line comes whole in pieces, one error per bad word", args=LINE_2K,
         checks=[boot_record_fits, the_line_is(LINE_2K), end_status("ok"),
                 has_record("boot", hz=1000, cmdline_truncated=False)]),
    Case("platform-cmdline-5k", "5 KB on -kernel: the boot block's buffer cuts it, the cut "
         "word is refused, the boot record fits", args=LINE_5K,
         checks=[boot_record_fits, end_status("ok"),
                 has_record("boot", cmdline_truncated=True),
                 lambda ctx: None if any(e.get("reason") in ("line too long", "word too long")
                                         for e in ctx.recs("error"))
                 else "no error for the cut line: %r" % [dict(e) for e in ctx.recs("error")]]),
    Case("platform-cmdline-hz-across-4096", "hz=250 across byte 4096 (ticklab.efi's line "
         "file): refused and named, the earlier hz=100 holds", firmware="uefi", boot="efi",
         args=LINE_ACROSS_4096, timeout_s=180,
         checks=[boot_record_fits, the_line_is(LINE_ACROSS_4096), end_status("ok"),
                 has_record("boot", hz=100),
                 has_record("error", what="cmdline", word="hz=250", reason="line too long")]),
]
