/* kernel/smp/smp.c - see smp.h.
 *
 * Starting one CPU (Intel SDM vol. 3, 8.4.4; the MultiProcessor Specification, B.4): INIT
 * (assert), 10 ms, STARTUP with the trampoline's page number, 200 us, a second STARTUP if the
 * CPU has not answered, then up to 100 ms for it to reach ap_entry and say it is online. Each
 * wait is timed by the TSC. The trampoline page is executable only while CPUs start.
 *
 * A CPU can answer after the boot CPU gave up on it and went on to the next one (a slow
 * hypervisor, a CPU held in SMM). Its parameters are its own (a slot per CPU in the start
 * page, found by its APIC ID), and giving up is a state change it sees: a CPU that arrives
 * after it halts where it is (boot/trampoline.asm; ap_entry if it got that far) and is named
 * in a `cpu_late` record. One that had already claimed its slot gets 100 ms more. */
#include "kernel/smp/smp.h"

#include "kernel/arch/paging.h"
#include "kernel/arch/trap.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/smp/cpu_plan.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"
#include "ticklab/lapic.h"
#include "ticklab/muldiv.h"
#include "ticklab/units.h"
#include "kernel/arch/machine_events.h"
#include "kernel/arch/mce.h"

_Static_assert(MACHINE_EVENTS_CPUS == CPU_MAX, "kernel/arch/machine_events.h counts per CPU");

#define TRAMP_BASE SMP_START_PAGE       /* boot/trampoline.asm says the same */
#define MSR_GS_BASE 0xC0000101u
#define MSR_EFER_ADDR 0xC0000080u
#define AP_STACK_SIZE (16u * 1024u)
#define AP_IST_SIZE (4u * 1024u)
#define POKE_NS 50000000ull
#define PLAN_PACKAGES_SHOWN 8             /* smp_wait wakes the CPU it waits for this often */

extern char tramp_start[], tramp_end[], tramp_cr3[], tramp_entry[], tramp_efer[],
    tramp_nslots[], tramp_strays[], tramp_stray_id[], tramp_slots[];

/* One CPU's start parameters in the start page (boot/trampoline.asm has the same layout),
 * found by the CPU itself by its APIC ID, so that each one runs with its own. */
struct tramp_slot {
    uint32_t apic_id;
    volatile uint32_t state;         /* enum slot_state, changed only by locked CMPXCHG/XCHG */
    uint64_t stack;
};
_Static_assert(sizeof(struct tramp_slot) == 16, "boot/trampoline.asm: SLOT_BYTES");
enum slot_state {
    SLOT_EMPTY,                      /* not (yet) meant to start */
    SLOT_ARMED,                      /* INIT-SIPI sent: the CPU may claim it */
    SLOT_CLAIMED,                    /* the CPU took its parameters (trampoline) */
    SLOT_ONLINE,                     /* the CPU is committed to come online (ap_entry) */
    SLOT_ABANDONED,                  /* the boot CPU gave up on it: the CPU must halt */
    SLOT_LATE,                       /* the CPU came after that, and halted */
    SLOT_NO_APIC,                    /* its local APIC did not come up enabled: it halted */
    SLOT_LATE_ENTRY,                 /* as LATE, but it had got as far as ap_entry */
};
#define TRAMP_SLOTS 64               /* boot/trampoline.asm */
_Static_assert(CPU_MAX <= TRAMP_SLOTS, "the start page has a slot per CPU");
#define LATE_GRACE_NS 100000000ull   /* a claimed CPU gets this much more to come online */

struct cpu_local cpu_locals[CPU_MAX];
static unsigned n_online = 1, n_listed = 1;
static uint32_t bsp_apic_id;
static uint64_t tsc_hz;
static struct smp_hooks hooks;
static struct smp_wait_hooks wait_hooks;
static struct cpu_plan plan;
static bool keep_tramp;              /* a CPU given up on may still run the start page's code */
static unsigned abandon_cpu;         /* smp_abandon= test aid: 0 none */
static unsigned slow_cpu;            /* smp_slow_ap= test aid: 0 none */

void smp_test_abandon(unsigned cpu, unsigned slow)
{
    abandon_cpu = cpu;
    slow_cpu = slow;
}

void smp_set_hooks(const struct smp_hooks *h)
{
    hooks = *h;
}

void smp_set_wait_hooks(const struct smp_wait_hooks *h)
{
    wait_hooks = *h;
}

static void set_gs(struct cpu_local *c)
{
    c->self = c;
    wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)c);
}

static uint64_t ns_to_tsc(uint64_t ns)
{
    return mul_div_u64(ns, tsc_hz, NSEC_PER_SEC);
}

/* Each application processor's stacks: a guard page (unmapped) below the main stack, and
 * the three IST stacks for double fault, NMI and machine check. */
static struct {
    uint8_t guard[4096];
    uint8_t stack[AP_STACK_SIZE];
    uint8_t ist[3][AP_IST_SIZE];
} ap_stacks[CPU_MAX] __attribute__((aligned(4096)));
static char guard_names[CPU_MAX][8];

static void on_wake(unsigned vector, void *ctx)
{
    (void)vector, (void)ctx;
    intr_eoi_local();
}

static struct tramp_slot *slot(unsigned i)
{
    return (struct tramp_slot *)((uint8_t *)phys_to_virt(TRAMP_BASE) +
                                 (tramp_slots - tramp_start)) + i;
}

/* from -> to, unless the other side moved it first. */
static bool slot_move(struct tramp_slot *sl, uint32_t from, uint32_t to)
{
    return __atomic_compare_exchange_n(&sl->state, &from, to, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

static uint32_t tramp_get32(const char *sym)
{
    uint32_t v;
    memcpy(&v, (uint8_t *)phys_to_virt(TRAMP_BASE) + (sym - tramp_start), sizeof(v));
    return v;
}

/* ---- the application processor's side ---------------------------------------------------- */

void ap_entry(uint64_t index);

void ap_entry(uint64_t index)
{
    struct cpu_local *c = &cpu_locals[index];
    cpu_tables_init_ap((unsigned)index, (uint64_t)(uintptr_t)ap_stacks[index].ist[0] + AP_IST_SIZE,
                       (uint64_t)(uintptr_t)ap_stacks[index].ist[1] + AP_IST_SIZE,
                       (uint64_t)(uintptr_t)ap_stacks[index].ist[2] + AP_IST_SIZE);
    set_gs(c);
    struct lapic_info li;
    struct lapic apic;       /* the same way in as the boot CPU's (intr_apic()) */
    if (lapic_init(&apic, (uintptr_t)phys_to_virt(intr_lapic_phys()), intr_lapic_x2apic(),
                   VEC_SPURIOUS, VEC_LAPIC_ERROR, &li) == 0) {
        c->apic_id = li.id;
        c->x2apic = li.x2apic;
        paging_pat_init();
        cpu_lfence_fix(false);
        mce_init(&cpu_facts, false);
        if (c->index == slow_cpu) {
            /* the test aid: slow between taking its parameters and coming online, until the
             * boot CPU has given up on it (bounded: 2 s) */
            uint64_t c0 = rdtsc(), bound = ns_to_tsc(2 * NSEC_PER_SEC);
            while (slot(c->index)->state == SLOT_CLAIMED && rdtsc() - c0 < bound)
                cpu_relax();
        }
        if (!slot_move(slot(c->index), SLOT_CLAIMED, SLOT_ONLINE)) {
            /* the boot CPU gave up on this CPU while it was on its way here */
            __atomic_store_n(&slot(c->index)->state, SLOT_LATE_ENTRY, __ATOMIC_SEQ_CST);
            for (;;)
                __asm__ volatile("cli; hlt" ::: "memory");
        }
        if (hooks.ap_init)
            hooks.ap_init(c->index);
        c->online = true;
    } else {
        __atomic_store_n(&slot(c->index)->state, SLOT_NO_APIC, __ATOMIC_SEQ_CST);
        for (;;)
            __asm__ volatile("cli; hlt" ::: "memory");
    }
    for (;;) {
        irq_disable();
        if (c->posted != c->done) {
            uint64_t seq = c->posted;
            void (*fn)(void *) = c->fn;
            void *arg = c->arg;
            irq_enable();
            fn(arg);
            irq_disable();
            c->done = seq;
            lapic_send_ipi(intr_apic(), bsp_apic_id, VEC_SMP_WAKE);
            continue;
        }
        /* STI's one-instruction shadow covers the HLT: a wake-up after the check is taken
         * after the HLT begins, and ends it (the idle hook keeps that promise too). */
        if (hooks.idle)
            hooks.idle();
        else
            __asm__ volatile("sti; hlt" ::: "memory");
    }
}

/* ---- the boot CPU's side ------------------------------------------------------------------ */

static bool wait_tsc(volatile bool *flag, uint64_t ns)
{
    uint64_t c0 = rdtsc(), bound = ns_to_tsc(ns);
    while (!(flag && *flag) && rdtsc() - c0 < bound)
        cpu_relax();
    return flag && *flag;
}

static void tramp_put(char *sym, uint64_t v)
{
    uint8_t *page = phys_to_virt(TRAMP_BASE);
    memcpy(page + (sym - tramp_start), &v, sizeof(v));
}

/* The boot CPU gives up on CPU c: its slot abandoned, so that if it answers later it halts
 * in the start page instead of running. Returns why it is not online, or NULL when it came
 * online after all (it had already claimed its slot and was given LATE_GRACE_NS more). */
static const char *give_up(struct cpu_local *c, const char *why)
{
    struct tramp_slot *sl = slot(c->index);
    if (slot_move(sl, SLOT_ARMED, SLOT_ABANDONED))
        return why;
    if (sl->state == SLOT_CLAIMED && !wait_tsc(&c->online, LATE_GRACE_NS) &&
        slot_move(sl, SLOT_CLAIMED, SLOT_ABANDONED)) {
        keep_tramp = true;      /* it may still be in the start page's 64-bit code */
        return "it took its start parameters but did not come online within 100 ms more: "
               "told to halt";
    }
    if (sl->state == SLOT_NO_APIC)
        return "its local APIC did not come up enabled: it halted";
    /* SLOT_ONLINE: committed, running its per-CPU setup */
    if (wait_tsc(&c->online, NSEC_PER_SEC))
        return 0;
    return "it reached the kernel but its setup did not finish within 1 s";
}

static const char *start_one(struct cpu_local *c)
{
    unsigned i = c->index;
    struct tramp_slot *sl = slot(i);
    sl->stack = (uint64_t)(uintptr_t)ap_stacks[i].stack + AP_STACK_SIZE;
    __atomic_store_n(&sl->state, SLOT_ARMED, __ATOMIC_SEQ_CST);
    uint64_t t0 = rdtsc();
    if (lapic_send_ipi(intr_apic(), c->apic_id, ICR_INIT | ICR_ASSERT) != 0)
        return give_up(c, "the INIT IPI was not accepted by the local APIC");
    wait_tsc(0, 10000000ull);                           /* 10 ms after INIT */
    if (i == abandon_cpu) {
        /* the test aid: given up on before it can answer, so that its answer is late for
         * certain; then started, to see what it does with that */
        slot_move(sl, SLOT_ARMED, SLOT_ABANDONED);
        lapic_send_ipi(intr_apic(), c->apic_id, ICR_STARTUP | (TRAMP_BASE >> 12));
        return "smp_abandon= on the command line (test aid): given up on before its STARTUP "
               "IPI";
    }
    for (int sipi = 0; sipi < 2 && !c->online; sipi++) {
        if (lapic_send_ipi(intr_apic(), c->apic_id, ICR_STARTUP | (TRAMP_BASE >> 12)) != 0)
            return give_up(c, "the STARTUP IPI was not accepted by the local APIC");
        wait_tsc(&c->online, sipi == 0 ? 200000ull : 100000000ull);
    }
    const char *why = c->online ? 0 : give_up(c, "no answer within 100 ms of the second "
                                                 "STARTUP IPI");
    c->start_tsc_cyc = rdtsc() - t0;
    return why;
}

/* CPUs that answered after the boot CPU gave up on them, and CPUs no start was meant for:
 * each halted in the start page; said once the others are started. A CPU given up on by the
 * test aids is waited for (100 ms), so that the record is there. */
static void report_late(unsigned n)
{
    unsigned aided[2] = { abandon_cpu, slow_cpu };
    for (unsigned k = 0; k < 2; k++) {
        if (!aided[k] || aided[k] >= n)
            continue;
        volatile uint32_t *st = &slot(aided[k])->state;
        uint64_t c0 = rdtsc(), bound = ns_to_tsc(LATE_GRACE_NS);
        while (*st == SLOT_ABANDONED && rdtsc() - c0 < bound)
            cpu_relax();
    }
    for (unsigned i = 1; i < n; i++) {
        uint32_t st = slot(i)->state;
        if (st != SLOT_LATE && st != SLOT_LATE_ENTRY)
            continue;
        struct rec r;
        rec_begin(&r, "cpu_late");
        json_u64(&r.j, "cpu", i);
        json_u64(&r.j, "apic_id", slot(i)->apic_id);
        json_str(&r.j, "reason", st == SLOT_LATE
                 ? "it answered after the boot CPU gave up on it: halted in the start page "
                   "with its own parameters, interrupts off; not used"
                 : "it came on after the boot CPU gave up on it: halted in the kernel's entry "
                   "for it, on its own stack, interrupts off; not used");
        rec_emit(&r);
        kprintf("  cpu %u       APIC id %u answered late: halted, not used\n", i,
                slot(i)->apic_id);
    }
    uint32_t strays = tramp_get32(tramp_strays);
    if (strays) {
        struct rec r;
        rec_begin(&r, "cpu_late");
        json_u64(&r.j, "strays", strays);
        json_u64(&r.j, "apic_id", tramp_get32(tramp_stray_id));
        json_str(&r.j, "reason", "a CPU no start was meant for (its CPUID APIC ID names no armed "
                                 "slot) reached the start page: halted there");
        rec_emit(&r);
    }
}

static void report(const struct cpu_local *c, bool started, const char *reason)
{
    struct rec r;
    rec_begin(&r, "cpu_start");
    json_u64(&r.j, "cpu", c->index);
    json_u64(&r.j, "apic_id", c->apic_id);
    json_bool(&r.j, "bsp", c->index == 0);
    json_bool(&r.j, "online", started);
    json_str(&r.j, "reason", reason);
    json_u64(&r.j, "package", cpu_topo_package(&cpu_facts.topo, c->apic_id));
    json_u64(&r.j, "core", cpu_topo_core(&cpu_facts.topo, c->apic_id));
    json_u64(&r.j, "thread", cpu_topo_thread(&cpu_facts.topo, c->apic_id));
    if (started)
        json_str(&r.j, "lapic_mode", c->x2apic ? "x2apic" : "xapic");
    if (c->index && started) {
        json_str(&r.j, "clock", "tsc");
        json_u64(&r.j, "start_ns", mul_div_u64(c->start_tsc_cyc, NSEC_PER_SEC, tsc_hz));
    }
    if (started && hooks.describe)
        hooks.describe(c->index, &r.j);
    rec_emit(&r);
    kprintf("  cpu %u       APIC id %u%s: %s%s\n", c->index, c->apic_id,
            c->index ? "" : " (boot CPU)", started ? "online" : "not started: ",
            started ? "" : reason);
}

/* "32 of 32 CPUs online, 2 packages: 16 + 16" (online per package, in MADT order). */
void smp_coverage(char *buf, size_t size)
{
    uint32_t pkg[PLAN_PACKAGES_SHOWN];
    unsigned shown = 0;
    for (unsigned i = 0; i < plan.n_cpus && shown < PLAN_PACKAGES_SHOWN; i++) {
        unsigned k = 0;
        while (k < shown && pkg[k] != plan.cpus[i].package)
            k++;
        if (k == shown)
            pkg[shown++] = plan.cpus[i].package;
    }
    size_t len = (size_t)fmt_snprintf(buf, size, "%u of %u CPUs online", smp_online(),
                                      smp_listed());
    if (plan.packages < 2)
        return;
    len += (size_t)fmt_snprintf(buf + len, size > len ? size - len : 0, ", %u packages:",
                                plan.packages);
    for (unsigned k = 0; k < shown && len < size; k++) {
        unsigned on = 0;
        for (unsigned c = 0; c < CPU_MAX; c++)
            on += cpu_locals[c].online &&
                  cpu_topo_package(&cpu_facts.topo, cpu_locals[c].apic_id) == pkg[k];
        len += (size_t)fmt_snprintf(buf + len, size - len, "%s %u", k ? " +" : "", on);
    }
    if (shown < plan.packages && len < size)
        fmt_snprintf(buf + len, size - len, " + ...");
}

/* The MADT's CPUs as counted: one record, then one per entry dropped, with the reason. */
static void plan_report(unsigned max_cpus)
{
    struct rec r;
    rec_begin(&r, "cpu_plan");
    json_u64(&r.j, "cpus", plan.n_cpus);
    json_u64(&r.j, "chosen", plan.n_chosen);
    json_u64(&r.j, "cpu_max", CPU_MAX);
    json_u64(&r.j, "max_cpus", max_cpus);
    json_u64(&r.j, "packages", plan.packages);
    json_str(&r.j, "topology", cpu_facts.topo.valid ? cpu_facts.topo.source : 0);
    json_bool(&r.j, "bsp_listed", plan.bsp_listed);
    json_bool(&r.j, "x2apic_mode", intr_lapic_x2apic());
    json_u64(&r.j, "madt_revision", acpi_facts.madt.revision);
    json_u64(&r.j, "duplicates", plan.duplicates);
    json_u64(&r.j, "broadcast_ids", plan.broadcast_ids);
    json_u64(&r.j, "unreachable", plan.unreachable);
    json_u64(&r.j, "disabled", plan.disabled);
    json_u64(&r.j, "online_capable", plan.online_capable);
    json_u64(&r.j, "dropped", plan.n_drops + plan.drops_over);
    rec_emit(&r);
    for (unsigned i = 0; i < plan.n_drops; i++) {
        const struct cpu_plan_drop *d = &plan.drops[i];
        rec_begin(&r, "cpu_dropped");
        json_u64(&r.j, "entry", d->entry);
        json_u64(&r.j, "madt_type", d->x2apic_entry ? 9 : 0);
        json_u64(&r.j, "apic_id", d->apic_id);
        json_str(&r.j, "reason", d->reason);
        rec_emit(&r);
        kprintf("  madt cpu    entry %u (type %u, APIC id %#x) dropped: %s\n", d->entry,
                d->x2apic_entry ? 9 : 0, d->apic_id, d->reason);
    }
}

void smp_boot_cpu_init(void)
{
    cpu_locals[0].index = 0;
    cpu_locals[0].online = true;
    set_gs(&cpu_locals[0]);
}

unsigned smp_start(unsigned max_cpus, bool start_page_is_ram, uint64_t tsc_rate_hz)
{
    struct cpu_local *bsp = &cpu_locals[0];
    tsc_hz = tsc_rate_hz;
    smp_boot_cpu_init();
    bsp_apic_id = bsp->apic_id = lapic_id(intr_apic());
    bsp->x2apic = intr_lapic_x2apic();
    irq_set_handler(VEC_SMP_WAKE, on_wake, 0);
    report(bsp, true, 0);

    /* the CPUs the MADT lists, each once, in its order, the boot CPU first; the ones
     * started spread over packages and cores when there are more than the limit */
    static char limit_reason[64];
    unsigned limit = max_cpus < CPU_MAX ? max_cpus : CPU_MAX;
    fmt_snprintf(limit_reason, sizeof(limit_reason), max_cpus < CPU_MAX
                 ? "cpus= on the command line" : "over ticklab's limit of CPU_MAX (%u) CPUs",
                 CPU_MAX);
    cpu_plan_build(&acpi_facts.madt, acpi_facts.madt.revision, bsp_apic_id, bsp->x2apic,
                   &cpu_facts.topo, &plan);
    cpu_plan_choose(&plan, limit, limit_reason);
    plan_report(max_cpus);
    n_listed = plan.n_cpus;
    /* indices: the boot CPU 0, the ones to start 1.. in MADT order, then the others, so that
     * every cpu_start record has its own */
    unsigned n = 1, skipped = start_page_is_ram ? plan.n_chosen : 1;
    for (unsigned k = 1; k < plan.n_cpus; k++) {
        const struct cpu_plan_cpu *a = &plan.cpus[k];
        struct cpu_local tmp = { .index = n, .apic_id = a->apic_id };
        if (!a->chosen || !start_page_is_ram) {
            tmp.index = skipped++;
            report(&tmp, false, !a->chosen ? a->reason
                                           : "the memory map does not list the start page "
                                             "(0x7000) as available RAM");
            continue;
        }
        cpu_locals[n] = tmp;
        n++;
    }
    if (n == 1)
        return n_online;

    /* the trampoline: copied through the direct map, executable while CPUs start */
    size_t len = (size_t)(tramp_end - tramp_start);
    memcpy(phys_to_virt(TRAMP_BASE), tramp_start, len);
    tramp_put(tramp_cr3, paging_root());
    tramp_put(tramp_entry, (uint64_t)(uintptr_t)ap_entry);
    tramp_put(tramp_efer, rdmsr(MSR_EFER_ADDR) & ((1u << 8) | (1u << 11)));   /* LME, NXE */
    for (unsigned i = 0; i < n; i++)    /* every state SLOT_EMPTY (the copy); slot 0 the
                                           boot CPU's, never armed, so that no other CPU
                                           takes it for an ID it does not have */
        slot(i)->apic_id = cpu_locals[i].apic_id;
    uint32_t nslots = n;
    memcpy((uint8_t *)phys_to_virt(TRAMP_BASE) + (tramp_nslots - tramp_start), &nslots, 4);
    bool tramp_ok = paging_set_page(TRAMP_BASE, PAGE_CODE, 0) == 0;
    for (unsigned i = 1; i < n; i++) {
        fmt_snprintf(guard_names[i], sizeof(guard_names[i]), "cpu%u", i);
        if (paging_set_page((uint64_t)(uintptr_t)ap_stacks[i].guard, PAGE_GUARD,
                            guard_names[i]) != 0)
            rec_error("smp", "a stack guard page could not be set: overflow goes unnoticed");
    }
    for (unsigned i = 1; i < n; i++) {
        struct cpu_local *c = &cpu_locals[i];
        c->self = c;
        const char *why = tramp_ok ? start_one(c)
                                   : "the start page could not be made executable";
        if (!why)
            n_online++;
        report(c, why == 0, why);
    }
    report_late(n);
    if (!keep_tramp)
        paging_set_page(TRAMP_BASE, PAGE_DATA, 0);
    return n_online;
}

unsigned smp_online(void)
{
    return n_online;
}

unsigned smp_listed(void)
{
    return n_listed;
}

int smp_post(unsigned cpu, void (*fn)(void *), void *arg)
{
    if (cpu >= CPU_MAX || !cpu_locals[cpu].online)
        return -ENODEV;
    struct cpu_local *c = &cpu_locals[cpu];
    c->fn = fn;
    c->arg = arg;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    c->posted++;
    lapic_send_ipi(intr_apic(), c->apic_id, VEC_SMP_WAKE);
    return 0;
}

int smp_wait(unsigned cpu, uint64_t bound_ns)
{
    if (cpu >= CPU_MAX || !cpu_locals[cpu].online)
        return -ENODEV;
    struct cpu_local *c = &cpu_locals[cpu];
    uint64_t c0 = rdtsc(), bound = ns_to_tsc(bound_ns), poke = ns_to_tsc(POKE_NS);
    uint64_t last_poke = c0;
    if (wait_hooks.begin)
        wait_hooks.begin();
    while (c->done != c->posted && rdtsc() - c0 < bound) {
        if (wait_hooks.once) {
            wait_hooks.once();
        } else {
            irq_enable();
            cpu_halt();         /* the other CPU's answer is an IPI */
            irq_disable();
        }
        /* A CPU that waits in HLT for an event that never comes would sleep forever: a wake-up
         * now and then lets its own bounded wait look at the clock. */
        if (rdtsc() - last_poke >= poke) {
            last_poke = rdtsc();
            lapic_send_ipi(intr_apic(), c->apic_id, VEC_SMP_WAKE);
        }
    }
    if (wait_hooks.end)
        wait_hooks.end();
    if (c->done == c->posted)
        return 0;
    c->online = false;
    c->reason = "stopped answering: work not done within its bound";
    return -ETIMEDOUT;
}

int smp_call(unsigned cpu, void (*fn)(void *), void *arg, uint64_t bound_ns)
{
    if (cpu == 0) {
        fn(arg);
        return 0;
    }
    int rc = smp_post(cpu, fn, arg);
    return rc ? rc : smp_wait(cpu, bound_ns);
}
