/* tests/host/fake/fake.c - the lib/port/io.h primitives of a host build, the registry of
 * ports, MMIO ranges and MSRs they dispatch to, costs, faults and running time. See fake.h. */
#include "fake.h"

#include <stdarg.h>
#include <stdio.h>

#include "tests/host/test.h"

#define MAX_RANGES 32
#define MAX_MSR_RANGES 16
#define MAX_PLAIN_MSRS 16
#define RFLAGS_IF (1UL << 9)

struct range {
    uint64_t base, len;
    const struct fake_io_ops *ops;
    void *ctx;
};
struct msr_range {
    uint32_t first, count;
    const struct fake_msr_ops *ops;
    void *ctx;
};

static const struct fake_costs default_costs = {
    .port_ns = 1000, .mmio_ns = 100, .msr_ns = 100, .cpuid_ns = 100, .fence_ns = 10, .rdtsc_ns = 20,
    .relax_ns = 10, .irqflag_ns = 0, .halt_max_ns = 10000000000ull,
};
struct fake_costs fake_cost;
struct fake_stats fake_stats;

static struct range ports[MAX_RANGES], mmios[MAX_RANGES];
static int nports, nmmios;
static struct msr_range msrs[MAX_MSR_RANGES];
static int nmsrs;
static struct { uint32_t msr; uint64_t value; } plain[MAX_PLAIN_MSRS];
static int nplain;
static bool faults_fatal = true;
static char last_fault[256];
static struct { uint64_t addr, ns; bool armed; } stall;   /* fake_stall_next_mmio_write */

/* ---- faults ---------------------------------------------------------------------------- */

void fake_faults_fatal(bool fatal)
{
    faults_fatal = fatal;
}

const char *fake_last_fault(void)
{
    return last_fault;
}

void fake_fault_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last_fault, sizeof(last_fault), fmt, ap);
    va_end(ap);
    fake_stats.faults++;
    if (faults_fatal)
        test_fail(file, line, "fake machine fault at t=%" PRIu64 " ns: %s", vclock_now_ns(),
                  last_fault);
}

/* ---- registry -------------------------------------------------------------------------- */

static int add_range(struct range *tab, int *n, const char *what, uint64_t base, uint64_t len,
                     const struct fake_io_ops *ops, void *ctx)
{
    for (int i = 0; i < *n; i++) {
        if (base < tab[i].base + tab[i].len && tab[i].base < base + len) {
            fake_fault("%s 0x%" PRIx64 "+%" PRIu64 " overlaps 0x%" PRIx64 "+%" PRIu64, what,
                       base, len, tab[i].base, tab[i].len);
            return -1;
        }
    }
    if (*n == MAX_RANGES) {
        fake_fault("%s registry full", what);
        return -1;
    }
    tab[(*n)++] = (struct range){ base, len, ops, ctx };
    return 0;
}

static void remove_range(struct range *tab, int *n, uint64_t base)
{
    for (int i = 0; i < *n; i++) {
        if (tab[i].base == base) {
            tab[i] = tab[--*n];
            return;
        }
    }
}

static struct range *find_range(struct range *tab, int n, uint64_t addr)
{
    for (int i = 0; i < n; i++)
        if (addr >= tab[i].base && addr - tab[i].base < tab[i].len)
            return &tab[i];
    return NULL;
}

int fake_port_register(uint16_t base, uint32_t len, const struct fake_io_ops *ops, void *ctx)
{
    return add_range(ports, &nports, "port range", base, len, ops, ctx);
}

int fake_mmio_register(uint64_t base, uint64_t len, const struct fake_io_ops *ops, void *ctx)
{
    return add_range(mmios, &nmmios, "MMIO range", base, len, ops, ctx);
}

void fake_port_unregister(uint16_t base)
{
    remove_range(ports, &nports, base);
}

void fake_mmio_unregister(uint64_t base)
{
    remove_range(mmios, &nmmios, base);
}

int fake_msr_register(uint32_t first, uint32_t count, const struct fake_msr_ops *ops, void *ctx)
{
    if (nmsrs == MAX_MSR_RANGES) {
        fake_fault("MSR registry full");
        return -1;
    }
    msrs[nmsrs++] = (struct msr_range){ first, count, ops, ctx };
    return 0;
}

void fake_msr_set_plain(uint32_t msr, uint64_t value)
{
    for (int i = 0; i < nplain; i++) {
        if (plain[i].msr == msr) {
            plain[i].value = value;
            return;
        }
    }
    if (nplain == MAX_PLAIN_MSRS) {
        fake_fault("plain MSR table full");
        return;
    }
    plain[nplain].msr = msr;
    plain[nplain++].value = value;
}

/* ---- the machine ----------------------------------------------------------------------- */

void fake_reset(void)
{
    vclock_reset();
    fake_cost = default_costs;
    fake_stats = (struct fake_stats){ 0 };
    nports = nmmios = nmsrs = nplain = 0;
    faults_fatal = true;
    last_fault[0] = '\0';
    stall.armed = false;
    fake_irq_reset();
    fake_cpuid_reset();
    fake_tsc_reset();
    fake_pit_reset();
    fake_hpet_reset();
    fake_pmtimer_reset();
    fake_lapic_reset();
    fake_rtc_reset();
    fake_uart_reset();
    fake_pci_reset();
}

/* Power on before main(), so a test that forgets fake_reset() still has a sane machine
 * (costs set, the TSC ticking) instead of one whose polling loops never end. */
__attribute__((constructor)) static void power_on(void)
{
    fake_reset();
}

/* The access happens at the end of its cost; afterwards anything it made due (a deadline
 * written in the past) fires at once, and in async mode pending interrupts are delivered. */
static void spend(uint64_t ns)
{
    vclock_advance_ns(ns);
}

static void settle(void)
{
    vclock_advance_ns(0);
    fake_irq_async_point();
}

void fake_run_until_ns(uint64_t t_ns)
{
    fake_irq_deliver();
    while (vclock_now_ns() < t_ns) {
        uint64_t next = vclock_next_due_ns();
        vclock_advance_to_ns(next < t_ns ? next : t_ns);
        fake_irq_deliver();
    }
    vclock_advance_ns(0);   /* events due exactly at t_ns */
    fake_irq_deliver();
}

void fake_run_for_ns(uint64_t d_ns)
{
    fake_run_until_ns(vclock_now_ns() + d_ns);
}

/* ---- ports and MMIO -------------------------------------------------------------------- */

static uint64_t ones(unsigned size)
{
    return size >= 8 ? UINT64_MAX : (1ull << (8 * size)) - 1;
}

static uint32_t port_read(uint16_t port, unsigned size)
{
    struct range *r;
    uint64_t v;

    spend(fake_cost.port_ns);
    fake_stats.port_reads++;
    r = find_range(ports, nports, port);
    if (r) {
        v = r->ops->read(r->ctx, port - r->base, size) & ones(size);
    } else {
        fake_stats.unknown_port_reads++;
        v = ones(size);
    }
    settle();
    return (uint32_t)v;
}

static void port_write(uint16_t port, unsigned size, uint32_t v)
{
    struct range *r;

    spend(fake_cost.port_ns);
    fake_stats.port_writes++;
    r = find_range(ports, nports, port);
    if (r)
        r->ops->write(r->ctx, port - r->base, size, v & ones(size));
    else
        fake_stats.unknown_port_writes++;
    settle();
}

uint8_t inb(uint16_t port) { return (uint8_t)port_read(port, 1); }
uint16_t inw(uint16_t port) { return (uint16_t)port_read(port, 2); }
uint32_t inl(uint16_t port) { return port_read(port, 4); }
void outb(uint16_t port, uint8_t v) { port_write(port, 1, v); }
void outw(uint16_t port, uint16_t v) { port_write(port, 2, v); }
void outl(uint16_t port, uint32_t v) { port_write(port, 4, v); }

static uint64_t mmio_read(uintptr_t addr, unsigned size)
{
    struct range *r;
    uint64_t v;

    spend(fake_cost.mmio_ns);
    fake_stats.mmio_reads++;
    if (addr % size)
        fake_fault("misaligned %u-byte MMIO read at 0x%" PRIxPTR, size, addr);
    r = find_range(mmios, nmmios, addr);
    if (r) {
        v = r->ops->read(r->ctx, addr - r->base, size) & ones(size);
    } else {
        fake_stats.unknown_mmio_reads++;
        v = ones(size);
    }
    settle();
    return v;
}

void fake_stall_next_mmio_write(uint64_t addr, uint64_t ns)
{
    stall.addr = addr;
    stall.ns = ns;
    stall.armed = true;
}

static void mmio_write(uintptr_t addr, unsigned size, uint64_t v)
{
    struct range *r;

    if (stall.armed && stall.addr == addr) {
        stall.armed = false;
        fake_stats.stalls++;
        spend(stall.ns);
    }
    spend(fake_cost.mmio_ns);
    fake_stats.mmio_writes++;
    if (addr % size)
        fake_fault("misaligned %u-byte MMIO write at 0x%" PRIxPTR, size, addr);
    r = find_range(mmios, nmmios, addr);
    if (r)
        r->ops->write(r->ctx, addr - r->base, size, v & ones(size));
    else
        fake_stats.unknown_mmio_writes++;
    settle();
}

uint8_t mmio_read8(uintptr_t addr) { return (uint8_t)mmio_read(addr, 1); }
uint32_t mmio_read32(uintptr_t addr) { return (uint32_t)mmio_read(addr, 4); }
uint64_t mmio_read64(uintptr_t addr) { return mmio_read(addr, 8); }
void mmio_write8(uintptr_t addr, uint8_t v) { mmio_write(addr, 1, v); }
void mmio_write16(uintptr_t addr, uint16_t v) { mmio_write(addr, 2, v); }
void mmio_write32(uintptr_t addr, uint32_t v) { mmio_write(addr, 4, v); }
void mmio_write64(uintptr_t addr, uint64_t v) { mmio_write(addr, 8, v); }

/* ---- MSRs ------------------------------------------------------------------------------ */

/* 0, or -1 where the real CPU would raise #GP. */
static int msr_access(uint32_t msr, bool write, uint64_t *v)
{
    for (int i = 0; i < nmsrs; i++) {
        if (msr - msrs[i].first < msrs[i].count)
            return write ? msrs[i].ops->write(msrs[i].ctx, msr, *v)
                         : msrs[i].ops->read(msrs[i].ctx, msr, v);
    }
    for (int i = 0; i < nplain; i++) {
        if (plain[i].msr == msr) {
            if (write)
                plain[i].value = *v;
            else
                *v = plain[i].value;
            return 0;
        }
    }
    return -1;
}

int rdmsr_safe(uint32_t msr, uint64_t *val)
{
    uint64_t v = 0;
    int rc;

    spend(fake_cost.msr_ns);
    fake_stats.msr_reads++;
    rc = msr_access(msr, false, &v);
    settle();
    if (rc == 0 && val)
        *val = v;
    return rc;
}

uint64_t rdmsr(uint32_t msr)
{
    uint64_t v = 0;

    if (rdmsr_safe(msr, &v) != 0) {
        fake_fault("rdmsr(0x%x): #GP (no such MSR in this mode)", msr);
        return 0;
    }
    return v;
}

int wrmsr_safe(uint32_t msr, uint64_t v)
{
    int rc;

    spend(fake_cost.msr_ns);
    fake_stats.msr_writes++;
    rc = msr_access(msr, true, &v);
    settle();
    return rc;
}

void wrmsr(uint32_t msr, uint64_t v)
{
    spend(fake_cost.msr_ns);
    fake_stats.msr_writes++;
    if (msr_access(msr, true, &v) != 0)
        fake_fault("wrmsr(0x%x, 0x%" PRIx64 "): #GP", msr, v);
    settle();
}

/* ---- CPU ------------------------------------------------------------------------------- */

struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
    struct cpuid_regs r;

    spend(fake_cost.cpuid_ns);
    fake_stats.cpuid_calls++;
    r = fake_cpuid_lookup(leaf, subleaf);
    fake_cpuid_executed(leaf);
    settle();
    return r;
}

void serialize(void)
{
    (void)cpuid(0, 0);
}

void wrmsr_fence(void)
{
    spend(fake_cost.fence_ns);
    fake_stats.fences++;
    settle();
}

static uint64_t tsc_read(void)
{
    uint64_t v;

    spend(fake_cost.rdtsc_ns);
    fake_stats.rdtsc_calls++;
    v = fake_tsc_read();
    settle();
    return v;
}

uint64_t rdtsc(void) { return tsc_read(); }
uint64_t rdtsc_ordered(void)
{
    fake_stats.rdtsc_ordered_calls++;
    return tsc_read();
}

uint64_t rdtscp_aux(uint32_t *aux)
{
    uint64_t v = tsc_read();

    if (aux)
        *aux = fake_tsc_aux();
    return v;
}

void cpu_relax(void)
{
    spend(fake_cost.relax_ns);
    fake_stats.relax_calls++;
    settle();
}

/* Like cpu_relax: a delivery point only in async mode (fake_irq_set_async). */
void cpu_nop_block(void)
{
    spend(fake_cost.relax_ns);
    fake_stats.nop_blocks++;
    settle();
}

void cpu_nops(unsigned n)
{
    spend(n);              /* a NOP: about a ns */
    settle();
}

unsigned long irq_save(void)
{
    unsigned long flags = fake_irq_enabled() ? RFLAGS_IF : 0;

    spend(fake_cost.irqflag_ns);
    fake_irq_set_enabled(false);
    return flags;
}

void irq_restore(unsigned long flags)
{
    spend(fake_cost.irqflag_ns);
    if (flags & RFLAGS_IF) {   /* as the real one: never clears IF */
        fake_irq_set_enabled(true);
        fake_irq_deliver();
    }
}

void irq_enable(void)
{
    spend(fake_cost.irqflag_ns);
    fake_irq_set_enabled(true);
    fake_irq_deliver();
}

void irq_disable(void)
{
    spend(fake_cost.irqflag_ns);
    fake_irq_set_enabled(false);
}

/* HLT: sleeps until an interrupt is delivered. With interrupts disabled, or with nothing
 * that will ever interrupt, a real CPU sleeps forever: that is a fault here, and the halt
 * gives up after halt_max_ns of virtual time instead of hanging the test. */
void cpu_halt(void)
{
    uint64_t give_up = vclock_now_ns() + fake_cost.halt_max_ns;

    fake_stats.halts++;
    if (!fake_irq_enabled()) {
        fake_stats.halt_stuck++;
        fake_fault("cpu_halt() with interrupts disabled: the CPU would never wake");
        vclock_advance_to_ns(give_up);
        return;
    }
    if (fake_irq_deliverable()) {
        fake_irq_deliver();
        return;
    }
    for (;;) {
        uint64_t next = vclock_next_due_ns();
        if (next > give_up) {
            fake_stats.halt_stuck++;
            fake_fault("cpu_halt(): nothing interrupted the CPU within %" PRIu64 " ns",
                       fake_cost.halt_max_ns);
            vclock_advance_to_ns(give_up);
            return;
        }
        vclock_advance_to_ns(next);
        if (fake_irq_deliverable()) {
            fake_irq_deliver();
            return;
        }
    }
}
