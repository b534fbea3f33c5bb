/* tests/host/test_drv_hpet_cost.c - MMIO accesses per HPET operation (hpet_cost.h), pinned:
 * one per counter value in every access mode (the PC's 32-bit low half as Linux reads it,
 * QEMU's 64-bit load), at most 3 per one-shot arming on every route (Linux's
 * hpet_clkevt_set_next_event: read, write, read), no comparator read back. Before, the PC's
 * mode read high, low, high (3 per value) and a relative arming took 7 accesses (11 on a
 * level route). */
#include "hpet_cost.h"
#include "test.h"

#define ROUNDS 16

static void check_cost(bool access32, enum hpet_cost_route route, bool tsc_known,
                       double read, double arm_abs, double arm_rel, double irq)
{
    struct hpet_cost c;
    if (!CHECK(hpet_cost_measure(access32, route, tsc_known, ROUNDS, &c))) {
        printf("  %s, %s: the machine or an arming failed\n", access32 ? "32" : "64",
               hpet_cost_route_name(route));
        return;
    }
    CHECK_EQ_U64(c.events, c.armings);
    CHECK_EQ_U64(c.cmp_reads, 0);
    if (!CHECK(c.counter_read == read && c.arm_abs == arm_abs && c.arm_rel == arm_rel &&
               c.irq == irq))
        printf("  %s-bit access, %s: read %.2f arm_abs %.2f arm_rel %.2f irq %.2f, expected "
               "%.0f %.0f %.0f %.0f\n", access32 ? "32" : "64", hpet_cost_route_name(route),
               c.counter_read, c.arm_abs, c.arm_rel, c.irq, read, arm_abs, arm_rel, irq);
}

TEST(hpet_accesses_per_operation_pc_mode_as_linux)
{
    check_cost(true, HPET_COST_EDGE, true, 1, 2, 3, 0);
    check_cost(true, HPET_COST_FSB, true, 1, 2, 3, 0);
    check_cost(true, HPET_COST_LEVEL, true, 1, 2, 3, 2);
    _Static_assert(LINUX_HPET_COUNTER_READ == 1 && LINUX_HPET_ARMING == 3, "Linux's counts");
}

TEST(hpet_accesses_per_operation_qemu_mode_unchanged)
{
    check_cost(false, HPET_COST_EDGE, true, 1, 2, 3, 0);
    check_cost(false, HPET_COST_FSB, true, 1, 2, 3, 0);
    check_cost(false, HPET_COST_LEVEL, true, 1, 2, 3, 2);
}

/* Without the TSC's rate a 32-bit level comparator cannot tell a second match of its last
 * count from nothing, and clears its status bit (and reads the counter again) at every
 * arming: two accesses more, the safe way until the kernel says the rate. */
TEST(hpet_accesses_32bit_level_without_the_tsc_rate_clear_every_arming)
{
    check_cost(true, HPET_COST_LEVEL, false, 1, 4, 5, 2);
}
