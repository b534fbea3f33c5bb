# tests/bench/bench.mk - micro-benchmarks on the build machine: -O2, no sanitizers.
#
#   make bench     first what the host tool costs (tests/bench/report_cost.py, about a
#                  minute: `report` of the committed quick captures and `compare -o` of two,
#                  CPU and wall, lowest / median / highest of five, beside their goals);
#                  then the HPET's cost in bus accesses (build/bench/hpet_access, a second:
#                  the real driver on the fake HPET, MMIO accesses per counter read and per
#                  arming in each access mode and route, beside Linux's 1 and 3);
#                  build build/bench/bench_tqueue and run it (about 20 s): the hrtimer
#                  queues (lib/time/tq_rbtree.c, tests/bench/tq_heap.c) in TSC ticks, table
#                  on stdout;
#                  then boot the kernel under QEMU -icount (tests/bench/guest_bench.py, about
#                  30 s): wakeup latency per device and path, tick cost, against the goals;
#                  then the instruction breakdown of those paths (tests/bench/insn_trace.py:
#                  QEMU's gdb stub single-steps one interrupt of each, about a minute)
#   make bench ACCEL=kvm   the guest part under KVM instead (-cpu host,-arch-capabilities, no
#                  icount): real time, every figure includes VM exits, the goals not judged;
#                  several minutes on nested KVM. ACCEL=auto: KVM when /dev/kvm is usable.
#                  ACCEL=tcg, the default, is the exact icount run.
#
# Included by the top Makefile; also works alone, from the repository root:
#   make -f tests/bench/bench.mk bench
# The figures are this machine's (docs/hrtimer-queue.md has a run and how to read it).

BENCH_CC  ?= gcc
# The top Makefile's package check (`deps`) when included from it; alone, none.
BENCH_DEPS ?=
BENCH_OUT := build/bench
include scripts/headers.mk
# The code under test is built as the kernel builds it (freestanding, no SSE, no red zone,
# frame pointers, not position-independent), so the timings are of the kernel's code.
BENCH_KCFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-builtin \
                 -fno-stack-protector -fno-pie -mno-red-zone -mgeneral-regs-only \
                 -fno-omit-frame-pointer -I. -Ibuild/gen
# The harness is an ordinary program; -mno-red-zone because it pushes inside inline asm.
BENCH_CFLAGS  := -std=c11 -O2 -g -Wall -Wextra -Werror -fno-pie -mno-red-zone -I. -Ibuild/gen
BENCH_SRC     := tests/bench/bench_tqueue.c
BENCH_HDRS    := tests/bench/bench_queue.h lib/time/tq_rbtree.h tests/bench/tq_heap.h \
                 lib/stats.h lib/port/io.h lib/port/port.h
BENCH_OBJS    := $(BENCH_OUT)/tq_rbtree.o $(BENCH_OUT)/tq_heap.o $(BENCH_OUT)/stats.o \
                 $(BENCH_OUT)/bench_q_rbtree.o $(BENCH_OUT)/bench_q_heap.o \
                 $(BENCH_OUT)/bench_main.o

$(BENCH_OUT)/tq_rbtree.o: lib/time/tq_rbtree.c $(BENCH_HDRS) tests/bench/bench.mk | $(BENCH_DEPS) $(HDR_FARM)
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_KCFLAGS) -c $< -o $@

$(BENCH_OUT)/tq_heap.o: tests/bench/tq_heap.c $(BENCH_HDRS) tests/bench/bench.mk | $(BENCH_DEPS) $(HDR_FARM)
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_KCFLAGS) -c $< -o $@

$(BENCH_OUT)/stats.o: lib/stats.c $(BENCH_HDRS) tests/bench/bench.mk | $(HDR_FARM)
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_KCFLAGS) -c $< -o $@

# One source, three objects: the same measurements through bench_queue.h for each structure,
# and the driver.
$(BENCH_OUT)/bench_q_%.o: $(BENCH_SRC) $(BENCH_HDRS) tests/bench/bench.mk | $(HDR_FARM)
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) -mgeneral-regs-only \
	    -DTQ_IMPL=TQ_IMPL_$(shell echo $* | tr a-z A-Z) -DBENCH_QUEUE=bench_queue_$* -c $< -o $@

$(BENCH_OUT)/bench_main.o: $(BENCH_SRC) $(BENCH_HDRS) tests/bench/bench.mk | $(HDR_FARM)
	@mkdir -p $(@D)
	$(BENCH_CC) $(BENCH_CFLAGS) -DBENCH_MAIN -c $< -o $@

$(BENCH_OUT)/bench_tqueue: $(BENCH_OBJS)
	$(BENCH_CC) -no-pie -o $@ $(BENCH_OBJS)

# The HPET access counts: the driver and the fake PC as the host tests build them
# (tests/host/host.mk's HOST_LIB_SRCS, so only from the top Makefile), without sanitizers.
BENCH_HPET_SRCS := tests/bench/hpet_access.c tests/host/hpet_cost.c \
                   $(wildcard tests/host/fake/*.c) $(HOST_LIB_SRCS)
$(BENCH_OUT)/hpet_access: $(BENCH_HPET_SRCS) $(HOST_HDRS) tests/bench/bench.mk | $(BENCH_DEPS) $(HDR_FARM)
	@mkdir -p $(@D)
	$(BENCH_CC) -std=c11 -O1 -g -Wall -Wextra -Werror -DTICKLAB_HOSTED -I. -Ibuild/gen \
	    -o $@ $(BENCH_HPET_SRCS) -lm

# The top Makefile sets ACCEL (tcg) for make run; alone, this file defaults it the same.
ACCEL ?= tcg

.PHONY: bench
bench: $(BENCH_OUT)/hpet_access $(BENCH_OUT)/bench_tqueue build/ticklab.elf
	/usr/bin/python3 tests/bench/report_cost.py
	./$(BENCH_OUT)/hpet_access
	./$(BENCH_OUT)/bench_tqueue
	/usr/bin/python3 tests/bench/guest_bench.py --accel $(ACCEL)
	/usr/bin/python3 tests/bench/insn_trace.py
