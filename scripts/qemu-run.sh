#!/usr/bin/env bash
# qemu-run.sh: boots ticklab in QEMU with the serial console on this terminal and ends with
# QEMU's verdict. Settings come from the environment (the Makefile exports them):
#   MACHINE  q35 | pc                      (default q35)
#   FIRMWARE bios | uefi                   (uefi boots the GRUB image under OVMF)
#   BOOT     kernel | iso | efi | efi-shell
#            kernel: QEMU -kernel, Multiboot1, fastest; iso: the GRUB image;
#            efi: build/ticklab.efi as EFI/BOOT/BOOTX64.EFI on a virtual FAT disk, ARGS in
#            \ticklab-cmdline.txt; efi-shell: started by the UEFI shell with ARGS as its load
#            options (scripts/mkefi.sh lays both out; both imply FIRMWARE=uefi)
#   ICOUNT   N for -icount shift=N,sleep=off -rtc clock=vm (exact, repeatable virtual time);
#            empty: off
#   ARGS     the kernel command line
#   SMP, MEM, TIMEOUT (seconds of real time before QEMU is stopped), QEMU_EXTRA
#   SERIAL_LOG  also write the raw serial bytes to this file
# Exit status: 0 when ticklab ended its run ok (QEMU exit 33), 1 otherwise.
set -uo pipefail
MACHINE=${MACHINE:-q35} FIRMWARE=${FIRMWARE:-bios} BOOT=${BOOT:-kernel}
ICOUNT=${ICOUNT:-} ARGS=${ARGS:-} SMP=${SMP:-1} MEM=${MEM:-512M} TIMEOUT=${TIMEOUT:-600}

cmd=(qemu-system-x86_64 -machine "$MACHINE" -m "$MEM" -smp "$SMP" -display none -no-reboot
     -device isa-debug-exit,iobase=0xf4,iosize=0x04)
# The emulated RTC follows the host clock unless told otherwise: under icount it must follow
# virtual time like every other timer.
[ -n "$ICOUNT" ] && cmd+=(-icount "shift=$ICOUNT,sleep=off" -rtc clock=vm)
case $BOOT in efi|efi-shell) FIRMWARE=uefi ;; esac
if [ "$FIRMWARE" = uefi ]; then
    cmd+=(-bios /usr/share/ovmf/OVMF.fd)
    [ "$BOOT" = kernel ] && BOOT=iso      # OVMF cannot take -kernel's Multiboot image
fi
if [ "$BOOT" = efi ] || [ "$BOOT" = efi-shell ]; then
    dir=build/run-efi
    if [ "$BOOT" = efi-shell ]; then
        scripts/mkefi.sh --shell "$dir" "$ARGS" || exit 1
    else
        scripts/mkefi.sh "$dir" ${ARGS:+"$ARGS"} || exit 1
    fi
    # no NIC: with nothing to boot on the disk OVMF would try PXE before its shell
    cmd+=(-drive "format=raw,file=fat:rw:$dir" -nic none)
elif [ "$BOOT" = iso ]; then
    iso=build/run.iso
    scripts/mkiso.sh "$iso" 0 "$ARGS" || exit 1
    cmd+=(-cdrom "$iso")
else
    cmd+=(-kernel build/ticklab.elf -append "$ARGS")
fi
# shellcheck disable=SC2206
[ -n "${QEMU_EXTRA:-}" ] && cmd+=($QEMU_EXTRA)
if [ -n "${SERIAL_LOG:-}" ]; then
    cmd+=(-chardev "stdio,id=s0,logfile=$SERIAL_LOG,signal=off" -serial chardev:s0)
else
    cmd+=(-serial stdio)
fi

echo "+ ${cmd[*]}" >&2
timeout --foreground -k 5 "$TIMEOUT" "${cmd[@]}" < /dev/null
rc=$?
case $rc in
    33) echo "QEMU verdict: ticklab finished its run ok (exit 33)" >&2; exit 0 ;;
    35) echo "QEMU verdict: ticklab reported a FAILED run (exit 35)" >&2 ;;
    124|137) echo "QEMU verdict: stopped after ${TIMEOUT}s without an end (timeout)" >&2 ;;
    *) echo "QEMU verdict: QEMU ended without ticklab's exit (exit $rc: QEMU error or triple fault)" >&2 ;;
esac
exit 1
