/* kernel/arch/nmi.h - NMIs are counted, never fatal.
 *
 * A PC sends them for its own reasons: a PCI SERR# or an IOCHK# (the chipset's NMI_SC
 * register says which, drivers/nmi_sc.h), a BMC's or a front panel's NMI button, a
 * performance counter firmware left armed, a watchdog's first timeout. Linux counts what it
 * cannot attribute (unknown_nmi_error) and goes on; so does ticklab. Each NMI is counted on
 * the CPU it came to, with the TSC cycles its handler took, in kernel/arch/machine_events.h,
 * and so charged to the measurement window it fell in; the NMI_SC status is read (on the
 * boot CPU only: one register for the machine) and a SERR#/IOCHK# source quieted. */
#ifndef TICKLAB_ARCH_NMI_H
#define TICKLAB_ARCH_NMI_H
#include "kernel/arch/frame.h"

/* Vector 2, from the exception entry (on its own IST stack; NMIs stay blocked until its
 * IRET). Writes no record and takes no lock. */
void nmi_handle(struct trap_frame *tf);

#endif
