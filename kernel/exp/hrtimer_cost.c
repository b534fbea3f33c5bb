/* kernel/exp/hrtimer_cost.c - `hrtimer-cost`: TSC cycles, in the guest, for the hrtimer
 * operations, on every one-shot device (an hrtimer base on each in turn; the tick is stopped
 * so that its device can be measured too):
 *   start_no_reprogram   start a timer behind an earlier one (the queue only)
 *   cancel_no_reprogram  cancel that timer
 *   cancel_restart       cancel and start it again, still behind the head
 *   start_reprogram      start a timer ahead of the head: the device is reprogrammed
 *   cancel_reprogram     cancel that head: the device is reprogrammed for the old head
 *   program_device       clockevent_program_ns() alone: what one device write costs
 * and once, device-independent, irq_save_restore. Each operation is timed alone between two
 * ordered TSC reads with interrupts off; that pair's own cost (cs_measure's TSC read cost)
 * is included. The published figures (NuttX on an Intel i7): 48 cycles to restart, 73 to
 * cancel and restart, over 1000 with reprogramming. */
#include "kernel/exp/experiment.h"

#include "ticklab/io.h"
#include "kernel/exp/harness.h"
#include "kernel/report/console.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "kernel/timers/timers.h"
#include "ticklab/hrtimer.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

#define MAX_OPS 10000u
#define SLOTS 4u

static uint64_t cost[MAX_OPS];
static struct hrtimer head, t;
static struct hrtimer_base tmp_base;
static struct tq_slot tmp_slots[SLOTS];

static enum hrtimer_restart on_timer(struct hrtimer *h)
{
    (void)h;
    return HRTIMER_NORESTART;
}

static void cost_record(const char *op, const char *device, unsigned n)
{
    struct stats st;
    stats_u64(cost, n, &st);
    struct rec r;
    exp_result_begin(&r);
    json_str(&r.j, "op", op);
    json_str(&r.j, "device", device);
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "n", n);
    json_u64(&r.j, "min_cyc", (uint64_t)st.min);
    json_u64(&r.j, "median_cyc", (uint64_t)st.median);
    json_u64(&r.j, "p99_cyc", (uint64_t)st.p99);
    json_u64(&r.j, "max_cyc", (uint64_t)st.max);
    rec_emit(&r);
    kprintf("  %-20s %-13s %7llu %7llu %7llu\n", op, device, (unsigned long long)st.min,
            (unsigned long long)st.median, (unsigned long long)st.p99);
}

#define TIME(stmt) ({ uint64_t c0_ = rdtsc_ordered(); stmt; rdtsc_ordered() - c0_; })

static void measure(struct hrtimer_base *b, unsigned n)
{
    const char *dev = b->dev->name;
    unsigned long flags = irq_save();
    uint64_t now = time_ns();
    uint64_t ahead = now + 5000000ull, head_at = now + 10000000ull, behind = now + 20000000ull;
    memset(&head, 0, sizeof(head));
    memset(&t, 0, sizeof(t));
    head.fn = t.fn = on_timer;
    hrtimer_start(b, &head, head_at, HRTIMER_MODE_ABS);

    for (unsigned i = 0; i < n; i++) {
        cost[i] = TIME(hrtimer_start(b, &t, behind + i, HRTIMER_MODE_ABS));
        hrtimer_cancel(b, &t);
    }
    cost_record("start_no_reprogram", dev, n);
    for (unsigned i = 0; i < n; i++) {
        hrtimer_start(b, &t, behind + i, HRTIMER_MODE_ABS);
        cost[i] = TIME(hrtimer_cancel(b, &t));
    }
    cost_record("cancel_no_reprogram", dev, n);
    hrtimer_start(b, &t, behind, HRTIMER_MODE_ABS);
    for (unsigned i = 0; i < n; i++)
        cost[i] = TIME(hrtimer_cancel(b, &t); hrtimer_start(b, &t, behind + i, HRTIMER_MODE_ABS));
    cost_record("cancel_restart", dev, n);
    hrtimer_cancel(b, &t);
    uint64_t programs0 = b->reprograms;
    for (unsigned i = 0; i < n; i++) {
        cost[i] = TIME(hrtimer_start(b, &t, ahead + i, HRTIMER_MODE_ABS));
        hrtimer_cancel(b, &t);
    }
    cost_record("start_reprogram", dev, n);
    for (unsigned i = 0; i < n; i++) {
        hrtimer_start(b, &t, ahead + i, HRTIMER_MODE_ABS);
        cost[i] = TIME(hrtimer_cancel(b, &t));
    }
    cost_record("cancel_reprogram", dev, n);
    uint64_t reprograms = b->reprograms - programs0;
    for (unsigned i = 0; i < n; i++)
        cost[i] = TIME(clockevent_program_ns(b->dev, 5000000ull + i));
    cost_record("program_device", dev, n);
    hrtimer_cancel(b, &head);
    /* leave the device armed for nothing: the base's own state says "not armed" */
    clockevent_shutdown(b->dev);
    b->armed = false;
    irq_restore(flags);
    if (reprograms != 4ull * n)
        rec_error(exp_current(), "the reprogramming starts and cancels did not each reprogram "
                                 "the device once");
}

static void run(void)
{
    unsigned n = (unsigned)exp_size(1000, MAX_OPS, MAX_OPS);
    struct hrtimer_base *main_base = timers_base();
    exp_tick_off();
    kprintf("\nhrtimer-cost: TSC cycles per operation, %u of each\n", n);
    kprintf("  op                   device            min  median     p99\n");
    for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next) {
        if (ce->cpu != 0)
            continue;                /* another CPU's own device: not this CPU's to program */
        if (!ce->usable || !(ce->features & CE_ONESHOT)) {
            struct rec r;
            exp_skip_begin(&r, !ce->usable ? (ce->unusable_reason ? ce->unusable_reason
                                                                  : "unusable")
                                           : "no one-shot mode");
            json_str(&r.j, "op", "start_reprogram");
            json_str(&r.j, "device", ce->name);
            rec_emit(&r);
            continue;
        }
        if (main_base && main_base->dev == ce) {
            measure(main_base, n);
            continue;
        }
        if (hrtimer_base_init(&tmp_base, ce, &hrtimer_clock_time_ns, tmp_slots, SLOTS) != 0) {
            struct rec r;
            exp_skip_begin(&r, "the device or its hardware is in use");
            json_str(&r.j, "op", "start_reprogram");
            json_str(&r.j, "device", ce->name);
            rec_emit(&r);
            continue;
        }
        measure(&tmp_base, n);
        hrtimer_base_release(&tmp_base);
    }
    for (unsigned i = 0; i < n; i++)
        cost[i] = TIME(unsigned long f = irq_save(); irq_restore(f));
    cost_record("irq_save_restore", "none", n);
}

const struct experiment exp_hrtimer_cost = {
    .name = "hrtimer-cost",
    .summary = "TSC cycles to start, cancel and restart an hrtimer, with and without "
               "reprogramming each device",
    .run = run,
};
