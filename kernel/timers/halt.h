/* kernel/timers/halt.h - HLT with a second wake-up. Every wait in HLT in ticklab arms a
 * backup one-shot on a device of this CPU other than the one it waits for (the LAPIC timer,
 * or the PIT when the LAPIC is busy), so a device that stops interrupting ends in a report,
 * never a hang. The backup is claimed for the wait (clockevent_claim) and counts its wakes. */
#ifndef TICKLAB_TIMERS_HALT_H
#define TICKLAB_TIMERS_HALT_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"

#define HALT_BACKUP_NS 50000000ull   /* the longest one HLT can last */

/* busy: the device being waited for (NULL: none); the backup never shares hardware with it
 * or with the tick's device. Interrupts must be off. False: no backup exists; halt_once()
 * then polls with interrupts enabled instead of halting. One wait per CPU at a time. */
bool halt_backup_start(const struct clockevent *busy);
/* Arms the backup, enables interrupts, halts, disables interrupts; then, on the boot CPU,
 * folds the clocksource into time_ns() and rescues a tick that stopped coming. */
void halt_once(void);
void halt_backup_stop(void);
/* Backup events on this CPU so far (waits ended by the backup, not by what they waited for). */
uint64_t halt_backup_wakes(void);
/* The device a wait on this CPU is using as its backup, NULL when none. */
const struct clockevent *halt_backup_device(void);

#endif
