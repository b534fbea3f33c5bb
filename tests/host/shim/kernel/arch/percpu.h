/* tests/host/shim/kernel/arch/percpu.h - stands in for kernel/arch/percpu.h when
 * kernel/timers/idle.c is compiled for the host tests (tests/host/host.mk puts this
 * directory first on the quote include path of that one file, so nothing else sees it).
 * The real header finds the running CPU through %gs, which a host process does not set up;
 * here the test says which CPU it is on. */
#ifndef TICKLAB_TESTS_HOST_SHIM_PERCPU_H
#define TICKLAB_TESTS_HOST_SHIM_PERCPU_H
#define TICKLAB_ARCH_PERCPU_H         /* the real header's guard: never both */

extern unsigned fake_smp_cpu;         /* tests/host/test_idle.c: the CPU the test runs on */
static inline unsigned cpu_index(void)
{
    return fake_smp_cpu;
}

#endif
