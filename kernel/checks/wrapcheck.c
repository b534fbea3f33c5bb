/* kernel/checks/wrapcheck.c - see wrapcheck.h. */
#include "kernel/checks/wrapcheck.h"

#include "ticklab/io.h"
#include "kernel/timers/idle.h"
#include "ticklab/calibrate.h"
#include "kernel/config.h"
#include "kernel/timers/clock_report.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/timers/clocks.h"
#include "kernel/intr/intr.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"
#include "ticklab/units.h"

/* Counters that wrap in a second or more are read once per HLT, and every HLT ends by the
 * backup wake-up within HALT_BACKUP_NS (50 ms): well under a quarter of the shortest wrap run
 * this way (the 24-bit PM timer's 4.69 s). The PIT's own 16-bit channel 2 wraps every
 * 54.9 ms, too fast for that: it is polled. */
#define HALT_MIN_WRAP_NS   NSEC_PER_SEC
#define POLL_CAP           (1ull << 32)

static const char *skip_reason(const struct clocksource *cs, bool enabled)
{
    if (!enabled)
        return "off (profile quick; wrapcheck=on runs it)";
    if (!cs->usable || !cs->freq_hz)
        return "source not usable";
    if (!clock_facts.tsc_hz)
        return "no calibrated TSC to compare with";
    if (cs->wrap_ns > WRAPCHECK_MAX_RUN_NS / 2)
        return "two wraps take longer than 30 s";
    return 0;
}

void wrapcheck_run(const struct clocksource *cs, bool enabled, struct wrap_result *out)
{
    memset(out, 0, sizeof(*out));
    out->reason = skip_reason(cs, enabled);
    if (out->reason) {
        out->status = enabled ? "skipped" : "off";
        return;
    }
    uint64_t run_cyc = tsc_ns_to_cyc(cs->wrap_ns * 2 + cs->wrap_ns / 5);
    unsigned long flags = irq_save();
    out->halted = cs->wrap_ns >= HALT_MIN_WRAP_NS && halt_backup_start(0);
    uint64_t last = cs_read(cs), acc = 0, t0 = rdtsc_ordered(), now = t0;
    while (now - t0 < run_cyc && out->reads < POLL_CAP) {
        if (out->halted)
            halt_once();            /* ends by the backup within 50 ms */
        uint64_t v = cs_read(cs);
        acc += cs_delta(cs, v, last);
        last = v;
        out->reads++;
        now = rdtsc_ordered();
    }
    if (out->halted)
        halt_backup_stop();
    irq_restore(flags);

    out->run_ns = tsc_cyc_to_ns(now - t0);
    out->counter_ns = mul_div_u64(acc, NSEC_PER_SEC, cs->freq_hz);
    out->wraps = acc / (cs->mask + 1);
    out->err_ppb = calibrate_ppb_diff(out->counter_ns, out->run_ns);
    bool ok = out->err_ppb < WRAPCHECK_PASS_PPB && out->err_ppb > -WRAPCHECK_PASS_PPB &&
              out->wraps >= 2;
    out->status = ok ? "ok" : "lost";
}

static void ignore_event(struct clockevent *ce)
{
    (void)ce;
}

void wrapcheck_report_all(void)
{
    bool wraps = cfg.wrapcheck == TRI_ON ||
                 (cfg.wrapcheck == TRI_AUTO && cfg.profile != PROFILE_QUICK);
    for (struct clocksource *cs = clocksource_list(); cs; cs = cs->next) {
        const struct cs_measure *m = clocks_measure_of(cs);
        if (!m)
            continue;
        struct wrap_result w;
        /* The LAPIC's counter is also the boot CPU's LAPIC timer: while its wrap run goes,
         * the clock event device is held (so no wait borrows it) and the counter runs free
         * again; the device is left shut down, its next state call sets it up anew. */
        struct clockevent *timer = cs == clock_facts.lapic && wraps ? ce_devices_lapic(0) : 0;
        if (timer && clockevent_claim(timer, ignore_event, &w) != 0)
            timer = 0;
        if (timer)
            lapic_timer_freerun(intr_apic());
        wrapcheck_run(cs, wraps, &w);
        if (timer)
            clockevent_release(timer);
        clock_report_source(cs, m, &w);
    }
    clocks_report_selected();
}
