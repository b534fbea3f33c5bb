/* libticklab/time/tick.c - see tick.h. */
#include "ticklab/tick.h"

#include "ticklab/io.h"
#include "ticklab/clocksource.h"
#include "ticklab/errno.h"
#include "ticklab/kstring.h"

volatile uint64_t jiffies;

static struct tick_info t;
static bool running, nohz_stopped;
static uint64_t last_ns, next_deadline_ns;
static void (*hook)(uint64_t);

void tick_set_hook(void (*fn)(uint64_t))
{
    hook = fn;
}

/* One-shot mode: the next tick at start + k * period. A re-arm that cannot be made (the
 * device said -ETIME through every retry, or refused) gets one more try a whole period
 * from now, which cannot have passed; if that fails too the tick has stopped, and says so
 * in `failures` and `stalled` instead of dying in silence. */
static void rearm(void)
{
    next_deadline_ns += t.period_ns;
    uint64_t now = time_ns();
    /* A late tick (lost periods, a rescue) skips the grid points already passed: armed for
     * each of them in turn, the device would fire back to back, once per missed period. */
    if (next_deadline_ns <= now)
        next_deadline_ns += ((now - next_deadline_ns) / t.period_ns + 1) * t.period_ns;
    uint64_t delta = next_deadline_ns - now;
    if (clockevent_program_ns(t.dev, delta) == 0)
        return;
    t.rearm_retries++;
    next_deadline_ns = now + t.period_ns;
    if (clockevent_program_ns(t.dev, t.period_ns) == 0)
        return;
    t.failures++;
    t.stalled = true;
}

static void restart_periodic(void)
{
    uint64_t p;
    if (clockevent_set_periodic_ns(t.dev, t.period_ns, &p) != 0) {
        t.failures++;
        t.stalled = true;
    }
}

static void restart_after_idle(uint64_t now)
{
    nohz_stopped = false;
    if (t.periodic) {
        restart_periodic();
    } else {
        next_deadline_ns = now;
        rearm();
    }
}

/* Jiffies catch up by whole periods since the last run: after a gap of two periods or more
 * the interrupts in between never came (lost), or were not wanted (the tick was stopped
 * for idle: skipped). */
static void account(uint64_t now, bool was_idle)
{
    uint64_t gap = now - last_ns;
    last_ns = now;
    if (gap > t.max_gap_ns && !was_idle)
        t.max_gap_ns = gap;
    uint64_t periods = (gap + t.period_ns / 2) / t.period_ns;
    uint64_t step = periods > 1 ? periods : 1;
    if (was_idle) {
        t.idle_skipped += step - 1;
    } else if (periods == 0) {
        /* Under half a period after the last run: the interrupt for a period the last run
         * already counted (it came late, was counted with the one it delayed, and this one
         * came on time). Counting it again would put jiffies ahead of the time. */
        t.early++;
        step = 0;
    } else {
        t.lost += step - 1;
    }
    jiffies += step;
}

static void tick_event(struct clockevent *ce)
{
    (void)ce;
    uint64_t now;
    if (timekeeping_accumulate_ns(&now) != 0)
        now = time_ns();       /* it interrupted another writer, which completes the fold */
    bool was_idle = nohz_stopped;
    t.ticks++;
    t.stalled = false;
    account(now, was_idle);
    if (was_idle)
        restart_after_idle(now);
    else if (!t.periodic)
        rearm();
    if (hook)
        hook(jiffies);
}

bool tick_nohz_stop(uint64_t until_ns)
{
    if (!running || nohz_stopped || !(t.dev->features & CE_ONESHOT))
        return false;
    uint64_t now = time_ns();
    if (until_ns <= now + 2 * t.period_ns)
        return false;                  /* not worth stopping for less than two ticks */
    if (clockevent_program_ns(t.dev, until_ns - now) != 0) {
        /* The device could not be armed that far: the tick goes on as it was. */
        restart_after_idle(now);
        return false;
    }
    nohz_stopped = true;
    t.nohz_stops++;
    return true;
}

void tick_nohz_restart(void)
{
    if (!running || !nohz_stopped)
        return;
    unsigned long flags = irq_save();
    clockevent_shutdown(t.dev);
    uint64_t now = time_ns();
    account(now, true);
    timekeeping_accumulate();
    restart_after_idle(now);
    if (hook)
        hook(jiffies);
    irq_restore(flags);
}

bool tick_nohz_stopped(void)
{
    return nohz_stopped;
}

uint64_t tick_last_ns(void)
{
    return last_ns;
}

bool tick_overdue(uint64_t now_ns)
{
    return running && !nohz_stopped && now_ns > last_ns + 4 * t.period_ns + TICK_OVERDUE_NS;
}

void tick_rescue(void)
{
    unsigned long flags = irq_save();
    if (running && !nohz_stopped) {
        t.rescued++;
        clockevent_shutdown(t.dev);
        tick_event(t.dev);
        if (t.periodic)
            restart_periodic();
    }
    irq_restore(flags);
}

static struct clockevent *choose(const char *device, bool oneshot, const struct clockevent *avoid,
                                 char *why, unsigned why_len)
{
    /* A named device ticks in the mode it has: periodic if it can (and one-shot was not
     * asked for), else re-armed one-shots. Without a name (or with one that is unknown),
     * the best periodic device, else the best one-shot. */
    struct clockevent *asked = device ? clockevent_find(device, 0) : 0;
    bool periodic_first = !oneshot && (!asked || (asked->features & CE_PERIODIC));
    struct clockevent *ce = 0;
    if (periodic_first)
        ce = clockevent_select(device, CE_PERIODIC, 0, avoid, why, why_len);
    if (ce && (!asked || ce == asked))
        return ce;
    struct clockevent *one = clockevent_select(device, CE_ONESHOT, 0, avoid, why, why_len);
    if (!ce || (asked && one == asked))
        ce = one;            /* the named one-shot device, or nothing periodic at all */
    return ce;
}

int tick_start(uint64_t hz, const char *device, bool oneshot, char *why, unsigned why_len)
{
    if (hz == 0)
        return -EINVAL;
    return tick_start_ns(1000000000ull / hz, device, oneshot, why, why_len);
}

int tick_start_ns(uint64_t period_ns, const char *device, bool oneshot, char *why,
                  unsigned why_len)
{
    if (period_ns < TICK_MIN_PERIOD_NS)
        return -ERANGE;
    if (period_ns > 1000000000ull)
        return -EINVAL;
    if (running)
        tick_stop();
    struct clockevent *ce = choose(device, oneshot, 0, why, why_len);
    if (!ce)
        return -ENODEV;
    memset(&t, 0, sizeof(t));
    t.dev = ce;
    t.hz = (1000000000ull + period_ns / 2) / period_ns;
    t.periodic = !oneshot && (ce->features & CE_PERIODIC) != 0;
    t.jiffies_start = (1ull << 32) - JIFFIES_BEFORE_WRAP_S * t.hz;
    jiffies = t.jiffies_start;

    unsigned long flags = irq_save();
    int rc = clockevent_claim(ce, tick_event, &t);
    if (rc == 0) {
        last_ns = next_deadline_ns = time_ns();
        if (t.periodic) {
            rc = clockevent_set_periodic_ns(ce, period_ns, &t.period_ns);
        } else {
            t.period_ns = period_ns;
            next_deadline_ns += period_ns;
            rc = clockevent_program_ns(ce, period_ns);
        }
        if (rc)
            clockevent_release(ce);
    }
    running = rc == 0;
    irq_restore(flags);
    return rc;
}

void tick_stop(void)
{
    if (!running)
        return;
    nohz_stopped = false;
    unsigned long flags = irq_save();
    clockevent_release(t.dev);
    running = false;
    irq_restore(flags);
}

bool tick_running(void)
{
    return running;
}

const struct tick_info *tick_info(void)
{
    return &t;
}
