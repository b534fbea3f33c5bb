# tests/host/host.mk - builds and runs the host tests: lib/ (and later the drivers against
# device models) compiled for the build machine with ASan and UBSan.
#
# The top Makefile includes this after its own first rule (so `all` stays the default goal);
# it also works alone, from the repository root: make -f tests/host/host.mk host-test
# New sources are appended here with += above the rules, because make expands a rule's
# prerequisites when it reads the rule.

HOST_CC ?= gcc
HOST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined \
               -fno-sanitize-recover=all -DTICKLAB_HOSTED -I. -Ilibticklab/include -Ikernel/lib

HOST_LIB_SRCS := kernel/lib/crc32.c libticklab/base/fmt.c kernel/lib/json.c libticklab/base/kstring.c kernel/lib/cmdline.c
HOST_TEST_SRCS := $(wildcard tests/host/test_*.c) tests/host/main.c
HOST_LIB_SRCS += kernel/intr/topology.c kernel/boot/bootinfo.c
# The EFI application's handoff block (plain C), round-tripped through bootinfo.c.
HOST_LIB_SRCS += boot/efi/handoff.c
# One command compiles everything, so any header change rebuilds it all: simple, and the
# whole build takes seconds. (:= first: a += above it would be thrown away.)
HOST_HDRS := $(wildcard kernel/lib/*.h libticklab/include/ticklab/*.h tests/host/*.h)
HOST_HDRS += boot/efi/handoff.h kernel/boot/bootinfo.h
HOST_LIB_SRCS += libticklab/drivers/acpi.c
HOST_TEST_SRCS += tests/host/acpi_fixture.c tests/host/acpi_edit.c
HOST_HDRS += libticklab/include/ticklab/acpi.h
# The fake PC (tests/host/fake/README.md): libticklab/include/ticklab/io.h primitives on device models.
HOST_TEST_SRCS += $(wildcard tests/host/fake/*.c)
HOST_HDRS += $(wildcard tests/host/fake/*.h) libticklab/include/ticklab/io.h
# The clocksource core (libticklab/time/clocksource.c) and the a*b/c it is built on.
HOST_LIB_SRCS += libticklab/base/muldiv.c libticklab/time/clocksource.c
HOST_LIB_SRCS += libticklab/base/stats.c libticklab/base/hist.c
HOST_HDRS += libticklab/include/ticklab/clocksource.h

# TSC / LAPIC-timer calibration (libticklab/time/calibrate.c): generic over reference counters.
HOST_LIB_SRCS += libticklab/time/calibrate.c
HOST_HDRS += libticklab/include/ticklab/calibrate.h libticklab/include/ticklab/cpuid.h

# The counter and timer drivers (and the LAPIC/IOAPIC they need) against the fake PC.
HOST_LIB_SRCS += libticklab/drivers/tsc.c libticklab/drivers/hpet.c libticklab/drivers/acpi_pm.c libticklab/drivers/lapic_timer.c \
                 libticklab/drivers/lapic.c libticklab/drivers/ioapic.c
HOST_HDRS += libticklab/include/ticklab/tsc.h libticklab/include/ticklab/hpet.h libticklab/include/ticklab/acpi_pm.h libticklab/include/ticklab/lapic_timer.h \
             libticklab/include/ticklab/lapic.h libticklab/include/ticklab/ioapic.h

# The hrtimer queues (libticklab/time/tq_rbtree.c, tq_heap.c) and the tqueue.h interface.
HOST_LIB_SRCS += libticklab/time/tq_rbtree.c libticklab/time/tq_heap.c
HOST_HDRS += libticklab/include/ticklab/tq_rbtree.h libticklab/include/ticklab/tq_heap.h libticklab/include/ticklab/tqueue.h

# The timer wheel (libticklab/time/wheel.c): jiffies timers, cascading, model-checked.
HOST_LIB_SRCS += libticklab/time/wheel.c
HOST_HDRS += libticklab/include/ticklab/wheel.h

# Clock event devices (libticklab/time/clockevent.c) and the CMOS RTC periodic interrupt.
HOST_LIB_SRCS += libticklab/time/clockevent.c libticklab/drivers/rtc_cmos.c
HOST_HDRS += libticklab/include/ticklab/clockevent.h libticklab/include/ticklab/rtc_cmos.h

HOST_LIB_SRCS += libticklab/time/ce_search.c
HOST_HDRS += libticklab/include/ticklab/ce_search.h

# The hrtimer core (libticklab/time/hrtimer.c): queue + clock event device, model-checked.
HOST_LIB_SRCS += libticklab/time/hrtimer.c
HOST_HDRS += libticklab/include/ticklab/hrtimer.h

# The PIT (channel 2 as a clocksource, channel 0 as a clock event device), the 8259s, CPUID
# decoding, the clocksource measurements and the jiffies tick, against the fake PC.
HOST_LIB_SRCS += libticklab/drivers/pit8254.c libticklab/drivers/pic8259.c libticklab/drivers/cpuid.c \
                 libticklab/time/cs_measure.c libticklab/time/tick.c
HOST_HDRS += libticklab/include/ticklab/pit8254.h libticklab/include/ticklab/pic8259.h \
             libticklab/include/ticklab/cs_measure.h libticklab/include/ticklab/tick.h

# kernel/timers/halt.c (HLT with a backup wake-up), compiled apart: it asks kernel/smp/smp.h
# which CPU it runs on, and the real answer reads %gs, which a host process does not set up.
# tests/host/shim/ comes first on the quote include path of this one file only, and its
# kernel/smp/smp.h lets the test say which CPU it is on (fake_smp_cpu).
HOST_HALT_OBJ := build/host/halt.o
$(HOST_HALT_OBJ): kernel/timers/halt.c kernel/timers/halt.h kernel/arch/cpu.h \
                  tests/host/shim/kernel/smp/smp.h $(HOST_HDRS) tests/host/host.mk | deps
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -iquote tests/host/shim -c -o $@ $<

build/host/tests: $(HOST_LIB_SRCS) $(HOST_TEST_SRCS) $(HOST_HALT_OBJ) $(HOST_HDRS) tests/host/host.mk | deps
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_LIB_SRCS) $(HOST_TEST_SRCS) $(HOST_HALT_OBJ) -lm

.PHONY: host-test
host-test: build/host/tests
	./build/host/tests
