/* kernel/exp/registry.c - the experiments ticklab knows, in the order they run, and the
 * verdict drawn from them. */
#include "kernel/exp/experiment.h"

#include <stddef.h>

#include "kernel/config.h"
#include "kernel/exp/harness.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"
#include "ticklab/fmt.h"
#include "ticklab/clockevent.h"
#include "ticklab/units.h"

extern const struct experiment exp_period_compare, exp_periodic_jitter, exp_itimer_error,
    exp_sleep_accuracy, exp_tick_overhead, exp_hrtimer_cost, exp_wakeup_latency, exp_hwlat,
    exp_tsc_sync, exp_percpu_latency;

static const struct experiment *const registry[] = {
    &exp_period_compare, &exp_periodic_jitter, &exp_itimer_error, &exp_sleep_accuracy,
    &exp_tick_overhead,  &exp_hrtimer_cost,    &exp_wakeup_latency, &exp_hwlat,
    &exp_tsc_sync,       &exp_percpu_latency,
    NULL,
};

static const char *names[sizeof(registry) / sizeof(registry[0])];

const char *const *experiment_names(void)
{
    for (size_t i = 0; registry[i]; i++)
        names[i] = registry[i]->name;
    return names;
}

const char *experiment_names_text(void)
{
    static char text[256];
    size_t used = (size_t)fmt_snprintf(text, sizeof(text), "none, all, or a comma list of:");
    for (size_t i = 0; registry[i] && used < sizeof(text); i++)
        used += (size_t)fmt_snprintf(text + used, sizeof(text) - used, "%s %s", i ? "," : "",
                                     registry[i]->name);
    return text;
}

static uint64_t budget_ns(const struct experiment *e)
{
    return e->budget_s[cfg.profile] * NSEC_PER_SEC;
}

/* What is going to run, before it does: the host tool counts "experiment k of N" and the
 * time left from it. */
static void send_plan(uint64_t mask)
{
    struct rec r;
    rec_begin(&r, "plan");
    json_str(&r.j, "profile", profile_name(cfg.profile));
    json_str(&r.j, "clock", "tsc");
    json_arr_open(&r.j, "experiments");
    for (size_t i = 0; registry[i]; i++) {
        if (!(mask & (1ull << i)))
            continue;
        json_obj_open(&r.j, 0);
        json_str(&r.j, "exp", registry[i]->name);
        json_u64(&r.j, "budget_ns", budget_ns(registry[i]));
        json_obj_close(&r.j);
    }
    json_arr_close(&r.j);
    rec_emit(&r);
}

unsigned experiments_run(uint64_t mask)
{
    unsigned ran = 0;
    if (mask && !clock_facts.tsc_hz) {
        /* Every experiment's budget, bound and cost is in TSC cycles. */
        rec_error("experiments", EXPERIMENTS_NEED_TSC);
        return 0;
    }
    if (mask && cfg.mask_irq[0]) {
        struct rec r;
        rec_begin(&r, "fault_injected");
        json_str(&r.j, "what", "mask_irq");
        json_str(&r.j, "device", cfg.mask_irq);
        json_i64(&r.j, "err", ce_devices_mask_irq(timers_device_named(cfg.mask_irq, "mask_irq")));
        rec_emit(&r);
        kprintf("test aid: the %s interrupt line is masked from here on\n", cfg.mask_irq);
    }
    unsigned n = 0;
    for (size_t i = 0; registry[i]; i++)
        n += (mask >> i) & 1;
    if (n)
        send_plan(mask);
    for (size_t i = 0; registry[i]; i++) {
        if (mask & (1ull << i)) {
            exp_begin(registry[i]->name, registry[i]->summary, budget_ns(registry[i]), ran + 1,
                      n);
            registry[i]->run();
            exp_end();
            ran++;
        }
    }
    if (ran)
        verdict_report();
    return ran;
}
