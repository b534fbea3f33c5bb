#!/usr/bin/env bash
# mkiso.sh OUT TIMEOUT [ARGS]: a GRUB rescue image (BIOS + UEFI, CD or USB stick) holding
# build/ticklab.elf. Without ARGS the menu offers the profiles (boot/grub.cfg); with ARGS a
# single entry boots with that command line (what `make run BOOT=iso ARGS=...` and the boot
# tests use). TIMEOUT is the menu's wait in seconds. GRUB_PRE (environment): GRUB commands run
# before that entry's multiboot2 line (a boot test's `cutmem 1M 24M` takes the kernel's link
# address away, so that GRUB must place it elsewhere). KERNEL_ELF: another image than
# build/ticklab.elf (a boot test's copy with another relocatable tag).
set -euo pipefail
out=$1 timeout=$2 args=${3-}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/boot/grub"
cp "${KERNEL_ELF:-build/ticklab.elf}" "$root/boot/ticklab.elf"
if [ -n "$args" ] || [ "$#" -ge 3 ]; then
    printf 'set timeout=%s\nset default=0\ninsmod all_video\nmenuentry "ticklab %s" {\n    %s\n    multiboot2 /boot/ticklab.elf %s\n}\n' \
        "$timeout" "$args" "${GRUB_PRE:-}" "$args" > "$root/boot/grub/grub.cfg"
else
    sed -e "s/^set timeout=.*/set timeout=$timeout/" boot/grub.cfg > "$root/boot/grub/grub.cfg"
fi
mkdir -p "$(dirname "$out")"
grub-mkrescue -o "$out" "$root" > "$root.log" 2>&1 || { cat "$root.log"; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
