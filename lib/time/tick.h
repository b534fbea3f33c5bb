/* lib/time/tick.h - the periodic jiffies tick.
 *
 * HZ ticks per second from one clock event device: in its periodic mode when it has one
 * (the PIT, the LAPIC timer, an HPET comparator, the RTC), else by re-arming a one-shot each
 * tick. The hardware makes whole device cycles only, so the tick period is what the device
 * can make, not 1e9/HZ: the PIT at HZ=1000 counts 1193 input clocks, 999,847 ns, 1000.152 Hz.
 * tick_start() reports the real period.
 *
 * Jiffies are 64 bits and start 2 s before the low 32 bits wrap, so every run that ticks
 * for two seconds crosses the wrap. Jiffies keep pace with time_ns(): they count the whole
 * periods passed since the tick started (on a grid kept to 1/65536 ns), never one that has
 * not yet come, so a wheel timer never runs before its jiffy in real time. A tick handler
 * run that finds two or more periods passed counts all but one as lost (their interrupts
 * had not come); one that finds none is an interrupt that came late after its period was
 * counted lost (held past the next edge, or re-injected by a hypervisor: counted as late,
 * so that lost - late never came and nothing counts twice), or else one more than the
 * device should make (early).
 * tick_sync() brings jiffies up to date between interrupts, so that a timer added while
 * the tick's interrupt is late is not added against a stale jiffies (and fired early when
 * the catch-up comes). Each tick folds the clocksource into time_ns()
 * (timekeeping_accumulate) and runs the due wheel timers. */
#ifndef TICKLAB_TIME_TICK_H
#define TICKLAB_TIME_TICK_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"

#define JIFFIES_BEFORE_WRAP_S 2
/* The shortest tick: 20 us (50 kHz). Below it the handler alone can take the whole period on
 * an emulator, and the interrupt storm would starve the run: a command line must never be
 * able to hang ticklab. */
#define TICK_MIN_PERIOD_NS 20000ull

struct tick_info {
    struct clockevent *dev;     /* claimed by the tick while it runs */
    bool periodic;              /* device periodic mode, or one-shot re-armed each tick */
    uint64_t hz;                /* requested */
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
    uint64_t ticks_all_starts;  /* handler runs since boot, across every tick_start */
};

extern volatile uint64_t jiffies;

/* Starts the tick at hz on the boot CPU's named device (NULL: the best free periodic one,
 * else the best free one-shot), claiming it (a running tick is stopped first).
 * oneshot: re-arm a one-shot every tick even on a device with a periodic mode
 * (tickmode=oneshot: the deadlines are absolute, start + k * period, so re-arming does not
 * drift). Fills *why when the named device could not be used. Returns 0 or a negative
 * errno (-ENODEV: no usable free device, -ERANGE: a period under TICK_MIN_PERIOD_NS, or
 * the device's refusal). */
int tick_start(uint64_t hz, const char *device, bool oneshot, char *why, unsigned why_len);
/* The same with the period in ns (the hz reported is the nearest whole rate): how the
 * experiments run ticks of 300 us. -ERANGE under TICK_MIN_PERIOD_NS, -EINVAL above 1 s. */
int tick_start_ns(uint64_t period_ns, const char *device, bool oneshot, char *why,
                  unsigned why_len);
void tick_stop(void);
bool tick_running(void);
/* Jiffies brought up to date with time_ns() now (the periods passed since the last tick
 * whose interrupt has not come yet); a no-op when the tick is not running. Call before
 * reading jiffies to add a timer outside the tick. Any context. */
void tick_sync(void);
const struct tick_info *tick_info(void);

/* Tickless idle. tick_nohz_stop(): when nothing is due before until_ns (absolute time_ns),
 * stop the periodic tick and arm a one-shot on the same device for until_ns; false when the
 * tick is not running, already stopped, the device has no one-shot mode, or until_ns is
 * less than two periods away. The wake-up's tick catches jiffies up (counted as
 * idle_skipped, not lost) and restarts the periodic tick. tick_nohz_restart() does the same
 * at once (leaving idle early). Interrupts off for both. */
bool tick_nohz_stop(uint64_t until_ns);
void tick_nohz_restart(void);
bool tick_nohz_stopped(void);
/* The tick's period as measured by time_ns() (struct tick_info.measured_*), in ps; 0 until
 * two handler runs with eight periods between them have been seen. */
uint64_t tick_measured_period_ps(void);
/* time_ns() of the last tick handler run. */
uint64_t tick_last_ns(void);
/* time_ns() at which jiffies reach j on the tick's grid (j may be past). */
uint64_t tick_jiffies_ns(uint64_t j);

/* A tick that stopped coming: the tick runs (not stopped for idle) and nothing ran for four
 * periods and TICK_OVERDUE_NS more. tick_rescue() then runs the tick's work by hand (jiffies
 * catch up as after lost ticks, counted in `rescued`) and re-arms the device. A caller that
 * wakes by another clock (ticklab: every HLT has a backup wake-up) checks it after each
 * wake-up, so a dead device ends in a count, never in a run without a tick. Interrupts
 * off; not from the tick itself. */
#define TICK_OVERDUE_NS 50000000ull
bool tick_overdue(uint64_t now_ns);
void tick_rescue(void);

/* Wheel hook: called from the tick with the new jiffies value. */
void tick_set_hook(void (*fn)(uint64_t jiffies));

#endif
