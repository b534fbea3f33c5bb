"""Boot-test cases for serial ports where the firmware says they are.

- An SPCR table (scripts/mkspcr.py, loaded with QEMU's `-acpitable file=`) naming COM2, and
  no UART at COM1 at all (`-serial none`, COM2 an isa-serial at index 1): the records must
  arrive on COM2 and the inventory must say the port came from the SPCR.
- The same SPCR with COM1 there too: output goes to both, byte for byte the same.
- A PCI 16550 (QEMU's pci-serial: class 07/00, an I/O BAR) and no COM port: the records
  arrive on the card, and the inventory names it by bus:device.function; the same card
  behind a root port on a second root bus (pxb-pcie), and on the pc machine (no MCFG).
- An SPCR naming a port where nothing answers (a BMC that is off): the run goes on on COM1.
- An SPCR naming a memory-mapped UART above 4 GiB where nothing is: mapped, probed, silent.
- An SPCR with an interface type ticklab cannot drive (an ARM PL011): one `error` record
  naming the type, and COM1 probed instead.
- uart_clock= on the PCI card (the divisor made for it: QEMU ignores the rate), a baud rate
  no clock makes refused.
- console=spcr,57600 and uart_clock=: the SPCR port at the asked baud; a bad uart_clock=
  value is refused with one error record and the default kept.

QEMU recomputes an -acpitable's checksum, so a table with a bad checksum is tested on the
host (tests/host/test_spcr.c), as are MMIO UARTs, 64-bit BARs and ghosts (test_pci.c).
"""
import os
import subprocess

from cases import CLEAN, Case, cmdline_errors, end_status, has_record

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "build", "test")

COM2_ONLY = ("-serial", "none", "-chardev", "file,id=com2,path={log}",
             "-device", "isa-serial,chardev=com2,index=1")
PCI_ONLY = ("-serial", "none", "-chardev", "file,id=pcis,path={log}",
            "-device", "pci-serial,chardev=pcis")


def spcr(name, *opts):
    """prepare: writes build/test/NAME.spcr.bin (scripts/mkspcr.py OPTS) and loads it."""
    def prepare(case):
        os.makedirs(OUT, exist_ok=True)
        path = os.path.join(OUT, name + ".spcr.bin")
        subprocess.run([os.path.join(ROOT, "scripts", "mkspcr.py"), path] + list(opts),
                       check=True, capture_output=True)
        return ["-acpitable", "file=" + path]
    return prepare


def port(**want):
    return has_record("serial_port", **want)


def com1_too_same_bytes(ctx):
    """COM1's capture (the file beside the log) holds the same bytes as COM2's."""
    other = ctx.log + ".com1"
    with open(other, "rb") as f:
        com1 = f.read()
    if com1 != ctx.data:
        return "COM1 got %d bytes, COM2 %d: not the same stream" % (len(com1), len(ctx.data))


SERIAL_CASES = [
    Case("serial-spcr-com2", "an SPCR names COM2 and no UART is at COM1: the records arrive "
         "on COM2 and the inventory says the port came from the SPCR",
         args="exp=none", serial=COM2_ONLY, prepare=spcr("serial-spcr-com2"),
         checks=[has_record("serial_ports", spcr="usable", found=1, consoles=1),
                 port(source="spcr", access="io", address="0x2f8", answered=True,
                      console=True, baud=115200),
                 has_record("console", serial_port="0x2f8", serial_present=True)] + CLEAN),
    Case("serial-spcr-and-com1", "SPCR on COM2 and a UART at COM1: output goes to both, the "
         "SPCR's first, the same bytes on each",
         args="exp=none", prepare=spcr("serial-spcr-and-com1"),
         serial=("-serial", "file:{log}.com1", "-serial", "file:{log}"),
         checks=[has_record("serial_ports", found=2, consoles=2),
                 port(index=0, source="spcr", address="0x2f8", console=True),
                 port(index=1, source="probe", name="com1", address="0x3f8", console=True),
                 com1_too_same_bytes] + CLEAN),
    Case("serial-pci-card", "a PCI 16550 card (pci-serial, I/O BAR) and no COM port: the "
         "records arrive on the card and the inventory names its bus:device.function",
         args="exp=none uart_clock=14745600", serial=PCI_ONLY,
         checks=[has_record("serial_ports", pci_method="ecam", found=1, consoles=1),
                 port(source="pci", access="io", answered=True, console=True,
                      clock_hz=14745600, baud=115200,
                      pci="00:03.0", pci_vendor="0x1b36", pci_device="0x2"),
                 has_record("console", serial_present=True)] + CLEAN),
    Case("serial-pci-card-second-root-bus", "the PCI card behind a PCIe root port on a second "
         "root bus (pxb-pcie, bus 0x80: no bridge on bus 0 leads there), found by trying "
         "every bus of the MCFG's range",
         args="exp=none",
         serial=("-serial", "none", "-device", "pxb-pcie,id=pxb1,bus_nr=0x80",
                 "-device", "pcie-root-port,id=rp1,bus=pxb1,chassis=1",
                 "-chardev", "file,id=pcis,path={log}", "-device", "pci-serial,chardev=pcis,bus=rp1"),
         checks=[port(source="pci", pci="81:00.0", answered=True, console=True)] + CLEAN),
    Case("serial-pci-card-pc-ports", "the PCI card on the pc machine (no MCFG: ports "
         "0xCF8/0xCFC) beside COM1, console=spcr with no SPCR falls back to every port",
         machine="pc", args="exp=none console=spcr",
         serial=("-serial", "file:{log}.com1", "-chardev", "file,id=pcis,path={log}",
                 "-device", "pci-serial,chardev=pcis"),
         checks=[has_record("serial_ports", pci_method="ports", found=2, consoles=2,
                            spcr="absent"),
                 port(index=0, source="pci", console=True),
                 port(index=1, name="com1", console=True),
                 com1_too_same_bytes] + CLEAN),
    Case("serial-spcr-silent-port", "an SPCR names COM3 where nothing answers (a BMC that is "
         "off): the inventory says so and the run goes on on COM1",
         args="exp=none", prepare=spcr("serial-spcr-silent-port", "--address", "0x3e8"),
         checks=[port(source="spcr", address="0x3e8", answered=False, console=False,
                      problem="no answer (scratch register and loopback probe failed)"),
                 port(name="com1", console=True),
                 has_record("serial_ports", spcr="usable", consoles=1)] + CLEAN),
    Case("serial-spcr-mmio-above-4g-silent", "an SPCR names a memory-mapped UART (32-bit "
         "registers 4 bytes apart) above 4 GiB where nothing is: it is mapped uncached, "
         "probed, found silent, and COM1 carries the run",
         args="exp=none", prepare=spcr("serial-spcr-mmio-above-4g-silent", "--space", "mmio",
                                       "--address", "0x4000001000", "--access", "3",
                                       "--bit-width", "32", "--type", "0x12"),
         checks=[port(source="spcr", access="mmio", address="0x4000001000", stride=4,
                      access_bytes=4, answered=False, console=False),
                 port(name="com1", console=True)] + CLEAN),
    Case("serial-spcr-unsupported-type", "an SPCR describing an ARM PL011 (type 3): one "
         "error naming the type, COM1 probed instead",
         args="exp=none", prepare=spcr("serial-spcr-unsupported-type", "--type", "3"),
         checks=[has_record("error", what="spcr",
                            detail="SPCR interface type 0x3 is not a 16550 (unsupported): "
                                   "COM ports probed instead"),
                 has_record("serial_ports", spcr="refused", spcr_interface_type="0x3"),
                 port(name="com1", console=True), end_status("ok")]),
    Case("serial-console-baud-no-clock-makes", "console=auto,100000: no clock here makes "
         "that rate within 2 %, so the word is refused with one error and auto at 115200 used",
         args="exp=none console=auto,100000",
         checks=[cmdline_errors(["console=auto,100000"]),
                 port(name="com1", baud=115200, console=True), end_status("ok")]),
    Case("serial-spcr-baud-and-clock", "console=spcr,57600 programs the SPCR's port at "
         "57600; uart_clock=1 is refused with one error and the default kept",
         args="exp=none console=spcr,57600 uart_clock=1", serial=COM2_ONLY,
         prepare=spcr("serial-spcr-baud-and-clock", "--baud-code", "0"),
         checks=[port(source="spcr", baud=57600, clock_hz=1843200, console=True),
                 has_record("serial_ports", console_mode="spcr", consoles=1,
                            spcr_baud=0),
                 cmdline_errors(["uart_clock=1"]), end_status("ok")]),
]
