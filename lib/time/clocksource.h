/* lib/time/clocksource.h - free-running counters and their cycle -> ns conversion.
 *
 * A driver fills in a struct clocksource (name, read, mask, freq_hz, rating, ...) and
 * registers it; the core computes mult/shift so that ns = (cyc * mult) >> shift within 1 ns
 * of the exact floor(cyc * 1e9 / freq_hz) for every delta up to max_cyc. The monotonic clock
 * built on the selected source, and the calls that select one or change its rate, are
 * timekeeping.h's. No hardware access of its own (a counter is read through its driver's
 * read(cs), the only way), no locks, no FPU. */
#ifndef TICKLAB_KERNEL_TIME_CLOCKSOURCE_H
#define TICKLAB_KERNEL_TIME_CLOCKSOURCE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/io.h"
#include "ticklab/units.h"

/* Frequencies above this are rejected (-EINVAL): 1.1 THz, far beyond any counter, and it
 * keeps freq_hz * 2^shift products inside the 128-bit arithmetic with room to spare. */
#define CLOCKSOURCE_MAX_FREQ_HZ (1ull << 40)

/* The longest interval registration asks mult/shift to cover (the source's wrap interval is
 * used when that is shorter). Ten minutes bounds how long tickless idle may sleep; for most
 * counters the 1-ns error bound runs out earlier anyway. */
#define CLOCKSOURCE_WANT_MAX_NS (600ull * NSEC_PER_SEC)

/* mask for a counter `bits` wide (1..64). */
#define CLOCKSOURCE_MASK(bits) ((bits) >= 64 ? UINT64_MAX : (1ull << (bits)) - 1)

struct clocksource {
    /* ---- filled in by the driver before clocksource_register() ---- */
    const char *name;            /* "tsc", "hpet", "acpi_pm", "pit", "lapic": what
                                    clocksource= on the command line matches */
    uint64_t (*read)(const struct clocksource *cs);
                                 /* current count, low `bits` significant; callable with
                                    interrupts off and from interrupt handlers. The driver
                                    finds its state from cs (clocksource_container) */
    uint64_t mask;               /* 2^bits - 1: deltas are (now - then) & mask (cs_delta) */
    uint64_t freq_hz;            /* counts per second, calibrated (0: not yet known; the
                                    source is then listed but not usable) */
    uint64_t nominal_hz;         /* what the hardware states (HPET period, CPUID 0x15,
                                    3579545 for the PM timer), 0 if it states nothing; kept
                                    beside freq_hz so the report can show the difference */
    int rating;                  /* higher is better; each driver documents its value */
    uint32_t read_cost_cyc;      /* TSC cycles one read() takes, measured at boot (0: not
                                    measured) */
    bool usable;                 /* the driver's verdict; false keeps it from selection */
    const char *unusable_reason; /* why not, a static string, NULL while usable */
    struct io_counter direct;    /* optional: read() is one RDTSC or one 64-bit load, which
                                    cs_read() then makes in line (ticklab/io.h); zero: call
                                    read(). Must agree with read(). */

    /* ---- computed by the core (register, set_freq); read-only for everybody else ---- */
    uint32_t mult;               /* ns = (cyc * mult) >> shift ... */
    uint32_t shift;              /* ... for cyc <= max_cyc */
    uint64_t max_ns;             /* longest interval the conversion is exact to 1 ns and
                                    free of 64-bit overflow (maybe less than the wrap) */
    uint64_t max_cyc;            /* max_ns in cycles: floor(max_ns * freq_hz / 1e9) */
    uint64_t wrap_ns;            /* mask + 1 cycles in ns (UINT64_MAX if beyond 64 bits) */
    uint64_t behind_cyc;         /* a delta from the last fold above this is a reading
                                    behind it (a CPU whose TSC lags the one that folded), not
                                    a wrap: only a 64-bit counter, which never wraps, can
                                    tell the two apart (half its range); others: the mask */
    struct clocksource *next;    /* registration list, in order of registration */
};

/* The driver's struct around a counter: clocksource_container(cs, struct hpet, cs). */
#define clocksource_container(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* The counter now: the one way anybody reads one. */
static inline __attribute__((always_inline)) uint64_t cs_read(const struct clocksource *cs)
{
    return cs->direct.kind != IO_COUNTER_CALL ? io_counter_read(&cs->direct) : cs->read(cs);
}

/* The wrap-safe delta, the one place it is computed: correct for any interval of at most
 * mask cycles, however the counter wrapped in between. */
static inline uint64_t cs_delta(const struct clocksource *cs, uint64_t now, uint64_t then)
{
    return (now - then) & cs->mask;
}

/* Cycles to ns with the source's mult/shift. Valid (no overflow, within 1 ns of exact) for
 * cyc <= cs->max_cyc only; beyond that the product wraps and the result is garbage. */
static inline uint64_t cs_cyc_to_ns(const struct clocksource *cs, uint64_t cyc)
{
    return (cyc * cs->mult) >> cs->shift;
}

/* Computes the conversion for a counter at freq_hz: ns = (cyc * *mult) >> *shift with a
 * 32-bit mult, valid for intervals up to *max_ns, meaning for every cyc up to
 * floor(*max_ns * freq_hz / 1e9):
 *   (a) cyc * mult does not overflow 64 bits, and
 *   (b) the result differs from floor(cyc * 1e9 / freq_hz) by at most 1 ns.
 * The shift is the largest (finest mult) for which that range reaches want_max_ns; *max_ns
 * is then want_max_ns. If no shift reaches it, the shift with the longest range is chosen
 * and *max_ns is that range, smaller than asked: the caller must then convert (the time
 * core: accumulate) at least every *max_ns. See the derivation in clocksource.c.
 * Returns 0, or -EINVAL for freq_hz 0 or above CLOCKSOURCE_MAX_FREQ_HZ or want_max_ns 0
 * (outputs untouched then). */
int clocks_calc_mult_shift(uint64_t freq_hz, uint64_t want_max_ns, uint32_t *mult,
                           uint32_t *shift, uint64_t *max_ns);

/* Adds cs to the list and computes mult/shift/max_ns/max_cyc/wrap_ns from freq_hz. A source
 * whose frequency is 0 or out of range is still listed (the report shows it) but marked
 * unusable with a reason. Returns 0, -EINVAL (no name, no read, mask 0), -EBUSY (already
 * registered, or its name is taken). Does not change the current source. */
int clocksource_register(struct clocksource *cs);

/* The conversion for a new rate, computed before it is applied (timekeeping.c applies it
 * inside its writer lock, between folding at the old rate and continuing at the new). */
struct clocksource_rate {
    uint64_t freq_hz;
    uint32_t mult, shift;
    uint64_t max_ns, max_cyc, wrap_ns;
};
/* 0, or -EINVAL (a frequency of 0 or above CLOCKSOURCE_MAX_FREQ_HZ). */
int clocksource_rate_for(const struct clocksource *cs, uint64_t freq_hz,
                         struct clocksource_rate *rate);
/* Writes the rate into cs, and makes cs usable again if the registry had set it aside only
 * for want of a frequency. */
void clocksource_rate_apply(struct clocksource *cs, const struct clocksource_rate *rate);

/* The usable source with the highest rating (the first registered on a tie), or NULL. */
struct clocksource *clocksource_best(void);
/* The source clocksource_select() would take: the named one when registered and usable,
 * else clocksource_best(); why as clocksource_select() says it. */
struct clocksource *clocksource_pick(const char *name, char *why, size_t why_len);

/* The names of the registered sources, in registration order, joined by ", " into buf
 * (always NUL-terminated when buf_len > 0; cut when it does not fit). Returns buf. */
char *clocksource_names(char *buf, size_t buf_len);
struct clocksource *clocksource_find(const char *name);
struct clocksource *clocksource_list(void);      /* first registered; follow ->next */

#ifdef TICKLAB_HOSTED
/* Host tests only: forget every source (timekeeping_test_reset() forgets the time too). */
void clocksource_test_reset(void);
#endif

#endif
