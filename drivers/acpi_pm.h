/* drivers/acpi_pm.h - the ACPI power-management timer (ACPI Specification 6.5, 4.8.3.3
 * "Power Management Timer"; the FADT's PM_TMR_BLK / X_PM_TMR_BLK and TMR_VAL_EXT flag, 5.2.9).
 *
 * A free-running up-counter at 3,579,545 Hz (the 14.31818 MHz colour-burst crystal / 4) in
 * one 32-bit I/O port, counting 24 bits, or 32 when the FADT sets TMR_VAL_EXT. It cannot be
 * stopped, set or made to interrupt (the carry's TMR_STS/SCI is not used here). It wraps every
 * 2^24 / 3,579,545 Hz = 4.687 s (24-bit) or 1199.9 s (32-bit). The caller passes the port and
 * width from the FADT (drivers/acpi.h, acpi_fadt_info.pm_timer_port / pm_timer_32bit).
 *
 * Quirks handled:
 *  - Bits above the width are reserved: every read is masked.
 *  - An empty port reads all ones: two such reads in a row (~1 us apart, a real timer moves
 *    3.6 ticks) mean nothing is there.
 *  - Glitched reads: on some old chipsets (Intel PIIX4 has a published erratum; Linux also
 *    distrusts ICH4 and the ServerWorks LE) the value is not latched for the read, and a
 *    read that lands while the counter increments can return a wrong value (about one read
 *    in 25 on PIIX4). acpi_pm_read_verified() reads three times and accepts the middle
 *    value only when it lies between the other two going forward (wrap-aware), so a single
 *    bad read among the three is rejected or not returned. It costs three port reads, so it
 *    is used only when acpi_pm_check_monotonic() has seen the plain read step backwards.
 *
 * Rating (struct clocksource.rating): 200. A stated rate and it never stops, but a read is a
 * port access (~1 us, slower than the HPET's MMIO), the resolution is 279 ns, and a 24-bit
 * timer wraps every 4.7 s: below the HPET (250), above a non-invariant TSC (100). */
#ifndef TICKLAB_DRIVERS_ACPI_PM_H
#define TICKLAB_DRIVERS_ACPI_PM_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clocksource.h"

#define ACPI_PM_HZ      3579545u
#define ACPI_PM_RATING  200
/* Tries of the three-read check before acpi_pm_read_verified() gives up and returns the
 * middle read anyway; a glitch in most of 24 consecutive reads is not a timer. */
#define ACPI_PM_VERIFY_TRIES 8

/* One PM timer: its port, its width and its clocksource. Every function takes the timer it
 * works on. */
struct acpi_pm {
    uint16_t port;
    bool present;               /* acpi_pm_init() succeeded */
    bool verified;              /* reads go through acpi_pm_read_verified() */
    struct clocksource cs;      /* "acpi_pm" (acpi_pm_clocksource) */
};

/* Remembers the port and width, checks that something answers. Returns 0, or -ENODEV with
 * *reason (if given): "no PM timer port" (port 0), "port reads all ones: nothing there".
 * Fills the clocksource (mask, nominal_hz = freq_hz = ACPI_PM_HZ, usable). */
int acpi_pm_init(struct acpi_pm *pm, uint16_t port, bool counter_32bit, const char **reason);

/* inl(port) & mask: 24 or 32 significant bits. */
uint64_t acpi_pm_read(const struct acpi_pm *pm);
/* The glitch-proof read described above (three port reads, or more on a glitch). */
uint64_t acpi_pm_read_verified(const struct acpi_pm *pm);

/* Whether the counter moves within probe_cyc TSC cycles. On false the clocksource is marked
 * unusable with "counter does not count". */
bool acpi_pm_counting(struct acpi_pm *pm, uint64_t probe_cyc);

/* Takes `reads` plain reads back to back; a step of more than half the counter's range
 * between two of them is a step backwards (no two reads are seconds apart), i.e. glitched
 * reads. Then the clocksource switches to acpi_pm_read_verified() for good and this returns
 * false. pm->verified tells which read is in use. */
bool acpi_pm_check_monotonic(struct acpi_pm *pm, unsigned reads);

/* The "acpi_pm" clocksource; NULL before a successful acpi_pm_init(). */
struct clocksource *acpi_pm_clocksource(struct acpi_pm *pm);

#endif
