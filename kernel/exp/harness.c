/* kernel/exp/harness.c - see harness.h. */
#include "kernel/exp/harness.h"

#include <stdarg.h>

#include "ticklab/io.h"
#include "kernel/report/console.h"
#include "kernel/report/console_report.h"
#include "kernel/report/klog.h"
#include "ticklab/clockevent.h"
#include "kernel/timers/clocks.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/hrtimer.h"
#include "kernel/timers/idle.h"
#include "ticklab/tick.h"
#include "kernel/timers/timers.h"
#include "kernel/timers/window.h"
#include "ticklab/wheel.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"

bool exp_poll_waits;
static const char *current, *phase;
static char phase_buf[64];
static uint64_t started_tsc, rescued, spurious_at_start, budget_cyc, budget_ns_now;
static unsigned place, planned;
static bool over_budget;

static uint64_t main_spurious(void)
{
    struct hrtimer_base *b = timers_base();
    return b ? b->stats.spurious : 0;
}

/* The run's settings the harness keeps for every experiment (exp_harness_init). */
static enum profile run_profile;
static bool tick_oneshot;
/* A poll's step under TCG: NOP blocks, not PAUSE, which leaves the translated code every
 * time (twelve polled series of 1000 wake-ups took 78 s of host time with PAUSE under
 * -icount, 5 s with NOPs). Known once: cpu_probe() is thousands of instructions. */
static bool poll_with_nops;

void exp_harness_init(enum profile profile, bool oneshot)
{
    run_profile = profile;
    tick_oneshot = oneshot;
    poll_with_nops = clocks_under_tcg();
}

/* The tick as the boot left it, taken before the first experiment changes it. */
static struct {
    bool saved, running;
    struct clockevent *device;
    uint64_t period_ns;
} boot_tick;

static void save_boot_tick(void)
{
    if (boot_tick.saved)
        return;
    boot_tick.saved = true;
    boot_tick.running = timers_tick_running();
    if (boot_tick.running) {
        boot_tick.device = timers_tick_info()->dev;
        boot_tick.period_ns = timers_tick_info()->period_ns;
    }
}

void exp_begin(const char *name, const char *summary, uint64_t budget_ns, unsigned k,
               unsigned n)
{
    save_boot_tick();
    current = name;
    phase = "start";
    place = k;
    planned = n;
    rescued = 0;
    over_budget = false;
    budget_ns_now = budget_ns;
    budget_cyc = tsc_ns_to_cyc(budget_ns);
    spurious_at_start = main_spurious();
    started_tsc = rdtsc();
    struct rec r;
    rec_begin(&r, "exp_start");
    json_str(&r.j, "exp", name);
    json_str(&r.j, "summary", summary);
    json_str(&r.j, "profile", profile_name(run_profile));
    json_u64(&r.j, "budget_ns", budget_ns);
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "k", k);
    json_u64(&r.j, "of", n);
    rec_emit(&r);
    window_begin();
}

void exp_end(void)
{
    window_end(current, phase);
    exp_tick_restore();
    struct rec r;
    rec_begin(&r, "exp_end");
    json_str(&r.j, "exp", current);
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "duration_ns", tsc_cyc_to_ns(rdtsc() - started_tsc));
    json_u64(&r.j, "budget_ns", budget_ns_now);
    json_bool(&r.j, "over_budget", over_budget);
    json_u64(&r.j, "hrtimer_rescued", rescued);
    json_u64(&r.j, "hrtimer_spurious", main_spurious() - spurious_at_start);
    rec_emit(&r);
    if (rescued)
        kprintf("  [%s] %llu hrtimer event(s) never came (or came over %llu ms late): run by "
                "hand\n", current, (unsigned long long)rescued,
                (unsigned long long)(EXP_RESCUE_GRACE_NS / 1000000ull));
    console_phase_report(current, phase);
    current = 0;
}

const char *exp_current(void)
{
    return current ? current : "-";
}

void exp_phase(const char *fmt, ...)
{
    static char buf[64];
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    window_end(current, current ? phase : 0);
    console_phase_report(exp_current(), phase);
    k_strlcpy(phase_buf, buf, sizeof(phase_buf));
    phase = phase_buf;
    const char *what = buf;
    uint64_t in_ns = tsc_cyc_to_ns(rdtsc() - started_tsc);
    kprintf("  [%s %u/%u] %s, %llu.%llu s in, budget %llu s\n", exp_current(), place, planned,
            what, (unsigned long long)(in_ns / NSEC_PER_SEC),
            (unsigned long long)(in_ns / 100000000ull % 10),
            (unsigned long long)(budget_ns_now / NSEC_PER_SEC));
    window_begin();
}

/* The budget is counted on the TSC, which no experiment programs. */
static bool budget_holds(const char *waiting_for)
{
    if (over_budget)
        return false;
    if (!budget_cyc || rdtsc() - started_tsc < budget_cyc)
        return true;
    over_budget = true;
    struct rec r;
    rec_begin(&r, "error");
    json_str(&r.j, "what", exp_current());
    json_str(&r.j, "reason", "the experiment's budget ran out: it winds up with what it has");
    json_str(&r.j, "phase", phase);
    json_str(&r.j, "waiting_for", waiting_for);
    json_u64(&r.j, "budget_ns", budget_ns_now);
    json_str(&r.j, "clock", "tsc");
    rec_emit(&r);
    kprintf("  [%s] budget of %llu s spent during %s (waiting for %s): winding up\n",
            exp_current(), (unsigned long long)(budget_ns_now / NSEC_PER_SEC), phase,
            waiting_for ? waiting_for : "-");
    return false;
}

bool exp_budget_left(void)
{
    return budget_holds("the next step");
}

void exp_tick_off(void)
{
    save_boot_tick();
    timers_tick_stop();
}

static bool tick_is(const struct clockevent *device, uint64_t period_ns)
{
    const struct tick_info *ti = timers_tick_info();
    return timers_tick_running() && ti->dev == device &&
           (ti->period_ns == period_ns || ti->hz == tick_hz_of_period(period_ns));
}

bool exp_tick_set(uint64_t period_ns, struct clockevent *device)
{
    save_boot_tick();
    struct clockevent *here = timers_tick_running() ? timers_tick_info()->dev
                              : boot_tick.running   ? boot_tick.device
                                                    : 0;
    struct clockevent *want = device ? device : here;
    if (want && tick_is(want, period_ns))
        return true;
    if (timers_wheel_pending()) {
        rec_error(exp_current(), "the tick cannot change rate with wheel timers pending");
        return false;
    }
    char why[128] = "";
    int rc = timers_tick_restart(period_ns, want, tick_oneshot, why, sizeof(why));
    if (rc) {
        struct rec r;
        rec_begin(&r, "error");
        json_str(&r.j, "what", exp_current());
        json_str(&r.j, "reason", "no tick at this period");
        json_u64(&r.j, "period_ns", period_ns);
        json_str(&r.j, "device", want ? want->name : 0);
        json_i64(&r.j, "err", rc);
        rec_emit(&r);
        return false;
    }
    return true;
}

void exp_tick_restore(void)
{
    if (!boot_tick.saved)
        return;
    if (!boot_tick.running) {
        timers_tick_stop();
        return;
    }
    if (tick_is(boot_tick.device, boot_tick.period_ns) &&
        timers_tick_info()->periodic == !tick_oneshot)
        return;
    /* On a new jiffies count; experiments leave no wheel timers behind. */
    char why[128];
    if (timers_tick_restart(boot_tick.period_ns, boot_tick.device, tick_oneshot, why,
                            sizeof(why)) != 0)
        rec_error("tick", "the boot tick could not be restored after an experiment");
}

#define WAIT_FROZEN_CAP_NS (2 * HALT_BACKUP_NS)   /* a gap longer: the CPU was stopped */
#define WAIT_HARD_FACTOR   8

static bool wait_common(volatile bool *done, volatile unsigned *count, unsigned want,
                        uint64_t until_ns, uint64_t bound_ns, const struct clockevent *busy,
                        const char *what, bool report)
{
    /* The bound counts the time this CPU ran. Between two passes of the loop the backup
     * wakes it within HALT_BACKUP_NS; a longer gap means the CPU itself was stopped (the
     * emulator's thread descheduled on a loaded host, seen up to 2 s; an SMI storm), and
     * no device could have interrupted it then: such a gap counts only WAIT_FROZEN_CAP_NS,
     * the rest is said as frozen_ns. WAIT_HARD_FACTOR times the bound ends it regardless. */
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc(bound_ns);
    uint64_t cap = tsc_ns_to_cyc(WAIT_FROZEN_CAP_NS), last = c0, ran = 0, frozen = 0;
    if (!budget_holds(what && what[0] ? what : phase))
        return false;
    halt_backup_start(busy);
    bool ok;
    for (;;) {
        ok = done ? *done : count ? *count >= want : time_ns() >= until_ns;
        uint64_t now = rdtsc(), d = now - last;
        last = now;
        if (d > cap) {
            frozen += d - cap;
            d = cap;
        }
        ran += d;
        if (ok || ran >= bound || now - c0 >= WAIT_HARD_FACTOR * bound ||
            !budget_holds(what && what[0] ? what : phase))
            break;
        if (exp_poll_waits) {
            /* interrupts on across a loop (an emulator takes them between blocks) */
            irq_enable();
            for (unsigned i = 0; i < 64 && !(done ? *done : count ? *count >= want : false); i++) {
                if (poll_with_nops)
                    cpu_nop_block();
                else
                    cpu_relax();
            }
            irq_disable();
        } else {
            halt_once();
        }
        if (report)
            rescued += timers_rescue(EXP_RESCUE_GRACE_NS);
    }
    halt_backup_stop();
    if (!ok && report && !over_budget) {
        struct rec r;
        rec_begin(&r, "error");
        json_str(&r.j, "what", exp_current());
        json_str(&r.j, "reason", "interrupts stopped coming: wait ended by the TSC bound");
        json_str(&r.j, "phase", phase);
        json_str(&r.j, "waiting_for", what);
        json_str(&r.j, "device", busy ? busy->name : 0);
        json_u64(&r.j, "bound_ns", bound_ns);
        json_u64(&r.j, "frozen_ns", tsc_cyc_to_ns(frozen));
        if (count) {
            json_u64(&r.j, "got", *count);
            json_u64(&r.j, "wanted", want);
        }
        rec_emit(&r);
        kprintf("  [%s] %s: no progress within %llu ms (TSC bound); going on\n", exp_current(),
                what, (unsigned long long)(bound_ns / 1000000ull));
    }
    return ok;
}

bool exp_wait(volatile bool *done, uint64_t bound_ns, const struct clockevent *busy, const char *what)
{
    return wait_common(done, 0, 0, 0, bound_ns, busy, what, true);
}

bool exp_wait_quiet(volatile bool *done, uint64_t bound_ns, const struct clockevent *busy)
{
    return wait_common(done, 0, 0, 0, bound_ns, busy, phase, false);
}

bool exp_sleep_until(uint64_t end_ns, const struct clockevent *busy, const char *what)
{
    uint64_t now = time_ns();
    uint64_t span = end_ns > now ? end_ns - now : 0;
    return wait_common(0, 0, 0, end_ns, 2 * span + NSEC_PER_SEC, busy, what, true);
}

static unsigned defects;

void exp_defect(const char *what, const char *device)
{
    defects++;
    struct rec r;
    rec_begin(&r, "error");
    json_str(&r.j, "what", exp_current());
    json_str(&r.j, "reason", what);
    json_str(&r.j, "device", device);
    json_bool(&r.j, "defect", true);
    rec_emit(&r);
    kprintf("  [%s] DEFECT: %s (%s)\n", exp_current(), what, device ? device : "-");
}

unsigned exp_defects(void)
{
    return defects;
}

uint32_t exp_rand(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*state >> 33);
}

uint64_t exp_rand_range(uint64_t *state, uint64_t lo, uint64_t hi)
{
    if (hi < lo)
        hi = lo;                  /* an empty range is its low end, never a wrapped one */
    uint64_t span = hi - lo + 1;
    uint64_t r = ((uint64_t)exp_rand(state) << 31) | exp_rand(state);
    return span ? lo + r % span : lo + r;
}

void exp_result_begin(struct rec *r)
{
    rec_begin(r, "result");
    json_str(&r->j, "exp", exp_current());
    /* What bounds every figure's resolution: the measured cost of one read of each clock a
     * figure can come from (time_ns's counter, the TSC), in ns, as clocks_init measured it. */
    const struct clocksource *cs = clocksource_current();
    json_obj_open(&r->j, "read_cost_ns");
    if (cs && cs->read_cost_cyc && clock_facts.tsc_hz)
        json_u64(&r->j, "time_ns", tsc_cyc_to_ns(cs->read_cost_cyc));
    if (clock_facts.tsc && clock_facts.tsc->read_cost_cyc && clock_facts.tsc_hz)
        json_u64(&r->j, "tsc", tsc_cyc_to_ns(clock_facts.tsc->read_cost_cyc));
    json_obj_close(&r->j);
    /* The device behind "time_ns" and one count of it (ns, rounded up): a figure by time_ns
     * names its hardware; a TSC figure's device is the TSC itself. */
    if (cs) {
        json_str(&r->j, "time_ns_device", cs->name);
        if (cs->freq_hz)
            json_u64(&r->j, "time_ns_resolution_ns",
                     (NSEC_PER_SEC + cs->freq_hz - 1) / cs->freq_hz);
    }
}

void exp_skip_begin(struct rec *r, const char *reason)
{
    exp_result_begin(r);
    json_str(&r->j, "status", "skip");
    json_str(&r->j, "reason", reason);
}

void exp_invalid_begin(struct rec *r, const char *reason)
{
    exp_result_begin(r);
    json_str(&r->j, "status", "invalid");
    json_str(&r->j, "reason", reason);
}

uint64_t exp_size(uint64_t quick, uint64_t full, uint64_t soak)
{
    return run_profile == PROFILE_QUICK ? quick : run_profile == PROFILE_FULL ? full : soak;
}
