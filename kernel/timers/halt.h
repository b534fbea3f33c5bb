/* kernel/timers/halt.h - HLT with a second wake-up. Every wait in HLT in ticklab arms a
 * backup one-shot on a device other than the one it waits for (the LAPIC timer, or the PIT
 * when the LAPIC is busy), so a device that stops interrupting ends in a report, never a
 * hang. */
#ifndef TICKLAB_TIME_HALT_H
#define TICKLAB_TIME_HALT_H
#include <stdbool.h>
#include <stdint.h>

#define HALT_BACKUP_NS 50000000ull   /* the longest one HLT can last */

/* busy_device: the clockevent name being waited for. Interrupts must be off. False: no
 * backup exists; halt_once() then polls with interrupts enabled instead of halting. */
bool halt_backup_start(const char *busy_device);
/* Arms the backup, enables interrupts, halts, disables interrupts. */
void halt_once(void);
void halt_backup_stop(void);
uint64_t halt_backup_wakes(void);

#endif
