/* kernel/timers/idle.h - how a CPU waits: the idle policy (HLT, or a poll with interrupts on
 * under virtual time) and HLT with a second wake-up. Every wait in HLT in ticklab arms a
 * backup one-shot on a device of this CPU other than the one it waits for (the LAPIC timer,
 * or the PIT when the LAPIC is busy), so a device that stops interrupting ends in a report,
 * never a hang. The backup is claimed for the wait (clockevent_claim) and counts its wakes. */
#ifndef TICKLAB_TIMERS_IDLE_H
#define TICKLAB_TIMERS_IDLE_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"
#include "ticklab/tick.h"
#include "kernel/config.h"

#define HALT_BACKUP_NS 50000000ull   /* the longest one HLT can last */

/* How this run's CPUs wait for an interrupt (idle=, docs/command-line.md). halt: HLT, what an
 * idle CPU does. poll: no CPU halts; a wait spins with interrupts on until the next
 * interrupt any CPU takes (blocks of NOPs under TCG, tcg, where PAUSE leaves the translated
 * code; PAUSE elsewhere). Exact mode needs poll: under QEMU -icount with sleep=off, once
 * every vCPU is halted QEMU's main-loop thread moves the virtual clock on to the next timer,
 * and it may read the clock while the vCPU thread has not yet counted its last instructions;
 * the next timer then fires those few ns late, at a moment the host decides. A CPU that
 * never halts keeps that warp from happening at all (docs/experiments.md, "How repeatable
 * exact mode is"). Call once, before the first wait; until then every CPU halts. */
void idle_configure(enum idle_mode mode, bool tcg);
/* What idle=auto (the default) comes to: poll under virtual time (QEMU -icount: TCG and a TSC
 * of exactly 1 GHz) on one CPU, halt otherwise; *reason gets the sentence the environment
 * record carries (static text). halt and poll stay as asked. Pure. */
enum idle_mode idle_resolve(enum idle_mode asked, bool virtual_time, unsigned cpus,
                            const char **reason);
/* The sentence idle_reason() gives from now on (static text; NULL: the mode's own). */
void idle_set_reason(const char *reason);
bool idle_polls(void);
const char *idle_name(void);          /* "halt" or "poll" */
const char *idle_reason(void);        /* the same in a sentence */
/* Enables interrupts, waits for one (HLT, or polls as above), disables them. Interrupts must
 * be off on entry: one already pending is taken at once and ends the wait (STI's shadow
 * covers the HLT; the poll samples irq_events before enabling). */
void cpu_wait_irq(void);

/* The tick the boot CPU's wake-ups keep alive: after each one, a tick that stopped coming
 * is rescued (tick_rescue). NULL: none. */
void halt_set_tick(struct tick *t);

/* busy: the device being waited for (NULL: none); the backup never shares hardware with it
 * or with the tick's device. Interrupts must be off. False: no backup exists; halt_once()
 * then polls with interrupts enabled instead of halting. One wait per CPU at a time. */
bool halt_backup_start(const struct clockevent *busy);
/* Arms the backup, waits for an interrupt (cpu_wait_irq); then, on the boot CPU,
 * folds the clocksource into time_ns() and rescues a tick that stopped coming. */
void halt_once(void);
void halt_backup_stop(void);
/* Backup events on this CPU so far (waits ended by the backup, not by what they waited for). */
uint64_t halt_backup_wakes(void);
/* The device a wait on this CPU is using as its backup, NULL when none. */
const struct clockevent *halt_backup_device(void);

#endif
