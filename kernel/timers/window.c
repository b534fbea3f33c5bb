/* kernel/timers/window.c - see window.h. */
#include "kernel/timers/window.h"

#include "kernel/arch/machine_events.h"
#include "kernel/config.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/report/console.h"
#include "kernel/report/klog.h"
#include "kernel/report/record.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"
#include "ticklab/core_clock.h"
#include "ticklab/json.h"

uint64_t window_grid_ns = WINDOW_GRID_NS;

static struct core_clock core;
static bool core_probed;
static unsigned depth;
static struct core_clock_sample core_start;

void window_core_clock_probe(void)
{
    core_clock_probe(&core, &cpu_facts);
    core_probed = true;
    struct rec r;
    rec_begin(&r, "core_clock");
    json_bool(&r.j, "aperf_mperf", core.aperf_mperf);
    if (!core.aperf_mperf)
        json_str(&r.j, "clock_reason", core.clock_reason);
    json_bool(&r.j, "smi_count", core.smi);
    if (!core.smi)
        json_str(&r.j, "smi_reason", core.smi_reason);
    json_bool(&r.j, "perf_ctl", core.perf_ctl);
    json_bool(&r.j, "hwp", core.hwp);
    json_bool(&r.j, "turbo_known", core.turbo_known);
    json_str(&r.j, "pin", cfg.core_clock_base ? "base" : "asis");
    if (cfg.core_clock_base) {
        const char *why;
        bool pinned = core_clock_pin_base(&core, &why) == 0;
        json_bool(&r.j, "pinned", pinned);
        if (!pinned)
            json_str(&r.j, "pin_reason", why);
        kprintf("  core_clock=base: %s%s\n", pinned ? "pinned to the base clock, turbo off"
                                                     : "not pinned: ", pinned ? "" : why);
    }
    rec_emit(&r);
    kprintf("  core clock per window: %s; SMIs per window: %s\n",
            core.aperf_mperf ? "APERF/MPERF" : core.clock_reason,
            core.smi ? "MSR 0x34" : core.smi_reason);
}

/* The window's core clock and SMIs (docs/report-format.md, `window_events`). */
static void put_core(struct json *j, const void *ctx)
{
    const struct core_clock_sample *end = ctx;
    struct core_clock_window w;
    core_clock_between(&core, &core_start, end, clock_facts.tsc_hz, &w);
    json_obj_open(j, "core_clock");
    if (w.clock_known) {
        json_u64(j, "effective_hz", w.effective_hz);
        json_u64(j, "c0_ppm", w.c0_ppm);
    } else {
        json_str(j, "reason", core.aperf_mperf ? "a counter went backwards, or the TSC's "
                                                 "rate is not known" : core.clock_reason);
    }
    uint32_t lo, max, des;
    if (core_clock_request(&core, &core_start, &lo, &max, &des)) {
        if (core.hwp) {
            json_u64(j, "hwp_min", lo);
            json_u64(j, "hwp_max", max);
            json_u64(j, "hwp_desired", des);
        } else {
            json_u64(j, "perf_ctl_ratio", lo);
        }
    }
    if (core.turbo_known)
        json_bool(j, "turbo", core_start.turbo_on);
    json_obj_close(j);
    if (w.smi_known)
        json_u64(j, "smi", w.smis);
    else
        json_str(j, "smi_reason", core.smi_reason);
}

void window_begin(void)
{
    window_counts_open();
    klog_drain_point();
    if (window_grid_ns && clock_facts.tsc_hz)
        timers_align_to_grid(window_grid_ns);
    klog_window_begin();
    if (depth++ == 0 && core_probed)
        core_clock_sample(&core, &core_start);
}

void window_end(const char *exp, const char *phase)
{
    struct core_clock_sample end;
    bool outer = depth && --depth == 0;
    if (outer && core_probed)
        core_clock_sample(&core, &end);
    klog_window_end();
    /* where neither figure can be known (an emulator) the record stays what it was: only
     * when a machine event came */
    struct window_extra extra = { .always = core.aperf_mperf || core.smi, .put = put_core,
                                  .ctx = &end };
    window_counts_close(exp, phase, outer && core_probed ? &extra : 0);
}

void window_run(void (*step)(void))
{
    window_begin();
    step();
    window_end(0, 0);
}
