/* tests/host/fake/rtc.h - the CMOS real-time clock (Motorola MC146818A data sheet, as in
 * every PC chipset) at ports 0x70 (index; bit 7 = NMI disable) and 0x71 (data).
 *
 * Modelled: register A (UIP bit 7 reads 0; divider DV bits 6-4, only 010 = 32.768 kHz
 * runs; rate select RS bits 3-0: periodic rate 32768 >> (RS - 1) Hz for RS 3..15, RS 1 and 2
 * give 256 and 128 Hz, RS 0 none); register B (SET, PIE bit 6, AIE, UIE, SQWE, DM bit 2 =
 * binary, 24/12 bit 1, DSE) with the time registers encoded per DM and 24/12; register C
 * (IRQF bit 7, PF bit 6; read clears them): PF is set at every periodic edge whether or not
 * PIE is set; IRQF = PF and PIE; IRQ8 rises when IRQF goes 0 -> 1 and not again until
 * register C is read - so a handler that does not read C gets one interrupt, and enabling
 * PIE with a stale PF interrupts at once; register D (VRT = 1); the 114 bytes of CMOS RAM.
 * The periodic edges are on a grid of the 32.768 kHz divider chain that starts at power on
 * (or when DV is set to 010 again).
 * Simplified: the time does not advance (fixed, settable, default 2024-01-01 00:00:00, a
 * Monday); no update-ended or alarm interrupts (UF, AF stay 0); no square-wave output. */
#ifndef TICKLAB_TESTS_HOST_FAKE_RTC_H
#define TICKLAB_TESTS_HOST_FAKE_RTC_H
#include <stdbool.h>
#include <stdint.h>

struct fake_rtc_time {
    unsigned year;     /* full year, 1900..2099: register 9 and century 0x32 */
    unsigned month, mday, wday;   /* wday 1..7, Sunday = 1 */
    unsigned hour, min, sec;      /* 24-hour values; the model encodes 12-hour mode */
};

void fake_rtc_set_time(const struct fake_rtc_time *t);
uint64_t fake_rtc_periodic_lost(void);   /* periodic edges while IRQF was still set */
uint8_t fake_rtc_reg(unsigned index);    /* a register now, no side effects, no cost */

void fake_rtc_reset(void);

#endif
