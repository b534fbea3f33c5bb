/* tests/host/shim/kernel/smp/smp.h - stands in for kernel/smp/smp.h when kernel/timers/halt.c
 * is compiled for the host tests (tests/host/host.mk puts this directory first on the quote
 * include path of that one file, so nothing else sees it). The real header finds the running
 * CPU through %gs, which a host process does not set up; here the test says which CPU it is
 * on. Only what halt.c uses is offered: anything more it needs fails to compile, loudly. */
#ifndef TICKLAB_TESTS_HOST_SHIM_SMP_H
#define TICKLAB_TESTS_HOST_SHIM_SMP_H
#define TICKLAB_ARCH_SMP_H            /* the real header's guard: never both */
#include "kernel/arch/cpu.h"          /* CPU_MAX */

extern unsigned fake_smp_cpu;         /* tests/host/test_halt.c: the CPU the test runs on */
static inline unsigned smp_this_cpu(void)
{
    return fake_smp_cpu;
}

#endif
