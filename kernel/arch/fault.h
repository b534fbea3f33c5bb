/* kernel/arch/fault.h - CPU exceptions end the run with a `fault` record. */
#ifndef TICKLAB_ARCH_FAULT_H
#define TICKLAB_ARCH_FAULT_H
#include "kernel/arch/frame.h"

/* Reports the exception and ends the run as failed; returns only for the one recoverable
 * case, a #GP on rdmsr_safe()'s RDMSR (an MSR the CPU lacks). */
void fault_handle(struct trap_frame *tf);

#endif
