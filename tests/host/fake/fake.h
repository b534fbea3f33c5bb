/* tests/host/fake/fake.h - a fake PC for host tests: implements every primitive of
 * lib/port/io.h (TICKLAB_HOSTED) by dispatching to device models on one virtual clock.
 *
 *     fake_reset();                      power on: time 0, every model at its defaults
 *     fake_hpet_set_counter_32bit(true); shape the machine (per-model headers)
 *     fake_set_irq_handler(on_irq, &st); who receives interrupts
 *     ... call the real driver ...       its inb()/mmio_read64()/rdtsc() land here
 *     irq_enable(); fake_run_for_ns(1000000000);   let a second pass, delivering interrupts
 *
 * Ports, MMIO ranges and MSRs are looked up in a registry filled by the models; what nobody
 * claims behaves like an empty bus (ports read all ones, MMIO reads all ones, MSRs #GP).
 * Every access costs virtual time (fake_cost), so a polling loop bounded by the TSC ends.
 *
 * Interrupts: a model raises a line (FAKE_IRQ_*). A raised line stays pending until it is
 * delivered: the handler is called synchronously, with interrupts disabled as by an
 * interrupt gate, and only when interrupts are enabled and the code reaches a delivery
 * point: irq_enable(), irq_restore() of enabled flags, cpu_halt(), fake_run_*(). (With
 * fake_irq_set_async(true) every primitive is a delivery point, like real hardware, where an
 * interrupt lands between any two instructions.) Interrupts are disabled after fake_reset(),
 * as at boot. Raising a line that is still pending is coalesced: one delivery, one count.
 * There is no PIC or IOAPIC model: lines go straight to the handler.
 *
 * Faults: what would #GP, hang or break the machine on real hardware (rdmsr of an unknown
 * MSR, cpu_halt() with nothing to wake it, a misuse a datasheet forbids) is a fault: counted,
 * printed, and by default a failure of the running test (test_fail() of tests/host/test.h).
 * A test that provokes faults on purpose calls fake_faults_fatal(false) and checks
 * fake_stats.faults; fake_reset() makes them fatal again. */
#ifndef TICKLAB_TESTS_HOST_FAKE_FAKE_H
#define TICKLAB_TESTS_HOST_FAKE_FAKE_H
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/io.h"
#include "vclock.h"

/* ---- the machine ----------------------------------------------------------------------- */

/* A fresh machine: time 0, interrupts disabled, no handler, default costs and CPUID, every
 * model at its power-on defaults and registered at its default address. The machine is
 * powered on once before main(); state then carries from test to test, so every test that
 * touches hardware starts with fake_reset(). */
void fake_reset(void);

/* Virtual time each primitive costs; fake_reset() restores these defaults. The access takes
 * effect at the end of its cost (time advances, due events fire, then the device sees it). */
struct fake_costs {
    uint64_t port_ns;      /* 1000: an ISA/LPC port access */
    uint64_t mmio_ns;      /* 100: an uncached MMIO access */
    uint64_t msr_ns;       /* 100 */
    uint64_t cpuid_ns;     /* 100 (serialize() is a CPUID) */
    uint64_t fence_ns;     /* 10 (wrmsr_fence: MFENCE;LFENCE) */
    uint64_t rdtsc_ns;     /* 20 */
    uint64_t relax_ns;     /* 10: one PAUSE */
    uint64_t irqflag_ns;   /* 0: irq_save/restore/enable/disable */
    uint64_t halt_max_ns;  /* 10 s: the longest cpu_halt() waits for an interrupt */
};
extern struct fake_costs fake_cost;

/* Counters a test may read (and zero); fake_reset() zeroes them. */
struct fake_stats {
    uint64_t port_reads, port_writes, unknown_port_reads, unknown_port_writes;
    uint64_t mmio_reads, mmio_writes, unknown_mmio_reads, unknown_mmio_writes;
    uint64_t msr_reads, msr_writes, cpuid_calls, rdtsc_calls, relax_calls, nop_blocks;
    uint64_t fences;       /* wrmsr_fence() calls */
    uint64_t rdtsc_ordered_calls;   /* of rdtsc_calls, those through rdtsc_ordered() */
    uint64_t halts;            /* cpu_halt() calls */
    uint64_t halt_stuck;       /* halts that no interrupt ended within halt_max_ns */
    uint64_t stalls;           /* fake_stall_next_mmio_write() stalls that happened */
    uint64_t faults;
};
extern struct fake_stats fake_stats;

void fake_faults_fatal(bool fatal);
const char *fake_last_fault(void);   /* "" when none */
#define fake_fault(...) fake_fault_at(__FILE__, __LINE__, __VA_ARGS__)
void fake_fault_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The CPU taken away (an SMI, a hypervisor) for ns just before the next MMIO write to addr:
 * time passes, interrupts stay where they are, then the write is made. One write only. */
void fake_stall_next_mmio_write(uint64_t addr, uint64_t ns);

/* Lets virtual time pass to t_ns (or by d_ns), stepping from event to event and delivering
 * pending interrupts after each one (if interrupts are enabled). A handler that takes time
 * may carry the clock past t_ns; the clock never goes back. */
void fake_run_until_ns(uint64_t t_ns);
void fake_run_for_ns(uint64_t d_ns);

/* ---- the registry ---------------------------------------------------------------------- */

/* One device's accessors. offset is from the registered base; size is 1, 2, 4 or 8 bytes. */
struct fake_io_ops {
    uint64_t (*read)(void *ctx, uint64_t offset, unsigned size);
    void (*write)(void *ctx, uint64_t offset, unsigned size, uint64_t value);
};
/* Overlapping ranges are a fault and return -1; 0 on success. */
int fake_port_register(uint16_t base, uint32_t len, const struct fake_io_ops *ops, void *ctx);
int fake_mmio_register(uint64_t base, uint64_t len, const struct fake_io_ops *ops, void *ctx);
void fake_port_unregister(uint16_t base);
void fake_mmio_unregister(uint64_t base);

/* Return 0, or -1 for "#GP" (no such MSR, reserved bits, a forbidden write). */
struct fake_msr_ops {
    int (*read)(void *ctx, uint32_t msr, uint64_t *value);
    int (*write)(void *ctx, uint32_t msr, uint64_t value);
};
int fake_msr_register(uint32_t first, uint32_t count, const struct fake_msr_ops *ops,
                      void *ctx);
/* A plain read/write MSR holding value (e.g. MSR_PLATFORM_INFO 0xCE for a TSC test). */
void fake_msr_set_plain(uint32_t msr, uint64_t value);

/* ---- CPUID ----------------------------------------------------------------------------- */

/* Default: a plausible Intel CPU, GenuineIntel, family 6, max basic leaf 0xD (no 0x15/0x16,
 * as under QEMU), TSC, RDTSCP, invariant TSC, APIC, ARAT; no TSC-deadline, no x2APIC, no
 * hypervisor bit. Leaves not in the table read as zeros. */
#define FAKE_CPUID_ANY UINT32_MAX   /* an entry for every subleaf of its leaf */
enum fake_cpuid_reg { FAKE_EAX, FAKE_EBX, FAKE_ECX, FAKE_EDX };
/* Exact (leaf, subleaf) entries win over FAKE_CPUID_ANY ones. Setting a basic or extended
 * leaf above the advertised maximum raises the maximum (leaf 0 / 0x80000000 EAX). */
void fake_cpuid_set(uint32_t leaf, uint32_t subleaf, struct cpuid_regs regs);
void fake_cpuid_remove(uint32_t leaf, uint32_t subleaf);
/* Sets or clears one feature bit of the (leaf, FAKE_CPUID_ANY) entry. */
void fake_cpuid_set_bit(uint32_t leaf, enum fake_cpuid_reg reg, unsigned bit, bool on);
struct cpuid_regs fake_cpuid_lookup(uint32_t leaf, uint32_t subleaf);   /* no cost */
/* MSR 0x8B, the microcode revision (default: Intel, revision 0x1f). INTEL: a write stores
 * its value and CPUID(1) then loads the revision into bits 63:32 (SDM vol. 3A 10.11.7.1),
 * so a read without write-0-CPUID(1) shows whatever was there. AMD: reads the patch level
 * in bits 31:0; a write is a #GP (a driver that writes it on AMD is wrong). ABSENT: reads
 * and writes #GP (an emulator without the MSR). */
enum fake_ucode { FAKE_UCODE_INTEL, FAKE_UCODE_AMD, FAKE_UCODE_ABSENT };
void fake_cpuid_set_microcode(enum fake_ucode kind, uint32_t revision);
/* Called by the cpuid() primitive for each CPUID it executes. */
void fake_cpuid_executed(uint32_t leaf);
#define FAKE_CPUID1_ECX_X2APIC       21
#define FAKE_CPUID1_ECX_TSC_DEADLINE 24
#define FAKE_CPUID1_ECX_HYPERVISOR   31
#define FAKE_CPUID1_EDX_TSC          4
#define FAKE_CPUID1_EDX_MSR          5
#define FAKE_CPUID1_EDX_APIC         9
#define FAKE_CPUID6_EAX_ARAT         2
#define FAKE_CPUID80000001_EDX_RDTSCP 27
#define FAKE_CPUID80000007_EDX_INVTSC 8

/* ---- interrupts ------------------------------------------------------------------------ */

#define FAKE_IRQ_LINES       64
#define FAKE_IRQ_ISA(n)      (n)          /* 0..15: ISA IRQs (PIT 0, RTC 8, HPET legacy) */
#define FAKE_IRQ_LAPIC_TIMER 16           /* the local APIC's interrupt to the CPU: its
                                             timer's LVT vector, or a message's (MSI) */
#define FAKE_IRQ_LAPIC       FAKE_IRQ_LAPIC_TIMER
#define FAKE_IRQ_HPET(n)     (32 + (n))   /* HPET comparator n on its INT_ROUTE_CNF route */

struct fake_irq_line_stats {
    uint64_t raised;      /* every fake_irq_raise() */
    uint64_t delivered;   /* handler calls */
    uint64_t coalesced;   /* raised while still pending: merged into one delivery */
    uint64_t dropped;     /* never raised because the device withheld it (RTC register C
                             unread, LAPIC vector still in IRR, legacy replacement, ...) */
    int last_vector;      /* vector of the last delivery, -1 if the line has none */
    uint64_t last_raise_ns, last_deliver_ns;
};

void fake_set_irq_handler(void (*fn)(int line, void *ctx), void *ctx);
void fake_irq_raise(int line);
void fake_irq_count_dropped(int line, uint64_t n);
bool fake_irq_pending(int line);
bool fake_irq_enabled(void);                 /* the virtual RFLAGS.IF */
/* A masked line keeps its pending raise and delivers it when unmasked (like an IOAPIC pin). */
void fake_irq_mask(int line, bool masked);
/* Every primitive becomes a delivery point (default off: only the points listed above). */
void fake_irq_set_async(bool on);
const struct fake_irq_line_stats *fake_irq_stats(int line);
uint64_t fake_irq_unhandled(void);           /* deliveries with no handler registered */
/* The vector of the interrupt being handled (-1 outside a handler or for vectorless lines). */
int fake_irq_current_vector(void);
/* For models: called at delivery, returns the vector (or -1); e.g. the LAPIC moves the
 * vector from IRR to ISR here. */
void fake_irq_set_ack(int line, int (*ack)(void *ctx), void *ctx);

/* A ready-made handler that records every delivery: fake_set_irq_handler(
 * fake_irq_log_handler, &log). Keeps the first FAKE_IRQ_LOG_MAX, counts all; if `then` is
 * set it is called afterwards (e.g. the driver's interrupt entry). Zero it before use. */
#define FAKE_IRQ_LOG_MAX 4096
struct fake_irq_log_entry {
    int line, vector;
    uint64_t t_ns;
};
struct fake_irq_log {
    unsigned n;                   /* entries in e[] */
    uint64_t total;               /* all deliveries seen */
    struct fake_irq_log_entry e[FAKE_IRQ_LOG_MAX];
    void (*then)(int line, void *ctx);
    void *then_ctx;
};
void fake_irq_log_handler(int line, void *log);
/* How many logged deliveries were on line. */
unsigned fake_irq_log_count(const struct fake_irq_log *log, int line);

/* ---- internal: between fake.c, irq.c, cpuid.c and the models ---------------------------- */
void fake_irq_reset(void);
void fake_irq_set_enabled(bool on);
/* The longest stretch of virtual time with interrupts disabled since the last reset (a
 * stretch still open counts up to now); fake_reset() and fake_irq_off_reset() restart it. */
uint64_t fake_irq_off_max_ns(void);
void fake_irq_off_reset(void);
/* Delivers what is pending if interrupts are enabled (the core of every delivery point). */
void fake_irq_deliver(void);
bool fake_irq_deliverable(void);             /* enabled, and an unmasked line pending */
void fake_irq_async_point(void);             /* fake_irq_deliver() if async mode is on */
void fake_cpuid_reset(void);

/* ---- models (each header documents its datasheet behaviour and its options) ------------ */
#include "hpet.h"
#include "lapic.h"
#include "pit8254.h"
#include "pmtimer.h"
#include "rtc.h"
#include "tsc.h"
#include "pci.h"
#include "uart16550.h"

#endif
