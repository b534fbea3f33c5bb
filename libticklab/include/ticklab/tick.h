/* libticklab/include/ticklab/tick.h - the periodic jiffies tick.
 *
 * HZ ticks per second from one clock event device: in its periodic mode when it has one
 * (the PIT, the LAPIC timer, an HPET comparator, the RTC), else by re-arming a one-shot each
 * tick. The hardware makes whole device cycles only, so the tick period is what the device
 * can make, not 1e9/HZ: the PIT at HZ=1000 counts 1193 input clocks, 999,847 ns, 1000.152 Hz.
 * tick_start() reports the real period.
 *
 * Jiffies are 64 bits and start 2 s before the low 32 bits wrap, so every run that ticks
 * for two seconds crosses the wrap. A lost tick (an interrupt that never came) shows as a gap
 * of two or more periods between two handler runs, measured with time_ns(); the missing
 * jiffies are added so that jiffies keep pace with time, and counted. An interrupt under half
 * a period after the previous one (the on-time successor of a late one, whose gap already
 * counted both periods) advances nothing and is counted as early. Each tick folds the
 * clocksource into time_ns() (timekeeping_accumulate) and runs the due wheel timers. */
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
    uint64_t lost;              /* periods with no interrupt, caught up */
    uint64_t early;             /* handler runs under half a period after the previous one:
                                   a late interrupt's period was already counted, so these
                                   do not advance jiffies */
    uint64_t max_gap_ns;        /* longest time between two handler runs */
    uint64_t rearm_retries;     /* one-shot mode: re-arms that failed once and were made a
                                   whole period from then instead */
    uint64_t failures;          /* the device could not be armed at all: the tick stopped
                                   until tick_rescue() or the next interrupt */
    bool stalled;               /* the last arming failed and no tick has run since */
    uint64_t rescued;           /* tick_rescue() runs */
    uint64_t nohz_stops;        /* times the tick was stopped for idle */
    uint64_t idle_skipped;      /* periods not ticked while stopped (jiffies caught up) */
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
uint64_t tick_last_ns(void);

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
