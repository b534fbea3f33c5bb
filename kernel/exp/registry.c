/* kernel/exp/registry.c - the experiments ticklab knows, in the order they run, and the
 * verdict drawn from what they report. */
#include "kernel/exp/experiment.h"

#include <stddef.h>

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

#define N_EXPERIMENTS (sizeof(registry) / sizeof(registry[0]) - 1)

static const char *names[N_EXPERIMENTS + 1];

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

/* Every experiment's words side by side, as config_parse takes them. */
#define MAX_OPTIONS 16
static struct cmdline_opt options[MAX_OPTIONS];

struct cmdline_opt *experiment_options(size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; registry[i]; i++)
        for (size_t o = 0; o < registry[i]->n_options && k < MAX_OPTIONS; o++)
            options[k++] = registry[i]->options[o];
    *n = k;
    return options;
}

static uint64_t budget_ns(const struct experiment *e, enum profile profile)
{
    return e->budget_s[profile] * NSEC_PER_SEC;
}

/* What is going to run, before it does: the host tool counts "experiment k of N" and the
 * time left from it. */
static void send_plan(uint64_t mask, enum profile profile)
{
    struct rec r;
    rec_begin(&r, "plan");
    json_str(&r.j, "profile", profile_name(profile));
    json_str(&r.j, "clock", "tsc");
    json_arr_open(&r.j, "experiments");
    for (size_t i = 0; registry[i]; i++) {
        if (!(mask & (1ull << i)))
            continue;
        json_obj_open(&r.j, 0);
        json_str(&r.j, "exp", registry[i]->name);
        json_u64(&r.j, "budget_ns", budget_ns(registry[i], profile));
        json_obj_close(&r.j);
    }
    json_arr_close(&r.j);
    rec_emit(&r);
}

/* The test aid mask_irq=: the named device's line masked before the experiments. */
static void mask_line(const char *device)
{
    struct rec r;
    rec_begin(&r, "fault_injected");
    json_str(&r.j, "what", "mask_irq");
    json_str(&r.j, "device", device);
    json_i64(&r.j, "err", ce_devices_mask_irq(timers_device_named(device, "mask_irq")));
    rec_emit(&r);
    kprintf("test aid: the %s interrupt line is masked from here on\n", device);
}

unsigned experiments_run(const struct exp_plan *plan, const struct exp_env *env)
{
    uint64_t mask = plan->mask;
    if (mask && !env->clocks->tsc_hz) {
        /* Every experiment's budget, bound and cost is in TSC cycles. */
        rec_error("experiments", EXPERIMENTS_NEED_TSC);
        return 0;
    }
    if (mask && plan->mask_irq && plan->mask_irq[0])
        mask_line(plan->mask_irq);
    unsigned n = 0, ran = 0;
    for (size_t i = 0; registry[i]; i++)
        n += (mask >> i) & 1;
    if (n)
        send_plan(mask, env->profile);
    exp_harness_init(env->profile, plan->tick_oneshot);
    for (size_t i = 0; registry[i]; i++) {
        if (mask & (1ull << i)) {
            exp_begin(registry[i]->name, registry[i]->summary,
                      budget_ns(registry[i], env->profile), ran + 1, n);
            registry[i]->run(env);
            exp_end();
            ran++;
        }
    }
    if (!ran)
        return 0;
    struct verdict_input v = { 0 };
    for (size_t i = 0; registry[i]; i++)
        if (registry[i]->summarize)
            registry[i]->summarize(&v);
    verdict_report(&v, plan->clocksource_asked);
    return ran;
}
