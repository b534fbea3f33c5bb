/* drivers/tsc.h - the time-stamp counter (Intel SDM vol. 3B 18.17 "Time-Stamp Counter";
 * vol. 2B RDTSC, RDTSCP; AMD APM vol. 2, 13.2.4).
 *
 * A 64-bit counter of the CPU, read with RDTSC; it never wraps in practice (2^64 cycles at
 * 5 GHz is 117 years), so its mask is all ones. Its rate is not stated by the hardware
 * except through CPUID 0x15/0x16 when present: calibration (elsewhere) fills freq_hz.
 *
 * Quirks handled:
 *  - RDTSC is not ordered: it may execute before earlier instructions finish, so the start
 *    of a timed interval can be read early. tsc_read_ordered() puts LFENCE before it, which
 *    the SDM gives as the way to wait for earlier instructions on Intel (and on AMD once
 *    LFENCE is made dispatch-serialising, as every current kernel does).
 *  - The TSC counts at a constant rate across P-, C- and T-states only when it is invariant
 *    (CPUID 0x80000007:EDX[8]). Older CPUs' TSC follows the core clock or stops in deep
 *    C-states: usable, but only as a last resort.
 *  - Under a hypervisor without the invariance bit (QEMU TCG never sets it) the TSC may
 *    jump or change rate at the host's whim (migration, host frequency changes).
 *
 * Rating (struct clocksource.rating): 300 when CPUID says invariant: cheap (tens of cycles),
 * fine-grained, never wraps, so it beats every chipset counter. 100 when not invariant,
 * whether or not a hypervisor is present: below the HPET (250) and the PM timer (200), which
 * count at a stated rate whatever the CPU does. No TSC at all (CPUID.1:EDX[4] clear): the
 * source is listed but unusable ("CPUID: no TSC"). */
#ifndef TICKLAB_DRIVERS_TSC_H
#define TICKLAB_DRIVERS_TSC_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clocksource.h"

#define TSC_RATING_INVARIANT     300
#define TSC_RATING_NOT_INVARIANT 100

/* RDTSC as it is: may be read before earlier instructions complete. Cheapest; right for a
 * clocksource read where a few cycles of skew do not matter. */
uint64_t tsc_read(void);
/* LFENCE; RDTSC: the read happens after every earlier instruction has completed locally.
 * Use it for the start and end of a measured interval. */
uint64_t tsc_read_ordered(void);

/* The TSC as a clocksource, and what CPUID said of it. */
struct tsc {
    struct clocksource cs;      /* "tsc"; its read is ordered (LFENCE; RDTSC) */
    bool invariant;             /* CPUID 0x80000007:EDX[8] (and a TSC at all) */
};

/* Fills t from what CPUID said (ci: cpu_probe(); presence, invariance) and returns its
 * clocksource, ready for clocksource_register(). freq_hz is 0 (unusable until
 * clocksource_set_freq() gives it the calibrated rate); nominal_hz is 0 too (CPUID
 * 0x15/0x16 are the calibration's business). */
struct cpu_info;
struct clocksource *tsc_clocksource_init(struct tsc *t, const struct cpu_info *ci);

#endif
