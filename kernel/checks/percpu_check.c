/* kernel/checks/percpu_check.c - see percpu_check.h. */
#include "kernel/checks/percpu_check.h"

#include "kernel/intr/intr.h"
#include "kernel/smp/smp.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/idle.h"
#include "kernel/timers/timers.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/hrtimer.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"
#include "ticklab/lapic.h"

#define TIMERS 10u
#define SPACING_NS 1000000ull

static struct check {
    bool hpet;                     /* on its own HPET comparator instead of its LAPIC timer */
    struct hrtimer t[TIMERS];
    uint32_t ran_on[TIMERS];
    int64_t late_ns[TIMERS];
    volatile unsigned fired;
    bool no_base;
    const char *why;
} checks[CPU_MAX];

static enum hrtimer_restart on_timer(struct hrtimer *t)
{
    struct check *k = &checks[this_cpu()->index];
    unsigned i = (unsigned)(t - k->t);
    k->ran_on[i] = lapic_id(intr_apic());
    k->late_ns[i] = (int64_t)(time_ns() - t->expires_ns);
    k->fired++;
    return HRTIMER_NORESTART;
}

/* Runs on the application processor: starts the timers on its own base and waits in HLT. */
static void run_here(void *arg)
{
    struct check *k = arg;
    struct hrtimer_base *b = k->hpet ? timers_hpet_base(&k->why) : timers_lapic_base(&k->why);
    if (!b) {
        k->no_base = true;
        return;
    }
    unsigned long flags = irq_save();
    uint64_t t0 = time_ns();
    for (unsigned i = 0; i < TIMERS; i++) {
        memset(&k->t[i], 0, sizeof(k->t[i]));
        k->t[i].fn = on_timer;
        hrtimer_start(b, &k->t[i], t0 + (i + 1) * SPACING_NS, HRTIMER_MODE_ABS);
    }
    uint64_t c0 = rdtsc(), bound = tsc_ns_to_cyc(TIMERS * SPACING_NS + 100000000ull);
    while (k->fired < TIMERS && rdtsc() - c0 < bound)
        cpu_wait_irq();
    for (unsigned i = 0; i < TIMERS; i++)
        hrtimer_cancel(b, &k->t[i]);
    irq_restore(flags);
}

static bool probe_result[CPU_MAX];

/* On the application processor: whether it has a base on an HPET comparator of its own. */
static void probe_hpet(void *arg)
{
    probe_result[cpu_index()] = timers_hpet_base((const char **)arg) != 0;
}

static bool check_one(unsigned cpu, bool hpet)
{
    struct cpu_local *c = &cpu_locals[cpu];
    struct check *k = &checks[cpu];
    memset(k, 0, sizeof(*k));
    k->hpet = hpet;
    unsigned long flags = irq_save();
    int rc = smp_call(cpu, run_here, k, TIMERS * SPACING_NS + 300000000ull);
    irq_restore(flags);
    unsigned own = 0, early = 0;
    int64_t late_max = 0;
    for (unsigned i = 0; i < k->fired && i < TIMERS; i++) {
        own += k->ran_on[i] == c->apic_id;
        early += k->late_ns[i] < 0;
        if (k->late_ns[i] > late_max)
            late_max = k->late_ns[i];
    }
    const char *dev = hpet ? "hpet" : "lapic";
    struct rec r;
    rec_begin(&r, "percpu_timer_check");
    json_u64(&r.j, "cpu", cpu);
    json_u64(&r.j, "apic_id", c->apic_id);
    json_str(&r.j, "device", dev);
    json_str(&r.j, "clock", "time_ns");
    json_u64(&r.j, "timers", TIMERS);
    json_u64(&r.j, "fired", k->fired);
    json_u64(&r.j, "on_own_cpu", own);
    json_u64(&r.j, "early", early);
    json_i64(&r.j, "late_max_ns", late_max);
    json_str(&r.j, "reason", rc ? "the CPU did not finish within the bound"
                                : k->no_base ? (k->why ? k->why : "no hrtimer base on this CPU")
                                             : 0);
    rec_emit(&r);
    kprintf("  cpu %u       %u/%u hrtimers on its own %s fired, %u on it, late max %lld ns\n",
            cpu, k->fired, TIMERS, hpet ? "HPET comparator" : "LAPIC timer", own,
            (long long)late_max);
    if (rc || k->fired != TIMERS || own != TIMERS)
        rec_error("percpu_timer_check", "an application processor's timers did not all "
                                        "fire on it");
    return rc == 0 && k->fired == TIMERS && own == TIMERS;
}

bool percpu_check_run(void)
{
    bool all = true;
    for (unsigned cpu = 1; cpu < CPU_MAX; cpu++) {
        if (!cpu_locals[cpu].online)
            continue;
        all &= check_one(cpu, false);
        const char *why;
        unsigned long flags = irq_save();
        bool has_hpet = smp_call(cpu, probe_hpet, &why, 100000000ull) == 0 && probe_result[cpu];
        irq_restore(flags);
        if (has_hpet)
            all &= check_one(cpu, true);
    }
    return all;
}
