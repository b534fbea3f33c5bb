#!/usr/bin/env python3
"""scripts/mkspcr.py - writes an ACPI SPCR table (Microsoft's Serial Port Console Redirection
table, revision 2 or 3 layout, 80 bytes) with a correct checksum, for QEMU's
`-acpitable file=OUT` (QEMU takes the whole table, header included). The boot tests use it
to put the firmware's console on COM2 or elsewhere (tests/qemu/cases.py).

    scripts/mkspcr.py OUT [--space io|mmio] [--address 0x2f8] [--access 1] [--baud-code 7]
                          [--type 0] [--revision 2] [--clock HZ] [--irq 3]
"""
import argparse
import struct
import sys

SPACES = {"mmio": 0, "io": 1}


def spcr_bytes(space="io", address=0x2F8, access=1, bit_width=8, baud_code=7, iface=0,
               revision=2, clock_hz=0, irq=3, pci=None):
    """The table's bytes. pci: (vendor, device, bus, dev, fn) or None (0xFFFF IDs)."""
    vendor, device, bus, dev, fn = pci if pci else (0xFFFF, 0xFFFF, 0, 0, 0)
    body = struct.pack("<B3x", iface)
    body += struct.pack("<BBBBQ", SPACES[space], bit_width, 0, access, address)
    body += struct.pack("<BBI", 0x3 if irq else 0, irq, irq)      # 8259 + IOAPIC, IRQ, GSI
    body += struct.pack("<BBBBBB", baud_code, 0, 1, 0, 0, 0)       # 8N1, no flow, VT100
    body += struct.pack("<HHBBBIB", device, vendor, bus, dev, fn, 0, 0)
    body += struct.pack("<I", clock_hz if revision >= 3 else 0)
    length = 36 + len(body)
    header = struct.pack("<4sIBB6s8sI4sI", b"SPCR", length, revision, 0, b"TICKLB",
                         b"TLSPCR  ", 1, b"TKLB", 1)
    table = bytearray(header + body)
    table[9] = (-sum(table)) & 0xFF
    assert len(table) == 80 and sum(table) & 0xFF == 0
    return bytes(table)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--space", choices=sorted(SPACES), default="io")
    ap.add_argument("--address", type=lambda s: int(s, 0), default=0x2F8)
    ap.add_argument("--access", type=int, default=1, help="GAS access size (0..4)")
    ap.add_argument("--bit-width", type=int, default=8)
    ap.add_argument("--baud-code", type=int, default=7, help="0 as is, 3 9600 .. 7 115200")
    ap.add_argument("--type", type=lambda s: int(s, 0), default=0, help="interface type")
    ap.add_argument("--revision", type=int, default=2)
    ap.add_argument("--clock", type=int, default=0, help="UART clock, Hz (revision 3)")
    ap.add_argument("--irq", type=int, default=3)
    a = ap.parse_args(argv)
    data = spcr_bytes(a.space, a.address, a.access, a.bit_width, a.baud_code, a.type,
                      a.revision, a.clock, a.irq)
    with open(a.out, "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
