"""How `ticklab capture` starts QEMU: the settings, the accelerator, the command line.

This is the one place the QEMU command is built (it used to be scripts/qemu-run.sh, which
`make run` ran): `Settings` holds what `make run` exports (MACHINE, FIRMWARE, BOOT, ICOUNT,
ACCEL, CPU, ARGS, SMP, MEM, QEMU_EXTRA), `qemu_argv` turns them into the argument list,
`prepare_image` lays out the GRUB image or the EFI disk a boot needs, and `qemu_verdict`
reads QEMU's exit status the way the kernel's isa-debug-exit port sets it.

Facts behind the choices (docs/qemu-facts.md has the measurements):
- `-kernel` loads the Multiboot1 image directly (fastest); OVMF cannot, so UEFI boots the
  GRUB image, and BOOT=efi / efi-shell imply UEFI.
- Under icount every timer must follow virtual time: `-rtc clock=vm`, and no network card
  (`-nic none`), whose timers and option ROM would follow the host.
- Under KVM `-cpu host` aborts QEMU 7.2 on these machines ("failed to set MSR 0x10a"):
  the default model is `host,-arch-capabilities`. icount needs TCG.
- The kernel writes 0x10 (ok) or 0x11 (failed) to port 0xf4: QEMU exits 33 or 35. QEMU's
  own errors exit 1 and a triple fault with -no-reboot exits 0, so neither is success.
"""

import os
import platform
import shlex
import subprocess
from dataclasses import asdict, dataclass

MACHINES = ("q35", "pc")
FIRMWARES = ("bios", "uefi")
BOOTS = ("kernel", "iso", "efi", "efi-shell")
ACCELS = ("tcg", "kvm", "auto")
KVM_CPU = "host,-arch-capabilities"
OVMF = "/usr/share/ovmf/OVMF.fd"
KVM_DEVICE = "/dev/kvm"
EXIT_OK, EXIT_FAILED = 33, 35

# option name, environment variable, default, help; capture's options default to the
# variables as `make run` exports them
SETTINGS = (
    ("machine", "MACHINE", "q35", "q35 or pc"),
    ("firmware", "FIRMWARE", "bios", "bios or uefi (OVMF)"),
    ("boot", "BOOT", "kernel", "kernel (QEMU -kernel), iso (the GRUB image), efi "
     "(ticklab.efi as BOOTX64.EFI), efi-shell (started by the UEFI shell)"),
    ("icount", "ICOUNT", None, "N: -icount shift=N,sleep=off (exact, repeatable virtual "
     "time; TCG only); off: plain emulation (real time)"),
    ("accel", "ACCEL", "tcg", "tcg (software emulation), kvm, or auto (KVM when /dev/kvm "
     "works, else TCG)"),
    ("cpu", "CPU", None, "QEMU CPU model (default: QEMU's under TCG, %s under KVM)" % KVM_CPU),
    ("args", "ARGS", "", "the kernel command line"),
    ("smp", "SMP", "1", "CPUs"),
    ("mem", "MEM", "512M", "memory"),
    ("qemu_extra", "QEMU_EXTRA", "", "more QEMU arguments (split as a shell would)"),
)


class SettingsError(Exception):
    """A setting QEMU cannot be started with: a usage error (exit 3)."""


@dataclass
class Settings:
    machine: str = "q35"
    firmware: str = "bios"
    boot: str = "kernel"
    icount: object = None      # int shift, or None: real time
    accel: str = "tcg"         # as requested: tcg, kvm or auto
    cpu: object = None
    args: str = ""
    smp: str = "1"
    mem: str = "512M"
    qemu_extra: str = ""
    qemu: str = "qemu-system-x86_64"

    @classmethod
    def from_options(cls, options, environ):
        """Each setting from its option, else its environment variable, else the default.
        An empty value counts as unset (make exports ICOUNT= when none is given)."""
        values = {}
        for name, env, default, _ in SETTINGS:
            value = options.get(name)
            if value is None or value == "":
                value = environ.get(env)
            values[name] = value if value not in (None, "") else default
        values["qemu"] = environ.get("QEMU") or cls.qemu
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self):
        for name, allowed in (("machine", MACHINES), ("firmware", FIRMWARES),
                              ("boot", BOOTS), ("accel", ACCELS)):
            if getattr(self, name) not in allowed:
                raise SettingsError("%s must be one of %s, not %r"
                                    % (name, ", ".join(allowed), getattr(self, name)))
        if str(self.icount).lower() in ("off", "none", "no"):
            self.icount = None
        if self.icount is not None:
            try:
                self.icount = int(self.icount)
            except (TypeError, ValueError):
                raise SettingsError("icount must be a shift 0..10, not %r" % self.icount)
            if not 0 <= self.icount <= 10:
                raise SettingsError("icount must be a shift 0..10, not %d" % self.icount)
            if self.accel == "kvm":
                raise SettingsError("--icount needs TCG (software emulation): it cannot be "
                                    "used with --accel kvm")
        if not str(self.smp).isdigit() or int(self.smp) < 1:
            raise SettingsError("smp must be a whole number of CPUs, not %r" % self.smp)
        try:
            shlex.split(self.qemu_extra)
        except ValueError as e:
            raise SettingsError("qemu_extra cannot be split: %s" % e)

    def effective(self):
        """(firmware, boot) as QEMU will run them: efi boots imply UEFI, and UEFI cannot
        take -kernel's image, so it boots the GRUB image."""
        firmware, boot = self.firmware, self.boot
        if boot in ("efi", "efi-shell"):
            firmware = "uefi"
        if firmware == "uefi" and boot == "kernel":
            boot = "iso"
        return firmware, boot


def cpu_model(settings, accel):
    """The -cpu value, or None for QEMU's default (qemu64 under TCG)."""
    if settings.cpu:
        return settings.cpu
    return KVM_CPU if accel == "kvm" else None


def qemu_argv(settings, accel, serial_file=None):
    """The QEMU command for these settings under `accel` ("tcg" or "kvm"), to be run in the
    repository's top directory (the image paths are relative to it). serial_file: the guest's
    serial port goes to this file (`-serial file:`), else to QEMU's stdout. `ticklab capture`
    always gives one: QEMU 7.2 writes a stdio serial port without blocking, so a reader that
    falls 64 KiB behind (a pipe's buffer) loses the rest of the output, and the UART's
    retries make the guest wait as long as the host decides (measured: a reader that slept
    30 s got 65542 of 134215 bytes). A file never refuses a write."""
    firmware, boot = settings.effective()
    argv = [settings.qemu, "-machine", settings.machine, "-accel", accel,
            "-m", settings.mem, "-smp", str(settings.smp), "-display", "none", "-no-reboot",
            "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    cpu = cpu_model(settings, accel)
    if cpu:
        argv += ["-cpu", cpu]
    no_nic = False
    if settings.icount is not None:
        argv += ["-icount", "shift=%d,sleep=off" % settings.icount, "-rtc", "clock=vm"]
        no_nic = True
    if firmware == "uefi":
        argv += ["-bios", OVMF]
    if boot in ("efi", "efi-shell"):
        argv += ["-drive", "format=raw,file=fat:rw:build/run-efi"]
        no_nic = True  # with nothing to boot on the disk OVMF would try PXE before its shell
    elif boot == "iso":
        argv += ["-cdrom", "build/run.iso"]
    else:
        argv += ["-kernel", "build/ticklab.elf", "-append", settings.args]
    if no_nic:
        argv += ["-nic", "none"]
    argv += shlex.split(settings.qemu_extra)
    argv += ["-serial", "file:" + serial_file if serial_file else "stdio"]
    return argv


def prepare_image(settings, root):
    """Lay out what the boot needs besides the kernel ELF: the GRUB image (scripts/mkiso.sh)
    or the EFI disk directory (scripts/mkefi.sh). Returns an error text or None."""
    _, boot = settings.effective()
    if boot == "iso":
        cmd = ["scripts/mkiso.sh", "build/run.iso", "0", settings.args]
    elif boot == "efi-shell":
        cmd = ["scripts/mkefi.sh", "--shell", "build/run-efi", settings.args]
    elif boot == "efi":
        cmd = ["scripts/mkefi.sh", "build/run-efi"] + ([settings.args] if settings.args else [])
    else:
        return None
    p = subprocess.run(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        return "%s failed (exit %d): %s" % (cmd[0], p.returncode,
                                            p.stdout.decode("utf-8", "replace").strip())
    return None


def build_targets(settings):
    """The make targets a boot needs built first."""
    _, boot = settings.effective()
    return ["kernel", "efi"] if boot in ("efi", "efi-shell") else ["kernel"]


def kvm_usable(qemu="qemu-system-x86_64", device=KVM_DEVICE, timeout_s=20):
    """(usable, reason): the device opens read-write and QEMU starts a KVM accelerator (a
    machine with no CPU, quit at once from its monitor)."""
    try:
        fd = os.open(device, os.O_RDWR)
    except OSError as e:
        return False, "%s cannot be opened read-write: %s" % (device, e.strerror or e)
    os.close(fd)
    cmd = [qemu, "-accel", "kvm", "-machine", "none", "-display", "none", "-nodefaults",
           "-S", "-monitor", "stdio"]
    try:
        p = subprocess.run(cmd, input=b"quit\n", stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, "QEMU's KVM probe did not run: %s" % e
    if p.returncode != 0:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return False, "QEMU refused KVM (exit %d%s)" % (p.returncode,
                                                         ": " + err[-1] if err else "")
    return True, "%s opens read-write and QEMU starts KVM" % device


def choose_accel(requested, kvm):
    """The accelerator to run and why, from the request and kvm_usable()'s answer.
    Returns (accel, reason); raises SettingsError when KVM was asked for and is not there."""
    usable, why = kvm
    if requested == "tcg":
        return "tcg", "asked for (TCG, software emulation)"
    if requested == "kvm":
        if not usable:
            raise SettingsError("--accel kvm: KVM is not usable here: %s" % why)
        return "kvm", "asked for; " + why
    if usable:
        return "kvm", "auto: " + why
    return "tcg", "auto: no KVM (%s), so TCG" % why


def qemu_verdict(rc, stopped_by_us=None):
    """(ok, the verdict line) for QEMU's exit status. stopped_by_us: why the capture ended
    QEMU itself (a timeout, the last end record while QEMU went on), or None."""
    if rc == EXIT_OK:
        return True, "QEMU verdict: ticklab finished its run ok (exit 33)"
    if rc == EXIT_FAILED:
        return False, "QEMU verdict: ticklab reported a FAILED run (exit 35)"
    if stopped_by_us:
        return False, "QEMU verdict: stopped by the capture (%s) before QEMU exited" \
            % stopped_by_us
    return False, ("QEMU verdict: QEMU ended without ticklab's exit (exit %d: QEMU error or "
                   "triple fault)" % rc)


def qemu_version(qemu):
    try:
        p = subprocess.run([qemu, "--version"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = p.stdout.decode("utf-8", "replace").splitlines()[:1]
    text = first[0] if first else ""
    return text.replace("QEMU emulator version ", "").strip() or None


def host_cpu():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def host_kernel():
    u = platform.uname()
    return "%s %s %s" % (u.system, u.release, u.machine)


def settings_dict(settings):
    return asdict(settings)
