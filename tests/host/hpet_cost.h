/* tests/host/hpet_cost.h - what one HPET operation costs in MMIO accesses, counted on the
 * HPET model (tests/host/fake/hpet.h) through the real driver and the clock event core.
 * Each access is one uncached bus transaction on a PC (about 0.5-1 us to a chipset's HPET),
 * so the count is the cost. Shared by the host test that pins the counts
 * (test_drv_hpet_cost.c) and `make bench`, which prints them beside Linux's
 * (tests/bench/hpet_access.c). */
#ifndef TICKLAB_TESTS_HOST_HPET_COST_H
#define TICKLAB_TESTS_HOST_HPET_COST_H
#include <stdbool.h>
#include <stdint.h>

/* Linux 6.1 (arch/x86/kernel/hpet.c): the clocksource reads HPET_COUNTER once (32 bits);
 * hpet_clkevt_set_next_event() reads the counter, writes the comparator, reads the counter. */
#define LINUX_HPET_COUNTER_READ 1
#define LINUX_HPET_ARMING       3

enum hpet_cost_route {
    HPET_COST_EDGE,     /* an IOAPIC input, edge (or legacy replacement: the same accesses) */
    HPET_COST_LEVEL,    /* an IOAPIC input, level (a PCH's shared GSI 20-23) */
    HPET_COST_FSB,      /* FSB delivery: a message to the LAPIC */
};

struct hpet_cost {
    double counter_read;    /* accesses per value read through the clocksource */
    double arm_abs;         /* per one-shot arming by absolute count (the core's usual way) */
    double arm_rel;         /* per arming by a delta (set_next_event, as Linux arms) */
    double irq;             /* per interrupt, the driver's own (a level status check) */
    uint64_t cmp_reads;     /* comparator reads, over everything measured (0 expected) */
    uint64_t events;        /* events delivered (every arming's, or the counts are void) */
    uint64_t armings;
};

/* Counts over `rounds` armings of each kind on comparator 0 of a 100 MHz HPET, time_ns() on
 * the HPET. access32: the PC's mode (hpet_access=32). tsc_known: the channel told the TSC's
 * rate (hpet_channel_set_tsc_hz), as the kernel does. false when the machine could not be
 * set up or an arming failed (the caller's checks say which). */
bool hpet_cost_measure(bool access32, enum hpet_cost_route route, bool tsc_known,
                       unsigned rounds, struct hpet_cost *out);

const char *hpet_cost_route_name(enum hpet_cost_route route);

#endif
