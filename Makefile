# ticklab - build, boot, test. `make help` lists the targets and variables.

# Parallel by default: one job per CPU (`make -jN` on the command line chooses otherwise;
# -j1 builds one file at a time). Only the top make adds it: the makes that recipes start
# (`make test`'s suites, the scripts) share its jobs through make's jobserver, and one that
# added -j again would leave the jobserver (make 4.3 does not show -j to a makefile being
# read, so a test of MAKEFLAGS cannot tell). Output is not synchronised, so that `make run`
# and `make test` print as they go; each compile prints its own lines whole.
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
# `make` alone builds the kernel (the included makefiles define targets of their own first).
.DEFAULT_GOAL := all

VERSION   := 0.1.0
GIT_REV   := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
BUILD     := build

CC        := gcc
NASM      := nasm
LD        := ld
PYTHON    := /usr/bin/python3

# Kernel code: freestanding, no SSE (no FPU state to save in interrupt handlers), no red
# zone (interrupts push onto the running stack).
KCFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-builtin -fno-stack-protector \
           -fno-pic -fno-pie -mno-red-zone -mgeneral-regs-only -mcmodel=small \
           -fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
           -I. -I$(BUILD)/gen -DTICKLAB_VERSION='"$(VERSION)"' -DTICKLAB_GIT='"$(GIT_REV)"'
KLDFLAGS := -nostdlib -static -z noexecstack -z max-page-size=0x1000 --no-warn-rwx-segments -T linker.ld

# The library (docs/library.md) is drivers/ (one file per chip: the only code that touches
# ports, MMIO and MSRs) and lib/ (the time core in lib/time/, the pure logic in lib/):
# libticklab.a. Nothing in it includes anything of kernel/; kernel/ links the archive like any
# other user. Each header sits beside its source; code includes it as "ticklab/NAME.h", the
# name a library user has after `make lib` (scripts/headers.mk: how that works in the tree).
TL_SRCS := $(wildcard drivers/*.c lib/*.c lib/time/*.c)
TL_OBJS := $(patsubst %.c,$(BUILD)/k/%.o,$(TL_SRCS))
LIBTICKLAB := $(BUILD)/libticklab.a
include scripts/headers.mk

KERNEL_SRCS := $(wildcard kernel/*.c kernel/*/*.c)
ASM_SRCS    := $(wildcard boot/*.asm kernel/arch/*.asm)
KOBJS := $(patsubst %.c,$(BUILD)/k/%.o,$(KERNEL_SRCS)) \
         $(patsubst %.asm,$(BUILD)/k/%.o,$(ASM_SRCS))
FONT  := $(BUILD)/gen/font8x16.h
FONT_SRC := /usr/share/grub/ascii.h

.PHONY: all kernel lib example iso efi run test host-test qemu-test test-long tools-test deps clean help
all: kernel
kernel: $(BUILD)/ticklab.elf

# The font comes from GRUB's source of its own (grub-common). Not a prerequisite: under -j
# make would look for it before `deps` had installed it; the recipe checks it instead.
$(FONT): | deps
	@mkdir -p $(dir $@)
	@test -f $(FONT_SRC) || { echo "missing $(FONT_SRC): Debian package grub-common (make deps)" >&2; exit 1; }
	sed -e 's/^unsigned char ascii_bitmaps\[\]/static const unsigned char font8x16[]/' $(FONT_SRC) > $@

# V=1 shows the whole commands.
Q := $(if $(V),,@)

$(BUILD)/k/%.o: %.c $(FONT) | deps $(HDR_FARM)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(KCFLAGS) -MMD -MP -c $< -o $@

# The boot record's git field: kernel/main.c is compiled again whenever `git describe`
# changes (a commit, or a tree becoming dirty or clean), not only when main.c does.
GIT_STAMP := $(BUILD)/gen/git-rev
$(GIT_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(GIT_REV)' | cmp -s - $@ 2>/dev/null || echo '$(GIT_REV)' > $@
$(BUILD)/k/kernel/main.o: $(GIT_STAMP)
.PHONY: FORCE
FORCE:

# boot/entry.asm carries the boot record a CPU without long mode sends (version and git).
$(BUILD)/k/%.o: %.asm | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NASM    $<")
	$(Q)$(NASM) -f elf64 -g -DTICKLAB_VERSION='"$(VERSION)"' -DTICKLAB_GIT='"$(GIT_REV)"' -o $@ $<
$(BUILD)/k/boot/entry.o: $(GIT_STAMP)

$(LIBTICKLAB): $(TL_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $(TL_OBJS)

$(BUILD)/ticklab.elf: $(KOBJS) $(LIBTICKLAB) linker.ld
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS) $(LIBTICKLAB)

# make lib: the archive, and its public headers under one prefix (build/include/ticklab/).
lib: $(LIBTICKLAB) $(TL_HDRS)
	@mkdir -p $(BUILD)/include/ticklab
	$(Q)cp $(TL_HDRS) $(BUILD)/include/ticklab/
	@echo "  LIB     $(LIBTICKLAB), headers in $(BUILD)/include/ticklab"

# examples/minimal: a separate tiny kernel that links only libticklab.a (docs/library.md).
EX_DIR  := examples/minimal
EX_OBJS := $(BUILD)/ex/main.o $(BUILD)/ex/entry.o
$(BUILD)/ex/main.o: $(EX_DIR)/main.c lib
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(filter-out -I. -I$(BUILD)/gen -D%,$(KCFLAGS)) -I$(BUILD)/include \
	    -c $< -o $@
$(BUILD)/ex/entry.o: $(EX_DIR)/entry.asm | deps
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NASM    $<")
	$(Q)$(NASM) -f elf64 -o $@ $<
$(BUILD)/minimal.elf: $(EX_OBJS) $(LIBTICKLAB) $(EX_DIR)/linker.ld
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LD) -nostdlib -static -z noexecstack -z max-page-size=0x1000 \
	    --no-warn-rwx-segments -T $(EX_DIR)/linker.ld -o $@ $(EX_OBJS) $(LIBTICKLAB)
example: $(BUILD)/minimal.elf

-include $(KOBJS:.o=.d) $(TL_OBJS:.o=.d)

# ---- images ---------------------------------------------------------------------------
$(BUILD)/ticklab.iso: $(BUILD)/ticklab.elf boot/grub.cfg scripts/mkiso.sh | deps
	scripts/mkiso.sh $@ 5
iso: $(BUILD)/ticklab.iso

# The hybrid ISO is also a disk image (MBR + GPT with an EFI partition): written raw to a
# USB stick it boots under BIOS and UEFI. docs/real-hardware.md has the dd command.
.PHONY: usb
$(BUILD)/ticklab-usb.img: $(BUILD)/ticklab.iso
	cp $< $@
usb: $(BUILD)/ticklab-usb.img

# ---- the EFI application (boot/efi/README.md) -------------------------------------------
# build/ticklab.efi: a gnu-efi application with the kernel ELF inside it. gnu-efi's objects
# are SysV code calling the firmware through its efi_callN wrappers (EFI_FUNCTION_WRAPPER);
# the PE32+ file is made from the shared object by objcopy, as gnu-efi prescribes.
EFI_INC   := /usr/include/efi
EFI_LIB   := /usr/lib
EFI_CFLAGS := -std=c11 -O2 -Wall -Wextra -Werror -ffreestanding -fpic -fshort-wchar \
              -mno-red-zone -fno-stack-protector -fno-strict-aliasing -DEFI_FUNCTION_WRAPPER \
              -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I. -I$(BUILD)/gen -DTICKLAB_VERSION='"$(VERSION)"'
EFI_SRCS  := $(wildcard boot/efi/*.c)
EFI_OBJS  := $(patsubst %.c,$(BUILD)/efi/%.o,$(EFI_SRCS)) $(BUILD)/efi/kernel_image.o
EFI_SECTIONS := -j .text -j .sdata -j .data -j .sbat -j .dynamic -j .dynsym -j .rel -j .rela \
                -j '.rel.*' -j '.rela.*' -j .reloc

$(BUILD)/efi/%.o: %.c | deps $(HDR_FARM)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC-EFI  $<")
	$(Q)$(CC) $(EFI_CFLAGS) -MMD -MP -c $< -o $@

# The kernel goes in without its debug sections (its loadable bytes are the same).
$(BUILD)/efi/kernel.elf: $(BUILD)/ticklab.elf
	@mkdir -p $(dir $@)
	$(Q)objcopy --strip-debug $< $@

$(BUILD)/efi/kernel_image.o: boot/efi/kernel_image.S $(BUILD)/efi/kernel.elf
	@$(if $(Q),echo "  AS-EFI  $<")
	$(Q)$(CC) -c -DKERNEL_ELF='"$(BUILD)/efi/kernel.elf"' $< -o $@

$(BUILD)/efi/ticklab.so: $(EFI_OBJS)
	$(Q)$(LD) -nostdlib -znocombreloc -shared -Bsymbolic -T $(EFI_LIB)/elf_x86_64_efi.lds \
	    $(EFI_LIB)/crt0-efi-x86_64.o $(EFI_OBJS) -L$(EFI_LIB) -lefi -lgnuefi -o $@

$(BUILD)/ticklab.efi: $(BUILD)/efi/ticklab.so
	@$(if $(Q),echo "  EFI     $@")
	$(Q)objcopy $(EFI_SECTIONS) --target efi-app-x86_64 --subsystem=10 $< $@

efi: $(BUILD)/ticklab.efi

# `make usb` also writes build/ticklab-efi.img: a stick image (MBR, one EFI system partition)
# holding only EFI/BOOT/BOOTX64.EFI, for UEFI PCs (docs/real-hardware.md). USB_ARGS="..."
# puts a command line in its \ticklab-cmdline.txt. Rebuilt every time: it takes a second.
USB_ARGS ?=
.PHONY: efi-usb
efi-usb: $(BUILD)/ticklab.efi
	scripts/mkefi.sh $(BUILD)/ticklab-efi.img $(if $(USB_ARGS),"$(USB_ARGS)")
usb: efi-usb

# make secureboot-usb: build/ticklab-secureboot.img, the stick for a PC that keeps Secure Boot
# on (docs/real-hardware.md): Debian's signed shim, MokManager, ticklab.efi signed with your key
# and the key's certificate to enroll. The key: SB_KEY and SB_CERT (your own, PEM), else made
# once in SB_DIR (default ~/.config/ticklab/secureboot) and reused (scripts/sbkey.sh). Its
# packages (sbsigntool, openssl) come from `make deps-secureboot`; shim and MokManager from
# their Debian packages, downloaded into build/shim/ and unpacked, never installed
# (scripts/shimfiles.sh; the installed ones when the host has them).
.PHONY: secureboot-usb deps-secureboot test-secureboot
secureboot-usb: deps-secureboot $(BUILD)/ticklab.efi
	scripts/mkefi.sh --secureboot $(BUILD)/ticklab-secureboot.img $(if $(USB_ARGS),"$(USB_ARGS)")
	@echo "  STICK   $(BUILD)/ticklab-secureboot.img (at the first boot, enroll ticklab.cer in MokManager: docs/real-hardware.md)"
deps-secureboot:
	@scripts/setup-deps.sh secureboot
# The Secure Boot boot tests alone, their packages installed first (make test runs them too;
# both say SKIP when shim's packages cannot be downloaded from Debian's archive).
test-secureboot: deps-secureboot kernel efi
	$(PYTHON) tests/qemu/boottest.py -k secureboot

-include $(EFI_OBJS:.o=.d)

# ---- running --------------------------------------------------------------------------
# make run [MACHINE=q35|pc] [FIRMWARE=bios|uefi] [BOOT=kernel|iso|efi|efi-shell] [ICOUNT=N] [ARGS="..."]
#          [ACCEL=tcg|kvm|auto] [CPU=model] [SMP=1] [MEM=512M] [TIMEOUT=600] [QEMU_EXTRA="..."]
#          [SERIAL_LOG=build/run.log] [RAW=1]
MACHINE  ?= q35
FIRMWARE ?= bios
BOOT     ?= kernel
# exact mode by default under TCG (virtual time, records repeatable byte for byte);
# ICOUNT=off is plain emulation (real time, host noise), which KVM always is
ICOUNT   ?= $(if $(filter tcg,$(ACCEL)),0,off)
ARGS     ?=
SMP      ?= 1
MEM      ?= 512M
TIMEOUT  ?= 600
QEMU_EXTRA ?=
export MACHINE FIRMWARE BOOT ICOUNT ARGS SMP MEM TIMEOUT QEMU_EXTRA

# make run boots through the host tool's capture (tools/ticklab capture: the QEMU command is
# built there from the variables above), which shows the kernel's text and a status line
# (RAW=1: the record stream as it is) and keeps every byte in SERIAL_LOG (build/run.log
# unless given) with how the run was made beside it (SERIAL_LOG.capture.json); then the
# report of it (SERIAL_LOG without .log, plus -report/), written afresh. The exit status is
# the capture's (0 when the run is whole and ended ok), or the report's when the capture was
# ok and the report failed.
SERIAL_LOG ?= $(BUILD)/run.log
ACCEL ?= tcg
CPU ?=
RAW ?=
export SERIAL_LOG ACCEL CPU RAW
run: kernel $(if $(filter efi%,$(BOOT)),efi) | deps
	@mkdir -p $(dir $(SERIAL_LOG)); rc=0; \
	$(PYTHON) tools/ticklab capture --no-build --no-verdict --force -o $(SERIAL_LOG) || rc=$$?; \
	if [ -s "$(SERIAL_LOG)" ]; then \
	    $(PYTHON) tools/ticklab report --force $(SERIAL_LOG) || { r=$$?; \
	        echo "make run: the report of $(SERIAL_LOG) failed (exit $$r)" >&2; \
	        [ $$rc != 0 ] || rc=$$r; }; \
	fi; exit $$rc

# The packages, checked (and installed, as root) before anything is built: every compile
# rule has `| deps` as an order-only prerequisite, so even under -j nothing starts before
# the check has finished. Phony, so it runs on every make; it takes a fraction of a second
# when everything is there. `make deps-test` adds what only the tests need.
.PHONY: deps deps-test
deps:
	@scripts/setup-deps.sh run
deps-test:
	@scripts/setup-deps.sh test

# ---- tests ----------------------------------------------------------------------------
include tests/host/host.mk
include tests/fuzz/fuzz.mk
BENCH_DEPS := deps
include tests/bench/bench.mk

# `make test` runs every suite through scripts/run-tests.sh, which installs the test
# packages itself and ends with the line `N passed, N failed` in every case. Make would add
# its own "*** [test] Error 1" after that line when a test fails; it does not in question
# mode (-q), where a `+` recipe that exits 1 makes make exit 1 quietly (GNU make's rule for
# a recursive make asked a question). So `make test` alone runs in that mode; run-tests.sh
# takes the q back out of MAKEFLAGS before it builds anything.
ifeq ($(MAKECMDGOALS),test)
MAKEFLAGS += -q
endif
test:
	+@scripts/run-tests.sh

qemu-test: kernel example iso efi
	$(PYTHON) tests/qemu/boottest.py

# Not part of `make test`: the full profile's byte-for-byte repeatability under icount, the
# paced UART's figures, the quick profile's QR codes photographed (GRUB's image).
test-long: deps-test kernel iso
	$(PYTHON) tests/qemu/boottest.py --long

tools-test:
	$(PYTHON) -m pytest -q -n 2 tools/tests

clean:
	rm -rf $(BUILD)

help:
	@echo "make            build build/ticklab.elf"
	@echo "make iso        build build/ticklab.iso (GRUB, BIOS + UEFI, CD or USB stick)"
	@echo "make efi        build build/ticklab.efi (UEFI application, the kernel inside)"
	@echo "make efi-usb    build build/ticklab-efi.img (ticklab.efi as BOOTX64.EFI; part of make usb)"
	@echo "make usb        build build/ticklab-usb.img (the same image, to dd to a USB stick)"
	@echo "make secureboot-usb  build build/ticklab-secureboot.img (shim + ticklab.efi signed with your key, for Secure Boot left on)"
	@echo "make run        boot in QEMU; variables: MACHINE FIRMWARE BOOT ICOUNT ACCEL CPU ARGS SMP MEM TIMEOUT QEMU_EXTRA SERIAL_LOG RAW"
	@echo "make test       host unit tests (ASan/UBSan), tool tests, QEMU boot tests"
	@echo "make test-long  the long boot tier: the full profile three times under icount, byte for byte; paced UART; QR photos"
	@echo "make deps       install the Debian packages building, booting and reporting need (as root)"
	@echo "make deps-test  the same, and the packages only the tests need"
	@echo "make deps-secureboot  what make secureboot-usb installs: make deps's packages, sbsigntool, openssl"
	@echo "make test-secureboot  the Secure Boot boot tests alone (part of make test too)"
