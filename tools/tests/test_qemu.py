"""The QEMU command capture builds (qemu.py), the accelerator choice, QEMU's verdict."""
import pytest

from ticklablib import qemu
from ticklablib.qemu import Settings, SettingsError, qemu_argv

BASE = ["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg", "-m", "512M", "-smp", "1",
        "-display", "none", "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]


def settings(**kw):
    s = Settings(**kw)
    s.validate()
    return s


def test_default_is_what_make_run_ran():
    """scripts/qemu-run.sh at 19bd55f with no variables set, plus an explicit -accel."""
    assert qemu_argv(settings(), "tcg") == BASE + [
        "-kernel", "build/ticklab.elf", "-append", "", "-serial", "stdio"]


def test_icount_follows_virtual_time_everywhere():
    argv = qemu_argv(settings(icount=0, args="exp=hwlat"), "tcg")
    assert argv == BASE + ["-icount", "shift=0,sleep=off", "-rtc", "clock=vm", "-kernel",
                           "build/ticklab.elf", "-append", "exp=hwlat", "-nic", "none",
                           "-serial", "stdio"]


def test_serial_to_a_file_when_capture_gives_one():
    """capture's QEMU writes the serial port to a file, never a pipe (qemu.qemu_argv)."""
    argv = qemu_argv(settings(icount=0), "tcg", serial_file="/tmp/x/serial.raw")
    assert argv[-2:] == ["-serial", "file:/tmp/x/serial.raw"] and "stdio" not in argv


@pytest.mark.parametrize("kw, tail", [
    ({"firmware": "uefi"}, ["-bios", qemu.OVMF, "-cdrom", "build/run.iso"]),
    ({"boot": "iso"}, ["-cdrom", "build/run.iso"]),
    ({"boot": "efi"}, ["-bios", qemu.OVMF, "-drive", "format=raw,file=fat:rw:build/run-efi",
                       "-nic", "none"]),
    ({"boot": "efi-shell", "firmware": "bios"},
     ["-bios", qemu.OVMF, "-drive", "format=raw,file=fat:rw:build/run-efi", "-nic", "none"]),
])
def test_boot_paths(kw, tail):
    assert qemu_argv(settings(**kw), "tcg") == BASE + tail + ["-serial", "stdio"]


def test_kvm_cpu_model_and_override():
    argv = qemu_argv(settings(accel="kvm"), "kvm")
    assert argv[:5] == ["qemu-system-x86_64", "-machine", "q35", "-accel", "kvm"]
    assert argv[argv.index("-cpu") + 1] == "host,-arch-capabilities"
    argv = qemu_argv(settings(accel="kvm", cpu="host,-arch-capabilities,+invtsc"), "kvm")
    assert argv[argv.index("-cpu") + 1] == "host,-arch-capabilities,+invtsc"
    assert "-cpu" not in qemu_argv(settings(), "tcg")
    assert qemu_argv(settings(cpu="max"), "tcg")[BASE.__len__():][:2] == ["-cpu", "max"]


def test_machine_smp_mem_extra():
    argv = qemu_argv(settings(machine="pc", smp="2", mem="1G",
                              qemu_extra="-no-hpet -name 'two words'"), "tcg")
    assert argv[2] == "pc" and argv[argv.index("-smp") + 1] == "2"
    assert argv[argv.index("-m") + 1] == "1G"
    assert argv[-4:] == ["-name", "two words", "-serial", "stdio"]


@pytest.mark.parametrize("kw, text", [
    ({"icount": 0, "accel": "kvm"}, "--icount needs TCG"),
    ({"icount": "x"}, "icount must be a shift"),
    ({"icount": 11}, "icount must be a shift"),
    ({"boot": "floppy"}, "boot must be one of"),
    ({"accel": "hvf"}, "accel must be one of"),
    ({"smp": "0"}, "smp must be"),
    ({"qemu_extra": "'unclosed"}, "qemu_extra cannot be split"),
])
def test_bad_settings(kw, text):
    with pytest.raises(SettingsError, match=text):
        settings(**kw)


def test_settings_from_environment_like_make():
    env = {"MACHINE": "pc", "ICOUNT": "", "ACCEL": "auto", "CPU": "", "SMP": "2", "ARGS": "hz=250"}
    s = Settings.from_options({"smp": "4"}, env)
    assert (s.machine, s.icount, s.accel, s.cpu, s.smp, s.args) == ("pc", None, "auto", None,
                                                                     "4", "hz=250")
    assert Settings.from_options({}, {}).accel == "tcg"  # the default, for now


def test_accel_choice():
    yes, no = (True, "/dev/kvm works"), (False, "/dev/kvm is absent")
    assert qemu.choose_accel("auto", yes) == ("kvm", "auto: /dev/kvm works")
    assert qemu.choose_accel("auto", no) == ("tcg", "auto: no KVM (/dev/kvm is absent), so TCG")
    assert qemu.choose_accel("tcg", yes)[0] == "tcg"
    with pytest.raises(SettingsError, match="KVM is not usable here: /dev/kvm is absent"):
        qemu.choose_accel("kvm", no)


def test_kvm_probe_says_why_not(tmp_path):
    usable, why = qemu.kvm_usable(device=str(tmp_path / "kvm"))
    assert not usable and "cannot be opened read-write" in why
    fake = tmp_path / "kvm-dev"
    fake.write_bytes(b"")
    usable, why = qemu.kvm_usable(qemu="/bin/false", device=str(fake))
    assert not usable and why.startswith("QEMU refused KVM (exit 1")


@pytest.mark.parametrize("rc, ours, ok, text", [
    (33, None, True, "ticklab finished its run ok (exit 33)"),
    (35, None, False, "ticklab reported a FAILED run (exit 35)"),
    (-15, "timeout after 5 s", False, "stopped by the capture (timeout after 5 s)"),
    (1, None, False, "QEMU ended without ticklab's exit (exit 1: QEMU error or triple fault)"),
    (0, None, False, "(exit 0: QEMU error or triple fault)"),
])
def test_verdict(rc, ours, ok, text):
    got_ok, line = qemu.qemu_verdict(rc, ours)
    assert got_ok is ok and line.startswith("QEMU verdict: ") and text in line
