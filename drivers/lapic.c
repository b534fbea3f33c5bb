/* drivers/lapic.c - see lapic.h. */
#include "ticklab/lapic.h"

#include "ticklab/io.h"
#include "ticklab/errno.h"

bool lapic_choose_x2apic(bool cpu_x2apic, bool firmware_x2apic, bool dmar_opt_out,
                         const char **why)
{
    if (!cpu_x2apic) {
        *why = "CPUID offers no x2APIC";
        return false;
    }
    if (firmware_x2apic) {
        *why = dmar_opt_out ? "the firmware handed over in x2APIC mode: the DMAR's x2APIC "
                              "opt-out cannot be honoured (leaving x2APIC mode needs the APIC "
                              "disabled)"
                            : "the firmware handed over in x2APIC mode";
        return true;
    }
    if (dmar_opt_out) {
        *why = "the DMAR table's X2APIC_OPT_OUT flag: the firmware asks for xAPIC mode";
        return false;
    }
    *why = "CPUID offers x2APIC";
    return true;
}

const char *const lapic_lvt_names[LAPIC_LVTS] = { "error", "timer", "lint0", "lint1",
                                                   "perf", "thermal", "cmci" };
static const uint32_t lvt_reg[LAPIC_LVTS] = { LAPIC_LVT_ERROR, LAPIC_LVT_TIMER, LAPIC_LVT_LINT0,
                                              LAPIC_LVT_LINT1, LAPIC_LVT_PERF,
                                              LAPIC_LVT_THERMAL, LAPIC_LVT_CMCI };
/* How many LVT entries an APIC must have for each to exist (SDM 11.5.1: timer, LINT0/1 and
 * error always; the 5th is the performance counters', the 6th thermal, the 7th CMCI). */
static const unsigned lvt_needs[LAPIC_LVTS] = { 4, 4, 4, 4, 5, 6, 7 };
/* EOIs made at most to empty the in-service register: one per vector. */
#define STALE_EOI_MAX 256

/* The highest vector whose bit is set in the 8-register array at base (ISR or IRR), or -1. */
static int highest_bit(const struct lapic *l, uint32_t base)
{
    for (int w = 7; w >= 0; w--) {
        uint32_t v = lapic_read(l, base + (uint32_t)w * 0x10);
        if (v)
            return w * 32 + 31 - __builtin_clz(v);
    }
    return -1;
}

static unsigned bits_copy(const struct lapic *l, uint32_t base, uint32_t *out)
{
    unsigned n = 0;
    for (unsigned w = 0; w < 8; w++) {
        out[w] = lapic_read(l, base + w * 0x10);
        for (uint32_t v = out[w]; v; v &= v - 1)
            n++;
    }
    return n;
}

/* Records every present LVT entry, then masks each, the error entry first. */
static void mask_every_lvt(const struct lapic *l, struct lapic_info *out)
{
    for (unsigned i = 0; i < LAPIC_LVTS; i++) {
        out->lvt_present[i] = out->max_lvt >= lvt_needs[i];
        if (out->lvt_present[i])
            out->firmware_lvt[i] = lapic_read(l, lvt_reg[i]);
    }
    for (unsigned i = 0; i < LAPIC_LVTS; i++)
        if (out->lvt_present[i])
            lapic_write(l, lvt_reg[i], LVT_MASKED);
}

/* An interrupt the firmware (or a previous kernel) took and never ended stays in service:
 * each EOI ends the highest one. */
static void drain_in_service(const struct lapic *l, struct lapic_info *out)
{
    out->stale_drained = false;
    for (unsigned n = 0; n < STALE_EOI_MAX; n++) {
        if (highest_bit(l, LAPIC_ISR0) < 0) {
            out->stale_drained = true;
            break;
        }
        lapic_eoi(l);
        out->stale_in_service++;
    }
    out->stale_requested = bits_copy(l, LAPIC_IRR0, out->stale_irr);
}

int lapic_init(struct lapic *l, uintptr_t mmio, bool want_x2apic, uint8_t spurious_vector,
               uint8_t error_vector, struct lapic_info *out)
{
    uint64_t base = rdmsr(MSR_APIC_BASE);
    /* xAPIC -> x2APIC must pass through "enabled"; setting both bits at once is allowed
     * from xAPIC-enabled, so enable first. */
    base |= APIC_BASE_ENABLE;
    wrmsr(MSR_APIC_BASE, base);
    if (want_x2apic) {
        base |= APIC_BASE_X2APIC;
        wrmsr(MSR_APIC_BASE, base);
    }
    base = rdmsr(MSR_APIC_BASE);
    if (!(base & APIC_BASE_ENABLE))
        return -ENODEV;
    l->x2apic = (base & APIC_BASE_X2APIC) != 0;
    l->mmio = mmio;

    uint32_t id = lapic_read(l, LAPIC_ID);
    uint32_t ver = lapic_read(l, LAPIC_VERSION);
    *out = (struct lapic_info){
        .x2apic = l->x2apic,
        .base_phys = base & APIC_BASE_ADDR,
        .id = l->x2apic ? id : id >> 24,
        .version = ver & 0xFF,
        .max_lvt = VERSION_MAX_LVT(ver),
        .firmware_svr = lapic_read(l, LAPIC_SVR),
    };
    mask_every_lvt(l, out);
    /* Software-enable next: while the APIC is software-disabled the LVT mask bits cannot
     * be cleared (SDM 11.4.7.2), so an error LVT written before SVR would stay masked. */
    lapic_write(l, LAPIC_SVR, SVR_ENABLE | spurious_vector);
    lapic_write(l, LAPIC_TPR, 0);
    drain_in_service(l, out);
    lapic_write(l, LAPIC_LVT_ERROR, error_vector);
    (void)lapic_error_status(l);
    return 0;
}

void lapic_virtual_wire(const struct lapic *l)
{
    lapic_write(l, LAPIC_LVT_LINT0, LVT_EXTINT);   /* edge, active high, unmasked */
}

void lapic_set_nmi(const struct lapic *l, unsigned lint, uint16_t inti_flags)
{
    uint32_t v = LVT_NMI;
    if ((inti_flags & 3) == 3)            /* polarity 11: active low */
        v |= LVT_ACTIVE_LOW;
    lapic_write(l, lint ? LAPIC_LVT_LINT1 : LAPIC_LVT_LINT0, v);   /* NMI is always edge */
}

void lapic_self_ipi(const struct lapic *l, uint8_t vector)
{
    if (l->x2apic) {
        wrmsr_fence();        /* see lapic_send_ipi */
        wrmsr(MSR_X2APIC_SELF_IPI, vector);
        return;
    }
    lapic_write(l, LAPIC_ICR_HI, 0);
    lapic_write(l, LAPIC_ICR_LO, ICR_SELF | vector);
}

int lapic_send_ipi(const struct lapic *l, uint32_t dest_apic_id, uint32_t icr_low)
{
    if (l->x2apic) {
        /* An x2APIC MSR write is not serialising on Intel: a store made just before it (the
         * data the IPI announces, a trampoline's parameters) may not be visible to the
         * other CPU when the IPI arrives. MFENCE;LFENCE first (SDM 11.12.3; Linux's
         * weak_wrmsr_fence). AMD orders it already; the fence costs far less than the IPI. */
        wrmsr_fence();
        wrmsr(MSR_X2APIC_ICR, ((uint64_t)dest_apic_id << 32) | icr_low);
        return 0;
    }
    lapic_write(l, LAPIC_ICR_HI, dest_apic_id << 24);
    lapic_write(l, LAPIC_ICR_LO, icr_low);
    for (unsigned i = 0; i < LAPIC_IPI_POLLS; i++)
        if (!(lapic_read(l, LAPIC_ICR_LO) & ICR_PENDING))
            return 0;
    return -ETIMEDOUT;
}

uint32_t lapic_id(const struct lapic *l)
{
    uint32_t id = lapic_read(l, LAPIC_ID);
    return l->x2apic ? id : id >> 24;
}

uint32_t lapic_error_status(const struct lapic *l)
{
    lapic_write(l, LAPIC_ESR, 0);   /* a write latches the errors into the readable register */
    return lapic_read(l, LAPIC_ESR);
}

bool lapic_in_service(const struct lapic *l, uint8_t vector)
{
    return (lapic_read(l, LAPIC_ISR0 + (uint32_t)(vector / 32) * 0x10) >> (vector % 32)) & 1;
}
