/* kernel/smp/smp.h - the other CPUs: started from the MADT's list with INIT-SIPI-SIPI
 * (boot/trampoline.asm), each with its own stacks, GDT/TSS and local APIC, then parked in HLT
 * until the boot CPU hands it work (smp_call). The boot CPU is index 0; others follow in
 * MADT order. Every wait is bounded by the TSC: a CPU that does not answer is reported in its
 * `cpu_start` record and left alone. What else each CPU needs (its timers) the layers above
 * add through smp_set_hooks(); this file knows nothing of them. */
#ifndef TICKLAB_ARCH_SMP_H
#define TICKLAB_ARCH_SMP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/arch/cpu.h"
#include "kernel/arch/percpu.h"

struct json;

#define SMP_START_PAGE 0x7000u   /* where the other CPUs start (boot/trampoline.asm) */
#define VEC_SMP_WAKE  0xF8   /* "look at your work slot" / "your work is done" */

struct cpu_local {
    struct cpu_local *self;          /* first member: %gs:0 finds it */
    unsigned index;                  /* 0: the boot CPU */
    uint32_t apic_id;
    bool x2apic;                     /* its local APIC runs in x2APIC mode (as it set it up) */
    volatile bool online;
    const char *reason;              /* why it is not online (static string) */
    uint64_t start_tsc_cyc;          /* INIT to online, TSC cycles of the boot CPU */
    /* work handed over by the boot CPU */
    void (*volatile fn)(void *);
    void *volatile arg;
    volatile uint64_t posted, done;
};

extern struct cpu_local cpu_locals[CPU_MAX];

_Static_assert(__builtin_offsetof(struct cpu_local, index) == PERCPU_INDEX_OFFSET,
               "kernel/arch/percpu.h reads the index there");

/* The running CPU's record (GS base). smp_boot_cpu_init() first; cpu_index()
 * (kernel/arch/percpu.h) is its index. */
static inline struct cpu_local *this_cpu(void)
{
    struct cpu_local *c;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(c));
    return c;
}

/* The boot CPU's record, early (before anything asks which CPU it runs on). */
void smp_boot_cpu_init(void);

/* What the layers above smp want done per CPU, without smp knowing them (the time glue
 * registers each CPU's own timers this way):
 *  - ap_init(cpu) runs on each application processor as it starts, after its local APIC
 *    is up and before it is counted online (the boot CPU waits for it);
 *  - describe(cpu, j) adds members to that CPU's `cpu_start` record (boot CPU included). */
struct smp_hooks {
    void (*ap_init)(unsigned cpu);
    void (*describe)(unsigned cpu, struct json *j);
    void (*idle)(void);      /* an idle CPU's wait for an interrupt, entered and left with
                                interrupts off (NULL: STI; HLT) */
};
void smp_set_hooks(const struct smp_hooks *hooks);

/* Once, on the boot CPU, after the clock event devices are set up: starts up to max_cpus
 * CPUs in all (1: none but the boot CPU) and reports one `cpu_start` record per CPU the MADT
 * lists. start_page_is_ram: the memory map lists SMP_START_PAGE as available RAM; when it
 * does not, no other CPU is started (the page could hold firmware data) and each says so.
 * tsc_hz: the calibrated TSC rate its bounds are measured in. Returns how many are online,
 * the boot CPU included. */
unsigned smp_start(unsigned max_cpus, bool start_page_is_ram, uint64_t tsc_hz);
/* Test aids, 0: none. smp_abandon= (cpu): smp_start gives up on CPU `cpu` (its index, 1..)
 * before its STARTUP IPI, so that its answer is late for certain: it must halt in the start
 * page (a `cpu_late` record) and the CPU started after it must run with its own parameters.
 * smp_slow_ap= (slow): CPU `slow`, having taken its parameters, waits in ap_entry until the
 * boot CPU gives up on it (the ordinary bounds: about 300 ms), then must halt there. */
void smp_test_abandon(unsigned cpu, unsigned slow);
/* Online CPUs (the boot CPU included) and the MADT's count of usable CPUs. */
unsigned smp_online(void);
unsigned smp_listed(void);
/* What was covered, for the summary: "16 of 64 CPUs online, 2 packages: 8 + 8". */
void smp_coverage(char *buf, size_t size);

/* Runs fn(arg) on `cpu` (0: here, at once) and waits for it in HLT, bounded by bound_ns of
 * TSC time, waking that CPU every 50 ms so that its own waits can end by their bounds.
 * 0, -ENODEV (not online), -ETIMEDOUT (it did not finish: it is marked offline with the
 * reason, and the caller reports).
 * smp_post + smp_wait split it, to keep several CPUs busy at once. Boot CPU only, interrupts
 * off on entry. smp_set_wait_hooks: how the boot CPU waits (the time glue's HLT with a backup
 * wake-up); without them it halts with interrupts on. */
int smp_call(unsigned cpu, void (*fn)(void *), void *arg, uint64_t bound_ns);
int smp_post(unsigned cpu, void (*fn)(void *), void *arg);
int smp_wait(unsigned cpu, uint64_t bound_ns);
struct smp_wait_hooks {
    void (*begin)(void);
    void (*once)(void);
    void (*end)(void);
};
void smp_set_wait_hooks(const struct smp_wait_hooks *hooks);

#endif
