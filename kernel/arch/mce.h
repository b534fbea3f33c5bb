/* kernel/arch/mce.h - what a machine check does to a run.
 *
 * A corrected error (logged in a bank, VAL set and UC clear) is counted as a machine event of
 * the CPU that found it (kernel/arch/machine_events.h) and cleared: the run goes on, and the
 * measurement window it was found in says so. The banks are polled at each window's start
 * and end and at the end of the run (the CPU interrupts for corrected errors only through
 * CMCI, which ticklab leaves off: a poll charges them to the right window as well). An
 * uncorrected one (UC or PCC set), or any #MC the interrupted code cannot be restarted from
 * (MCG_STATUS.RIPV clear), ends the run with a `fault` record naming the bank (fault.c asks
 * mce_fault_members()). Errors left in the banks from before the run (firmware, a previous
 * boot's crash) are listed in the `mce` record and cleared. */
#ifndef TICKLAB_ARCH_MCE_H
#define TICKLAB_ARCH_MCE_H
#include <stdbool.h>

#include "kernel/arch/frame.h"

struct json;
struct cpu_info;

/* On each CPU: the banks enabled (every CTL all ones, as Linux does, so that an uncorrected
 * error raises #MC) and CR4.MCE set (without it the CPU shuts down on one). The boot CPU
 * (report) sends the `mce` record, with what the banks held. */
void mce_init(const struct cpu_info *ci, bool report);
/* Vector 18 (its own IST stack): true when every error was corrected and the program can go
 * on; false for an uncorrected one (what it was is kept for mce_fault_members). */
bool mce_handle(struct trap_frame *tf);
/* The `fault` record's members for the #MC just reported: mcg_status, the bank, its
 * status, address, misc, and how many banks held an uncorrected error. */
void mce_fault_members(struct json *j);
/* Corrected errors logged in this CPU's banks: counted and cleared. Thread context. */
void mce_poll(void);

#endif
