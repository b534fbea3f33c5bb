/* drivers/lapic.h - the local APIC, in xAPIC (MMIO) or x2APIC (MSR) mode.
 * Intel SDM vol. 3A, chapter 11 (register map: table 11-1; x2APIC MSRs: table 11-6).
 *
 * Quirks handled: in x2APIC mode registers are MSRs at 0x800 + (offset >> 4), the ID is the
 * whole 32-bit register (xAPIC keeps it in bits 31:24), and a write to the reserved
 * register range faults, so every access goes through lapic_read()/lapic_write(). The
 * base address comes from IA32_APIC_BASE (authoritative) and is compared with the MADT's. The
 * caller maps the MMIO page (uncached) and passes its address: this file never maps memory.
 * The timer lives in drivers/lapic_timer.c. */
#ifndef TICKLAB_DRIVERS_LAPIC_H
#define TICKLAB_DRIVERS_LAPIC_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/io.h"

#define MSR_APIC_BASE        0x1B
#define   APIC_BASE_BSP      (1ull << 8)
#define   APIC_BASE_X2APIC   (1ull << 10)
#define   APIC_BASE_ENABLE   (1ull << 11)
#define   APIC_BASE_ADDR     0xFFFFFF000ull
#define MSR_X2APIC_BASE      0x800

#define LAPIC_ID        0x020
#define LAPIC_VERSION   0x030
#define   VERSION_MAX_LVT(v) ((((v) >> 16) & 0xFF) + 1)
#define LAPIC_TPR       0x080
#define LAPIC_EOI       0x0B0
#define LAPIC_SVR       0x0F0       /* spurious interrupt vector */
#define   SVR_ENABLE      (1u << 8)
#define LAPIC_ISR0      0x100       /* in-service, 8 registers of 32 vectors, stride 0x10 */
#define LAPIC_IRR0      0x200       /* interrupt request, 8 registers, stride 0x10 */
#define LAPIC_ESR       0x280       /* error status: write, then read */
#define LAPIC_LVT_CMCI  0x2F0       /* the 7th LVT entry, when there is one */
#define LAPIC_ICR_LO    0x300
#define   ICR_SELF        (1u << 18)  /* destination shorthand 01: self */
#define   ICR_PENDING     (1u << 12)  /* xAPIC only */
#define LAPIC_ICR_HI    0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_THERMAL 0x330     /* the 6th LVT entry, when there is one */
#define LAPIC_LVT_PERF  0x340       /* the 5th LVT entry, when there is one */
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define   LVT_MASKED      (1u << 16)
#define   LVT_NMI         (4u << 8)   /* delivery mode NMI */
#define   LVT_EXTINT      (7u << 8)   /* delivery mode ExtINT: the 8259's INTR passed through */
#define   LVT_LEVEL       (1u << 15)
#define   LVT_ACTIVE_LOW  (1u << 13)
#define LAPIC_TIMER_INIT  0x380
#define LAPIC_TIMER_CUR   0x390
#define LAPIC_TIMER_DIV   0x3E0
#define MSR_X2APIC_SELF_IPI 0x83F

/* How this machine's local APICs are reached: one per CPU, each CPU seeing its own at the
 * same address (xAPIC: the MMIO page) or through the same MSRs (x2APIC). Filled by
 * lapic_init() on the boot CPU; every function takes it. */
struct lapic {
    bool x2apic;            /* MSR access (x2APIC mode), else MMIO */
    uintptr_t mmio;         /* the mapped xAPIC page */
};

/* The LVT entries, in the order lapic_init() masks them (the error entry first, so that
 * masking the others cannot raise an error interrupt; Linux's clear_local_APIC does the
 * same). Entries past max_lvt do not exist (a #GP in x2APIC mode) and are left alone. */
enum lapic_lvt { LVT_ERROR_E, LVT_TIMER_E, LVT_LINT0_E, LVT_LINT1_E, LVT_PERF_E, LVT_THERMAL_E,
                 LVT_CMCI_E, LAPIC_LVTS };
extern const char *const lapic_lvt_names[LAPIC_LVTS];   /* "error", "timer", ... */

struct lapic_info {
    bool x2apic;            /* mode in use */
    uint64_t base_phys;     /* from IA32_APIC_BASE */
    uint32_t id;
    uint32_t version;       /* bits 7:0 */
    unsigned max_lvt;       /* number of LVT entries */
    /* As the firmware (or the CPU's reset) left the APIC, before lapic_init() touched it: */
    uint32_t firmware_svr;
    uint32_t firmware_lvt[LAPIC_LVTS];  /* each present entry; 0 for an absent one */
    bool lvt_present[LAPIC_LVTS];
    unsigned stale_in_service;          /* vectors in service already, ended by an EOI each */
    unsigned stale_requested;           /* vectors waiting in IRR: taken once interrupts are
                                           on, by whatever handler their vector has */
    uint32_t stale_irr[8];              /* which: bit v of word v / 32 */
    bool stale_drained;                 /* the in-service register emptied within the bound */
};

/* Which mode to run the local APIC in; *why says why (a static string). x2APIC only when
 * CPUID offers it, and not when the DMAR's X2APIC_OPT_OUT flag asks for xAPIC, unless the
 * firmware already handed over in x2APIC mode (Linux does the same: leaving x2APIC mode
 * needs the APIC disabled first, and the CPUs' IDs may need it). firmware_x2apic: the
 * IA32_APIC_BASE x2APIC-enable bit before ticklab wrote it. Pure. */
bool lapic_choose_x2apic(bool cpu_x2apic, bool firmware_x2apic, bool dmar_opt_out,
                         const char **why);

/* Enables the LAPIC (x2APIC when want_x2apic; the caller checks CPUID), records what the
 * firmware left in it, masks every LVT entry it has (timer, LINT0, LINT1, performance
 * counters, thermal, CMCI: a source firmware left armed would otherwise interrupt at a vector
 * nobody handles), software-enables it with spurious_vector, ends every interrupt still in
 * service with an EOI (at most 256: one left in service blocks its priority class and every
 * lower one for the rest of the run), counts the requests still waiting, and points the
 * error LVT at error_vector. LINT1 stays masked: the caller sets it as the MADT says
 * (lapic_set_nmi()). Linux's clear_local_APIC and apic_pending_intr_clear do as much.
 * mmio: the mapped xAPIC page (ignored in x2APIC mode). Returns 0, or -ENODEV when the
 * APIC does not come up enabled. */
int lapic_init(struct lapic *l, uintptr_t mmio, bool want_x2apic, uint8_t spurious_vector,
               uint8_t error_vector, struct lapic_info *out);
/* The register access, the one way: MSR 0x800 + reg / 16 in x2APIC mode, MMIO otherwise.
 * Inline: the timer's per-event write and the EOI are on every interrupt's path. */
static inline uint32_t lapic_read(const struct lapic *l, uint32_t reg)
{
    if (l->x2apic)
        return (uint32_t)rdmsr(MSR_X2APIC_BASE + (reg >> 4));
    return mmio_read32(l->mmio + reg);
}

static inline void lapic_write(const struct lapic *l, uint32_t reg, uint32_t v)
{
    if (l->x2apic)
        wrmsr(MSR_X2APIC_BASE + (reg >> 4), v);
    else
        mmio_write32(l->mmio + reg, v);
}
/* End of interrupt: one register write (x2APIC: one WRMSR; xAPIC: one store), in line, so
 * that an interrupt's acknowledgement costs no call (docs/hot-paths.md). */
static inline void lapic_eoi(const struct lapic *l)
{
    lapic_write(l, LAPIC_EOI, 0);
}
/* LINT0 as ExtINT, unmasked ("virtual wire mode", MP spec 3.6.2.2): where no IOAPIC is
 * used, the 8259s' INTR reaches the boot CPU through LINT0, which lapic_init() masked. */
void lapic_virtual_wire(const struct lapic *l);
/* LINT0/1 as the MADT's LAPIC NMI entry says (lint 0 or 1; flags are MPS INTI flags). */
void lapic_set_nmi(const struct lapic *l, unsigned lint, uint16_t inti_flags);
/* Sends vector to this CPU (a self IPI): proves the delivery path without any device. */
void lapic_self_ipi(const struct lapic *l, uint8_t vector);
/* An IPI to another CPU's local APIC: icr_low is the ICR's low word (vector, delivery mode,
 * level, trigger). xAPIC: waits for the delivery-status bit to clear, at most
 * LAPIC_IPI_POLLS reads of the ICR (a few hundred microseconds on real buses), -ETIMEDOUT
 * after that; x2APIC: one MSR write, no status to wait for. Any context. */
int lapic_send_ipi(const struct lapic *l, uint32_t dest_apic_id, uint32_t icr_low);
#define LAPIC_IPI_POLLS 100000u
#define ICR_INIT        (5u << 8)   /* delivery mode INIT */
#define ICR_STARTUP     (6u << 8)   /* delivery mode STARTUP: vector = start page number */
#define ICR_ASSERT      (1u << 14)
#define ICR_LEVEL_TRIG  (1u << 15)
#define MSR_X2APIC_ICR  0x830
/* This CPU's APIC ID (8 bits in xAPIC mode, 32 in x2APIC mode). */
uint32_t lapic_id(const struct lapic *l);
/* Reads and clears the error status register. */
uint32_t lapic_error_status(const struct lapic *l);
bool lapic_in_service(const struct lapic *l, uint8_t vector);

#endif
