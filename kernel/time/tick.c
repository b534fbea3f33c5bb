/* kernel/time/tick.c - see tick.h. */
#include "kernel/time/tick.h"

#include "drivers/io.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/time/clocksource.h"
#include "lib/errno.h"
#include "lib/kstring.h"

volatile uint64_t jiffies;

static struct tick_info t;
static bool running;
static uint64_t last_ns, next_deadline_ns;
static void (*hook)(uint64_t);

void tick_set_hook(void (*fn)(uint64_t))
{
    hook = fn;
}

static void rearm(void)
{
    next_deadline_ns += t.period_ns;
    uint64_t now = time_ns();
    uint64_t delta = next_deadline_ns > now ? next_deadline_ns - now : 0;
    if (clockevent_program_ns(t.dev, delta) == -ETIME)
        t.rearm_retries++;
}

static void tick_event(struct clockevent *ce)
{
    (void)ce;
    uint64_t now = time_ns();
    uint64_t gap = now - last_ns;
    last_ns = now;
    t.ticks++;
    if (gap > t.max_gap_ns)
        t.max_gap_ns = gap;
    /* Two periods or more since the last run: the interrupts in between never came. */
    uint64_t periods = (gap + t.period_ns / 2) / t.period_ns;
    uint64_t step = periods > 1 ? periods : 1;
    t.lost += step - 1;
    jiffies += step;
    timekeeping_accumulate();
    if (!t.periodic)
        rearm();
    if (hook)
        hook(jiffies);
}

static struct clockevent *choose(const char *device, bool oneshot, char *why, unsigned why_len)
{
    struct clockevent *ce = 0;
    if (!oneshot)
        ce = clockevent_select(device, CE_PERIODIC, why, why_len);
    if (!ce)
        ce = clockevent_select(device, CE_ONESHOT, why, why_len);
    return ce;
}

int tick_start(uint64_t hz, const char *device, bool oneshot, char *why, unsigned why_len)
{
    if (hz == 0)
        return -EINVAL;
    if (1000000000ull / hz < TICK_MIN_PERIOD_NS)
        return -ERANGE;
    struct clockevent *ce = choose(device, oneshot, why, why_len);
    if (!ce)
        return -ENODEV;
    memset(&t, 0, sizeof(t));
    t.dev = ce;
    t.hz = hz;
    t.periodic = !oneshot && (ce->features & CE_PERIODIC) != 0;
    t.jiffies_start = (1ull << 32) - JIFFIES_BEFORE_WRAP_S * hz;
    jiffies = t.jiffies_start;

    unsigned long flags = irq_save();
    ce->event = tick_event;
    last_ns = next_deadline_ns = time_ns();
    int rc;
    if (t.periodic) {
        rc = clockevent_set_periodic_ns(ce, 1000000000ull / hz, &t.period_ns);
    } else {
        t.period_ns = 1000000000ull / hz;
        rearm();
        rc = 0;
    }
    running = rc == 0;
    if (!running)
        ce->event = 0;
    irq_restore(flags);
    return rc;
}

void tick_stop(void)
{
    if (!running)
        return;
    unsigned long flags = irq_save();
    t.dev->shutdown();
    t.dev->event = 0;
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

void tick_report_start(void)
{
    /* The real rate, with three decimals: 1e12 / period_ns milli-Hz. */
    uint64_t mhz = t.period_ns ? (1000000000000ull + t.period_ns / 2) / t.period_ns : 0;
    struct rec r;
    rec_begin(&r, "tick");
    json_str(&r.j, "device", t.dev ? t.dev->name : 0);
    json_str(&r.j, "mode", t.periodic ? "periodic" : "oneshot_rearm");
    json_u64(&r.j, "hz_requested", t.hz);
    json_u64(&r.j, "period_ns", t.period_ns);
    json_fixed(&r.j, "hz_actual", (int64_t)mhz, 3);
    json_u64(&r.j, "jiffies_start", t.jiffies_start);
    rec_emit(&r);
    kprintf("  tick        %s %s at HZ=%llu: period %llu ns = %llu.%03llu Hz as the hardware "
            "makes it\n", t.dev ? t.dev->name : "-", t.periodic ? "periodic" : "one-shot re-armed",
            (unsigned long long)t.hz, (unsigned long long)t.period_ns,
            (unsigned long long)(mhz / 1000), (unsigned long long)(mhz % 1000));
}

void tick_report_stats(void)
{
    struct rec r;
    rec_begin(&r, "tick_stats");
    json_str(&r.j, "device", t.dev ? t.dev->name : 0);
    json_u64(&r.j, "ticks", t.ticks);
    json_u64(&r.j, "lost", t.lost);
    json_u64(&r.j, "jiffies_start", t.jiffies_start);
    json_u64(&r.j, "jiffies_end", jiffies);
    json_bool(&r.j, "crossed_32bit_wrap", (t.jiffies_start >> 32) != (jiffies >> 32));
    json_u64(&r.j, "max_gap_ns", t.max_gap_ns);
    json_u64(&r.j, "rearm_retries", t.rearm_retries);
    rec_emit(&r);
}
