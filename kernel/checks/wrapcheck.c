/* kernel/checks/wrapcheck.c - see wrapcheck.h. */
#include "kernel/checks/wrapcheck.h"

#include "ticklab/io.h"
#include "ticklab/pit8254.h"
#include "kernel/intr/intr.h"
#include "ticklab/calibrate.h"
#include "kernel/timers/clocks.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"

/* Wake-ups every 20 ms from PIT channel 0 while waiting in HLT: well under a quarter of the
 * shortest wrap run this way (the 24-bit PM timer's 4.69 s). The PIT's own 16-bit channel 2
 * wraps every 54.9 ms, too fast for that: it is polled. */
#define WAKE_PERIOD_NS     20000000ull
#define HALT_MIN_WRAP_NS   1000000000ull
#define POLL_CAP           (1ull << 32)

static volatile uint64_t wakes;
static struct intr_route wake_route;

static void on_wake(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
    wakes++;
    intr_eoi(&wake_route);
}

static bool start_wakeups(void)
{
    if (intr_route_isa(0, VEC_ISA_BASE + 0, on_wake, 0, &wake_route))
        return false;
    pit_ch0_periodic(pit_reload_for_hz(1000000000ull / WAKE_PERIOD_NS));
    intr_unmask(&wake_route);
    return true;
}

static void stop_wakeups(void)
{
    pit_ch0_stop();
    intr_release(&wake_route);
}

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
    out->halted = cs->wrap_ns >= HALT_MIN_WRAP_NS && start_wakeups();
    uint64_t last = cs->read(), acc = 0, t0 = rdtsc_ordered(), now = t0;
    while (now - t0 < run_cyc && out->reads < POLL_CAP) {
        if (out->halted) {
            irq_enable();
            cpu_halt();             /* a PIT wake-up every 20 ms */
            irq_disable();
        }
        uint64_t v = cs->read();
        acc += cs_delta(cs, v, last);
        last = v;
        out->reads++;
        now = rdtsc_ordered();
    }
    if (out->halted)
        stop_wakeups();
    irq_restore(flags);

    out->run_ns = tsc_cyc_to_ns(now - t0);
    out->counter_ns = mul_div_u64(acc, 1000000000ull, cs->freq_hz);
    out->wraps = acc / (cs->mask + 1);
    out->err_ppb = calibrate_ppb_diff(out->counter_ns, out->run_ns);
    bool ok = out->err_ppb < WRAPCHECK_PASS_PPB && out->err_ppb > -WRAPCHECK_PASS_PPB &&
              out->wraps >= 2;
    out->status = ok ? "ok" : "lost";
}
