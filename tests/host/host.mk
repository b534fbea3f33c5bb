# tests/host/host.mk - builds and runs the host tests: lib/ (and later the drivers against
# device models) compiled for the build machine with ASan and UBSan.
#
# The top Makefile includes this after its own first rule (so `all` stays the default goal);
# it also works alone, from the repository root: make -f tests/host/host.mk host-test
# New sources are appended here with += above the rules, because make expands a rule's
# prerequisites when it reads the rule.

HOST_CC ?= gcc
HOST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined \
               -fno-sanitize-recover=all -DTICKLAB_HOSTED -I. -Iinclude -Ilib

HOST_LIB_SRCS := lib/crc32.c lib/fmt.c lib/json.c lib/kstring.c lib/cmdline.c
HOST_TEST_SRCS := $(wildcard tests/host/test_*.c) tests/host/main.c
HOST_LIB_SRCS += kernel/intr/topology.c kernel/boot/bootinfo.c
# The EFI application's handoff block (plain C), round-tripped through bootinfo.c.
HOST_LIB_SRCS += boot/efi/handoff.c
HOST_HDRS += boot/efi/handoff.h kernel/boot/bootinfo.h
# One command compiles everything, so any header change rebuilds it all: simple, and the
# whole build takes seconds.
HOST_HDRS := $(wildcard lib/*.h include/ticklab/*.h tests/host/*.h)
HOST_LIB_SRCS += drivers/acpi.c
HOST_TEST_SRCS += tests/host/acpi_fixture.c tests/host/acpi_edit.c
HOST_HDRS += include/ticklab/acpi.h
# The fake PC (tests/host/fake/README.md): include/ticklab/io.h primitives on device models.
HOST_TEST_SRCS += $(wildcard tests/host/fake/*.c)
HOST_HDRS += $(wildcard tests/host/fake/*.h) include/ticklab/io.h
# The clocksource core (kernel/time/clocksource.c) and the a*b/c it is built on.
HOST_LIB_SRCS += lib/muldiv.c kernel/time/clocksource.c
HOST_LIB_SRCS += lib/stats.c lib/hist.c
HOST_HDRS += include/ticklab/clocksource.h

# TSC / LAPIC-timer calibration (kernel/time/calibrate.c): generic over reference counters.
HOST_LIB_SRCS += kernel/time/calibrate.c
HOST_HDRS += include/ticklab/calibrate.h include/ticklab/cpuid.h

# The counter and timer drivers (and the LAPIC/IOAPIC they need) against the fake PC.
HOST_LIB_SRCS += drivers/tsc.c drivers/hpet.c drivers/acpi_pm.c drivers/lapic_timer.c \
                 drivers/lapic.c drivers/ioapic.c
HOST_HDRS += include/ticklab/tsc.h include/ticklab/hpet.h include/ticklab/acpi_pm.h include/ticklab/lapic_timer.h \
             include/ticklab/lapic.h include/ticklab/ioapic.h

# The hrtimer queues (kernel/time/tq_rbtree.c, tq_heap.c) and the tqueue.h interface.
HOST_LIB_SRCS += kernel/time/tq_rbtree.c kernel/time/tq_heap.c
HOST_HDRS += include/ticklab/tq_rbtree.h include/ticklab/tq_heap.h include/ticklab/tqueue.h

# The timer wheel (kernel/time/wheel.c): jiffies timers, cascading, model-checked.
HOST_LIB_SRCS += kernel/time/wheel.c
HOST_HDRS += include/ticklab/wheel.h

# Clock event devices (kernel/time/clockevent.c) and the CMOS RTC periodic interrupt.
HOST_LIB_SRCS += kernel/time/clockevent.c drivers/rtc_cmos.c
HOST_HDRS += include/ticklab/clockevent.h include/ticklab/rtc_cmos.h

HOST_LIB_SRCS += kernel/time/ce_search.c
HOST_HDRS += include/ticklab/ce_search.h

# The hrtimer core (kernel/time/hrtimer.c): queue + clock event device, model-checked.
HOST_LIB_SRCS += kernel/time/hrtimer.c
HOST_HDRS += include/ticklab/hrtimer.h

build/host/tests: $(HOST_LIB_SRCS) $(HOST_TEST_SRCS) $(HOST_HDRS) tests/host/host.mk | deps
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_LIB_SRCS) $(HOST_TEST_SRCS) -lm

.PHONY: host-test
host-test: build/host/tests
	./build/host/tests
