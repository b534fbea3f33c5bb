"""The KVM tier: ticklab under hardware virtualization, kept apart from cases.py,
which adds these to its list. boottest.py runs them when /dev/kvm is usable and prints
`SKIP <name> <reason>` for each where it is not.

KVM is real time on real silicon, nested here: every VM exit (a device access, RDTSC on
this host) costs tens of microseconds, and a busy host makes it worse. So nothing here
asserts a figure's size. What is asserted is structure and truth: a whole stream that ends
ok and reaches the exit port (33), the hardware KVM gives (TSC-deadline, x2APIC) found and
used, timers that fire, and no impossible figure anywhere (exp_checks.no_impossible_figures).
The timeouts are generous bounds on a hang, not measurements.
"""
from cases import (Case, boot_is, cpu_flags, end_status, hpet_table_qemu, inventory_core,
                   madt_qemu, no_errors, pm_timer_qemu, routed_through_ioapic)
from cases_efi import efi_boot
import cases_platform
import exp_checks

# The paths wakeup-latency measures for every one-shot device in the quick profile.
WAKEUP_PATHS = ("irq", "event", "hrtimer_irq", "callback")


def boot_says_kvm(ctx):
    """The boot record names the hypervisor it found (CPUID's signature)."""
    b = ctx.runs[0].boot
    if b.get("hypervisor") != "kvm":
        return "boot record says hypervisor=%r, expected \"kvm\" (record %r)" % (
            b.get("hypervisor"), dict(b))


def lapic_x2apic(ctx):
    """The boot CPU's local APIC runs in x2APIC mode (KVM advertises it; ticklab uses it)."""
    r = ctx.one("lapic")
    if r.get("mode") != "x2apic":
        return "lapic record says mode %r, expected x2apic: %r" % (r.get("mode"), dict(r))


def aps_x2apic(ctx):
    """Every application processor says it came up in x2APIC mode (cpu_start lapic_mode)."""
    bad = [dict(r) for r in ctx.recs("cpu_start")
           if not r.get("bsp") and r.get("lapic_mode") != "x2apic"]
    if bad:
        return "application processors not reported in x2APIC mode (cpu_start lapic_mode): %r" \
            % bad


def clockevent_fires(name):
    """The device is present and usable and passed its fire check: it interrupted, its
    minimum delta was searched and its programming cost measured (ce_measure.c writes those
    three only for a device that fired)."""
    def check(ctx):
        r = next((x for x in ctx.recs("clockevent") if x.get("name") == name), None)
        if not r or not r.get("present") or not r.get("usable"):
            return "clockevent %s not present and usable: %r" % (name, r and dict(r))
        if (r.get("fire_check_attempts") or 0) < 1 or (r.get("min_delta_cyc") or 0) < 1 or \
                r.get("program_cost_median_tsc_cyc") is None:
            return "clockevent %s did not pass its fire check: %r" % (name, dict(r))
    return check


def wakeup_rows(device, paths=WAKEUP_PATHS, wait="hlt"):
    """wakeup-latency measured the device on every path: each row has samples, none lost to
    an early wake-up (a negative figure is caught by no_impossible_figures)."""
    def check(ctx):
        rows = {(r.get("path"), r.get("wait")): r for r in exp_checks.results(ctx, "wakeup-latency")
                if r.get("device") == device}
        for path in paths:
            r = rows.get((path, wait))
            if not r or r.get("status") == "skip" or not r.get("samples") or r.get("early"):
                return "wakeup-latency %s %s %s: %r" % (device, path, wait, r and dict(r))
    return check


def percpu_latency_rows(n):
    """percpu-latency reports every CPU idle on its own LAPIC timer, with samples."""
    def check(ctx):
        rows = [r for r in exp_checks.results(ctx, "percpu-latency")
                if r.get("load") == "idle" and r.get("device") == "lapic"]
        if sorted(r.get("cpu") for r in rows if r.get("samples")) != list(range(n)):
            return "percpu-latency idle lapic rows %r" % [dict(r) for r in rows]
    return check


KVM_DISCOVERY = [madt_qemu(), hpet_table_qemu, pm_timer_qemu, routed_through_ioapic,
                 cpu_flags(hypervisor=True, hypervisor_signature="KVMKVMKVM", tsc_deadline=True,
                           x2apic=True)]
# Every KVM run: a clean end (exit 33 is the case's default), the boot record names KVM,
# nothing impossible in it.
KVM_TRUE = [end_status("ok"), inventory_core, boot_says_kvm, exp_checks.no_impossible_figures]


def smp(n):
    return Case("kvm-smp%d-x2apic" % n, "KVM, -smp %d: every CPU started in x2APIC mode, each "
                "one's timers fire on it, the run reaches its end and QEMU exits (regression: "
                "with -smp 2 QEMU never exited after \"run finished ok\")" % n,
                accel="kvm", smp=n, args="exp=tsc-sync,percpu-latency", timeout_s=300,
                checks=KVM_TRUE + [no_errors, madt_qemu(cpus=n), lapic_x2apic,
                                   exp_checks.cpus_online(n), aps_x2apic,
                                   exp_checks.percpu_timers_own_cpu(n), percpu_latency_rows(n)])


# The case whose boot decides whether KVM is usable here (boottest.kvm_usable): the
# shortest KVM boot; its checks then run on the probe's log.
PROBE = "kvm-inventory"

# Longest first: the pool takes them in this order.
KVM_CASES = [
    # The quick profile in real time. Under KVM here it ends within 5 minutes, so
    # that is the bound (the timeout), not a figure.
    Case("kvm-quick", "KVM, the quick profile: whole stream, exit 33 within 5 min, every "
         "experiment reports, TSC-deadline measured on every wake-up path, nothing impossible",
         accel="kvm", args="", timeout_s=300,
         checks=KVM_TRUE + [exp_checks.every_experiment_reports, wakeup_rows("tsc_deadline")]),
    smp(4),
    smp(2),
    Case("kvm-efi", "KVM, ticklab.efi as BOOTX64.EFI under OVMF: the EFI path's boot record, "
         "a clean end", accel="kvm", firmware="uefi", boot="efi", args="exp=none",
         timeout_s=300, checks=[efi_boot("none", True, "exp=none"), no_errors] + KVM_TRUE),
    Case("kvm-grub-ovmf", "KVM, the GRUB image (Multiboot2) under OVMF: a clean end",
         accel="kvm", firmware="uefi", boot="iso", args="exp=none", timeout_s=300,
         checks=[boot_is("multiboot2", "uefi"), no_errors] + KVM_TRUE),
    # KVM offers x2APIC, the DMAR opts out, the firmware hands over in xAPIC mode:
    # every CPU stays in xAPIC mode and the lapic record says why.
    Case("kvm-dmar-x2apic-opt-out", "KVM with a DMAR whose X2APIC_OPT_OUT is set: the boot "
         "CPU and the others in xAPIC mode, the DMAR named as the reason", accel="kvm", smp=2,
         args="exp=none", timeout_s=180, qemu_extra=cases_platform.DMAR_OPT_OUT,
         checks=[end_status("ok"), no_errors, boot_says_kvm,
                 cases_platform.lapic_mode("xapic", "the DMAR table's X2APIC_OPT_OUT flag: "
                                                    "the firmware asks for xAPIC mode"),
                 lambda ctx: None if all(r.get("lapic_mode") == "xapic"
                                         for r in ctx.recs("cpu_start") if r.get("online"))
                 else "a CPU in x2APIC mode: %r" % [dict(r) for r in ctx.recs("cpu_start")]]),
    Case("kvm-inventory", "KVM, exp=none: KVM's CPUID (TSC-deadline, x2APIC), the LAPIC in "
         "x2APIC mode, TSC-deadline fires, the boot record names KVM", accel="kvm",
         args="exp=none", timeout_s=180,
         checks=KVM_TRUE + KVM_DISCOVERY + [no_errors, lapic_x2apic,
                                            clockevent_fires("tsc_deadline"),
                                            clockevent_fires("lapic")]),
]
