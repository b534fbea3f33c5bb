# ticklab - build, boot, test. `make help` lists the targets and variables.

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

LIB_SRCS    := $(wildcard lib/*.c)
DRIVER_SRCS := $(wildcard drivers/*.c)
KERNEL_SRCS := $(wildcard kernel/*.c kernel/*/*.c)
ASM_SRCS    := $(wildcard boot/*.asm kernel/arch/*.asm)

KOBJS := $(patsubst %.c,$(BUILD)/k/%.o,$(LIB_SRCS) $(DRIVER_SRCS) $(KERNEL_SRCS)) \
         $(patsubst %.asm,$(BUILD)/k/%.o,$(ASM_SRCS))
FONT  := $(BUILD)/gen/font8x16.h
FONT_SRC := /usr/share/grub/ascii.h

.PHONY: all kernel iso run test host-test qemu-test tools-test deps clean help
all: kernel
kernel: $(BUILD)/ticklab.elf

$(FONT): $(FONT_SRC)
	@mkdir -p $(dir $@)
	sed -e 's/^unsigned char ascii_bitmaps\[\]/static const unsigned char font8x16[]/' $< > $@

# V=1 shows the whole commands.
Q := $(if $(V),,@)

$(BUILD)/k/%.o: %.c $(FONT)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(KCFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/k/%.o: %.asm
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NASM    $<")
	$(Q)$(NASM) -f elf64 -g -o $@ $<

$(BUILD)/ticklab.elf: $(KOBJS) linker.ld
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJS)

-include $(KOBJS:.o=.d)

# ---- images ---------------------------------------------------------------------------
$(BUILD)/ticklab.iso: $(BUILD)/ticklab.elf boot/grub.cfg scripts/mkiso.sh
	scripts/mkiso.sh $@ 5
iso: $(BUILD)/ticklab.iso

# ---- running --------------------------------------------------------------------------
# make run [MACHINE=q35|pc] [FIRMWARE=bios|uefi] [BOOT=kernel|iso] [ICOUNT=N] [ARGS="..."]
#          [SMP=1] [MEM=512M] [TIMEOUT=600] [QEMU_EXTRA="..."]
MACHINE  ?= q35
FIRMWARE ?= bios
BOOT     ?= kernel
ICOUNT   ?=
ARGS     ?=
SMP      ?= 1
MEM      ?= 512M
TIMEOUT  ?= 600
QEMU_EXTRA ?=
export MACHINE FIRMWARE BOOT ICOUNT ARGS SMP MEM TIMEOUT QEMU_EXTRA

run: deps kernel
	@scripts/qemu-run.sh

deps:
	@scripts/setup-deps.sh

# ---- tests ----------------------------------------------------------------------------
include tests/host/host.mk
include tests/fuzz/fuzz.mk
include tests/bench/bench.mk

test: deps
	@scripts/run-tests.sh

qemu-test: kernel iso
	$(PYTHON) tests/qemu/boottest.py

tools-test:
	$(PYTHON) -m pytest -q tools/tests

clean:
	rm -rf $(BUILD)

help:
	@echo "make            build build/ticklab.elf"
	@echo "make iso        build build/ticklab.iso (GRUB, BIOS + UEFI, CD or USB stick)"
	@echo "make run        boot in QEMU; variables: MACHINE FIRMWARE BOOT ICOUNT ARGS SMP MEM TIMEOUT QEMU_EXTRA"
	@echo "make test       host unit tests (ASan/UBSan), tool tests, QEMU boot tests"
	@echo "make deps       install the Debian packages the build and tests need (as root)"
