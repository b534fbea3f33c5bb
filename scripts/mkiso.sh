#!/usr/bin/env bash
# mkiso.sh OUT TIMEOUT [ARGS]: a GRUB rescue image (BIOS + UEFI, CD or USB stick) holding
# build/ticklab.elf. Without ARGS the menu offers the profiles (boot/grub.cfg); with ARGS a
# single entry boots with that command line (what `make run BOOT=iso ARGS=...` and the boot
# tests use). TIMEOUT is the menu's wait in seconds.
set -euo pipefail
out=$1 timeout=$2 args=${3-}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/boot/grub"
cp build/ticklab.elf "$root/boot/ticklab.elf"
if [ -n "$args" ] || [ "$#" -ge 3 ]; then
    printf 'set timeout=%s\nset default=0\ninsmod all_video\nmenuentry "ticklab %s" {\n    multiboot2 /boot/ticklab.elf %s\n}\n' \
        "$timeout" "$args" "$args" > "$root/boot/grub/grub.cfg"
else
    sed -e "s/^set timeout=.*/set timeout=$timeout/" boot/grub.cfg > "$root/boot/grub/grub.cfg"
fi
mkdir -p "$(dirname "$out")"
grub-mkrescue -o "$out" "$root" > "$root.log" 2>&1 || { cat "$root.log"; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
