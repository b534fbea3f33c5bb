/* lib/time/tick.h - the periodic jiffies tick.
 *
 * HZ ticks per second from one clock event device: in its periodic mode when it has one
 * (the PIT, the LAPIC timer, an HPET comparator, the RTC), else by re-arming a one-shot each
 * tick. The hardware makes whole device cycles only, so the tick period is what the device
 * can make, not 1e9/HZ: the PIT at HZ=1000 counts 1193 input clocks, 999,847 ns, 1000.152 Hz.
 * tick_start() reports the real period.
 *
 * A tick is an object (struct tick), bound to one CPU's devices (tick->cpu), like an hrtimer
 * base: a kernel keeps one per CPU that ticks. Its jiffies are its own (tick->jiffies).
 *
 * Jiffies are 64 bits and start 2 s before the low 32 bits wrap, so every run that ticks
 * for two seconds crosses the wrap. Jiffies keep pace with time_ns(): they count the whole
 * periods passed since the tick started (on a grid kept to 1/65536 ns), never one that has
 * not yet come, so a wheel timer never runs before its jiffy in real time, even on a device
 * faster than the clocksource says (its extra interrupts count as early). A tick handler
 * run that finds two or more periods passed counts all but one as lost (their interrupts
 * had not come); one that finds none is an interrupt that came late after its period was
 * counted lost (held past the next edge, or re-injected by a hypervisor: counted as late,
 * so that lost - late never came and nothing counts twice), or else one more than the
 * device should make (early).
 * tick_sync() brings jiffies up to date between interrupts, so that a timer added while
 * the tick's interrupt is late is not added against a stale jiffies (and fired early when
 * the catch-up comes). Each tick reads time_ns() through timekeeping_tick_ns(), which folds
 * the clocksource into it once an eighth of the longest allowed gap has passed (not every
 * tick: a fold is a writer's publication, most of a tick's cost otherwise), and runs the
 * due wheel timers. */
#ifndef TICKLAB_TIME_TICK_H
#define TICKLAB_TIME_TICK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/clockevent.h"
#include "ticklab/units.h"
#include "ticklab/wheel.h"

#define JIFFIES_BEFORE_WRAP_S 2
/* The shortest tick: 20 us (50 kHz). Below it the handler alone can take the whole period on
 * an emulator, and the interrupt storm would starve the run: a command line must never be
 * able to hang ticklab. */
#define TICK_MIN_PERIOD_NS 20000ull
/* The longest: one second. */
#define TICK_MAX_PERIOD_NS NSEC_PER_SEC

/* hz <-> period: the one conversion, rounded to nearest (0 for 0). */
static inline uint64_t tick_period_of_hz(uint64_t hz)
{
    return hz ? (NSEC_PER_SEC + hz / 2) / hz : 0;
}
static inline uint64_t tick_hz_of_period(uint64_t period_ns)
{
    return period_ns ? (NSEC_PER_SEC + period_ns / 2) / period_ns : 0;
}

struct tick_info {
    struct clockevent *dev;     /* claimed by the tick while it runs */
    bool periodic;              /* device periodic mode, or one-shot re-armed each tick */
    uint64_t hz;                /* requested (the nearest whole rate for tick_start_ns) */
    uint64_t period_ns;         /* what the device really makes */
    uint64_t jiffies_start;
    uint64_t ticks;             /* handler runs */
    uint64_t lost;              /* periods whose interrupt had not come when a later one ran
                                   (jiffies caught up); the late ones among them come back
                                   as `late`: lost - late never came */
    uint64_t late;              /* interrupts that came after their period was counted lost:
                                   held past the next edge, or re-injected by a hypervisor */
    uint64_t early;             /* interrupts for no new period, with none counted lost: more
                                   interrupts than the period allows */
    uint64_t max_gap_ns;        /* longest time between two handler runs */
    uint64_t rearm_retries;     /* one-shot mode: re-arms that failed once and were made a
                                   whole period from then instead */
    uint64_t failures;          /* the device could not be armed at all: the tick stopped
                                   until tick_rescue() or the next interrupt */
    bool stalled;               /* the last arming failed and no tick has run since */
    uint64_t rescued;           /* tick_rescue() runs */
    uint64_t nohz_stops;        /* times the tick was stopped for idle */
    uint64_t idle_skipped;      /* periods not ticked while stopped (jiffies caught up) */
    /* The period as the device really makes it, measured by time_ns() between handler runs
     * (from the fourth run, past the first runs' cold paths, until the first stop for idle,
     * which moves the phase): the first and the last run
     * with a new period, and the periods (jiffies) between them. See tick_measured_period_ps. */
    uint64_t measured_first_ns, measured_last_ns, measured_periods;
    uint64_t ticks_all_starts;  /* handler runs since the struct was zeroed, across every
                                   tick_start */
    uint64_t lost_earlier_starts;  /* `lost` of the starts before this one, summed: with
                                   `lost`, every tick lost since the struct was zeroed */
    /* When the tick did not land on the best-rated usable device of its CPU: that device,
     * and why (-EBUSY: it or its hardware was claimed by someone else; else what starting
     * it returned). NULL when it did. */
    const char *passed_over;
    int passed_over_rc;
};

/* One tick. Zero it, set cpu (the CPU whose devices it may take; 0: the boot CPU) and, if
 * wanted, the wheel; then tick_start(). The rest is the tick's own state. */
struct tick {
    unsigned cpu;
    struct wheel *wheel;        /* advanced to the new jiffies by every handler run (and by
                                   tick_nohz_restart); NULL: none. Its usual call, nothing
                                   due, is made in line (wheel_advance_quiet) */
    volatile uint64_t jiffies;
    struct tick_info info;
    /* ---- private ---- */
    bool running, nohz_stopped;
    uint64_t last_ns, next_deadline_ns;
    /* Jiffies stand for a grid of period-long steps in time_ns(): ref (ref_q: whole ns in
     * its high 64 bits, 1/65536 ns in the top 16 bits of its low 64) is the grid point the
     * current jiffies value stands for, never later than the last look at the clock. The
     * period is kept to 1/65536 ns (the PIT at HZ=1000 makes 999,847.47 ns), so the grid
     * does not drift from the device over hours; period_q is it in ref_q's form, so that one
     * period's step is a 128-bit add (an add and an add-with-carry). */
    unsigned __int128 ref_q, period_q;
    unsigned __int128 two_up_q; /* 2 * period_q + 2^64 - 1: ref_q plus it, high half, is the
                                   grid point two periods on, rounded up to whole ns */
    uint64_t period_int;
    uint32_t period_frac;
    uint64_t next_ns, next2_ns; /* when one and two periods will have passed (grid_next);
                                   next_ns is UINT64_MAX while the next handler run must go
                                   the whole way, not the fast one (set_fast_bound() in tick.c) */
    uint64_t measured_j0;       /* jiffies at info.measured_first_ns */
    uint64_t owed;              /* periods tick_sync() added that no interrupt has come for */
    uint64_t *measure_to;       /* where the fast run writes the measured period's last run
                                   and periods: &info.measured_last_ns while measuring, else
                                   measure_void (set_fast_bound() in tick.c) */
    uint64_t measure_void[2];
};

/* Starts t at period_ns (TICK_MIN_PERIOD_NS .. TICK_MAX_PERIOD_NS) on a device of t->cpu,
 * claiming it (a running t is stopped first). The device choice, the one place it is made:
 * `prefer` if given and it can tick at this period, else the best one that can (by rating:
 * a free device with a periodic mode whose range holds the period, unless `oneshot`, else
 * one with a one-shot mode, re-armed each tick at absolute deadlines start + k * period).
 * A preferred device that cannot is said in *why ("clockevent=rtc cannot tick at 1000000 ns
 * (-22); ticking on lapic"); why is "" otherwise. Returns 0; -ERANGE (a period out of
 * range), -ENODEV (no device can make it), or the last device's refusal. */
int tick_start_ns(struct tick *t, uint64_t period_ns, struct clockevent *prefer, bool oneshot,
                  char *why, size_t why_len);
/* The same at hz (the period tick_period_of_hz(hz)); -EINVAL for hz 0. */
int tick_start(struct tick *t, uint64_t hz, struct clockevent *prefer, bool oneshot, char *why,
               size_t why_len);
void tick_stop(struct tick *t);
bool tick_running(const struct tick *t);
/* Jiffies brought up to date with time_ns() now (the periods passed since the last tick
 * whose interrupt has not come yet); a no-op when the tick is not running. Call before
 * reading jiffies to add a timer outside the tick. Any context. */
void tick_sync(struct tick *t);
static inline const struct tick_info *tick_info(const struct tick *t)
{
    return &t->info;
}

/* Tickless idle. tick_nohz_stop(): when nothing is due before until_ns (absolute time_ns),
 * stop the periodic tick and arm a one-shot on the same device for until_ns; false when the
 * tick is not running, already stopped, the device has no one-shot mode, or until_ns is
 * less than two periods away. The wake-up's tick catches jiffies up (counted as
 * idle_skipped, not lost) and restarts the periodic tick. tick_nohz_restart() does the same
 * at once (leaving idle early). Interrupts off for both. */
bool tick_nohz_stop(struct tick *t, uint64_t until_ns);
void tick_nohz_restart(struct tick *t);
bool tick_nohz_stopped(const struct tick *t);
/* The tick's period as measured by time_ns() (struct tick_info.measured_*), in ps; 0 until
 * two handler runs with eight periods between them have been seen. */
uint64_t tick_measured_period_ps(const struct tick *t);
/* time_ns() of the last tick handler run. */
uint64_t tick_last_ns(const struct tick *t);
/* time_ns() at which jiffies reach j on the tick's grid (j may be past). */
uint64_t tick_jiffies_ns(struct tick *t, uint64_t j);

/* A tick that stopped coming: the tick runs (not stopped for idle) and nothing ran for four
 * periods and TICK_OVERDUE_NS more. tick_rescue() then runs the tick's work by hand (jiffies
 * catch up as after lost ticks, counted in `rescued`) and re-arms the device. A caller that
 * wakes by another clock (ticklab: every HLT has a backup wake-up) checks it after each
 * wake-up, so a dead device ends in a count, never in a run without a tick. Interrupts
 * off; not from the tick itself. */
#define TICK_OVERDUE_NS 50000000ull
bool tick_overdue(const struct tick *t, uint64_t now_ns);
void tick_rescue(struct tick *t);

#ifdef TICKLAB_HOSTED
extern uint64_t tick_test_fast_runs;   /* host builds: handler runs that took the fast way */
#endif

#endif
