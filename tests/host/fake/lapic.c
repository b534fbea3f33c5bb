/* tests/host/fake/lapic.c - see lapic.h. Registers are named by their xAPIC offsets; the
 * x2APIC MSR path converts (msr - 0x800) * 16 and then checks what x2APIC forbids. */
#include "fake.h"

#define MSR_APIC_BASE     0x1B
#define   BASE_BSP          (1ull << 8)
#define   BASE_EXTD         (1ull << 10)
#define   BASE_EN           (1ull << 11)
#define   BASE_ADDR         0x000000FFFFFFF000ull   /* 40-bit physical addresses */
#define MSR_TSC_DEADLINE  0x6E0
#define MSR_X2APIC_FIRST  0x800

#define APIC_LEN 0x1000
#define ID      0x020
#define VER     0x030
#define   VERSION_VALUE   0x00050014u               /* max LVT 5, integrated APIC 0x14 */
#define TPR     0x080
#define PPR     0x0A0
#define EOI     0x0B0
#define LDR     0x0D0
#define DFR     0x0E0
#define SVR     0x0F0
#define   SVR_ENABLE      0x100u
#define ISR0    0x100
#define TMR0    0x180
#define IRR0    0x200
#define ESR     0x280
#define   ESR_RX_ILLEGAL_VEC 0x40u
#define ICR_LO  0x300
#define ICR_HI  0x310
#define LVT_TIMER 0x320                             /* LVT registers 0x320..0x370 */
#define LVT_ERROR 0x370
#define   LVT_MASK        (1u << 16)
#define   LVT_MODE(v)     (((v) >> 17) & 3)
#define   MODE_ONESHOT    0
#define   MODE_PERIODIC   1
#define   MODE_DEADLINE   2
#define TMICT   0x380
#define TMCCT   0x390
#define TDCR    0x3E0
#define SELF_IPI 0x3F0

static struct {
    uint64_t base_msr;
    uint32_t id, tpr, svr, ldr, dfr, esr, esr_pending, icr_lo, icr_hi, tdcr;
    uint32_t lvt[6];                 /* timer, thermal, perf, LINT0, LINT1, error */
    uint32_t isr[8], irr[8];
    uint32_t initial, start_count;   /* count timer: value start_count at start_ns */
    uint64_t start_ns;
    bool running, line_up;
    uint64_t deadline;
    uint64_t timer_hz;
    bool mmio_mapped;
    uint64_t mmio_base;
    struct fake_lapic_stats st;
    struct vclock_event count_ev, deadline_ev;
} a;

static bool x2apic(void)
{
    return (a.base_msr & (BASE_EN | BASE_EXTD)) == (BASE_EN | BASE_EXTD);
}

static bool deadline_supported(void)
{
    return fake_cpuid_lookup(1, 0).ecx & (1u << FAKE_CPUID1_ECX_TSC_DEADLINE);
}

static unsigned timer_mode(void)
{
    return LVT_MODE(a.lvt[0]);
}

/* ---- IRR / ISR / priority --------------------------------------------------------------- */

static int highest(const uint32_t *bits)
{
    for (int w = 7; w >= 0; w--)
        if (bits[w])
            return w * 32 + 31 - __builtin_clz(bits[w]);
    return -1;
}

static uint32_t ppr(void)
{
    int isrv = highest(a.isr);
    uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & 0xF0;

    return (a.tpr & 0xF0) >= isr_class ? a.tpr & 0xFF : isr_class;
}

static bool deliverable(int v)
{
    return v >= 0 && ((uint32_t)v & 0xF0) > (ppr() & 0xF0);
}

static void dispatch(void)
{
    if (!a.line_up && deliverable(highest(a.irr))) {
        a.line_up = true;
        fake_irq_raise(FAKE_IRQ_LAPIC_TIMER);
    }
}

/* The CPU's interrupt acknowledge: IRR -> ISR. */
static int ack(void *ctx)
{
    int v = highest(a.irr);

    (void)ctx;
    a.line_up = false;
    if (!deliverable(v)) {
        a.st.spurious++;
        return (int)(a.svr & 0xFF);
    }
    a.irr[v / 32] &= ~(1u << (v % 32));
    a.isr[v / 32] |= 1u << (v % 32);
    return v;
}

/* A fixed, edge interrupt for `vec` (the timer's LVT or a message) into IRR: an illegal
 * vector is an error, one already pending is dropped (counted under `line`). */
static void accept(uint32_t vec, int line)
{
    if (vec < 16) {
        a.esr_pending |= ESR_RX_ILLEGAL_VEC;
        return;
    }
    if (a.irr[vec / 32] & (1u << (vec % 32))) {
        a.st.dropped++;
        fake_irq_count_dropped(line, 1);
        return;
    }
    a.irr[vec / 32] |= 1u << (vec % 32);
    dispatch();
}

static void timer_fires(void)
{
    uint32_t lvt = a.lvt[0], vec = lvt & 0xFF;

    a.st.timer_fires++;
    if ((lvt & LVT_MASK) || !(a.svr & SVR_ENABLE)) {
        a.st.masked_fires++;
        return;
    }
    accept(vec, FAKE_IRQ_LAPIC_TIMER);
}

/* A message (an MSI, an HPET comparator's FSB write) into 0xFEExxxxx (SDM 11.11): physical
 * destination in address bits 19:12, fixed delivery, edge; the vector to IRR like the
 * timer's. Other forms are not modelled (a fault); another destination is another CPU's. */
void fake_lapic_msi(uint64_t addr, uint32_t data)
{
    uint32_t vec = data & 0xFF;

    if ((addr & 0xFFF00000u) != 0xFEE00000u || (addr >> 32)) {
        fake_fault("MSI to 0x%" PRIx64 ": not the local APIC's 0xFEExxxxx", addr);
        return;
    }
    if ((addr & 0x4) || (data & 0xFF00u)) {
        fake_fault("MSI addr 0x%" PRIx64 " data 0x%x: only physical, fixed, edge is modelled",
                   addr, data);
        return;
    }
    a.st.msi++;
    if (((addr >> 12) & 0xFF) != (a.id & 0xFF) || !(a.svr & SVR_ENABLE)) {
        a.st.msi_not_accepted++;          /* another CPU's, or an APIC not taking them */
        return;
    }
    accept(vec, FAKE_IRQ_LAPIC);
}

static void eoi(void)
{
    int v = highest(a.isr);

    a.st.eois++;
    if (v < 0)
        a.st.eoi_without_isr++;
    else
        a.isr[v / 32] &= ~(1u << (v % 32));
    dispatch();
}

/* ---- the count timer -------------------------------------------------------------------- */

static struct vrate count_rate(void)
{
    unsigned code = (a.tdcr & 3) | ((a.tdcr >> 1) & 4);
    uint64_t div = code == 7 ? 1 : 2u << code;

    return (struct vrate){ a.timer_hz, 1000000000ull * div };
}

uint32_t fake_lapic_current_count(void)
{
    uint64_t j;

    if (!a.running)
        return 0;
    j = vrate_ticks(count_rate(), vclock_now_ns() - a.start_ns);
    if (j < a.start_count)
        return (uint32_t)(a.start_count - j);
    if (timer_mode() != MODE_PERIODIC)
        return 0;
    return (uint32_t)(a.initial - (j - a.start_count) % a.initial);
}

static void schedule_count(void)
{
    uint64_t j, zero;

    vclock_event_cancel(&a.count_ev);
    if (!a.running)
        return;
    j = vrate_ticks(count_rate(), vclock_now_ns() - a.start_ns);
    zero = a.start_count;
    if (j >= a.start_count)
        zero += ((j - a.start_count) / a.initial + 1) * (uint64_t)a.initial;
    vclock_event_arm(&a.count_ev,
                     vclock_add_sat(a.start_ns, vrate_ns_for(count_rate(), zero)));
}

/* Keeps the current count across a change of divider or mode. */
static void rebase_count(void)
{
    uint32_t cur = fake_lapic_current_count();

    if (a.running && cur == 0)
        a.running = false;
    a.start_count = cur;
    a.start_ns = vclock_now_ns();
    schedule_count();
}

static void count_reaches_zero(void *ctx)
{
    (void)ctx;
    if (timer_mode() != MODE_PERIODIC)
        a.running = false;
    timer_fires();
    schedule_count();
}

static void write_initial(uint32_t v)
{
    if (timer_mode() == MODE_DEADLINE)
        return;   /* ignored in TSC-deadline mode */
    a.initial = v;
    a.start_count = v;
    a.start_ns = vclock_now_ns();
    a.running = v != 0;
    schedule_count();
}

/* ---- TSC-deadline ----------------------------------------------------------------------- */

static bool deadline_active(void)
{
    return timer_mode() == MODE_DEADLINE && deadline_supported();
}

static void schedule_deadline(void)
{
    if (a.deadline && deadline_active())
        vclock_event_arm(&a.deadline_ev, fake_tsc_time_of(a.deadline));
    else
        vclock_event_cancel(&a.deadline_ev);
}

void fake_lapic_tsc_changed(void)
{
    schedule_deadline();
}

static void deadline_passes(void *ctx)
{
    (void)ctx;
    if (!deadline_active())
        return;
    a.deadline = 0;   /* the SDM: the timer disarms itself and the MSR reads 0 */
    timer_fires();
}

static void write_lvt(unsigned i, uint32_t v)
{
    static const uint32_t writable[6] = { 0x700FF, 0x107FF, 0x107FF,
                                          0x1A7FF, 0x1A7FF, 0x100FF };
    unsigned old_mode = timer_mode();

    a.lvt[i] = (v & writable[i]) | (a.svr & SVR_ENABLE ? 0 : LVT_MASK);
    if (i != 0)
        return;
    if (timer_mode() == 3)
        fake_fault("LAPIC: LVT timer mode 3 is reserved");
    if (timer_mode() == MODE_DEADLINE && old_mode != MODE_DEADLINE) {
        a.running = false;
        a.initial = 0;
        schedule_count();
    } else if (old_mode == MODE_DEADLINE && timer_mode() != MODE_DEADLINE) {
        a.deadline = 0;
    } else if (old_mode != timer_mode()) {
        rebase_count();
    }
    schedule_deadline();
}

/* ---- registers -------------------------------------------------------------------------- */

static uint32_t reg_read(uint32_t off)
{
    switch (off) {
    case ID:      return x2apic() ? a.id : a.id << 24;
    case VER:     return VERSION_VALUE;
    case TPR:     return a.tpr;
    case PPR:     return ppr();
    case LDR:     return x2apic() ? ((a.id >> 4) << 16) | (1u << (a.id & 15)) : a.ldr;
    case DFR:     return a.dfr;
    case SVR:     return a.svr;
    case ESR:     return a.esr;
    case ICR_LO:  return a.icr_lo;
    case ICR_HI:  return a.icr_hi;
    case TMICT:   return a.initial;
    case TMCCT:   return fake_lapic_current_count();
    case TDCR:    return a.tdcr;
    }
    if (off >= ISR0 && off < ISR0 + 0x80)
        return a.isr[(off - ISR0) / 16];
    if (off >= IRR0 && off < IRR0 + 0x80)
        return a.irr[(off - IRR0) / 16];
    if (off >= LVT_TIMER && off <= LVT_ERROR)
        return a.lvt[(off - LVT_TIMER) / 16];
    return 0;   /* TMR, reserved */
}

static void write_svr(uint32_t v)
{
    a.svr = v & 0x3FF;
    if (!(a.svr & SVR_ENABLE))   /* software disable masks every LVT */
        for (unsigned i = 0; i < 6; i++)
            a.lvt[i] |= LVT_MASK;
}

static void reg_write(uint32_t off, uint32_t v)
{
    switch (off) {
    case TPR:    a.tpr = v & 0xFF; dispatch(); return;
    case EOI:    eoi(); return;
    case LDR:    a.ldr = v & 0xFF000000u; return;
    case DFR:    a.dfr = v | 0x0FFFFFFFu; return;
    case SVR:    write_svr(v); return;
    case ESR:    a.esr = a.esr_pending; a.esr_pending = 0; return;
    case ICR_LO: a.icr_lo = v & ~(1u << 12); return;
    case ICR_HI: a.icr_hi = v; return;
    case TMICT:  write_initial(v); return;
    case TDCR:   a.tdcr = v & 0xB; rebase_count(); return;
    }
    if (off >= LVT_TIMER && off <= LVT_ERROR)
        write_lvt((off - LVT_TIMER) / 16, v);
    /* ID, VER, PPR, ISR, TMR, IRR, TMCCT: read-only, ignored in xAPIC mode */
}

static uint64_t mmio_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    if (size != 4 || (off & 15))
        fake_fault("LAPIC: %u-byte read at offset 0x%" PRIx64 " (32-bit, 16-aligned only)",
                   size, off);
    return reg_read((uint32_t)off);
}

static void mmio_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    if (size != 4 || (off & 15))
        fake_fault("LAPIC: %u-byte write at offset 0x%" PRIx64 " (32-bit, 16-aligned only)",
                   size, off);
    reg_write((uint32_t)off, (uint32_t)v);
}

static const struct fake_io_ops mmio_ops = { mmio_read, mmio_write };

/* x2APIC: which offsets exist, and which accesses #GP. */
static bool x2_readable(uint32_t off)
{
    return off == ID || off == VER || off == TPR || off == PPR || off == LDR || off == SVR ||
           (off >= ISR0 && off <= ESR) || off == ICR_LO ||
           (off >= LVT_TIMER && off <= TMCCT) || off == TDCR;
}

static bool x2_writable(uint32_t off)
{
    return off == TPR || off == EOI || off == SVR || off == ESR || off == ICR_LO ||
           (off >= LVT_TIMER && off <= TMICT) || off == TDCR || off == SELF_IPI;
}

/* ---- MSRs ------------------------------------------------------------------------------- */

static void reset_registers(void);

static void map_mmio(void)
{
    bool want = (a.base_msr & BASE_EN) && !x2apic();
    uint64_t base = a.base_msr & BASE_ADDR;

    if (a.mmio_mapped && (!want || a.mmio_base != base)) {
        fake_mmio_unregister(a.mmio_base);
        a.mmio_mapped = false;
    }
    if (want && !a.mmio_mapped) {
        a.mmio_base = base;
        a.mmio_mapped = fake_mmio_register(base, APIC_LEN, &mmio_ops, NULL) == 0;
    }
}

static int write_apic_base(uint64_t v)
{
    bool was_x2 = x2apic();

    if ((v & ~(BASE_ADDR | BASE_EN | BASE_EXTD | BASE_BSP)) ||
        ((v & BASE_EXTD) && !(v & BASE_EN)) ||
        ((v & BASE_EXTD) && !(fake_cpuid_lookup(1, 0).ecx & (1u << FAKE_CPUID1_ECX_X2APIC))) ||
        (was_x2 && (v & BASE_EN) && !(v & BASE_EXTD)))
        return -1;
    if ((a.base_msr & BASE_EN) && !(v & BASE_EN))
        reset_registers();   /* global disable */
    a.base_msr = (v & ~BASE_BSP) | (a.base_msr & BASE_BSP);
    map_mmio();
    return 0;
}

static int msr_read(void *ctx, uint32_t msr, uint64_t *v)
{
    uint32_t off = (msr - MSR_X2APIC_FIRST) * 16;

    (void)ctx;
    if (msr == MSR_APIC_BASE) {
        *v = a.base_msr;
    } else if (msr == MSR_TSC_DEADLINE) {
        *v = deadline_active() ? a.deadline : 0;
    } else {
        if (!x2apic() || !x2_readable(off))
            return -1;
        *v = off == ICR_LO ? (uint64_t)a.icr_hi << 32 | a.icr_lo : reg_read(off);
    }
    return 0;
}

static int msr_write(void *ctx, uint32_t msr, uint64_t v)
{
    uint32_t off = (msr - MSR_X2APIC_FIRST) * 16;

    (void)ctx;
    if (msr == MSR_APIC_BASE)
        return write_apic_base(v);
    if (msr == MSR_TSC_DEADLINE) {
        if (deadline_active()) {
            a.deadline = v;
            schedule_deadline();
        }
        return 0;
    }
    if (!x2apic() || !x2_writable(off) || ((off == EOI || off == ESR) && v != 0) ||
        (off != ICR_LO && (v >> 32)))
        return -1;
    if (off == ICR_LO)
        a.icr_hi = (uint32_t)(v >> 32);
    if (off != SELF_IPI)
        reg_write(off, (uint32_t)v);
    return 0;
}

static const struct fake_msr_ops msr_ops = { msr_read, msr_write };

/* ---- machine shape and queries ---------------------------------------------------------- */

void fake_lapic_set_timer_hz(uint64_t hz)
{
    if (hz == 0 || hz > 100000000000ull) {
        fake_fault("LAPIC: timer clock %" PRIu64 " Hz is outside 1 Hz..100 GHz", hz);
        return;
    }
    rebase_count();
    a.timer_hz = hz;
    schedule_count();
}

void fake_lapic_set_id(uint32_t apic_id)
{
    a.id = apic_id;
}

const struct fake_lapic_stats *fake_lapic_stats(void)
{
    return &a.st;
}

bool fake_lapic_in_service(unsigned vector)
{
    return vector < 256 && (a.isr[vector / 32] & (1u << (vector % 32)));
}

void fake_lapic_firmware_left(uint32_t svr, const uint32_t lvt[6], const unsigned *in_service,
                              const unsigned *requested)
{
    a.svr = svr & 0x3FF;
    for (unsigned i = 0; i < 6; i++)
        a.lvt[i] = lvt[i];
    for (; in_service && *in_service; in_service++)
        a.isr[*in_service / 32] |= 1u << (*in_service % 32);
    for (; requested && *requested; requested++)
        a.irr[*requested / 32] |= 1u << (*requested % 32);
}

uint32_t fake_lapic_lvt(unsigned i)
{
    return i < 6 ? a.lvt[i] : 0;
}

int fake_lapic_highest_in_service(void)
{
    return highest(a.isr);
}

uint64_t fake_lapic_tsc_deadline(void)
{
    return deadline_active() ? a.deadline : 0;
}

static void reset_registers(void)
{
    a.tpr = a.ldr = a.esr = a.esr_pending = a.icr_lo = a.icr_hi = a.tdcr = 0;
    a.dfr = UINT32_MAX;
    a.svr = 0xFF;
    for (unsigned i = 0; i < 6; i++)
        a.lvt[i] = LVT_MASK;
    for (unsigned i = 0; i < 8; i++)
        a.isr[i] = a.irr[i] = 0;
    a.initial = a.start_count = 0;
    a.running = a.line_up = false;
    a.deadline = 0;
    vclock_event_cancel(&a.count_ev);
    vclock_event_cancel(&a.deadline_ev);
}

void fake_lapic_reset(void)
{
    a.id = 0;
    a.timer_hz = FAKE_LAPIC_TIMER_HZ;
    a.st = (struct fake_lapic_stats){ 0 };
    a.mmio_mapped = false;
    vclock_event_init(&a.count_ev, "lapic timer count", count_reaches_zero, NULL);
    vclock_event_init(&a.deadline_ev, "lapic tsc deadline", deadline_passes, NULL);
    reset_registers();
    a.base_msr = FAKE_LAPIC_BASE | BASE_EN | BASE_BSP;
    map_mmio();
    fake_irq_set_ack(FAKE_IRQ_LAPIC_TIMER, ack, NULL);
    fake_msr_register(MSR_APIC_BASE, 1, &msr_ops, NULL);
    fake_msr_register(MSR_TSC_DEADLINE, 1, &msr_ops, NULL);
    fake_msr_register(MSR_X2APIC_FIRST, 0x100, &msr_ops, NULL);
}
