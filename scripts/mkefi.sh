#!/usr/bin/env bash
# mkefi.sh [--shell] OUT [ARGS]: lays out build/ticklab.efi (make efi) for a UEFI machine.
#
#   OUT a directory: for QEMU's virtual FAT disk, -drive format=raw,file=fat:rw:OUT
#   OUT ending in .img: a disk image for a USB stick (write it to the whole stick): an MBR
#       with one EFI system partition (type 0xEF, from 1 MiB), FAT formatted with mtools
#
# Default layout: EFI/BOOT/BOOTX64.EFI, the file firmware starts from removable media (with
# no load options), and, with ARGS, \ticklab-cmdline.txt holding them: ticklab.efi reads
# its command line from there when it has no load options.
# --shell: the UEFI-shell layout: \ticklab.efi and \startup.nsh, which runs
# `fs0:\ticklab.efi ARGS`; the shell passes that line as the load options. There is no
# BOOTX64.EFI in it, so the boot manager finds nothing to start on the disk and falls through
# to its shell (OVMF does; many PCs have no shell: see docs/real-hardware.md).
set -euo pipefail
shell=0
if [ "${1-}" = --shell ]; then shell=1; shift; fi
out=$1
efi=build/ticklab.efi
[ -f "$efi" ] || { echo "mkefi.sh: $efi missing (make efi)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if [ "$shell" = 1 ]; then
    cp "$efi" "$stage/ticklab.efi"
    printf 'fs0:\r\n\\ticklab.efi %s\r\n' "${2-}" > "$stage/startup.nsh"
else
    mkdir -p "$stage/EFI/BOOT"
    cp "$efi" "$stage/EFI/BOOT/BOOTX64.EFI"
    if [ -n "${2-}" ]; then printf '%s\n' "$2" > "$stage/ticklab-cmdline.txt"; fi
fi

case $out in
*.img)
    size_mib=16
    part_lba=2048                                   # the partition starts at 1 MiB
    sectors=$((size_mib * 2048 - part_lba))
    mkdir -p "$(dirname "$out")"
    rm -f "$out"
    dd if=/dev/zero of="$out" bs=1M count="$size_mib" status=none
    # MBR: one partition entry, type 0xEF (EFI system partition), LBA start and length
    /usr/bin/python3 - "$out" "$part_lba" "$sectors" <<'PY'
import struct, sys
path, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
entry = struct.pack("<B3sB3sII", 0x00, b"\xfe\xff\xff", 0xEF, b"\xfe\xff\xff", start, count)
with open(path, "r+b") as f:
    f.seek(446)
    f.write(entry + b"\0" * 48 + b"\x55\xaa")
PY
    img="$out@@$((part_lba * 512))"
    mformat -i "$img" -T "$sectors" -h 64 -s 32 -H "$part_lba" -v TICKLAB ::
    mcopy -s -i "$img" "$stage"/* ::/
    ;;
*)
    rm -rf "$out"
    mkdir -p "$out"
    cp -r "$stage"/. "$out"/
    ;;
esac
