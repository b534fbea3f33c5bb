/* kernel/arch/smp.h - the other CPUs: started from the MADT's list with INIT-SIPI-SIPI
 * (boot/trampoline.asm), each with its own stacks, GDT/TSS, local APIC and local APIC timer
 * (a clock event device of its own, with an hrtimer base on it), then parked in HLT until
 * the boot CPU hands it work (smp_call). The boot CPU is index 0; others follow in MADT
 * order. Every wait is bounded by the TSC: a CPU that does not answer is reported in its
 * `cpu_start` record and left alone. */
#ifndef TICKLAB_ARCH_SMP_H
#define TICKLAB_ARCH_SMP_H
#include <stdbool.h>
#include <stdint.h>

#include "kernel/arch/cpu.h"
#include "ticklab/clockevent.h"
#include "ticklab/hrtimer.h"

#define SMP_HRTIMER_SLOTS 64
#define SMP_START_PAGE 0x7000u   /* where the other CPUs start (boot/trampoline.asm) */
#define VEC_AP_TIMER  0xF1   /* the application processors' local APIC timers */
#define VEC_SMP_WAKE  0xF8   /* "look at your work slot" / "your work is done" */

struct cpu_local {
    struct cpu_local *self;          /* first member: %gs:0 finds it */
    unsigned index;                  /* 0: the boot CPU */
    uint32_t apic_id;
    volatile bool online;
    const char *reason;              /* why it is not online (static string) */
    uint64_t start_tsc_cyc;          /* INIT to online, TSC cycles of the boot CPU */
    /* work handed over by the boot CPU */
    void (*volatile fn)(void *);
    void *volatile arg;
    volatile uint64_t posted, done;
    /* its local APIC timer and the hrtimers on it (application processors) */
    struct clockevent lapic_ce;
    struct hrtimer_base base;
    struct tq_slot slots[SMP_HRTIMER_SLOTS];
    bool base_ready;
    /* an HPET comparator of its own, where the HPET has one left (comparator = index) */
    struct clockevent *hpet_ce;
    const char *hpet_reason;
    struct hrtimer_base hpet_base;
    struct tq_slot hpet_slots[SMP_HRTIMER_SLOTS];
    bool hpet_ready;
};

extern struct cpu_local cpu_locals[CPU_MAX];

/* The running CPU's record (GS base). */
static inline struct cpu_local *this_cpu(void)
{
    struct cpu_local *c;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(c));
    return c;
}

/* Once, on the boot CPU, after the clock event devices are set up: starts up to max_cpus
 * CPUs in all (1: none but the boot CPU) and reports one `cpu_start` record per CPU the MADT
 * lists. start_page_is_ram: the memory map lists SMP_START_PAGE as available RAM; when it
 * does not, no other CPU is started (the page could hold firmware data) and each says so.
 * Returns how many are online, the boot CPU included. */
unsigned smp_start(unsigned max_cpus, bool start_page_is_ram);
/* Online CPUs (the boot CPU included) and the MADT's count of usable CPUs. */
unsigned smp_online(void);
unsigned smp_listed(void);

/* Runs fn(arg) on `cpu` (0: here, at once) and waits for it in HLT, bounded by bound_ns of
 * TSC time, waking that CPU every 50 ms so that its own waits can end by their bounds.
 * 0, -ENODEV (not online), -ETIMEDOUT (it did not finish: it is marked offline with the
 * reason, and the caller reports).
 * smp_post + smp_wait split it, to keep several CPUs busy at once. Boot CPU only, interrupts
 * off on entry. */
int smp_call(unsigned cpu, void (*fn)(void *), void *arg, uint64_t bound_ns);
int smp_post(unsigned cpu, void (*fn)(void *), void *arg);
int smp_wait(unsigned cpu, uint64_t bound_ns);

/* The hrtimer base on this CPU's local APIC timer (the boot CPU: NULL; it uses the kernel's
 * base). */
struct hrtimer_base *smp_local_base(void);
/* The hrtimer base on this CPU's own HPET comparator, or NULL (none left, or the boot CPU). */
struct hrtimer_base *smp_hpet_base(void);

#endif
