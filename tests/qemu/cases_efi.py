"""Boot-test cases for the EFI application (ticklab.efi under OVMF; boot/efi/README.md),
kept apart from cases.py, which adds them to its list."""
from cases import (Case, CLEAN, DISCOVERY, cmdline_errors, end_status, has_record,
                   pm_timer_qemu, tick)

# ---- the EFI application (ticklab.efi under OVMF; boot/efi/README.md) ---------------------

def efi_boot(load_options, cmdline_file, cmdline):
    """The boot record of the EFI path: what the firmware is, where the line came from."""
    def check(ctx):
        b = ctx.runs[0].boot
        want = {"boot": "efi", "firmware": "uefi", "load_options": load_options,
                "cmdline_file": cmdline_file, "cmdline": cmdline}
        bad = {k: b.get(k) for k, v in want.items() if b.get(k) != v}
        if bad:
            return "boot record differs: %r (record %r)" % (bad, dict(b))
        if not b.get("firmware_vendor") or not b.get("loader", "").startswith("ticklab.efi"):
            return "boot record lacks the firmware vendor or the loader: %r" % dict(b)
        rev = b.get("uefi_revision", "")
        if not all(p.isdigit() for p in rev.split(".")) or rev.count(".") != 1:
            return "uefi_revision %r is not major.minor" % rev
    return check


# What must come out the same whichever way the kernel was entered on one machine: the
# order of the inventory's records, the ACPI tables, the interrupt hardware, the CPU, the
# memory, the clocks. Measured figures (calibrations, costs, min deltas) vary from run to run
# and are left out, and so are the records that carry only measurements: these boots run in
# real time on a shared host, where a calibration against the PIT can fail on one of the two
# ("poll gaps long enough to lose a wrap") and its clock_rate record then be missing.
_SAME_WHOLE = ("madt", "hpet_table", "fadt", "lapic", "ioapic", "interrupts")
_SAME_KEYS = {
    # where the image was loaded is the loader's choice (ticklab.efi: wherever the firmware
    # has pages; GRUB: the link address when free): only what the kernel made of it
    "paging": ("nx", "wp", "guard_pages", "kernel_link", "kernel_bytes"),
    "acpi": ("sig", "phys", "length", "revision", "oem_id", "ok", "used", "reason"),
    "acpi_summary": ("revision", "oem_id", "rsdt", "xsdt", "xsdt_used", "root_note", "tables",
                     "tables_ok", "tables_rejected"),
    "cpu": ("vendor", "brand", "family", "model", "stepping", "hypervisor_signature", "tsc",
            "invariant_tsc", "tsc_deadline", "x2apic", "arat", "apic"),
    "memory": ("usable_bytes",),
    "irq_check": ("device", "path", "gsi", "vector", "delivered"),
    "clocksource": ("name", "present", "usable", "rating", "bits"),
    "clocksource_selected": ("name",),
    "clockevent": ("name", "present", "usable", "features", "rating"),
    "console": ("serial_port", "serial_present", "screen", "screen_active"),
}


_INVENTORY = frozenset(_SAME_WHOLE) | frozenset(_SAME_KEYS)


def inventory_differences(a, b):
    """Differences between two runs' inventories (lists of records), as strings."""
    a = [r for r in a if r.type in _INVENTORY]
    b = [r for r in b if r.type in _INVENTORY]
    diffs = []
    if [r.type for r in a] != [r.type for r in b]:
        diffs.append("record types differ: %r vs %r" % ([r.type for r in a], [r.type for r in b]))
        return diffs
    for x, y in zip(a, b):
        keys = _SAME_KEYS.get(x.type, None if x.type in _SAME_WHOLE else ())
        if keys is None:
            keys = sorted(set(dict(x)) | set(dict(y)))
        d = {k: (x.get(k), y.get(k)) for k in keys if x.get(k) != y.get(k)}
        if d:
            diffs.append("%s: %r" % (x.type, d))
    return diffs


def same_inventory_as_grub(ctx):
    """Boots the GRUB image (Multiboot2) under OVMF on the same machine, with the same
    devices (no NIC: QEMU's DSDT changes with one), and compares the inventories."""
    c = ctx.case
    ref = Case(c.name + "-grub-ref", "reference boot through GRUB", machine=c.machine,
               firmware="uefi", boot="iso", args="exp=none", qemu_extra=("-nic", "none"),
               timeout_s=c.timeout_s)
    runs = ctx.boot_other(ref)
    if len(runs) != 1 or not runs[0].whole:
        return "the GRUB reference boot did not give one whole run (log %s.log)" % ref.name
    if runs[0].boot.get("boot") != "multiboot2":
        return "the reference run was not the GRUB path: %r" % dict(runs[0].boot)
    diffs = inventory_differences(runs[0].records, ctx.runs[0].records)
    if diffs:
        return "inventory differs from the GRUB path (GRUB value, EFI value): " + "; ".join(diffs)


def loaded_elsewhere(ctx):
    """ticklab.efi puts the kernel wherever the firmware has pages (OVMF: high below 4 GiB),
    not at its link address: the kernel runs there, mapped to its link addresses."""
    p = ctx.one("paging")
    if not p.get("relocated") or p.get("kernel_link") != "0x100000" or \
            int(p.get("kernel_phys", "0x0"), 16) < 0x1000000:
        return "paging record %r: not loaded away from its link address" % dict(p)


def _efi_removable(machine):
    # OVMF on pc puts the PIIX4 power-management block at 0xB000 (SeaBIOS: 0x600), so the PM
    # timer is at 0xB008 there; the GRUB comparison pins the rest of the FADT.
    discovery = DISCOVERY if machine == "q35" else [
        c for c in DISCOVERY if c is not pm_timer_qemu] + [
        has_record("fadt", pm_timer_present=True, pm_timer_port="0xb008", pm_timer_32bit=False)]
    return Case("efi-ovmf-" + machine, "ticklab.efi as EFI/BOOT/BOOTX64.EFI under OVMF on %s "
                "(line from ticklab-cmdline.txt): whole stream, same inventory as GRUB's, the kernel "
                "loaded away from its link address" % machine,
                machine=machine, firmware="uefi", boot="efi", args="exp=none", timeout_s=180,
                checks=[efi_boot("none", True, "exp=none"),
                        # OVMF.fd has Secure Boot support but no platform key: setup mode
                        has_record("boot", secure_boot=False, setup_mode=True, shim="none"),
                        has_record("acpi_summary", rsdp_source="efi", revision=2, xsdt_used=True),
                        has_record("console", screen="rgb", screen_active=True),
                        same_inventory_as_grub, loaded_elsewhere] + CLEAN + discovery)


EFI_CASES = [
    _efi_removable("q35"),
    _efi_removable("pc"),
    Case("efi-shell-load-options", "the UEFI shell starts ticklab.efi with hz=250: the load "
         "options are the command line (the program word set apart)", firmware="uefi",
         boot="efi-shell", args="hz=250 exp=none", timeout_s=180,
         checks=[efi_boot("text", False, "hz=250 exp=none"),
                 has_record("boot", image="\\ticklab.efi", hz=250),
                 tick("lapic", 4000000)] + CLEAN),
    Case("efi-shell-bad-load-options", "bad words in the load options (pc): one error record "
         "each, defaults used, clean end", machine="pc", firmware="uefi", boot="efi-shell",
         args="hz=abc nosuchkey=1 exp=none", timeout_s=180,
         checks=[cmdline_errors(["hz=abc", "nosuchkey=1"]), has_record("boot", hz=1000),
                 end_status("ok")]),
]
