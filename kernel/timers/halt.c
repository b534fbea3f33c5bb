/* kernel/timers/halt.c - see halt.h. The backup is another registered clock event device,
 * armed through the clockevent core with no event handler (its events are only counted), so
 * it needs no interrupt route of its own and cannot collide with the device being waited
 * for. Devices that share hardware (the LAPIC timer's two modes) never back each other up. */
#include "kernel/timers/halt.h"

#include "ticklab/io.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/tick.h"
#include "ticklab/kstring.h"

static struct clockevent *backup;
static uint64_t events_at_start, wakes;

static bool lapic_based(const char *name)
{
    return !k_strcmp(name, "lapic") || !k_strcmp(name, "tsc_deadline");
}

static bool conflicts(const char *a, const char *b)
{
    return !k_strcmp(a, b) || (lapic_based(a) && lapic_based(b));
}

bool halt_backup_start(const char *busy_device)
{
    backup = 0;
    for (struct clockevent *ce = clockevent_list(); ce; ce = ce->next) {
        if (!ce->usable || !(ce->features & CE_ONESHOT) || conflicts(ce->name, busy_device))
            continue;
        /* Only an idle device: one with an event handler belongs to someone (the hrtimer
         * base, a check in progress) and its programming must not be overwritten. */
        if (ce->event)
            continue;
        /* Never the tick's device: arming a one-shot on it would stop the tick. */
        if (tick_running() && conflicts(ce->name, tick_info()->dev->name))
            continue;
        if (!backup || ce->rating > backup->rating)
            backup = ce;
    }
    if (!backup)
        return false;
    events_at_start = backup->events;
    return true;
}

void halt_once(void)
{
    if (backup)
        clockevent_program_ns(backup, HALT_BACKUP_NS);   /* clamped to the device's max */
    irq_enable();
    if (backup)
        cpu_halt();
    else
        cpu_relax();          /* no second wake-up: poll with interrupts on instead */
    irq_disable();
    /* Every wake-up folds the clocksource into time_ns(): a wait of many seconds with no
     * tick running must not outlast a narrow counter's wrap (the PM timer's is 4.69 s).
     * Regression: time_ns_lost_pm_wrap_during_checks. */
    timekeeping_accumulate();
}

void halt_backup_stop(void)
{
    if (!backup)
        return;
    backup->shutdown();
    wakes += backup->events - events_at_start;
    backup = 0;
}

uint64_t halt_backup_wakes(void)
{
    return wakes + (backup ? backup->events - events_at_start : 0);
}
