/* kernel/arch/percpu.h - which CPU the code runs on. Each CPU's GS base points at its own
 * per-CPU block (kernel/smp/smp.h: struct cpu_local), whose first member points at itself
 * and whose second is the CPU's index (0: the boot CPU); smp.h asserts that layout. Apart
 * from smp.h so that code which only asks "which CPU" (the waits, the timers) needs nothing
 * of the code that starts CPUs. */
#ifndef TICKLAB_ARCH_PERCPU_H
#define TICKLAB_ARCH_PERCPU_H

#define PERCPU_INDEX_OFFSET 8      /* struct cpu_local.index */

static inline unsigned cpu_index(void)
{
    unsigned i;
    __asm__ volatile("movl %%gs:%c1, %0" : "=r"(i) : "i"(PERCPU_INDEX_OFFSET));
    return i;
}

#endif
