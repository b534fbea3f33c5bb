/* kernel/timers/idle.c - see idle.h. The backup is another clock event device of this CPU,
 * claimed for the wait with a handler that only counts, so it needs no interrupt route of
 * its own and cannot collide with the device being waited for. */
#include "kernel/timers/idle.h"

#include "kernel/arch/cpu.h"
#include "kernel/arch/percpu.h"
#include "kernel/arch/trap.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/io.h"
#include "ticklab/tick.h"

static struct halt_wait {
    struct clockevent *backup;
    uint64_t wakes;
} waits[CPU_MAX];

static struct {
    bool poll, tcg;
    const char *reason;
} idle;

static struct tick *kept_tick;      /* the tick the boot CPU's wake-ups keep alive */

void halt_set_tick(struct tick *t)
{
    kept_tick = t;
}

void idle_configure(enum idle_mode mode, bool tcg)
{
    idle.poll = mode == IDLE_POLL;
    idle.tcg = tcg;
    idle.reason = 0;
}

void idle_set_reason(const char *reason)
{
    idle.reason = reason;
}

enum idle_mode idle_resolve(enum idle_mode asked, bool virtual_time, unsigned cpus,
                            const char **reason)
{
    if (asked == IDLE_POLL) {
        *reason = "idle=poll: no CPU halts, every wait spins with interrupts on";
        return IDLE_POLL;
    }
    if (asked == IDLE_HALT) {
        *reason = "idle=halt: every wait halts (HLT)";
        return IDLE_HALT;
    }
    if (!virtual_time) {
        *reason = "idle=auto, real time: every wait halts (HLT), as an idle CPU does";
        return IDLE_HALT;
    }
    if (cpus > 1) {
        *reason = "idle=auto, virtual time on more than one CPU: every wait halts (HLT), since "
                  "a poll on one vCPU delays another's interrupts; QEMU's idle warp may then "
                  "make two runs differ by a few ns (exact mode repeats byte for byte on one "
                  "CPU)";
        return IDLE_HALT;
    }
    *reason = "idle=auto, virtual time (QEMU -icount): no CPU halts, every wait spins with "
              "interrupts on, so QEMU's idle warp never moves the clock and runs repeat byte "
              "for byte";
    return IDLE_POLL;
}

bool idle_polls(void)
{
    return idle.poll;
}

const char *idle_name(void)
{
    return idle.poll ? "poll" : "halt";
}

const char *idle_reason(void)
{
    if (idle.reason)
        return idle.reason;
    return idle.poll ? "idle=poll: no CPU halts, every wait spins with interrupts on"
                     : "idle=halt: every wait halts (HLT)";
}

void cpu_wait_irq(void)
{
    if (!idle.poll) {
        irq_enable();           /* STI's one-instruction shadow covers the HLT */
        cpu_halt();
        irq_disable();
        return;
    }
    uint64_t seen = irq_events;
    irq_enable();
    while (irq_events == seen) {
        if (idle.tcg)
            cpu_nop_block();    /* each NOP one instruction: 1 ns at icount shift 0 */
        else
            cpu_relax();
    }
    irq_disable();
}

static void count_wake(struct clockevent *ce)
{
    struct halt_wait *w = ce->owner;
    w->wakes++;
}

static bool eligible(const struct clockevent *ce, unsigned cpu, const struct clockevent *busy)
{
    if (ce->cpu != cpu || !(ce->features & CE_ONESHOT) || !clockevent_is_free(ce))
        return false;
    /* Never the tick's device (or its hardware): arming a one-shot there would stop the
     * tick; clockevent_is_free says so while the tick owns it. */
    return !clockevent_shares_hw(ce, busy);
}

bool halt_backup_start(const struct clockevent *busy)
{
    unsigned cpu = cpu_index();
    struct halt_wait *w = &waits[cpu];
    struct clockevent *best = 0;
    for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next)
        if (eligible(ce, cpu, busy) && (!best || ce->rating > best->rating))
            best = ce;
    w->backup = best && clockevent_claim(best, count_wake, w) == 0 ? best : 0;
    return w->backup != 0;
}

void halt_once(void)
{
    unsigned cpu = cpu_index();
    struct halt_wait *w = &waits[cpu];
    if (w->backup)
        clockevent_program_ns(w->backup, HALT_BACKUP_NS);   /* clamped to the device's max */
    if (w->backup) {
        cpu_wait_irq();
    } else {
        /* No second wake-up: one poll step with interrupts on instead. Not STI; PAUSE; CLI:
         * under QEMU TCG the PAUSE right after STI leaves the translated block before STI's
         * one-instruction shadow is lifted, so CLI comes with no window at all (seen: on the
         * pc machine no interrupt was ever taken in such a wait). The load and compare
         * between them end STI's block the ordinary way. */
        uint64_t seen = irq_events;
        irq_enable();
        if (irq_events == seen)
            cpu_relax();
        irq_disable();
    }
    if (cpu != 0)
        return;
    /* Every wake-up folds the clocksource into time_ns(): a wait of many seconds with no
     * tick running must not outlast a narrow counter's wrap (the PM timer's is 4.69 s).
     * Regression: time_ns_lost_pm_wrap_during_checks. */
    timekeeping_accumulate();
    if (kept_tick && tick_overdue(kept_tick, time_ns()))
        tick_rescue(kept_tick);
}

void halt_backup_stop(void)
{
    struct halt_wait *w = &waits[cpu_index()];
    if (!w->backup)
        return;
    clockevent_release(w->backup);
    w->backup = 0;
}

uint64_t halt_backup_wakes(void)
{
    return waits[cpu_index()].wakes;
}

const struct clockevent *halt_backup_device(void)
{
    return waits[cpu_index()].backup;
}
