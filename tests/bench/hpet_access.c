/* tests/bench/hpet_access.c - `make bench`, the HPET's cost in bus accesses: the real driver
 * (drivers/hpet.c) on the fake PC's HPET (tests/host/fake/hpet.c), counted per operation by
 * tests/host/hpet_cost.c, in each access mode and on each interrupt route, beside what
 * Linux's HPET code takes (1 per counter read, 3 per arming). On a PC each access is one
 * uncached transaction to the chipset, about 0.5-1 us, so the count is the cost; QEMU's
 * `-trace memory_region_ops_read` confirms it on the kernel itself (docs/hot-paths.md).
 *
 * Exit status 1 when a machine could not be set up or a count is above Linux's, so the
 * bench run shows a regression rather than a table nobody reads. */
#include <stdarg.h>
#include <stdio.h>

#include "tests/host/hpet_cost.h"
#include "tests/host/test.h"

/* The fake PC reports a model fault through the host tests' failure hook. */
bool test_failed;

bool test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    printf("  %s:%d: ", file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    test_failed = true;
    return false;
}

#define ROUNDS 64

static bool row(bool access32, enum hpet_cost_route route, bool tsc_known)
{
    struct hpet_cost c;
    const char *mode = access32 ? "32-bit (PC)" : "64-bit (QEMU)";
    if (!hpet_cost_measure(access32, route, tsc_known, ROUNDS, &c) || test_failed) {
        printf("%-14s %-6s %-9s  the fake machine could not be set up, or an arming failed\n",
               mode, hpet_cost_route_name(route), tsc_known ? "known" : "not given");
        return false;
    }
    printf("%-14s %-6s %-9s %8.2f %8.2f %8.2f %8.2f %9llu %7s\n", mode,
           hpet_cost_route_name(route), tsc_known ? "known" : "not given", c.counter_read,
           c.arm_abs, c.arm_rel, c.irq, (unsigned long long)c.cmp_reads,
           c.events == c.armings ? "all" : "LOST");
    return c.events == c.armings && c.cmp_reads == 0 &&
           c.counter_read <= LINUX_HPET_COUNTER_READ && c.arm_rel <= LINUX_HPET_ARMING &&
           c.arm_abs <= LINUX_HPET_ARMING;
}

int main(void)
{
    static const enum hpet_cost_route routes[] = { HPET_COST_EDGE, HPET_COST_FSB,
                                                   HPET_COST_LEVEL };
    bool ok = true;

    printf("HPET MMIO accesses per operation (the driver on the fake HPET, %u armings of each "
           "kind)\n", ROUNDS);
    printf("%-14s %-6s %-9s %8s %8s %8s %8s %9s %7s\n", "access", "route", "TSC rate",
           "read", "arm_abs", "arm_rel", "irq", "cmp_reads", "events");
    for (unsigned m = 0; m < 2; m++)
        for (unsigned r = 0; r < sizeof(routes) / sizeof(routes[0]); r++)
            ok &= row(m == 0, routes[r], true);
    /* the safe fallback before the kernel knows the TSC's rate: not held to Linux's count */
    row(true, HPET_COST_LEVEL, false);
    printf("%-14s %-6s %-9s %8d %8s %8d %8s %9d\n", "Linux 6.1", "any", "-",
           LINUX_HPET_COUNTER_READ, "-", LINUX_HPET_ARMING, "-", 0);
    printf("read: per counter value; arm_abs: per arming by absolute count (the time core's "
           "way); arm_rel: per arming by a delta (Linux's way); irq: the driver's own accesses "
           "per interrupt (a level comparator's status check and clearing)\n");
    if (!ok)
        printf("FAIL: a count above Linux's, a comparator read back, or an event lost\n");
    return ok ? 0 : 1;
}
