/* kernel/arch/fault.h - CPU exceptions end the run with a `fault` record. */
#ifndef TICKLAB_ARCH_FAULT_H
#define TICKLAB_ARCH_FAULT_H
#include "kernel/arch/frame.h"

/* Reports the exception and ends the run as failed; returns only for the recoverable cases,
 * a #GP on rdmsr_safe()'s RDMSR or wrmsr_safe()'s WRMSR (an MSR the CPU lacks). NMIs and
 * machine checks with only corrected errors never get here (trap.c). */
void fault_handle(struct trap_frame *tf);

#endif
