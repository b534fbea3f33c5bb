/* drivers/pit8254.h - the Intel 8254 programmable interval timer (8254 data sheet,
 * order no. 231164; PC wiring: channel 0 -> IRQ0, channel 2 -> speaker, gated by port 0x61).
 *
 * Input clock 1,193,182 Hz (14.31818 MHz / 12; the exact value is 1,193,181.67 Hz). Counters
 * are 16 bits, count down, and a count of 0 means 65536.
 *
 * Uses here:
 *  - channel 0, mode 2 (rate generator): the periodic tick. The period is a whole number of
 *    input clocks, so HZ=1000 asks for 1193.182 and gets 1193: 1000.152 Hz, not 1000 Hz
 *    (the clock event core reports the period the device really makes).
 *  - channel 0, mode 0 (interrupt on terminal count): one-shot events.
 *  - channel 2, mode 2 with count 65536 and the gate on: a free-running 16-bit counter that
 *    needs no interrupt, read with the counter-latch command (a clocksource, and the
 *    reference for calibration). Channel 2 never interrupts; the speaker stays off.
 *
 * Hazards: the two bytes of a count are read separately, so every read latches first;
 * counts must be read in the access mode they were programmed with (lobyte/hibyte), or the
 * byte order flips. A PIT that is absent reads 0xFF from every port: pit_probe() checks
 * that the latched count of channel 2 moves, bounded by the TSC. A latched read is one
 * transaction (latch, low byte, high byte): it runs with interrupts off and under a lock,
 * so the clocksource may be read from interrupt handlers and other CPUs. */
#ifndef TICKLAB_DRIVERS_PIT8254_H
#define TICKLAB_DRIVERS_PIT8254_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"

#define PIT_HZ 1193182u           /* nominal input clock */
#define PIT_MAX_COUNT 65536u

/* Channel 2 free-running: gate on, speaker off, mode 2, count 65536. */
void pit_ch2_freerun_start(void);
/* Latched channel 2 count, turned into an up-counter: 0..65535, masked by 0xFFFF. */
uint64_t pit_ch2_read_up(void);
/* Whether channel 2 counts: the up-counter must change within probe_cyc TSC cycles. */
bool pit_probe(uint64_t probe_cyc);

/* The "pit" clocksource: channel 2 free-running, 16 bits, PIT_HZ stated (nominal_hz and
 * freq_hz; the 8254 has no calibration of its own: its crystal is the reference). Rating
 * PIT_RATING: slow to read (three port accesses, ~3 us on real buses) and wraps every
 * 54.9 ms. pit_clocksource_init() starts channel 2 and checks that it counts; on failure
 * the source is marked unusable with the reason. */
#define PIT_RATING 110
struct clocksource;
/* Fills cs as the "pit" clocksource (the PIT has no state of its own beyond its fixed ports:
 * the caller owns the struct) and returns it. */
struct clocksource *pit_clocksource_init(struct clocksource *cs, uint64_t probe_cyc);

/* Whether channel 0, the one that interrupts, counts: NULL if it does, else why not ("ports
 * read all ones: no PIT", or a PIT that answers but whose count stands still over probe_cyc
 * TSC cycles: gated, as many 2020s boards leave it). Makes no IRQ0 edge. */
const char *pit_ch0_check(uint64_t probe_cyc);

/* Channel 0. The caller routes IRQ0. */
void pit_ch0_periodic(uint32_t count);
void pit_ch0_oneshot(uint32_t count);
void pit_ch0_stop(void);          /* mode 0 with the longest count and the IRQ left masked */

/* ---- channel 0 as a clock event device ---- */

#define PIT_MAX_ONESHOT_COUNT 65535u   /* mode 0 counts the loaded value down to 0 */
/* Rating as a clock event device: periodic and one-shot, on every PC, but every event is
 * port writes on a slow bus and the clock is 838 ns; below the HPET comparator (120). */
#define PIT_CE_RATING 100

/* "pit": CE_PERIODIC | CE_ONESHOT at PIT_HZ, deltas 1..65535 clocks (min delta measured
 * later by the kernel), periods 2..65536. Per event: the count's two bytes. line: IRQ0 as
 * the host routed it (unmasked when the device leaves SHUTDOWN, masked when it enters it).
 * Channel 0 is left stopped; the caller registers p->ce. */
struct pit_clockevent {
    struct clockevent ce;       /* ce.line: IRQ0 */
};
void pit_clockevent_init(struct pit_clockevent *p, const struct clockevent_line *line);
/* IRQ0, from the host's handler. Nothing to acknowledge at the PIT itself. */
static inline void pit_clockevent_irq(struct pit_clockevent *p)
{
    clockevent_handle_irq(&p->ce);
}

#endif
