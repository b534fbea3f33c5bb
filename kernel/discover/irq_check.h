/* kernel/discover/irq_check.h - proof that an external device's interrupt reaches this CPU,
 * end to end through the routing layer. Any device will do, as Linux and Xen have it: many
 * 2020s boards gate the 8254 (its ports answer, it never counts) and hardware-reduced
 * platforms have none, while the HPET, PM timer, LAPIC and RTC all work.
 *
 *  1. The PIT's IRQ0, when channel 0 counts (a gated or absent PIT is named as such): on
 *     the GSI the MADT gives IRQ0, and when that one stays silent and the MADT states no
 *     override for IRQ0, on GSI 2 too (QEMU's microvm and some boards wire the PIT there
 *     without saying so; Linux's check_timer tries the same). A route proved that way is
 *     kept for IRQ0 from then on (intr_learn_isa_gsi).
 *  2. Else the CMOS RTC's IRQ8, its periodic interrupt at 1024 Hz (unless the FADT says
 *     there is no CMOS RTC).
 *  3. Else whatever routed device's fire check later succeeds (an HPET comparator:
 *     irq_proof_note() from the clock event checks).
 * One `irq_check` record per device tried. irq_proof_ok() is the verdict: the run fails
 * for undelivered interrupts only if no external device's interrupt ever arrived. */
#ifndef TICKLAB_DISCOVER_IRQ_CHECK_H
#define TICKLAB_DISCOVER_IRQ_CHECK_H
#include <stdbool.h>
#include <stdint.h>

/* How long one attempt waits for its interrupt: 200 ms, 200 times the PIT's 1 ms one-shot,
 * with room for an emulator thread starved by other load. */
#define IRQ_CHECK_TIMEOUT_NS 200000000ull

/* Tries the PIT, then the RTC; true when one of them delivered. timeout_cyc: each wait's
 * bound in TSC cycles (0: 2^32, for a TSC not calibrated). */
bool irq_check_run(uint64_t timeout_cyc);
/* A routed (not per-CPU) clock event device's interrupt arrived (or not) in its fire check. */
void irq_proof_note(const char *device, bool delivered);
/* Whether any external device's interrupt has arrived. */
bool irq_proof_ok(void);
/* Why the PIT cannot interrupt (gated, absent), NULL when it counts or was not looked at. */
const char *irq_check_pit_problem(void);

#endif
