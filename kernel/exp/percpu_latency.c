/* kernel/exp/percpu_latency.c - `percpu-latency`: wakeup latency and periodic jitter on every
 * CPU's own local APIC timer, so that per-core differences show; then the boot CPU once more
 * while every other CPU runs a busy loop (shared memory traffic, interrupts on).
 *
 * On each CPU, on its local APIC timer and on an HPET comparator of its own (comparator n for
 * CPU n, routed to it, where the HPET has that many; the boot CPU's is the kernel's hrtimer
 * device when that is the HPET), each through an hrtimer base:
 *  - wake-ups: hrtimers at pseudo-random delays of 2..300 us, the CPU halted in between;
 *    latency = the callback's time_ns() - the deadline (p50, p99, max);
 *  - jitter: ten periodic hrtimers, T = 500 + 13*i us, forwarded from their ideal expiries
 *    (no grid), for a while; per timer the standard deviation of the intervals, reported as
 *    the largest and the mean of the ten.
 * The tick is off throughout (the boot CPU's LAPIC timer is measured too). All times are
 * time_ns(), read on the CPU being measured. */
#include "kernel/exp/experiment.h"

#include "kernel/smp/smp.h"
#include "kernel/exp/harness.h"
#include "kernel/report/console.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/idle.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/hrtimer.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define MAX_WAKES 2000u
#define JIT_TIMERS 10u
#define MAX_INTERVALS 2048u

enum pdev { DEV_LAPIC, DEV_HPET, N_DEVS };
static const char *const dev_names[N_DEVS] = { "lapic", "hpet" };

struct job {
    unsigned cpu;
    enum pdev dev;
    unsigned wakes;                   /* wanted */
    uint64_t jitter_ns;               /* how long the periodic timers run */
    /* results */
    unsigned got;
    int64_t lat[MAX_WAKES];
    uint64_t jit_stddev[JIT_TIMERS];
    unsigned jit_samples[JIT_TIMERS];
    bool no_base, timed_out;
    const char *why;                  /* no_base: why not */
};

struct ptimer {
    struct hrtimer t;
    uint64_t period, ideal, last;
    unsigned n;
    bool started;
    int32_t dev[MAX_INTERVALS];
};

/* One CPU is measured at a time (smp_call waits for it), so one job and one set of periodic
 * timers serve every CPU in turn: per-CPU copies would cost 110 KB a CPU. A CPU that does
 * not finish in time may still hold them, so the experiment stops there (run()). */
static struct job job, busy_job;
static struct ptimer ptimers[JIT_TIMERS];
static struct hrtimer wake_timer[CPU_MAX];
static volatile bool woke[CPU_MAX];
static uint64_t woke_ns[CPU_MAX];
static volatile bool stop_jitter[CPU_MAX];
static struct hrtimer_base bsp_base;
static struct hrtimer_base *main_base;   /* the boot CPU's (its HPET comparator 0) */
static volatile uint64_t busy_until_tsc;
static volatile uint64_t busy_sink[CPU_MAX * 8];

static unsigned here(void)
{
    return this_cpu()->index;
}

static enum hrtimer_restart on_wake(struct hrtimer *t)
{
    unsigned c = (unsigned)(t - wake_timer);
    woke_ns[c] = time_ns();
    woke[c] = true;
    return HRTIMER_NORESTART;
}

static enum hrtimer_restart on_period(struct hrtimer *h)
{
    struct ptimer *p = (struct ptimer *)h;
    uint64_t now = time_ns();
    if (p->started && p->n < MAX_INTERVALS) {
        int64_t d = (int64_t)(now - p->last) - (int64_t)p->period;
        p->dev[p->n++] = d > INT32_MAX ? INT32_MAX : d < INT32_MIN ? INT32_MIN : (int32_t)d;
    }
    p->started = true;
    p->last = now;
    if (stop_jitter[here()])
        return HRTIMER_NORESTART;
    do
        p->ideal += p->period;
    while (p->ideal <= now);
    h->expires_ns = p->ideal;
    return HRTIMER_RESTART;
}

/* HLT with interrupts on until *flag or the TSC bound (on the boot CPU with the backup
 * wake-up; elsewhere smp_wait's pokes end a hopeless wait). Interrupts off around it. */
static bool wait_flag(volatile bool *flag, uint64_t bound_ns)
{
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc(bound_ns);
    bool bsp = here() == 0;
    if (bsp)
        halt_backup_start(ce_devices_lapic(0));
    while (!*flag && rdtsc() - c0 < bound) {
        if (bsp)
            halt_once();
        else
            cpu_wait_irq();
    }
    if (bsp)
        halt_backup_stop();
    return *flag;
}

/* Runs on the CPU being measured. */
static void measure(void *arg)
{
    struct job *j = arg;
    unsigned c = here();
    struct hrtimer_base *b;
    if (j->dev == DEV_LAPIC) {
        b = c ? timers_lapic_base(&j->why) : &bsp_base;
    } else {
        /* the boot CPU's own comparator is comparator 0: the main base's when it is there */
        b = c ? timers_hpet_base(&j->why) : main_base;
        if (!c && b && b->dev != ce_devices_hpet_of(0, &j->why))
            b = 0;
    }
    if (!b) {
        j->no_base = true;
        return;
    }
    unsigned long flags = irq_save();
    uint64_t seed = 0x70637075ull + c;      /* "pcpu" + cpu */
    j->got = 0;
    for (unsigned i = 0; i < j->wakes && (c != 0 || exp_budget_left()); i++) {
        uint64_t delay = exp_rand_range(&seed, 2000, 300000);
        woke[c] = false;
        memset(&wake_timer[c], 0, sizeof(wake_timer[c]));
        wake_timer[c].fn = on_wake;
        uint64_t deadline = time_ns() + delay;
        hrtimer_start(b, &wake_timer[c], deadline, HRTIMER_MODE_ABS);
        if (!wait_flag(&woke[c], 100000000ull + 10 * delay)) {
            hrtimer_cancel(b, &wake_timer[c]);
            j->timed_out = true;
            break;
        }
        j->lat[j->got++] = (int64_t)(woke_ns[c] - deadline);
    }
    /* ten periodic timers at once */
    stop_jitter[c] = false;
    uint64_t t0 = time_ns() + 1000000ull;
    for (unsigned i = 0; i < JIT_TIMERS; i++) {
        struct ptimer *p = &ptimers[i];
        memset(&p->t, 0, sizeof(p->t));
        p->t.fn = on_period;
        p->period = (500ull + 13ull * i) * 1000ull;
        p->ideal = t0 + p->period;
        p->n = 0;
        p->started = false;
        hrtimer_start(b, &p->t, p->ideal, HRTIMER_MODE_ABS);
    }
    static volatile bool never[CPU_MAX];
    never[c] = false;
    wait_flag(&never[c], j->jitter_ns + 1000000ull);      /* a timed wait: it ends by time */
    stop_jitter[c] = true;
    for (unsigned i = 0; i < JIT_TIMERS; i++) {
        struct ptimer *p = &ptimers[i];
        hrtimer_cancel(b, &p->t);
        static int64_t tmp[MAX_INTERVALS];
        for (unsigned k = 0; k < p->n; k++)
            tmp[k] = p->dev[k];
        struct stats st;
        stats_i64(tmp, p->n, &st);
        j->jit_stddev[i] = st.stddev;
        j->jit_samples[i] = p->n;
    }
    irq_restore(flags);
}

static void busy(void *arg)
{
    unsigned c = here();
    (void)arg;
    for (uint64_t i = 0; rdtsc() < busy_until_tsc; i++)
        busy_sink[(c * 8 + (i & 7)) % (CPU_MAX * 8)] += i;      /* shared lines, on purpose */
}

static void report(const struct job *j, const char *load)
{
    struct rec r;
    exp_result_begin(&r);
    json_u64(&r.j, "cpu", j->cpu);
    json_u64(&r.j, "apic_id", cpu_locals[j->cpu].apic_id);
    json_str(&r.j, "load", load);
    json_str(&r.j, "device", dev_names[j->dev]);
    json_str(&r.j, "clock", "time_ns");
    if (j->no_base) {
        json_str(&r.j, "status", "skip");
        json_str(&r.j, "reason", j->why ? j->why
                                 : j->dev == DEV_LAPIC ? "no hrtimer base on this CPU's LAPIC timer"
                                                       : "no HPET comparator of its own");
        rec_emit(&r);
        kprintf("  cpu %u %-5s %-4s skip\n", j->cpu, dev_names[j->dev], load);
        return;
    }
    int64_t lat[MAX_WAKES];
    memcpy(lat, j->lat, j->got * sizeof(lat[0]));
    struct stats st;
    stats_i64(lat, j->got, &st);
    uint64_t sd_max = 0, sd_sum = 0;
    unsigned jit_n = 0;
    for (unsigned i = 0; i < JIT_TIMERS; i++) {
        sd_max = j->jit_stddev[i] > sd_max ? j->jit_stddev[i] : sd_max;
        sd_sum += j->jit_stddev[i];
        jit_n += j->jit_samples[i];
    }
    json_u64(&r.j, "samples", j->got);
    json_stats(&r.j, "%s_ns", "min p50 p99 max", &st);
    json_u64(&r.j, "jitter_timers", JIT_TIMERS);
    json_u64(&r.j, "jitter_intervals", jit_n);
    json_u64(&r.j, "jitter_stddev_max_ns", sd_max);
    json_u64(&r.j, "jitter_stddev_mean_ns", sd_sum / JIT_TIMERS);
    rec_emit(&r);
    kprintf("  cpu %u %-5s %-4s %5u wake-ups: p50 %lld p99 %lld max %lld ns; 10 periodic: stddev "
            "max %llu mean %llu ns\n", j->cpu, dev_names[j->dev], load, j->got, (long long)st.median, (long long)st.p99,
            (long long)st.max, (unsigned long long)sd_max,
            (unsigned long long)(sd_sum / JIT_TIMERS));
    if (j->timed_out)
        rec_error(exp_current(), "a wake-up never came on this CPU: series ended");
}

static void run(const struct exp_env *env)
{
    main_base = env->base;
    unsigned wakes = (unsigned)exp_size(200, MAX_WAKES, MAX_WAKES);
    uint64_t jitter_ns = exp_size(200, 2000, 2000) * 1000000ull;
    uint64_t bound_ns = (uint64_t)wakes * 10000000ull + jitter_ns * 2 + NSEC_PER_SEC;
    exp_tick_off();
    struct clockevent *lapic = ce_devices_lapic(0);
    bool bsp_ok = lapic && hrtimer_base_init(&bsp_base, lapic, &hrtimer_clock_time_ns,
                                             TIMERS_CPU_SLOTS) == 0;
    if (bsp_ok)
        timers_watch(&bsp_base);
    kprintf("\npercpu-latency: each CPU's own LAPIC timer: %u wake-ups, then 10 periodic "
            "timers for %llu ms\n", wakes, (unsigned long long)(jitter_ns / 1000000ull));
    bool stuck = false;
    for (unsigned c = 0; c < CPU_MAX && !stuck && exp_budget_left(); c++) {
        if (!cpu_locals[c].online)
            continue;
        exp_phase("cpu %u", c);
        for (unsigned d = 0; d < N_DEVS && !stuck; d++) {
            struct job *j = &job;
            memset(j, 0, sizeof(*j));
            j->cpu = c;
            j->dev = (enum pdev)d;
            j->wakes = wakes;
            j->jitter_ns = jitter_ns;
            if (c == 0 && d == DEV_LAPIC && !bsp_ok) {
                j->no_base = true;
            } else {
                unsigned long f = irq_save();
                int rc = smp_call(c, measure, j, bound_ns);
                irq_restore(f);
                if (rc)
                    rec_error(exp_current(), "a CPU did not finish its measurement in time: "
                                             "the CPUs after it are not measured (it may still "
                                             "hold the shared timers)");
                stuck = rc != 0;
            }
            report(j, "idle");
        }
    }
    /* the boot CPU again, the others busy */
    if (smp_online() > 1 && bsp_ok && !stuck) {
        memset(&busy_job, 0, sizeof(busy_job));
        busy_job.cpu = 0;
        busy_job.wakes = wakes;
        busy_job.jitter_ns = jitter_ns;
        unsigned long f = irq_save();
        busy_until_tsc = rdtsc() + tsc_ns_to_cyc(bound_ns);
        for (unsigned c = 1; c < CPU_MAX; c++)
            if (cpu_locals[c].online)
                smp_post(c, busy, 0);
        measure(&busy_job);
        busy_until_tsc = 0;                 /* end the busy loops now */
        for (unsigned c = 1; c < CPU_MAX; c++)
            if (cpu_locals[c].online)
                smp_wait(c, NSEC_PER_SEC);
        irq_restore(f);
        report(&busy_job, "busy");
    }
    if (bsp_ok) {
        timers_unwatch(&bsp_base);
        hrtimer_base_release(&bsp_base);
    }
}

const struct experiment exp_percpu_latency = {
    .name = "percpu-latency",
    .summary = "wakeup latency and periodic jitter on each CPU's own LAPIC timer, idle and "
               "with the other CPUs busy",
    .rows = "cpu device load",
    .run = run,
    .budget_s = { 30, 150, 1800 },
};
