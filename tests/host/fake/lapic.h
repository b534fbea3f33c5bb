/* tests/host/fake/lapic.h - the local APIC of the one fake CPU (Intel SDM vol. 3A ch. 11,
 * "Advanced Programmable Interrupt Controller"), with its timer.
 *
 * Modelled: IA32_APIC_BASE (MSR 0x1B: base, EN bit 11, EXTD bit 10, BSP bit 8; the invalid
 * transitions #GP: EXTD without EN or without CPUID x2APIC, x2APIC straight to xAPIC);
 * xAPIC registers in MMIO (32-bit accesses at 16-byte aligned offsets) and x2APIC registers
 * as MSRs 0x800 + offset / 16 (EOI and ESR writes of non-zero, writes to read-only registers
 * and reads of write-only ones #GP; MMIO is gone in x2APIC mode). Power-on state as SDM
 * 11.4.7.1: SVR 0xFF (software disabled: LVTs stay masked), LVTs masked, counts 0, DFR all
 * ones; version 0x14 with max LVT entry 5. ID, TPR, PPR, EOI, SVR, ISR/IRR (256 bits each),
 * ESR (a write latches the errors collected since the last write: an LVT vector below 16
 * gives "received illegal vector", bit 6), LVT timer/thermal/perf/LINT0/LINT1/error, ICR
 * (stored, no IPIs), initial count 0x380, current count 0x390, divide 0x3E0 (all 8
 * encodings: 2, 4, ..., 128, 1).
 * Timer: counts at timer_hz / divide (default 1 GHz, the bus clock QEMU uses); one-shot
 * (stops at 0), periodic (reloads from the initial count; a write to the initial count
 * restarts it, 0 stops it), TSC-deadline (LVT mode 2): IA32_TSC_DEADLINE (0x6E0) fires when
 * the TSC >= the deadline, writing 0 disarms, a past value fires at once, it reads 0 after
 * firing; only when LVT mode is TSC-deadline AND CPUID.1:ECX[24] is set in the fake CPUID
 * table - otherwise the MSR reads 0 and writes are ignored (what QEMU does) and initial-count
 * writes in mode 2 are ignored. Switching into mode 2 stops the count timer, switching out
 * disarms the deadline. A masked LVT still counts but the interrupt is lost.
 * Delivery: the timer vector goes to IRR; when its priority class beats the PPR (TPR and the
 * highest in-service class) the line FAKE_IRQ_LAPIC_TIMER is raised, and delivery moves the
 * vector to ISR (fake_irq_current_vector() gives it). Until EOI the same vector cannot be
 * delivered again: one more fire waits in IRR, later ones are dropped and counted. So a
 * handler that forgets the EOI sees exactly one more interrupt, then none.
 * Messages (fake_lapic_msi: an MSI, an HPET comparator's FSB write): address 0xFEExxxxx with
 * a physical destination (bits 19:12) equal to the APIC ID, data = vector, fixed delivery,
 * edge; the vector goes to IRR and is delivered like the timer's (FAKE_IRQ_LAPIC, with
 * fake_irq_current_vector() giving it). A message for another APIC ID, or while the APIC is
 * software-disabled, is counted and not taken (xAPIC and x2APIC modes alike).
 * Simplified: one CPU; no IPIs, LINT pins, thermal/perf/CMCI sources or error interrupts;
 * global disable (EN = 0) returns every register to its power-on value; the count timer's
 * divided clock starts in phase with each write of the initial count. */
#ifndef TICKLAB_TESTS_HOST_FAKE_LAPIC_H
#define TICKLAB_TESTS_HOST_FAKE_LAPIC_H
#include <stdbool.h>
#include <stdint.h>

#define FAKE_LAPIC_BASE     0xFEE00000ull
#define FAKE_LAPIC_TIMER_HZ 1000000000ull

struct fake_lapic_stats {
    uint64_t timer_fires;      /* count reached 0 / deadline passed */
    uint64_t masked_fires;     /* ... while the LVT was masked or the APIC software-disabled */
    uint64_t dropped;          /* ... while the vector was already waiting in IRR */
    uint64_t eois;
    uint64_t eoi_without_isr;  /* EOI with nothing in service */
    uint64_t spurious;         /* delivery found nothing deliverable: spurious vector */
    uint64_t msi;              /* messages written to 0xFEExxxxx */
    uint64_t msi_not_accepted; /* ... for another APIC ID, or with the APIC disabled */
};

void fake_lapic_set_timer_hz(uint64_t hz);
void fake_lapic_set_id(uint32_t apic_id);
const struct fake_lapic_stats *fake_lapic_stats(void);
bool fake_lapic_in_service(unsigned vector);
int fake_lapic_highest_in_service(void);       /* -1 when ISR is empty */
uint32_t fake_lapic_current_count(void);       /* now, no access cost */
uint64_t fake_lapic_tsc_deadline(void);        /* armed deadline, 0 when none */

/* The APIC as firmware (or a kernel before this one) may leave it: software-enabled with
 * spurious vector svr's low byte, LVT entries lvt[0..5] (timer, thermal, perf, LINT0, LINT1,
 * error) as given, vectors in_service[] marked in service (never ended by an EOI) and
 * requested[] waiting in IRR; each list ends at 0. No access cost. */
void fake_lapic_firmware_left(uint32_t svr, const uint32_t lvt[6], const unsigned *in_service,
                              const unsigned *requested);
uint32_t fake_lapic_lvt(unsigned i);            /* LVT entry i as above, no access cost */

/* A message written to addr (0xFEExxxxx) with data (see the top). */
void fake_lapic_msi(uint64_t addr, uint32_t data);
void fake_lapic_tsc_changed(void);             /* tsc.c: re-aim an armed deadline */
void fake_lapic_reset(void);

#endif
