/* tests/host/fake/pmtimer.h - the ACPI power-management timer (ACPI 6.x, 4.8.3.3 "Power
 * Management Timer"): a free-running up-counter at 3,579,545 Hz in an I/O port
 * (FADT PM_TMR_BLK, default 0x608 as on QEMU's pc and q35), 24 bits wide unless the FADT
 * says TMR_VAL_EXT (32 bits); bits above the width read 0. It runs from power on and wraps:
 * a 24-bit timer every 2^24 / 3,579,545 Hz = 4.687 s, a 32-bit one every 1199.9 s.
 * A 32-bit read (inl) is the normal access; byte and word reads return those bytes.
 * Simplified: no TMR_STS / SCI on the carry out of the top bit; writes are ignored. */
#ifndef TICKLAB_TESTS_HOST_FAKE_PMTIMER_H
#define TICKLAB_TESTS_HOST_FAKE_PMTIMER_H
#include <stdbool.h>
#include <stdint.h>

#define FAKE_PMTIMER_HZ   3579545u
#define FAKE_PMTIMER_PORT 0x608

void fake_pmtimer_set_port(uint16_t port);
void fake_pmtimer_set_32bit(bool on);
void fake_pmtimer_set_value(uint32_t value);   /* reads value now, counts on from it */
void fake_pmtimer_set_stuck(bool stuck);       /* fault injection: never counts */
void fake_pmtimer_remove(void);                /* no PM timer: the port reads all ones */
uint32_t fake_pmtimer_value(void);             /* now, no access cost */

void fake_pmtimer_reset(void);

#endif
