/* libticklab/include/ticklab/clockevent.h - clock event devices: things that raise an interrupt after a
 * delay (one-shot) or every period (periodic), and the core that chooses one and programs it
 * in nanoseconds.
 *
 * A driver fills in a struct clockevent (name, features, freq_hz, min/max delta, the three
 * callbacks, rating) and registers it. The time core (tick.c, hrtimer.c) picks one with
 * clockevent_select(), sets ->event, and from then on talks in ns:
 * clockevent_set_periodic_ns() for the jiffies tick, clockevent_program_ns() for one-shot
 * deadlines. The driver's interrupt handler acknowledges its device and then calls
 * clockevent_handle_irq(), which counts the event and calls ->event. Pure logic: no
 * hardware access, no locks, no FPU.
 *
 * Time on the device is counted in its own cycles; conversions go through a 128-bit product
 * (libticklab/include/ticklab/muldiv.h), exact for every 64-bit input, so there is no overflow limit short of the
 * saturation noted at each function.
 *
 * What a past deadline does. clockevent_program_ns() takes a delay, not an absolute time:
 * a caller whose deadline has already passed passes 0, which is clamped up to min_delta_cyc,
 * so the event comes min_delta_cyc later instead of never. If the device still says -ETIME
 * (the moment passed while it was being programmed: an SMI, a slow bus, a comparator that
 * only matches on equality), the core retries with min_delta_cyc, then twice that, and so
 * on, CLOCKEVENT_ETIME_RETRIES times. If every try fails it returns -ETIME and nothing is
 * armed: the caller must then run the event's work by hand, since no interrupt will come.
 *
 * Concurrency (single CPU): register/select are boot-time calls. program/set_periodic may
 * run from the event handler itself (that is how one-shot mode re-arms); callers keep other
 * contexts from programming the same device at the same time (interrupts off). */
#ifndef TICKLAB_KERNEL_TIME_CLOCKEVENT_H
#define TICKLAB_KERNEL_TIME_CLOCKEVENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct clocksource;

/* Feature bits (struct clockevent.features). */
#define CE_PERIODIC    (1u << 0)   /* set_periodic() works: an event every period */
#define CE_ONESHOT     (1u << 1)   /* set_next() works: one event after a delay */
#define CE_DEADLINE    (1u << 2)   /* set_next() arms an absolute TSC deadline (the driver
                                      turns the delta into one); implies one-shot use */
#define CE_STOPS_IN_C3 (1u << 3)   /* a property, not a capability: the device stops
                                      counting in deep C-states (LAPIC timer without ARAT),
                                      so idle must not rely on it */

/* How often clockevent_program_ns() re-arms after -ETIME before giving up. With the delta
 * doubling from min_delta_cyc, the last try asks for 2^7 * min_delta_cyc: an event that
 * still cannot be armed that far ahead is a device or a machine in trouble, not a race. */
#define CLOCKEVENT_ETIME_RETRIES 8

struct clockevent {
    /* ---- filled in by the driver before clockevent_register() ---- */
    const char *name;            /* "pit", "hpet", "lapic", "lapic-deadline", "rtc": what
                                    clockevent= on the command line matches */
    unsigned features;           /* CE_* bits */
    uint64_t freq_hz;            /* device cycles per second (calibrated where the hardware
                                    states nothing: the LAPIC timer). 0: unusable */
    uint64_t min_delta_cyc;      /* shortest delay or period the device takes. For one-shot
                                    devices MEASURED by the driver (the cost of programming
                                    it, so that a delta this short is still ahead when the
                                    write lands), not taken from a data sheet; 0 means not
                                    measured and the core uses 1 cycle */
    uint64_t max_delta_cyc;      /* longest delay or period (counter width, divider) */
    /* Arms periodic events every period_cyc cycles (min..max_delta_cyc), the first one a
     * period from now. 0 or a negative errno (-EINVAL: a period the device cannot make). */
    int (*set_periodic)(uint64_t period_cyc);
    /* Arms one event delta_cyc cycles from now (min..max_delta_cyc). 0, -ETIME if the moment
     * had already passed when the device took it (nothing will fire), or a negative errno. */
    int (*set_next)(uint64_t delta_cyc);
    void (*shutdown)(void);      /* no further events, from either mode */
    /* Optional, with abs_cs: arms one event for the moment abs_cs's counter reads cs_cyc (a
     * device that compares against that counter: an HPET comparator against the HPET main
     * counter). 0, or -ETIME if that moment had passed when the device took it. Used by
     * clockevent_program_abs_ns() while time_ns() runs on abs_cs: no delay is computed, so
     * the time between reading the clock and writing the device is not added to the wait. */
    int (*set_abs)(uint64_t cs_cyc);
    const struct clocksource *abs_cs;
    int rating;                  /* higher is better; each driver documents its value */
    bool usable;                 /* the driver's verdict; false keeps it from selection */
    const char *unusable_reason; /* why not, a static string, NULL while usable */

    /* ---- set by the time core ---- */
    void (*event)(struct clockevent *);   /* called for every event; NULL: counted only */
    void *event_ctx;                      /* the owner's, for ->event (the hrtimer base) */

    /* ---- kept by the core (register zeroes them); read-only for everybody else ---- */
    uint64_t events;             /* clockevent_handle_irq() calls */
    uint64_t programs;           /* requests passed on to set_next()/set_periodic() (one
                                    with -ETIME retries counts once) */
    uint64_t clamped_short;      /* one-shot deltas raised to min_delta_cyc (late event) */
    uint64_t clamped_long;       /* one-shot deltas cut to max_delta_cyc (early event: the
                                    handler must see nothing is due yet and re-program) */
    uint64_t etime_retries;      /* extra set_next() calls after -ETIME */
    uint64_t etime_failures;     /* requests that still failed after CLOCKEVENT_ETIME_RETRIES */
    uint64_t abs_programs;       /* of `programs`, those armed by set_abs (absolute count) */
    struct clockevent *next;     /* registration list, in order of registration */
};

/* Adds ce to the list. Checks the driver's promises: a name, a shutdown, a
 * set_periodic with CE_PERIODIC, a set_next with CE_ONESHOT or CE_DEADLINE, and
 * min_delta_cyc <= max_delta_cyc with max_delta_cyc > 0 when any mode is offered. Returns
 * 0, -EINVAL (a promise broken; not listed), -EBUSY (already registered, or the name is
 * taken). A device with freq_hz 0 or none of PERIODIC/ONESHOT/DEADLINE is listed (the
 * report shows it) but unusable with a reason; a driver-set !usable keeps its reason. */
int clockevent_register(struct clockevent *ce);

struct clockevent *clockevent_find(const char *name);
struct clockevent *clockevent_list(void);        /* first registered; follow ->next */

/* The usable device with every feature in need_features (CE_* bits) and the highest rating
 * (the first registered on a tie). If name is non-NULL and names such a device, that one.
 * If the name cannot be honoured (unknown, unusable, or lacking a needed feature) why
 * receives one line for an error record, e.g. "clockevent=rtc: lacks ONESHOT; using hpet";
 * if nothing qualifies at all, "no usable clockevent with PERIODIC". Otherwise why is "".
 * why may be NULL or why_len 0. Returns the device, or NULL if none qualifies. Changes no
 * device: the caller shuts down the old one and programs the new one. */
struct clockevent *clockevent_select(const char *name, unsigned need_features, char *why,
                                     size_t why_len);

/* Names of the CE_* bits set in features, joined by '|' ("PERIODIC|ONESHOT"; "" for none),
 * into buf (always NUL-terminated when buf_len > 0). Returns buf. */
char *clockevent_feature_names(unsigned features, char *buf, size_t buf_len);

/* ceil(delta_ns * freq_hz / 1e9): the fewest device cycles that last at least delta_ns, so
 * an event programmed with it never fires early. Saturates to UINT64_MAX (only possible
 * above 1 GHz, for delays near 2^64 ns = 584 years). */
uint64_t clockevent_ns_to_cyc_up(const struct clockevent *ce, uint64_t delta_ns);
/* cyc * 1e9 / freq_hz rounded to nearest: how long cyc device cycles really last. Saturates
 * to UINT64_MAX (cycles of a sub-GHz device beyond 584 years). freq_hz 0 gives UINT64_MAX. */
uint64_t clockevent_cyc_to_ns(const struct clockevent *ce, uint64_t cyc);

/* One event delta_ns from now (see "What a past deadline does" above): cycles rounded up,
 * clamped to [max(min_delta_cyc, 1), max_delta_cyc] (counted in clamped_short/long), then
 * set_next(), with the bounded -ETIME retries. Returns 0; -ETIME after the retries (nothing
 * armed: run the event by hand); -ENOTSUP without CE_ONESHOT/CE_DEADLINE; -ENODEV if ce is
 * not usable; or the driver's own error. */
int clockevent_program_ns(struct clockevent *ce, uint64_t delta_ns);

/* One event at the absolute time abs_ns (time_ns() time; now_ns: a recent time_ns()). With
 * set_abs and the wait within max_delta_cyc, the device is armed for the count of its abs_cs
 * at which time_ns() reaches abs_ns: exact when time_ns() runs on abs_cs, otherwise mapped
 * through a pair of readings of both clocks taken together (time_ns_paired) at abs_cs's
 * stated rate, plus one count so it is never early. Either way nothing of the programming
 * adds to the wait. A moment already past (-ETIME) falls back to the relative path with a
 * zero delay. Without set_abs: clockevent_program_ns(abs_ns - now_ns).
 * Same returns as clockevent_program_ns(). */
int clockevent_program_abs_ns(struct clockevent *ce, uint64_t abs_ns, uint64_t now_ns);
/* Periodic events every period_ns, rounded to the nearest whole device cycle: the device can
 * only divide its own clock. *actual_period_ns (if non-NULL) receives what the hardware
 * really makes, which the caller must report: the PIT at 1 ms is 1193 cycles = 999,847 ns,
 * i.e. 1000.152 Hz, not 1000 Hz. Written only on success. Returns 0; -ENOTSUP without
 * CE_PERIODIC; -ENODEV if not usable; -ERANGE if the rounded period is outside
 * [max(min_delta_cyc, 1), max_delta_cyc]; or the driver's error (e.g. -EINVAL from the RTC
 * for a period that is not a power-of-two rate). */
int clockevent_set_periodic_ns(struct clockevent *ce, uint64_t period_ns,
                               uint64_t *actual_period_ns);

/* The driver's interrupt handler calls this after acknowledging its device: counts the
 * event and calls ->event (if set). Any context the handler runs in. */
void clockevent_handle_irq(struct clockevent *ce);

#ifdef TICKLAB_HOSTED
/* Host tests only: forget every registered device. */
void clockevent_test_reset(void);
#endif

#endif
