/* lib/time/tick.c - see tick.h. */
#include "ticklab/tick.h"

#include "ticklab/io.h"
#include "ticklab/clocksource.h"
#include "ticklab/errno.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"

volatile uint64_t jiffies;

static struct tick_info t;
static bool running, nohz_stopped;
static uint64_t last_ns, next_deadline_ns;
static void (*hook)(uint64_t);

/* Jiffies stand for a grid of period-long steps in time_ns(): `ref_ns` (and 1/65536 ns in
 * ref_frac) is the grid point the current jiffies value stands for, never later than the
 * last look at the clock. The period is kept to 1/65536 ns (the PIT at HZ=1000 makes
 * 999,847.47 ns), so the grid does not drift from the device over hours. */
static uint64_t ref_ns, period_int;
static uint32_t ref_frac, period_frac;
static uint64_t measured_j0; /* jiffies at tick_info.measured_first_ns */
static uint64_t ticks_all;   /* handler runs since boot */
static uint64_t owed;        /* periods tick_sync() added that no interrupt has come for */

void tick_set_hook(void (*fn)(uint64_t))
{
    hook = fn;
}

/* Whole periods from the grid point to now (none when now is before it). */
static uint64_t periods_to(uint64_t now)
{
    if (now <= ref_ns)
        return 0;
    uint64_t d = now - ref_ns;
    uint64_t q16 = (period_int << 16) | period_frac;
    if (d < (1ull << 47))
        return ((d << 16) - ref_frac) / q16;
    return d / (period_int + 1);           /* days of idle: a period's fraction no longer
                                              matters; the next look corrects it */
}

static void step(uint64_t n)
{
    uint64_t frac = n * period_frac + ref_frac;
    ref_ns += n * period_int + (frac >> 16);
    ref_frac = (uint32_t)(frac & 0xFFFF);
    jiffies += n;
}

void tick_sync(void)
{
    unsigned long flags = irq_save();
    if (running) {
        uint64_t n = periods_to(time_ns());
        step(n);
        owed += n;
    }
    irq_restore(flags);
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

/* A handler run at `now`: jiffies move to the last grid point passed. An interrupt a little
 * before its grid point (under a quarter period: a device running a little faster than the
 * clocksource says) still counts its period, and the grid moves back to now, so jiffies
 * never stand for a time still to come. Two or more periods at once: the interrupts of all
 * but one never came (lost). None: an interrupt for a period already counted, which either
 * came late after being counted lost (held past the next edge, or re-injected by a
 * hypervisor: KVM delivers missed periodic interrupts late: `late`, so lost - late never
 * came), or is one more than the device should make (`early`). Periods tick_sync() added count
 * here, when their interrupt comes. While stopped for idle the periods passed were not
 * wanted: skipped, not lost. */
static void account(uint64_t now, bool was_idle)
{
    uint64_t gap = now - last_ns;
    last_ns = now;
    if (gap > t.max_gap_ns && !was_idle)
        t.max_gap_ns = gap;
    uint64_t j_before = jiffies;
    uint64_t n = periods_to(now);
    if (n == 0 && now + t.period_ns / 4 >= ref_ns + period_int) {
        n = 1;
        step(1);
        if (ref_ns > now) {
            ref_ns = now;
            ref_frac = 0;
        }
    } else {
        step(n);
    }
    n += owed;
    owed = 0;
    if (!was_idle && jiffies != j_before && t.nohz_stops == 0 && t.ticks > 3) {
        if (!t.measured_first_ns) {
            t.measured_first_ns = now;
            t.measured_periods = 0;
            measured_j0 = jiffies;
        } else {
            t.measured_last_ns = now;
            t.measured_periods = jiffies - measured_j0;
        }
    }
    if (was_idle) {
        t.idle_skipped += n ? n - 1 : 0;
    } else if (n == 0) {
        if (t.lost > t.late) {
            t.late++;
        } else {
            t.early++;
        }
    } else {
        t.lost += n - 1;
    }
}

static void tick_event(struct clockevent *ce)
{
    (void)ce;
    uint64_t now;
    if (timekeeping_accumulate_ns(&now) != 0)
        now = time_ns();       /* it interrupted another writer, which completes the fold */
    bool was_idle = nohz_stopped;
    t.ticks++;
    t.ticks_all_starts = ++ticks_all;
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

uint64_t tick_measured_period_ps(void)
{
    if (t.measured_periods < 8 || t.measured_last_ns <= t.measured_first_ns)
        return 0;
    return mul_div_u64_round(t.measured_last_ns - t.measured_first_ns, 1000,
                             t.measured_periods);
}

uint64_t tick_last_ns(void)
{
    return last_ns;
}

uint64_t tick_jiffies_ns(uint64_t j)
{
    unsigned long flags = irq_save();
    int64_t k = (int64_t)(j - jiffies);
    uint64_t at = ref_ns;
    if (k > 0) {
        uint64_t frac = (uint64_t)k * period_frac + ref_frac;
        at += (uint64_t)k * period_int + (frac >> 16);
    } else if (k < 0) {
        at -= (uint64_t)-k * period_int + (((uint64_t)-k * period_frac) >> 16);
    }
    irq_restore(flags);
    return at;
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
    t.ticks_all_starts = ticks_all;
    t.dev = ce;
    t.hz = (1000000000ull + period_ns / 2) / period_ns;
    t.periodic = !oneshot && (ce->features & CE_PERIODIC) != 0;
    t.jiffies_start = (1ull << 32) - JIFFIES_BEFORE_WRAP_S * t.hz;
    jiffies = t.jiffies_start;

    unsigned long flags = irq_save();
    int rc = clockevent_claim(ce, tick_event, &t);
    if (rc == 0) {
        last_ns = next_deadline_ns = ref_ns = time_ns();
        ref_frac = 0;
        owed = 0;
        if (t.periodic) {
            rc = clockevent_set_periodic_ns(ce, period_ns, &t.period_ns);
            /* the period to 1/65536 ns, from the whole device cycles it counts */
            uint64_t cyc = mul_div_u64_round(period_ns, ce->freq_hz, 1000000000ull);
            uint64_t q16 = mul_div_u64_round(cyc << 16, 1000000000ull, ce->freq_hz);
            period_int = q16 >> 16;
            period_frac = (uint32_t)(q16 & 0xFFFF);
        } else {
            t.period_ns = period_ns;
            period_int = period_ns;
            period_frac = 0;
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
