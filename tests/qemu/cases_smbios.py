"""Boot-test cases for the `smbios` record (drivers/smbios.c, kernel/discover/smbios_report.c),
kept apart from cases.py, which adds them to its list.

Each way an entry point reaches the kernel, with tables QEMU makes from `-smbios type=...`:
  the BIOS area (SeaBIOS puts it at 0xF0000..0xFFFFF): -kernel with a 2.x and a 3.0 entry
      point, and GRUB's Multiboot2 under SeaBIOS (Debian's GRUB 2.06 passes no tag 13);
  the EFI configuration table, from the system table GRUB passes as Multiboot2 tag 12: GRUB
      under OVMF;
  Multiboot2 tag 13: ticklab.efi copies the configuration table's entry points into it;
and a table QEMU was given damaged (`-smbios file=` a structure 2 bytes long), and a machine
with none (microvm). Serial numbers and the UUID QEMU was given must appear nowhere in the
capture.
"""
import os

from cases import CLEAN, Case, end_status, has_record

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "build", "test")

SERIAL, BOARD_SERIAL = "SER-9f3e-PRIVATE", "BRD-77aa-PRIVATE"
UUID = "4f1c9b2e-07d3-4a6e-9c55-b0a1d2e3f405"
TABLES = ("-smbios", "type=0,vendor=LabBIOS Inc,version=2.3.1,date=05/06/2025,release=2.3",
          "-smbios", "type=1,manufacturer=Acme Lab,product=Rig 7,version=v2,serial=%s,"
          "sku=RIG7-A,family=Rigs" % SERIAL,
          "-smbios", "type=2,manufacturer=BoardCo,product=MB-9,version=rev3,serial=%s,"
          "asset=ASSET-PRIVATE" % BOARD_SERIAL,
          "-smbios", "type=4,manufacturer=ProcMaker,version=ProcVersion 9",
          "-uuid", UUID)
GIVEN = {
    "system": {"manufacturer": "Acme Lab", "product": "Rig 7", "version": "v2",
               "sku": "RIG7-A", "family": "Rigs"},
    "baseboard": {"manufacturer": "BoardCo", "product": "MB-9", "version": "rev3"},
    "bios": {"vendor": "LabBIOS Inc", "version": "2.3.1", "date": "05/06/2025",
             "release": "2.3"},
}


def smbios_from(source, entry_point):
    """The record says where the entry point came from, which kind it was, and what QEMU
    was told; the walk reached End-of-Table."""
    def check(ctx):
        s = ctx.one("smbios")
        want = {"present": True, "source": source, "entry_point": entry_point,
                "end_of_table": True, "walk_reason": None, "reason": None}
        bad = {k: s.get(k) for k, v in want.items() if s.get(k) != v}
        if bad:
            return "smbios record differs: %r (record %r)" % (bad, dict(s))
        for part, fields in GIVEN.items():
            if s.get(part) != fields:
                return "smbios %s is %r, QEMU was given %r" % (part, s.get(part), fields)
        proc = s.get("processor") or {}
        if s.get("processors") != 1 or proc.get("manufacturer") != "ProcMaker" \
                or proc.get("version") != "ProcVersion 9":
            return "smbios processor %r (%r populated)" % (proc, s.get("processors"))
    return check


def nothing_private(ctx):
    """Neither serial, the asset tag nor the UUID (in any of its spellings) was sent."""
    text = ctx.data.decode("utf-8", "replace").lower()
    for secret in (SERIAL, BOARD_SERIAL, "ASSET-PRIVATE", UUID, UUID.replace("-", "")):
        if secret.lower() in text:
            return "the capture holds %r, which must never leave the machine" % secret
    if "withheld" not in ctx.one("smbios"):
        return "the smbios record does not say what it withheld"


def damaged_table(case):
    """A binary SMBIOS structure whose length byte says 2 (under its own 4-byte header):
    QEMU puts it first in the table, unchecked."""
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "smbios-damaged.bin")
    with open(path, "wb") as f:
        f.write(bytes((0xC8, 0x02, 0x00, 0x00, 0x00, 0x00)))
    return ["-smbios", "file=" + path]


def walk_stopped(ctx):
    s = ctx.one("smbios")
    if s.get("present") is not True or s.get("walk_reason") != "structure length under 4" \
            or s.get("structures") != 0 or s.get("system") is not None:
        return "the damaged table was not rejected at its first structure: %r" % dict(s)


SMBIOS_CASES = [
    Case("smbios-kernel-2x", "-kernel under SeaBIOS, the 2.x entry point found in the BIOS "
         "area: every field QEMU was given, and no serial number or UUID sent",
         args="exp=none", qemu_extra=TABLES,
         checks=[smbios_from("bios_scan", "2.1"), nothing_private] + CLEAN),
    Case("smbios-kernel-3x", "-kernel under SeaBIOS with QEMU's 3.0 (64-bit) entry point",
         machine="q35,smbios-entry-point-type=64", args="exp=none", qemu_extra=TABLES,
         checks=[smbios_from("bios_scan", "3.0"), has_record("smbios", version="3.0"),
                 nothing_private] + CLEAN),
    Case("smbios-grub-seabios", "GRUB (Multiboot2) under SeaBIOS: no tag 13 from GRUB 2.06, "
         "the BIOS area searched", boot="iso", args="exp=none", qemu_extra=TABLES,
         checks=[smbios_from("bios_scan", "2.1"), nothing_private] + CLEAN),
    Case("smbios-grub-ovmf", "GRUB under OVMF: the EFI configuration table, found through the "
         "system table of Multiboot2 tag 12", firmware="uefi", boot="iso", args="exp=none",
         qemu_extra=TABLES,
         checks=[smbios_from("efi_config_table", "2.1"), nothing_private] + CLEAN),
    Case("smbios-efi-tag", "ticklab.efi under OVMF: the configuration table's entry point "
         "copied into Multiboot2 tag 13", firmware="uefi", boot="efi", args="exp=none",
         qemu_extra=TABLES,
         checks=[smbios_from("efi", "2.1"), has_record("smbios", eps_phys=None),
                 nothing_private] + CLEAN),
    Case("smbios-damaged-structure", "a structure shorter than its header: the walk stops with "
         "the reason, nothing after it is decoded, and the run goes on to its end",
         args="exp=none", prepare=damaged_table, checks=[walk_stopped] + CLEAN),
    Case("smbios-absent-microvm", "microvm has no SMBIOS: the record says so and the run goes "
         "on", machine="microvm", args="exp=none",
         checks=[has_record("smbios", present=False, source="absent", reason="not found"),
                 end_status("ok")]),
]
