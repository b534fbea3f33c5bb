# tests/host/host.mk - builds and runs the host tests: lib/ (and later the drivers against
# device models) compiled for the build machine with ASan and UBSan.
#
# The top Makefile includes this after its own first rule (so `all` stays the default goal);
# it also works alone, from the repository root: make -f tests/host/host.mk host-test
# New sources are appended here with += above the rules, because make expands a rule's
# prerequisites when it reads the rule.

HOST_CC ?= gcc
HOST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined \
               -fno-sanitize-recover=all -DTICKLAB_HOSTED -I. -Ibuild/gen

HOST_LIB_SRCS := lib/crc32.c lib/fmt.c lib/json.c lib/kstring.c lib/cmdline.c lib/qrcode.c lib/deflate.c
HOST_TEST_SRCS := $(wildcard tests/host/test_*.c) tests/host/main.c
HOST_LIB_SRCS += kernel/intr/topology.c kernel/boot/bootinfo.c kernel/smp/cpu_plan.c
# The EFI application's handoff block (plain C), round-tripped through bootinfo.c.
HOST_LIB_SRCS += boot/efi/handoff.c
# One command compiles everything, so any header change rebuilds it all: simple, and the
# whole build takes seconds. (:= first: a += above it would be thrown away.)
include scripts/headers.mk
HOST_HDRS := $(TL_HDRS) $(wildcard tests/host/*.h)
HOST_HDRS += boot/efi/handoff.h kernel/boot/bootinfo.h
HOST_LIB_SRCS += drivers/acpi.c drivers/spcr.c drivers/mcfg.c drivers/pci.c
HOST_TEST_SRCS += tests/host/acpi_fixture.c tests/host/acpi_edit.c
HOST_HDRS += drivers/acpi.h drivers/spcr.h drivers/mcfg.h drivers/pci.h
# SMBIOS: the parser on tables made byte by byte (tests/host/smbios_build.c).
HOST_LIB_SRCS += drivers/smbios.c
HOST_TEST_SRCS += tests/host/smbios_build.c
HOST_HDRS += drivers/smbios.h tests/host/smbios_build.h
# The fake PC (tests/host/fake/README.md): lib/port/io.h primitives on device models.
HOST_TEST_SRCS += $(wildcard tests/host/fake/*.c)
HOST_HDRS += $(wildcard tests/host/fake/*.h) lib/port/io.h lib/port/port.h
# The clocksource core (lib/time/clocksource.c, lib/time/timekeeping.c) and the a*b/c it is
# built on.
HOST_LIB_SRCS += lib/muldiv.c lib/time/clocksource.c lib/time/timekeeping.c
HOST_LIB_SRCS += lib/stats.c lib/hist.c
HOST_HDRS += lib/time/clocksource.h lib/time/timekeeping.h

# TSC / LAPIC-timer calibration (lib/time/calibrate.c): generic over reference counters.
HOST_LIB_SRCS += lib/time/calibrate.c
HOST_HDRS += lib/time/calibrate.h drivers/cpuid.h

# The counter and timer drivers (and the LAPIC/IOAPIC they need) against the fake PC.
HOST_LIB_SRCS += drivers/tsc.c drivers/hpet.c drivers/acpi_pm.c drivers/lapic_timer.c \
                 drivers/lapic.c drivers/ioapic.c
HOST_HDRS += drivers/tsc.h drivers/hpet.h drivers/acpi_pm.h drivers/lapic_timer.h \
             drivers/lapic.h drivers/ioapic.h

# The hrtimer queue (lib/time/tq_rbtree.c) and its tqueue.h interface, and the benchmark's
# heap beside it (tests/bench/tq_heap.c).
HOST_LIB_SRCS += lib/time/tq_rbtree.c tests/bench/tq_heap.c
HOST_HDRS += lib/time/tq_rbtree.h tests/bench/tq_heap.h lib/time/tqueue.h

# The timer wheel (lib/time/wheel.c): jiffies timers, cascading, model-checked.
HOST_LIB_SRCS += lib/time/wheel.c
HOST_HDRS += lib/time/wheel.h

# Clock event devices (lib/time/clockevent.c) and the CMOS RTC periodic interrupt.
HOST_LIB_SRCS += lib/time/clockevent.c drivers/rtc_cmos.c
HOST_HDRS += lib/time/clockevent.h drivers/rtc_cmos.h

HOST_LIB_SRCS += lib/time/ce_search.c
HOST_HDRS += lib/time/ce_search.h

# A stamp's place on time_ns()'s scale from pairs of readings (wakeup-latency's mapping).
HOST_LIB_SRCS += lib/time/stampmap.c

# The hrtimer core (lib/time/hrtimer.c): queue + clock event device, model-checked.
HOST_LIB_SRCS += lib/time/hrtimer.c
HOST_HDRS += lib/time/hrtimer.h

# The PIT (channel 2 as a clocksource, channel 0 as a clock event device), the 8259s, CPUID
# decoding, the clocksource measurements and the jiffies tick, against the fake PC.
# AMD's DE_CFG (LFENCE dispatch-serialising) and the machine-check banks.
HOST_LIB_SRCS += drivers/amd_de_cfg.c drivers/mca.c drivers/tco.c drivers/amd_fch_wdt.c
HOST_HDRS += drivers/amd_de_cfg.h drivers/mca.h drivers/tco.h drivers/amd_fch_wdt.h

HOST_LIB_SRCS += drivers/pit8254.c drivers/pic8259.c drivers/cpuid.c \
                 lib/time/cs_measure.c lib/time/tick.c
HOST_HDRS += drivers/pit8254.h drivers/pic8259.h \
             lib/time/cs_measure.h lib/time/tick.h

# kernel/timers/idle.c (the idle policy, HLT with a backup wake-up), compiled apart: it asks
# kernel/arch/percpu.h which CPU it runs on, and the real answer reads %gs, which a host
# process does not set up. tests/host/shim/ comes first on the quote include path of this one
# file only, and its kernel/arch/percpu.h lets the test say which CPU it is on (fake_smp_cpu).
HOST_IDLE_OBJ := build/host/idle.o
$(HOST_IDLE_OBJ): kernel/timers/idle.c kernel/timers/idle.h kernel/arch/cpu.h \
                  tests/host/shim/kernel/arch/percpu.h $(HOST_HDRS) tests/host/host.mk | deps $(HDR_FARM)
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -iquote tests/host/shim -c -o $@ $<

# The output path: the UART driver, the in-memory log and the screen console
# against tests/host/fake/uart16550.c and a framebuffer that fails a test on any read.
HOST_LIB_SRCS += drivers/uart16550.c kernel/report/klog.c kernel/console/fbcon.c
# The last screen's record store.
HOST_LIB_SRCS += kernel/report/recstore.c
HOST_HDRS += kernel/report/recstore.h
HOST_HDRS += drivers/uart16550.h kernel/report/klog.h kernel/console/fbcon.h build/gen/font8x16.h

build/host/tests: $(HOST_LIB_SRCS) $(HOST_TEST_SRCS) $(HOST_IDLE_OBJ) $(HOST_HDRS) tests/host/host.mk | deps $(HDR_FARM)
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_LIB_SRCS) $(HOST_TEST_SRCS) $(HOST_IDLE_OBJ) -lm

.PHONY: host-test
host-test: build/host/tests
	./build/host/tests
