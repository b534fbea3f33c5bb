"""Boot-test cases for the USB stick: the images `make usb` writes, attached as a
USB mass-storage device on an xHCI controller (boottest.usb_stick_args), which is how they
reach a real PC. Kept apart from cases.py, which adds them to its list.

The machine has nothing else to boot from (no -kernel, no CD, no disk, no NIC), so a run
that starts came from the stick. Three images (boottest.build_stick):
  make-usb  build/ticklab-usb.img as `make usb` writes it (build/ticklab.iso copied): its
            GRUB menu's default entry, the quick profile, after the menu's 5 s
  hybrid    the same hybrid GRUB layout (scripts/mkiso.sh) with one entry, exp=none: the
            short runs, under SeaBIOS and OVMF, in the TCG and the KVM tier
  efi-img   build/ticklab-efi.img's layout (scripts/mkefi.sh OUT.img: an MBR, one EFI
            system partition, BOOTX64.EFI), its command line in \\ticklab-cmdline.txt
"""
from cases import CLEAN, Case, boot_is, end_status, inventory_core, no_errors
from cases_efi import efi_boot
from cases_kvm import KVM_TRUE
import exp_checks


def loaded_by_grub(cmdline):
    """The boot record says GRUB loaded the kernel (Multiboot2) with this command line."""
    def check(ctx):
        b = ctx.runs[0].boot
        if not str(b.get("loader", "")).startswith("GRUB ") or b.get("cmdline") != cmdline:
            return "boot record loader %r cmdline %r, expected GRUB with %r" % (
                b.get("loader"), b.get("cmdline"), cmdline)
    return check


def stick(name, doc, firmware, image="hybrid", args="exp=none", accel="tcg", checks=(),
          timeout_s=180):
    return Case(name, doc, boot="usb", stick=image, firmware=firmware, args=args,
                accel=accel, timeout_s=timeout_s, checks=list(checks))


def grub_stick(firmware):
    return [boot_is("multiboot2", firmware), loaded_by_grub("exp=none")]


USB_CASES = [
    # The stick exactly as shipped: no command line of ours, the menu's default entry.
    stick("usb-stick-as-shipped-seabios", "build/ticklab-usb.img as a USB stick, SeaBIOS: "
          "GRUB's default entry (quick profile) to a whole stream, every experiment reports, "
          "nothing impossible", "bios", image="make-usb", args="", timeout_s=420,
          checks=[boot_is("multiboot2", "bios"), loaded_by_grub("profile=quick"),
                  end_status("ok"), inventory_core,
              exp_checks.every_experiment_reports, exp_checks.no_impossible_figures]),
    stick("usb-stick-seabios", "the hybrid GRUB image as a USB stick (xHCI), SeaBIOS: GRUB "
          "loads the kernel (Multiboot2), clean end", "bios",
          checks=grub_stick("bios") + CLEAN),
    stick("usb-stick-ovmf", "the hybrid GRUB image as a USB stick (xHCI), OVMF: GRUB loads "
          "the kernel (Multiboot2), clean end", "uefi",
          checks=grub_stick("uefi") + CLEAN),
    stick("usb-efi-stick-ovmf", "the EFI-only stick (MBR + EFI system partition) on xHCI, "
          "OVMF: BOOTX64.EFI starts, line from ticklab-cmdline.txt, clean end", "uefi",
          image="efi-img", checks=[efi_boot("none", True, "exp=none")] + CLEAN),
]

# Under the nested KVM here SeaBIOS reads the stick through the emulated xHCI one exit at a
# time: the boot takes 200-270 s (exp=none), so the timeout is twice that.
KVM_USB_CASES = [
    stick("kvm-usb-stick-seabios", "KVM, the hybrid GRUB image as a USB stick, SeaBIOS: GRUB "
          "loads the kernel, clean end, boot record names KVM", "bios", accel="kvm",
          timeout_s=600, checks=grub_stick("bios") + [no_errors] + KVM_TRUE),
    stick("kvm-usb-stick-ovmf", "KVM, the hybrid GRUB image as a USB stick, OVMF: GRUB loads "
          "the kernel, clean end, boot record names KVM", "uefi", accel="kvm", timeout_s=600,
          checks=grub_stick("uefi") + [no_errors] + KVM_TRUE),
]
