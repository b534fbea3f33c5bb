#!/usr/bin/env bash
# mkefi.sh [--shell|--secureboot] OUT [ARGS]: lays out build/ticklab.efi (make efi) for a
# UEFI machine.
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
# --secureboot: the stick for a PC that keeps Secure Boot on (docs/real-hardware.md): Debian's
# Microsoft-signed shim as EFI/BOOT/BOOTX64.EFI, its MokManager beside it (mmx64.efi), both
# from the Debian packages without installing them (scripts/shimfiles.sh),
# ticklab.efi signed with your key (scripts/sbkey.sh) as EFI/BOOT/grubx64.efi, the name shim
# starts, and the key's certificate as \ticklab.cer (DER) for MokManager's "Enroll key from
# disk". No fbx64.efi: shim would run that fallback instead, which writes boot entries.
set -euo pipefail
mode=plain
case ${1-} in
    --shell) mode=shell; shift ;;
    --secureboot) mode=secureboot; shift ;;
esac
out=$1
efi=build/ticklab.efi
[ -f "$efi" ] || { echo "mkefi.sh: $efi missing (make efi)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if [ "$mode" = shell ]; then
    cp "$efi" "$stage/ticklab.efi"
    printf 'fs0:\r\n\\ticklab.efi %s\r\n' "${2-}" > "$stage/startup.nsh"
elif [ "$mode" = secureboot ]; then
    case $out in *.img) rm -f "$out" ;; esac   # no older stick left behind if signing fails
    command -v sbsign >/dev/null || { echo "mkefi.sh: sbsign missing: Debian package sbsigntool (make deps-secureboot)" >&2; exit 1; }
    # shim and MokManager: the installed packages' files, or else unpacked from the packages
    # downloaded from Debian's archive into build/shim/, never installed (scripts/shimfiles.sh)
    { read -r shim; read -r mm; } < <("$(dirname "$0")/shimfiles.sh")
    [ -n "${mm-}" ] || { echo "mkefi.sh: no signed shim and MokManager (scripts/shimfiles.sh said why)" >&2; exit 1; }
    echo "mkefi.sh: shim and MokManager from ${shim%/*}/"
    { read -r key; read -r cert; } < <("$(dirname "$0")/sbkey.sh")
    [ -n "${cert-}" ] || exit 1   # sbkey.sh said why
    mkdir -p "$stage/EFI/BOOT"
    cp "$shim" "$stage/EFI/BOOT/BOOTX64.EFI"
    cp "$mm" "$stage/EFI/BOOT/mmx64.efi"
    # objcopy's PE output ends with a COFF symbol table that no section covers; signed as it
    # is, the Authenticode hash would depend on how each verifier treats those bytes.
    objcopy --strip-all "$efi" "$stage/unsigned.efi"
    sbsign --key "$key" --cert "$cert" --output "$stage/EFI/BOOT/grubx64.efi" \
        "$stage/unsigned.efi" > "$stage/sign.log" 2>&1 \
        || { cat "$stage/sign.log" >&2; echo "mkefi.sh: sbsign failed" >&2; exit 1; }
    sbverify --cert "$cert" "$stage/EFI/BOOT/grubx64.efi" > "$stage/sign.log" 2>&1 \
        || { cat "$stage/sign.log" >&2; echo "mkefi.sh: the signed image does not verify" >&2; exit 1; }
    rm -f "$stage/unsigned.efi" "$stage/sign.log"
    openssl x509 -in "$cert" -outform DER -out "$stage/ticklab.cer"
    # What MokManager's "View key 0" shows under [Fingerprint]: the SHA-1 of ticklab.cer.
    echo "mkefi.sh: signed with $cert; MokManager shows its fingerprint as" \
         "$(sha1sum "$stage/ticklab.cer" | cut -c1-40 | tr a-f A-F | sed 's/../& /g; s/ $//')"
    if [ -n "${2-}" ]; then printf '%s\n' "$2" > "$stage/ticklab-cmdline.txt"; fi
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
