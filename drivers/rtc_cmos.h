/* drivers/rtc_cmos.h - the periodic interrupt of the PC CMOS real-time clock (Motorola
 * MC146818A data sheet: register A rate select table, register B PIE, register C flags;
 * every PC chipset carries a compatible RTC at ports 0x70/0x71, IRQ8).
 *
 * Only the periodic interrupt is used; the time of day is not read. The divider chain runs
 * from a 32.768 kHz crystal; register A's rate select RS (bits 3-0) picks a tap of it:
 * RS = r in 3..15 gives 32768 >> (r - 1) Hz, i.e. 8192 Hz down to 2 Hz, powers of two only.
 * (RS 1 and 2 would give 256 and 128 Hz, repeating RS 8 and 9; they are never written.)
 *
 * Hazards handled:
 *  - Register C must be read in EVERY IRQ8 handler: reading it clears IRQF, and until it is
 *    cleared the RTC raises no further interrupt (the periodic flag keeps setting, silently).
 *    rtc_ack() is that read; rtc_clockevent_irq() does it first thing.
 *  - Index and data are two port accesses: an interrupt handler touching the RTC between
 *    them (the IRQ8 handler reading C) would move the index under us. Every access here
 *    keeps interrupts off across the pair.
 *  - Enabling PIE while PF is still set from an earlier edge interrupts at once: the start
 *    clears C before it sets PIE.
 *  - The edges are on the divider chain's grid, which runs since power on and is not
 *    restarted here (restarting means writing DV, which also disturbs the time of day): the
 *    first interrupt after a start comes 0 to 1 period later, not a full period.
 *  - HPET legacy replacement takes IRQ8 from the RTC (drivers/hpet.h); the RTC then still
 *    sets its flags but nothing arrives.
 *  - Port 0x70 bit 7 masks NMI on PC chipsets and the port is write-only, so the bit cannot
 *    be read back and "kept as it was". ticklab never masks NMI here: every index write has
 *    bit 7 clear, which is how firmware hands the machine over and what the kernel needs
 *    (NMI must reach its IST handler). A kernel that does mask NMI through this port would
 *    have to keep the bit in a shadow and give it to this driver.
 *
 * Absent RTC (ACPI FADT IAPC_BOOT_ARCH "CMOS RTC not present", or an empty bus): every read
 * is 0xFF; rtc_probe() says so, and the clockevent stays unusable with that reason. */
#ifndef TICKLAB_DRIVERS_RTC_CMOS_H
#define TICKLAB_DRIVERS_RTC_CMOS_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"

#define RTC_CMOS_IRQ        8
#define RTC_BASE_HZ         32768u   /* the divider chain's input */
#define RTC_PERIODIC_MIN_HZ 2u       /* RS 15 */
#define RTC_PERIODIC_MAX_HZ 8192u    /* RS 3; the data sheet's fastest periodic rate */
#define RTC_REG_C_IRQF      0x80     /* an enabled flag is set: this RTC interrupted */
#define RTC_REG_C_PF        0x40     /* a periodic edge passed since C was last read */
/* Rating of the clockevent: periodic only, at powers of two (no 100/250/1000 Hz), every
 * access two slow ISA port cycles, and its IRQ is shared with HPET legacy routing. A last
 * resort below every other timer. */
#define RTC_RATING          10

/* Register A rate select for hz: r with 32768 >> (r - 1) == hz, in 3..15. -EINVAL unless hz
 * is a power of two in 2..8192. */
int rtc_periodic_rate_code(uint32_t hz);
/* The inverse: 32768 >> (code - 1) for code 3..15, else 0. */
uint32_t rtc_periodic_hz(int code);

/* Whether an RTC answers, by reading registers A and D back (no waiting: four port
 * accesses). False if both read 0xFF (nothing on the bus), or if the divider is not on the
 * 32.768 kHz time base (DV != 010: the chain is stopped or in reset, no periodic edges
 * come; rtc_probe_reason() says which). Changes nothing on
 * the RTC, and remembers register A's rate select for rtc_stop(); call it before
 * rtc_clockevent_init(). */
bool rtc_probe(void);

/* Periodic interrupt at hz (a power of two, 2..8192): sets RS, leaves DV alone, clears a
 * stale flag by reading C, then sets PIE. The caller routes and unmasks IRQ8. -EINVAL for
 * another hz (nothing changed). */
int rtc_start_periodic(uint32_t hz);
/* PIE off, register A's rate select back to what rtc_probe() found (A and B are battery-
 * backed: nothing of ticklab's may outlast a power cycle), then C read so no flag is left
 * pending. */
void rtc_stop(void);
/* Reads register C, which acknowledges the interrupt (clears IRQF and PF). Returns what it
 * held: RTC_REG_C_IRQF / RTC_REG_C_PF tell whether this RTC interrupted and why. */
uint8_t rtc_ack(void);

/* Why rtc_probe() said no ("registers A and D read 0xFF: no RTC on the bus", "divider not
 * on the 32.768 kHz time base (DV != 010)"), NULL after a yes. */
const char *rtc_probe_reason(void);

/* The "rtc" clock event device: CE_PERIODIC only, freq_hz 32768, periods 4..16384 cycles
 * (powers of two), usable when rtc_probe() said yes (else with its reason). line: IRQ8 as
 * the host routed it. Per event nothing is written: the host's IRQ8 handler calls
 * rtc_clockevent_irq(), which must read register C (see above). */
struct rtc_clockevent {
    struct clockevent ce;       /* ce.line: IRQ8 */
};
void rtc_clockevent_init(struct rtc_clockevent *r, const struct clockevent_line *line);
/* The IRQ8 work: reads C (always: see above), and if a periodic edge is why, passes the
 * event on. From the host's handler; its EOI may come before or after. */
void rtc_clockevent_irq(struct rtc_clockevent *r);

#endif
