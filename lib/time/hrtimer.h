/* lib/time/hrtimer.h - high-resolution timers: one-shot deadlines in ns on a clock event
 * device, ordered by the tqueue (tqueue.h), the device reprogrammed only when the earliest
 * deadline changes. Pure logic: the clock is a function pointer (the kernel passes time_ns,
 * host tests a fake), the device a struct clockevent. No allocation, no locks, no FPU.
 *
 * Reprogramming rule (what `reprograms` counts: device programmings, relative or absolute):
 * - outside the interrupt, after a start or cancel, the device is programmed iff the queue
 *   is non-empty and (the device is not armed, or the head's expiry differs from the
 *   expiry it is armed for); if the queue became empty and the device was armed it is shut
 *   down (`shutdowns`);
 * - hrtimer_interrupt() considers the device fired (not armed) on entry; after running what
 *   is due it programs the new head once (more only on -ETIME / a head already due again:
 *   `retries`, then a hang); with the queue empty it leaves the device as it is (a one-shot
 *   that fired holds nothing, and staying in one-shot mode keeps the next start to one
 *   device write);
 * - starts and cancels made by callbacks never touch the device: the interrupt's end does.
 *
 * Per CPU: a base belongs to the CPU its device interrupts (a CE_PERCPU device: the CPU it
 * is part of); start/cancel/rescue run on that CPU with interrupts off. Nothing is global:
 * the base owns its device (clockevent_claim), and the device's event finds the base as
 * its owner. A kernel keeps one or more bases per CPU and rescues each on its own CPU. */
#ifndef TICKLAB_TIME_HRTIMER_H
#define TICKLAB_TIME_HRTIMER_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/clockevent.h"
#include "ticklab/tqueue.h"

/* Passes of run-what-is-due + program in one interrupt before it declares a hang. */
#define HRTIMER_MAX_TRIES 3
/* Longest breathing delay programmed after a hang (Linux: 100 ms). */
#define HRTIMER_HANG_MAX_DELAY_NS 100000000ull
/* Default storm limit: more expiries than this in one interrupt stop the pass; the rest
 * runs min_delta later. Also what bounds a callback that re-arms itself in the past. */
#define HRTIMER_STORM_LIMIT 4096u

enum hrtimer_restart { HRTIMER_NORESTART, HRTIMER_RESTART };
enum hrtimer_mode { HRTIMER_MODE_ABS, HRTIMER_MODE_REL };

struct hrtimer {
    struct tq_node node;      /* first member; zeroed = not queued */
    /* Runs from hrtimer_interrupt with the timer dequeued. To repeat: advance expires_ns
     * (hrtimer_forward) and return HRTIMER_RESTART. May start/cancel any timer, itself
     * included (a timer the callback started again itself stays as started). */
    enum hrtimer_restart (*fn)(struct hrtimer *);
    uint64_t expires_ns;      /* absolute, in now_ns() time */
};

/* The clock a base keeps its deadlines in, named: time_ns() (hrtimer_clock_time_ns), whose
 * deadlines the device can be armed with as absolute counts when it compares against the
 * clocksource time_ns() runs on (clockevent_program_abs_ns), or another ns clock (a test's
 * fake), for which only the delay is known. */
struct hrtimer_clock {
    const char *name;
    uint64_t (*now_ns)(void);
    bool is_time_ns;
};
extern const struct hrtimer_clock hrtimer_clock_time_ns;

struct hrtimer_stats {
    uint64_t interrupts;      /* hrtimer_interrupt calls */
    uint64_t reprograms;      /* device programmings (clockevent_program_abs_ns/_ns) */
    uint64_t shutdowns;       /* device shutdowns (queue became empty) */
    uint64_t expired;         /* callbacks run */
    uint64_t retries;         /* extra passes in an interrupt (-ETIME or head due again) */
    uint64_t hangs;           /* interrupts that gave up after HRTIMER_MAX_TRIES passes */
    uint64_t max_hang_ns;     /* longest time spent in such an interrupt */
    uint64_t storm_detected;  /* interrupts that hit storm_limit expiries */
    uint64_t program_errors;  /* programmings that failed (nothing armed) */
    uint64_t restart_errors;  /* HRTIMER_RESTART that could not be queued (queue full) */
    uint64_t rescued;         /* hrtimer_rescue() runs: device events that never came */
    uint64_t spurious;        /* interrupts that found nothing due (an interrupt for a
                                 timer cancelled or rescued meanwhile, or an early one) */
    /* Of the spurious ones, those that came while the device was armed for a moment still
     * ahead, told apart by asking the device (clockevent_pending): */
    uint64_t stale;           /* the device still counts towards its moment: an interrupt
                                 left from an earlier programming (or one it cannot say) */
    uint64_t early_fires;     /* the device says its event happened, more than
                                 CLOCKEVENT_EARLY_TOLERANCE_NS before the moment it was armed for:
                                 the device (or its programming) fired early, a defect */
    uint64_t early_max_ns;    /* the earliest of those, ns before the moment */
    uint64_t proven;          /* of `interrupts`, those whose device proved the moment it
                                 was armed for had come (clockevent reached_ns): the timers
                                 due by it ran without a clock read before them */
};

struct hrtimer_base {
    struct tq q;
    struct clockevent *dev;
    const struct hrtimer_clock *clock;
    uint64_t (*now_ns)(void);     /* clock->now_ns, kept here for the interrupt path */
    uint32_t storm_limit;     /* expiries an interrupt may run: HRTIMER_STORM_LIMIT after
                                 init; may be changed (0 counts as 1: the head always runs) */
    bool in_interrupt;        /* callbacks are running: no device programming */
    bool armed;               /* the device is armed for armed_ns */
    bool hang_pending;        /* a hang delay is armed: starts do not reprogram until it fires */
    uint64_t armed_ns;
    uint64_t armed_at_ns;     /* when it was armed for armed_ns */
    bool entry_early;         /* the interrupt now running came before the earliest timer
                                 was due (see stale, early_fires) */
    struct hrtimer *running;  /* the timer whose callback runs, or NULL */
    struct hrtimer_stats stats;
};

/* A base whose queue holds at most capacity timers (hrtimer_start: -ENOMEM beyond). Claims
 * dev for the base (its event runs the base's expiry) and leaves it shut down. 0; -EINVAL
 * (a missing argument, capacity 0); -EBUSY (dev, or hardware it shares, is owned by
 * someone else: clockevent_claim); -ENODEV (dev unusable). Initialising a base again on the
 * same device is allowed (it keeps the claim). */
int hrtimer_base_init(struct hrtimer_base *base, struct clockevent *dev,
                      const struct hrtimer_clock *clock, uint32_t capacity);
/* Gives the device back (clockevent_release). Timers still queued stay queued and never
 * fire; callers cancel them first. */
void hrtimer_base_release(struct hrtimer_base *base);
/* After a release: claims the same device again with an empty queue (as a fresh
 * hrtimer_base_init) but keeps the statistics (stats), so that counts taken across a loan of
 * the device (interrupts, spurious, stale, ...) stay monotonic. Returns hrtimer_base_init's
 * result. */
int hrtimer_base_reclaim(struct hrtimer_base *base, uint32_t capacity);

/* Queues t (re-queues it if already queued) to expire at expires_ns (ABS) or now +
 * expires_ns (REL, saturating at UINT64_MAX = never). An expiry in the past fires after the
 * device's min delta. If the device cannot be armed at all (-ETIME after its retries), the
 * interrupt handler is run by hand, from this caller's context. 0, -EINVAL (no fn, bad
 * mode), -ENOMEM (queue full). */
int hrtimer_start(struct hrtimer_base *base, struct hrtimer *t, uint64_t expires_ns,
                  enum hrtimer_mode mode);

/* Dequeues t. true if it was queued. Does not wait for a running callback (single CPU). */
bool hrtimer_cancel(struct hrtimer_base *base, struct hrtimer *t);

/* For a timer that is NOT queued (its callback): if expires_ns <= now_ns, adds the fewest
 * intervals that put expires_ns strictly after now_ns and returns how many (the overrun
 * count, >= 1). Returns 0 and changes nothing if expires_ns > now_ns, interval_ns is 0, or
 * t is queued. Never overflows: if no such time fits in 64 bits, expires_ns saturates to
 * UINT64_MAX (and the count to UINT64_MAX if it does not fit either). */
uint64_t hrtimer_forward(struct hrtimer *t, uint64_t now_ns, uint64_t interval_ns);

/* Inside a callback: whether the interrupt running it came before the base's earliest
 * timer was due (stale or early_fires), so that the time since that interrupt's entry is
 * not this timer's latency. */
static inline bool hrtimer_interrupt_came_early(const struct hrtimer_base *b)
{
    return b->in_interrupt && b->entry_early;
}

/* The clock event handler: runs every due timer in deadline order, then programs the
 * device for the new head (see the top of this file); bounded, never loops forever. */
void hrtimer_interrupt(struct hrtimer_base *base);

/* Lost-event rescue, for the caller's periodic check (ticklab calls it after every wake-up
 * from HLT, which a backup device bounds): when the earliest timer is more than grace_ns
 * overdue, the device's event was lost (hardware or an emulator dropped it); counts it in
 * `rescued`, shuts the device down and runs hrtimer_interrupt() by hand. true if it did.
 * Interrupts off; never from a callback. */
bool hrtimer_rescue(struct hrtimer_base *base, uint64_t grace_ns);

static inline bool hrtimer_queued(const struct hrtimer *t) { return tq_queued(&t->node); }

#endif
