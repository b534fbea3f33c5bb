#!/usr/bin/python3
"""Seeds for tests/fuzz/fuzz_smbios.c: SMBIOS tables shaped like QEMU's and a PC's, as the
target's input (a flags byte, then regions `u32 phys, u16 length, bytes`). Written to the
folder given: one seed per way an entry point is reached (BIOS area 2.x and 3.0, a loader
copy, the EFI configuration table)."""
import os
import struct
import sys

TABLE = 0x7FFE0000
AREA = 0xF0000
SYSTAB, CT, EPS_EFI = 0x7F000000, 0x7F001000, 0x7F002000
GUID_SMBIOS3 = bytes.fromhex("4415fdf294972c4a992ee5bbcf20e394")
GUID_SMBIOS = bytes.fromhex("312d9deb882dd3119a160090273fc14d")


def structure(formatted, strings=()):
    body = bytes(formatted)
    if not strings:
        return body + b"\0\0"
    return body + b"".join(s.encode() + b"\0" for s in strings) + b"\0"


def table():
    bios = bytearray(0x18)
    bios[0:2], bios[4], bios[5], bios[8] = (0, 0x18), 1, 2, 3
    bios[0x14], bios[0x15] = 1, 0
    system = bytearray(0x1B)
    system[0:2], system[4:8] = (1, 0x1B), (1, 2, 3, 4)
    system[0x19], system[0x1A] = 5, 6
    board = bytearray(0x0F)
    board[0:2], board[4:9] = (2, 0x0F), (1, 2, 3, 4, 5)
    chassis = bytes((3, 9, 3, 0, 1, 0x01, 0, 0, 0))
    cpu = bytearray(0x30)
    cpu[0:2], cpu[4], cpu[7], cpu[0x10], cpu[0x18], cpu[0x23] = (4, 0x30), 1, 2, 3, 0x41, 4
    end = bytes((127, 4, 0xFE, 0xFF))
    return b"".join((
        structure(bios, ("SeaBIOS", "rel-1.16.2", "04/01/2014")),
        structure(system, ("QEMU", "Standard PC (Q35 + ICH9, 2009)", "pc-q35-7.2",
                           "serial", "sku", "family")),
        structure(board, ("QEMU", "board", "1.0", "serial", "tag")),
        structure(chassis, ("QEMU",)),
        structure(cpu, ("CPU 0", "QEMU", "pc-q35-7.2")),
        structure(end)))


def checksum(data):
    return (-sum(data)) & 0xFF


def eps2(tlen, count):
    e = bytearray(0x1F)
    e[0:4], e[5], e[6], e[7] = b"_SM_", 0x1F, 2, 8
    e[0x10:0x15] = b"_DMI_"
    struct.pack_into("<HIH", e, 0x16, tlen, TABLE, count)
    e[0x15] = checksum(e[0x10:0x1F])
    e[4] = checksum(e)
    return bytes(e)


def eps3(tlen, at=TABLE):
    e = bytearray(0x18)
    e[0:5], e[6], e[7], e[8], e[0xA] = b"_SM3_", 0x18, 3, 6, 1
    struct.pack_into("<IQ", e, 0xC, tlen, at)
    e[5] = checksum(e)
    return bytes(e)


def region(phys, data):
    return struct.pack("<IH", phys, len(data)) + data


def area(eps, at):
    raw = bytearray(0x400)               # the part of the BIOS area that holds it
    raw[at:at + len(eps)] = eps
    return region(AREA + 0xF000, bytes(raw))


def efi(eps):
    st = bytearray(120)
    st[0:8] = b"IBI SYST"
    struct.pack_into("<QQ", st, 104, 2, CT)
    ct = bytes(16) + struct.pack("<Q", 0) + GUID_SMBIOS3 + struct.pack("<Q", EPS_EFI)
    return region(SYSTAB, bytes(st)), region(CT, ct), region(EPS_EFI, eps)


def seeds():
    t = table()
    yield "bios-2x", bytes((2,)) + area(eps2(len(t), 6), 0x40) + region(TABLE, t)
    yield "bios-3x", bytes((2,)) + area(eps3(len(t)), 0x20) + region(TABLE, t)
    yield "copy-3x", bytes((3,)) + region(0, eps3(len(t))) + region(TABLE, t)
    st, ct, e = efi(eps3(len(t)))
    yield "efi-3x", bytes((6,)) + region(TABLE, t) + st + ct + e


def main(folder):
    os.makedirs(folder, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1])
