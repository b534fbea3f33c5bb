/* kernel/timers/timers.c - see timers.h. */
#include "kernel/timers/timers.h"

#include "kernel/smp/smp.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/idle.h"
#include "kernel/timers/tick_report.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/io.h"
#include "ticklab/tick.h"

/* ---- the main hrtimer base ------------------------------------------------------------------- */

static struct hrtimer_base main_base;
static bool main_ready;

struct hrtimer_base *timers_base(void)
{
    return main_ready ? &main_base : 0;
}

void timers_base_init(void)
{
    const struct clockevent *tick_dev = timers_tick_running() ? timers_tick_info()->dev : 0;
    struct clockevent *dev = clockevent_select(0, CE_ONESHOT, 0, tick_dev, 0, 0);
    struct rec r;
    rec_begin(&r, "hrtimer_base");
    main_ready = dev && hrtimer_base_init(&main_base, dev, &hrtimer_clock_time_ns,
                                          TIMERS_SLOTS) == 0;
    if (main_ready) {
        json_str(&r.j, "device", dev->name);
        json_str(&r.j, "queue", TQ_IMPL_NAME);
        json_u64(&r.j, "capacity", TIMERS_SLOTS);
        json_str(&r.j, "clock", main_base.clock->name);
        kprintf("  hrtimers    on %s (one-shot, reprogrammed when the earliest deadline "
                "changes)\n", dev->name);
    } else {
        json_str(&r.j, "device", 0);
        json_str(&r.j, "reason", "no one-shot device apart from the tick's");
        kprintf("  hrtimers    none: no one-shot device apart from the tick's\n");
    }
    rec_emit(&r);
}

void timers_base_lend(void)
{
    if (main_ready)
        hrtimer_base_release(&main_base);
}

void timers_base_return(void)
{
    if (main_ready)
        main_ready = hrtimer_base_reclaim(&main_base, TIMERS_SLOTS) == 0;
}

/* ---- each other CPU's bases ------------------------------------------------------------------ */

static struct cpu_timers {
    struct hrtimer_base lapic_base, hpet_base;
    bool lapic_ready, hpet_ready;
    const char *lapic_reason, *hpet_reason;
} cpus[CPU_MAX];

/* On the application processor, as it starts. */
static void cpu_init(unsigned cpu)
{
    struct cpu_timers *t = &cpus[cpu];
    ce_devices_cpu_init(cpu);
    struct clockevent *lapic = ce_devices_lapic(cpu);
    t->lapic_reason = !lapic ? "its LAPIC timer is not usable"
                      : hrtimer_base_init(&t->lapic_base, lapic, &hrtimer_clock_time_ns,
                                          TIMERS_CPU_SLOTS)
                          ? "its LAPIC timer could not be claimed"
                          : 0;
    t->lapic_ready = !t->lapic_reason;
    const char *why = 0;
    struct clockevent *hpet = ce_devices_hpet_of(cpu, &why);
    t->hpet_reason = !hpet ? why
                     : hrtimer_base_init(&t->hpet_base, hpet, &hrtimer_clock_time_ns,
                                         TIMERS_CPU_SLOTS)
                         ? "its HPET comparator could not be claimed"
                         : 0;
    t->hpet_ready = !t->hpet_reason;
}

static void describe(unsigned cpu, struct json *j)
{
    if (cpu == 0)
        return;
    struct cpu_timers *t = &cpus[cpu];
    json_bool(j, "hrtimer_base", t->lapic_ready);
    if (!t->lapic_ready)
        json_str(j, "hrtimer_base_reason", t->lapic_reason);
    if (t->hpet_ready) {
        json_u64(j, "hpet_comparator", cpu);
        json_str(j, "hpet_route", ce_devices_route_name(ce_devices_hpet_of(cpu, 0)));
    } else {
        json_null(j, "hpet_comparator");
    }
    json_str(j, "hpet_reason", t->hpet_reason);
}

/* The boot CPU waiting for another: HLT with the backup wake-up. */
static void wait_begin(void)
{
    halt_backup_start(0);
}

static const struct smp_hooks smp_hooks = { cpu_init, describe, cpu_wait_irq };
static const struct smp_wait_hooks wait_hooks = { wait_begin, halt_once, halt_backup_stop };

void timers_smp_hooks(void)
{
    smp_set_hooks(&smp_hooks);
    smp_set_wait_hooks(&wait_hooks);
}

struct hrtimer_base *timers_lapic_base(const char **why)
{
    unsigned cpu = cpu_index();
    if (why)
        *why = cpu ? cpus[cpu].lapic_reason : "the boot CPU has the main base";
    return cpu && cpus[cpu].lapic_ready ? &cpus[cpu].lapic_base : 0;
}

struct hrtimer_base *timers_hpet_base(const char **why)
{
    unsigned cpu = cpu_index();
    if (why)
        *why = cpu ? cpus[cpu].hpet_reason : "the boot CPU has the main base";
    return cpu && cpus[cpu].hpet_ready ? &cpus[cpu].hpet_base : 0;
}

static struct hrtimer_base *watched[CPU_MAX][TIMERS_WATCH_MAX];

int timers_watch(struct hrtimer_base *b)
{
    struct hrtimer_base **w = watched[cpu_index()];
    for (unsigned i = 0; i < TIMERS_WATCH_MAX; i++)
        if (!w[i] || w[i] == b) {
            w[i] = b;
            return 0;
        }
    return -ENOSPC;
}

void timers_unwatch(struct hrtimer_base *b)
{
    struct hrtimer_base **w = watched[cpu_index()];
    for (unsigned i = 0; i < TIMERS_WATCH_MAX; i++)
        if (w[i] == b)
            w[i] = 0;
}

unsigned timers_rescue(uint64_t grace_ns)
{
    unsigned cpu = cpu_index(), n = 0;
    struct cpu_timers *t = &cpus[cpu];
    if (cpu == 0 && main_ready)
        n += hrtimer_rescue(&main_base, grace_ns);
    if (cpu && t->lapic_ready)
        n += hrtimer_rescue(&t->lapic_base, grace_ns);
    if (cpu && t->hpet_ready)
        n += hrtimer_rescue(&t->hpet_base, grace_ns);
    for (unsigned i = 0; i < TIMERS_WATCH_MAX; i++)
        if (watched[cpu][i])
            n += hrtimer_rescue(watched[cpu][i], grace_ns);
    return n;
}
