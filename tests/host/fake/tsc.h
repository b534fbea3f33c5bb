/* tests/host/fake/tsc.h - the time-stamp counter of the fake CPU (Intel SDM vol. 3, 17.17).
 *
 * A 64-bit counter at a constant rate (an invariant TSC): freq_hz (default 2.1 GHz, QEMU's
 * host here) times (1 + err_ppb / 1e9), so a test can make it "run 50 ppm fast" and check a
 * calibration finds it. It reads 0 at power on unless set. IA32_TIME_STAMP_COUNTER (MSR
 * 0x10) reads and writes it; IA32_TSC_AUX (MSR 0xC0000103) is what rdtscp_aux() returns.
 * Simplified: no TSC_ADJUST, no per-CPU TSCs, writes to MSR 0x10 set all 64 bits. */
#ifndef TICKLAB_TESTS_HOST_FAKE_TSC_H
#define TICKLAB_TESTS_HOST_FAKE_TSC_H
#include <stdint.h>

#define FAKE_TSC_DEFAULT_HZ 2100000000ull

/* Rate changes keep the current value (the counter does not jump). hz <= 10 GHz;
 * |err_ppb| < 1e8. */
void fake_tsc_set_hz(uint64_t hz);
void fake_tsc_set_error_ppb(int64_t err_ppb);
static inline void fake_tsc_set_error_ppm(int64_t err_ppm)
{
    fake_tsc_set_error_ppb(err_ppm * 1000);
}
void fake_tsc_set_value(uint64_t tsc);      /* the TSC reads tsc now and counts on from it */
void fake_tsc_set_aux(uint32_t aux);
uint64_t fake_tsc_hz(void);                 /* nominal, as set */

uint64_t fake_tsc_read(void);               /* the value now, without an access cost */
uint32_t fake_tsc_aux(void);
/* The first virtual time at which the TSC reads >= tsc (now if it already does). */
uint64_t fake_tsc_time_of(uint64_t tsc);

void fake_tsc_reset(void);

/* The TSC as drivers/tsc.c makes it a clocksource (its ordered read, through this CPU's
 * rdtsc_ordered(): one access's cost), for the code that takes a TSC clocksource to time
 * things with (cs_measure, calibrate_tsc). Not registered; freq_hz 0. */
struct clocksource;
struct clocksource *fake_tsc_clocksource(void);

#endif
