/* lib/time/clockevent.h - clock event devices: hardware that interrupts you
 * after a delay (one-shot) or every period (periodic), as objects, and the core that
 * chooses one, hands it to one owner and programs it in nanoseconds.
 *
 * The device. Each chip's driver embeds a struct clockevent in its own struct (the PIT's
 * struct pit_clockevent, an HPET comparator's struct hpet_channel, a CPU's struct
 * lapic_timer_ce) and fills in the fields marked "driver" below; every callback receives the
 * device, so the driver finds its own struct with clockevent_container(). A device is in
 * one of three states, and the mode setup belongs to the state calls:
 *
 *     SHUTDOWN  --set_state_oneshot-->   ONESHOT  (then set_next_event / set_next_abs per event)
 *     SHUTDOWN  --set_state_periodic-->  PERIODIC (an event every period until shutdown)
 *     any       --set_state_shutdown-->  SHUTDOWN (no further events)
 *
 * so that the per-event call does only what the hardware needs for one event: the LAPIC
 * timer one initial-count write, TSC-deadline one fenced WRMSR, an HPET comparator one
 * comparator write and the check that its moment has not passed, the PIT one count load.
 * The core makes every transition (clockevent_program_ns() leaves SHUTDOWN for ONESHOT by
 * itself); nobody else calls the callbacks.
 *
 * The owner. One user at a time owns a device (the tick, an hrtimer base, a check):
 * clockevent_claim() sets ->event and ->owner, refuses a device someone else owns, and
 * refuses one whose hardware (->hw) another owned device shares: the LAPIC timer's one-shot
 * and TSC-deadline devices are two modes of one timer and never run together.
 * clockevent_release() shuts it down and gives it back. Which devices share hardware is
 * the hw pointer's business, never a comparison of names.
 *
 * Interrupts. The host kernel routes the device's interrupt and acknowledges its interrupt
 * controller (EOI); its handler then calls the driver's irq function, which acknowledges
 * the device and calls clockevent_handle_irq(), which counts the event and calls ->event.
 * A device with an interrupt line the host must mask and unmask gets the line as a struct
 * clockevent_line from the host.
 *
 * Time on the device is counted in its own cycles; conversions go through a 128-bit product
 * (ticklab/muldiv.h), exact for every 64-bit input.
 *
 * What a past deadline does. clockevent_program_ns() takes a delay: 0 (a deadline already
 * passed) is clamped up to min_delta_cyc, so the event comes that much later instead of
 * never. If the device still says -ETIME (the moment passed while it was being programmed:
 * an SMI, a slow bus, a comparator that matches only on equality), the core retries with
 * min_delta_cyc, then twice that, and so on, CLOCKEVENT_ETIME_RETRIES times; if every try
 * fails it returns -ETIME and nothing is armed: the caller must then run the event's work
 * by hand, since no interrupt will come.
 *
 * Concurrency: register and the state calls are made with interrupts off on the CPU that
 * owns the device (a CE_PERCPU device: its own CPU only). Programming may run from the
 * device's own event handler (that is how one-shot mode re-arms). Nothing here locks: one
 * owner, one CPU per device. */
#ifndef TICKLAB_KERNEL_TIME_CLOCKEVENT_H
#define TICKLAB_KERNEL_TIME_CLOCKEVENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/io.h"

struct clocksource;

/* Feature bits (struct clockevent.features). */
#define CE_PERIODIC      (1u << 0)  /* set_state_periodic() works: an event every period */
#define CE_ONESHOT       (1u << 1)  /* set_next_event() works: one event after a delay */
#define CE_ABS           (1u << 2)  /* set_next_abs() works: one event when abs_cs's counter
                                       reaches a count (an HPET comparator against the HPET
                                       main counter, TSC-deadline against the TSC) */
#define CE_PERCPU        (1u << 3)  /* part of one CPU (its local APIC): interrupts only that
                                       CPU, ->cpu, and only that CPU may program it */
#define CE_STOPS_IN_IDLE (1u << 4)  /* a property, not a capability: stops counting in deep
                                       C-states (LAPIC timer without ARAT, AMD C1E), so an
                                       idle CPU must not rely on it alone */

/* How often clockevent_program_ns() re-arms after -ETIME before giving up. With the delta
 * doubling from min_delta_cyc, the last try asks for 2^7 * min_delta_cyc: an event that
 * still cannot be armed that far ahead is a device or a machine in trouble, not a race. */
#define CLOCKEVENT_ETIME_RETRIES 8

enum clockevent_state {
    CE_STATE_SHUTDOWN = 0,       /* no events (the state after register) */
    CE_STATE_PERIODIC,
    CE_STATE_ONESHOT,
};

/* An interrupt line the host routed for a device (an IOAPIC or 8259 input): the driver
 * unmasks it when the device leaves SHUTDOWN and masks it when it enters SHUTDOWN, never per
 * event. NULL functions: a line the host keeps unmasked itself. */
struct clockevent_line {
    void (*mask)(void *ctx);
    void (*unmask)(void *ctx);
    void *ctx;
};

/* The driver's one way to mask and unmask its line (a NULL line or function: nothing). */
static inline void clockevent_line_mask(const struct clockevent_line *l)
{
    if (l && l->mask)
        l->mask(l->ctx);
}

static inline void clockevent_line_unmask(const struct clockevent_line *l)
{
    if (l && l->unmask)
        l->unmask(l->ctx);
}

struct clockevent;
typedef void (*clockevent_handler)(struct clockevent *ce);

struct clockevent {
    /* ---- driver: filled in before clockevent_register() ---- */
    const char *name;            /* "pit", "lapic", "tsc_deadline", "hpet", "hpet1", "rtc":
                                    with cpu, what clockevent= on the command line matches */
    unsigned features;           /* CE_* bits */
    const void *hw;              /* the hardware this device shares with others (a CPU's
                                    local APIC, an HPET block), NULL for none: devices with
                                    the same hw are never owned at the same time */
    unsigned cpu;                /* the CPU its interrupt goes to (0: the boot CPU) */
    const struct clockevent_line *line; /* the interrupt line the host routed for it, which
                                    the driver unmasks and masks with its states (NULL: a
                                    line the host keeps unmasked itself, a LAPIC's) */
    uint64_t freq_hz;            /* device cycles per second (calibrated where the hardware
                                    states nothing: the LAPIC timer). 0: unusable */
    uint64_t min_delta_cyc;      /* shortest delay or period the device takes. For one-shot
                                    devices MEASURED (ce_search.h: the cost of programming
                                    it, so that a delta this short is still ahead when the
                                    write lands), not taken from a data sheet; the driver's
                                    value is a floor from the hardware's rules */
    uint64_t max_delta_cyc;      /* longest delay or period (counter width, divider) */
    int rating;                  /* higher is better; each driver documents its value */
    bool usable;                 /* the driver's verdict; false keeps it from selection */
    const char *unusable_reason; /* why not, a static string, NULL while usable */

    /* Mode setup, called by the core only. 0 or a negative errno. set_state_periodic arms
     * events every period_cyc cycles (min..max_delta_cyc), the first a period from now
     * (-EINVAL: a period the device cannot make, e.g. not a power of two on the RTC). */
    int (*set_state_periodic)(struct clockevent *ce, uint64_t period_cyc);
    int (*set_state_oneshot)(struct clockevent *ce);     /* one-shot mode, nothing armed */
    int (*set_state_shutdown)(struct clockevent *ce);    /* required */
    /* Per event, in ONESHOT state. One event delta_cyc cycles from now
     * (min..max_delta_cyc): 0, -ETIME if the moment had already passed when the device took
     * it (nothing will fire), or a negative errno. A new call replaces the armed event. */
    int (*set_next_event)(struct clockevent *ce, uint64_t delta_cyc);
    /* With CE_ABS: one event at the moment abs_cs's counter reads cs_cyc. 0, or -ETIME if
     * that moment had passed (with the device's safety margin) when the device took it. */
    int (*set_next_abs)(struct clockevent *ce, uint64_t cs_cyc);
    const struct clocksource *abs_cs;
    /* Optional, in ONESHOT state: whether the event last armed is still to come (1: the
     * LAPIC's current count is not 0, the deadline MSR is not cleared, the HPET counter has
     * not reached the comparator) or has happened (0). Asked when an interrupt comes before
     * its owner's deadline, to tell an interrupt left from an earlier programming (the
     * device still counts towards this one) from a device that fired early. NULL: the
     * device cannot say. */
    int (*pending)(struct clockevent *ce);
    /* Optional: the register set_next_event() writes its count to, when writing it is all
     * that call does and it cannot fail (a LAPIC timer's initial count; IO_REG_NONE
     * otherwise). clockevent_program_abs_ns() then arms the device itself, in line, with the
     * count worked out from a count of time_ns()'s counter taken before the clock read, so
     * that a few instructions, not the whole conversion and a call, lie between the read
     * and the moment the device starts counting (docs/hot-paths.md). */
    struct io_reg32 count_reg;

    /* ---- owner: set through clockevent_claim(), cleared by clockevent_release() ---- */
    clockevent_handler event;    /* called for every event */
    void *owner;                 /* the owner's context (the hrtimer base, the tick) */

    /* ---- driver, from its interrupt: ---- */
    uint64_t reached_ns;         /* abs_exact_ns when the interrupt itself proves the device's
                                    counter reached the count it was armed for (a level HPET
                                    comparator's status bit: the driver clears it at every
                                    arming that could leave one set by an earlier count, and
                                    checks the counter after), 0 when it proves nothing. Set
                                    before ->event is called; meaningful only inside it. A
                                    driver that never proves leaves it 0 */

    /* ---- core: register zeroes them; read-only for everybody else ---- */
    enum clockevent_state state;
    uint64_t abs_exact_ns;       /* the moment of the current arming when it went through
                                    set_next_abs with a count of time_ns()'s own counter
                                    (timekeeping_cycles_at(): time_ns() at that count is this
                                    or later, exactly); 0 when the device was armed any other
                                    way since, or shut down */
    uint32_t abs_exact_gen;      /* timekeeping_mapping_gen, read before that count was
                                    taken: the count holds while the two are equal */
    uint64_t cs_cyc_mult;        /* time_ns()'s counter cycles -> device cycles for the
                                    count_reg path (clockevent.c: update_cs_cyc), valid */
    uint32_t cs_cyc_shift;       /* while the two rates are these: */
    uint64_t cs_cyc_from_hz, cs_cyc_to_hz;
    uint64_t cs_cyc_max;         /* the most counter cycles converted (more: max_delta_cyc) */
    uint64_t inline_programs;    /* of `programs`, those armed through count_reg */
    uint64_t min_delta_ns;       /* min_delta_cyc (at least 1) in ns, rounded up, and */
    uint64_t max_delta_ns;       /* max_delta_cyc in ns: kept off the per-event path */
    uint64_t ns_cyc_mult;        /* ns -> cycles by multiply and shift (clockevent.c), */
    uint32_t ns_cyc_shift;       /* valid while ns_cyc_freq == freq_hz (a rate changed */
    uint64_t ns_cyc_freq;        /* after registration takes the division instead) */
    uint64_t events;             /* clockevent_handle_irq() calls */
    uint64_t programs;           /* requests passed to the device: a one-shot request counts
                                    once whatever its -ETIME retries; a periodic start once */
    uint64_t abs_programs;       /* of `programs`, those armed by set_next_abs */
    uint64_t state_changes;      /* set_state_* calls that changed the state */
    uint64_t clamped_short;      /* deltas raised to min_delta_cyc (a late event) */
    uint64_t clamped_long;       /* deltas cut to max_delta_cyc (an early event: the owner
                                    must see nothing is due yet and program again) */
    uint64_t etime_retries;      /* extra set_next_event() calls after -ETIME */
    uint64_t etime_failures;     /* requests that still failed after the retries */
    struct clockevent *next;     /* registration list, in order of registration */
};

/* The driver's struct around a device: clockevent_container(ce, struct hpet_channel, ce). */
#define clockevent_container(ptr, type, member) \
    ((type *)(void *)((char *)(ptr) - offsetof(type, member)))


/* Adds ce to the list, in state SHUTDOWN with its statistics zeroed (the driver leaves the
 * hardware quiet). Checks the driver's promises: a name, set_state_shutdown; with
 * CE_PERIODIC set_state_periodic; with CE_ONESHOT set_state_oneshot and set_next_event;
 * with CE_ABS also set_next_abs and abs_cs; min_delta_cyc <= max_delta_cyc, max_delta_cyc
 * > 0 when any mode is offered. Returns 0, -EINVAL (a promise broken; not listed), -EBUSY
 * (already registered, or the name is taken on that cpu). A device with freq_hz 0 or no
 * mode is listed (the report shows it) but unusable with a reason; a driver-set !usable
 * keeps its reason. */
int clockevent_register(struct clockevent *ce);

/* The names of the devices registered for cpu, in registration order, joined by ", " into
 * buf (always NUL-terminated when buf_len > 0; cut when it does not fit): what a command
 * line may name. Returns buf. */
char *clockevent_names(unsigned cpu, char *buf, size_t buf_len);

/* The device called name whose interrupt goes to cpu, or NULL. */
struct clockevent *clockevent_find(const char *name, unsigned cpu);
struct clockevent *clockevent_list(void);        /* first registered; follow ->next */

/* Whether a and b are one device or share hardware (->hw). */
bool clockevent_shares_hw(const struct clockevent *a, const struct clockevent *b);
/* Whether ce could be claimed now: usable, not owned, and no owned device shares its hw. */
bool clockevent_is_free(const struct clockevent *ce);

/* Makes owner the one user of ce: ->event = event, ->owner = owner. -EBUSY when ce is
 * owned by someone else or an owned device shares its hardware, -ENODEV when it is not
 * usable, -EINVAL without an event. Claiming again with the same owner changes the event
 * only. The device stays in its state (SHUTDOWN after register or release). */
int clockevent_claim(struct clockevent *ce, clockevent_handler event, void *owner);
/* Shuts ce down and clears ->event and ->owner. */
void clockevent_release(struct clockevent *ce);

/* The usable, free device on cpu with every feature in need_features (CE_* bits) and the
 * highest rating (the first registered on a tie), never one that shares hardware with
 * `avoid` (may be NULL). If name is non-NULL and names such a device, that one. If the
 * name cannot be honoured (unknown, unusable, owned, lacking a feature) why receives one
 * line for an error record, e.g. "clockevent=rtc: lacks ONESHOT; using hpet"; if nothing
 * qualifies at all, "no usable clockevent with PERIODIC". Otherwise why is "". why may be
 * NULL or why_len 0. Returns the device or NULL. Claims nothing, changes no device. */
struct clockevent *clockevent_select(const char *name, unsigned need_features, unsigned cpu,
                                     const struct clockevent *avoid, char *why,
                                     size_t why_len);

/* Names of the CE_* bits set in features, joined by '|' ("PERIODIC|ONESHOT"; "" for none),
 * into buf (always NUL-terminated when buf_len > 0). Returns buf. */
char *clockevent_feature_names(unsigned features, char *buf, size_t buf_len);
/* "shutdown", "periodic", "oneshot". */
const char *clockevent_state_name(enum clockevent_state s);

/* ceil(delta_ns * freq_hz / 1e9): the fewest device cycles that last at least delta_ns, so
 * an event programmed with it never fires early. Saturates to UINT64_MAX. */
uint64_t clockevent_ns_to_cyc_up(const struct clockevent *ce, uint64_t delta_ns);
/* cyc * 1e9 / freq_hz rounded to nearest: how long cyc device cycles really last. Saturates
 * to UINT64_MAX; freq_hz 0 gives UINT64_MAX. */
uint64_t clockevent_cyc_to_ns(const struct clockevent *ce, uint64_t cyc);
/* ce->pending() where the device has it: 1 (the armed event is still to come), 0 (it has
 * happened), -ENOTSUP (the device cannot say, or is not in ONESHOT state). */
int clockevent_pending(struct clockevent *ce);

/* How early a device may fire and still count as on time: the clock mappings' error (an
 * absolute deadline converted through a pair of clock reads, rates calibrated to ppm):
 * 1 us plus 2000 ppm of the delay it was armed for. */
#define CLOCKEVENT_EARLY_TOLERANCE_NS(delay_ns) (1000ull + (delay_ns) / 500)

/* An interrupt from ce came before deadline_ns, the moment it was armed for at armed_at_ns
 * (both on now_ns()'s clock): an interrupt left from an earlier programming (the device
 * still counts towards this moment: stale), or the device fired early, a defect? The
 * device is asked (clockevent_pending), and the clock read again after its answer: a CPU
 * taken away between the interrupt and the answer (a host scheduling a VM) lets the device
 * reach its moment meanwhile, which is no early fire. Returns how many ns before the
 * deadline the device fired, when it did by more than CLOCKEVENT_EARLY_TOLERANCE_NS of the
 * armed delay; 0 for stale (and for a device that cannot say). */
uint64_t clockevent_early_by(struct clockevent *ce, uint64_t deadline_ns, uint64_t armed_at_ns,
                             uint64_t (*now_ns)(void));
/* Sets min_delta_cyc (a measured value, clockevent_register's checks apply: -EINVAL when
 * 0 or above max_delta_cyc) and the ns figures the core keeps from it. */
int clockevent_set_min_delta(struct clockevent *ce, uint64_t min_delta_cyc);

/* Puts ce in state s (the core's one door to the state calls; a no-op when already
 * there, except that PERIODIC always restarts with period_cyc). Returns 0, the driver's
 * error (the device is then in SHUTDOWN), -ENOTSUP for a state the device lacks, -ENODEV if
 * it is not usable. Shutdown always succeeds. */
int clockevent_set_state(struct clockevent *ce, enum clockevent_state s, uint64_t period_cyc);
static inline void clockevent_shutdown(struct clockevent *ce)
{
    clockevent_set_state(ce, CE_STATE_SHUTDOWN, 0);
}

/* One event delta_ns from now (see "What a past deadline does" above): cycles rounded up,
 * clamped to [max(min_delta_cyc, 1), max_delta_cyc] (counted in clamped_short/long), then
 * set_next_event() with the bounded -ETIME retries, after entering ONESHOT if the device
 * was elsewhere. Returns 0; -ETIME after the retries (nothing armed: run the event by
 * hand); -ENOTSUP without CE_ONESHOT; -ENODEV if ce is not usable; or the driver's error. */
int clockevent_program_ns(struct clockevent *ce, uint64_t delta_ns);

/* One event at the absolute time abs_ns (time_ns() time; now_ns: a recent time_ns()).
 * With CE_ABS and the wait within max_delta_cyc, the device is armed for the count of its
 * abs_cs at which time_ns() reaches abs_ns: exact when time_ns() runs on abs_cs, otherwise
 * mapped through a pair of readings of both clocks taken together (time_ns_paired) at
 * abs_cs's stated rate, plus one count so it is never early. Either way nothing of the
 * programming adds to the wait. A deadline closer than min_delta (or already past) goes
 * the relative way with min_delta, so the measured minimum holds here too, and an -ETIME
 * from set_next_abs (the moment passed during the write) is retried the relative way.
 * Without CE_ABS: clockevent_program_ns(abs_ns - time_ns()), the clock read as late as
 * possible so that only the conversion and the device write add to the wait. Same
 * returns as clockevent_program_ns(). */
int clockevent_program_abs_ns(struct clockevent *ce, uint64_t abs_ns, uint64_t now_ns);

/* One event after exactly cyc device cycles: no clamp to min_delta, no -ETIME retry, the
 * device's own answer returned (after entering ONESHOT if needed). For measuring the
 * device itself (the min-delta search, the cost of one programming); counts in `programs`. */
int clockevent_program_cyc(struct clockevent *ce, uint64_t cyc);

/* Periodic events every period_ns, rounded to the nearest whole device cycle: the device can
 * only divide its own clock. *actual_period_ns (if non-NULL) receives what the hardware
 * really makes by its stated rate, which the caller must report: the PIT at 1 ms is 1193
 * cycles = 999,847 ns, i.e. 1000.152 Hz, not 1000 Hz. Written only on success. Returns 0;
 * -ENOTSUP without CE_PERIODIC; -ENODEV if not usable; -ERANGE if the rounded period is
 * outside [max(min_delta_cyc, 1), max_delta_cyc]; or the driver's error (e.g. -EINVAL from
 * the RTC for a period that is not a power-of-two rate). */
int clockevent_set_periodic_ns(struct clockevent *ce, uint64_t period_ns,
                               uint64_t *actual_period_ns);

/* The driver's irq function calls this after acknowledging its device: counts the event
 * and calls ->event (if set). Any context the handler runs in. */
static inline void clockevent_handle_irq(struct clockevent *ce)
{
    ce->events++;
    if (ce->event)
        ce->event(ce);
}

/* The same, from a driver whose interrupt proves the device's counter reached the count it
 * was armed for (see reached_ns): the moment of an exact absolute arming goes to ->event as
 * reached_ns, and the arming is spent (a one-shot count is reached once). */
static inline void clockevent_handle_irq_reached(struct clockevent *ce)
{
    ce->reached_ns = ce->abs_exact_ns;
    ce->abs_exact_ns = 0;
    clockevent_handle_irq(ce);
}

#ifdef TICKLAB_HOSTED
/* Host tests only: forget every registered device. */
void clockevent_test_reset(void);
#endif

#endif
