/* drivers/lapic_timer.h - the local APIC timer (Intel SDM vol. 3A, 11.5.4 "APIC Timer" and
 * 11.5.4.1 "TSC-Deadline Mode"; divide configuration: figure 11-10; LVT timer: figure 11-8).
 *
 * A 32-bit down-counter per CPU, clocked by the APIC's timer clock (bus or core crystal
 * clock; its rate is NOT architecturally specified: QEMU uses 1 GHz, hardware anything from
 * 24 MHz to 1 GHz+; calibrate it) divided by 1, 2, 4, ... 128. Three modes in the LVT timer
 * register (bits 18:17): one-shot (0), periodic (1, reloads from the initial count) and
 * TSC-deadline (2, fires when the TSC reaches IA32_TSC_DEADLINE, only when CPUID.1:ECX[24]).
 * Registers are reached through lapic_read()/lapic_write() (drivers/lapic.h), so everything
 * here works in xAPIC and x2APIC mode alike; lapic_init() must have run.
 *
 * Contracts:
 *  - One-shot / periodic: counts are in divided timer clocks; an event comes after
 *    count * divide / timer_hz seconds (count <= 2^32 - 1: 4.29 s at 1 GHz, divide 1).
 *  - TSC-deadline: the deadline is an absolute TSC value and may already be in the past;
 *    the timer fires when TSC >= deadline, so a past value fires at once. Writing 0 disarms.
 *    After firing the MSR reads 0 and the timer stays disarmed.
 *  - The free-running clocksource and the timer's other uses exclude each other: it is the
 *    same counter.
 *
 * Errata and hazards, all in one place:
 *  - The timer clock stops in deep C-states (C3 and deeper) unless CPUID.06H:EAX[2] (ARAT,
 *    "APIC timer always running") is set; then it neither counts nor interrupts while the CPU
 *    sleeps. struct cpu_info.arat reports the bit; a clock event device without it is
 *    CE_STOPS_IN_IDLE.
 *  - AMD erratum 400 (late family 0Fh, family 10h): the APIC timer also stops in C1E, which
 *    the firmware may enter on HLT; no CPUID bit says so. Treat AMD without ARAT as
 *    stopping in idle.
 *  - WRMSR to IA32_TSC_DEADLINE (and to the x2APIC MSRs) is not serialising (SDM, WRMSR):
 *    earlier stores may still sit in the store buffer when the timer arms. Linux fences it
 *    with MFENCE;LFENCE on Intel (wrmsr_fence() in ticklab/io.h); on AMD the write is
 *    ordered by itself (cpu_info.amd_wrmsr_ordered), so the clock event device decides the
 *    fence once, at init, and no CPUID runs per arming.
 *  - xAPIC mode: the MMIO write that switches the LVT into TSC-deadline mode and a following
 *    WRMSR to IA32_TSC_DEADLINE are not ordered with each other (SDM 11.5.4.1: put an MFENCE
 *    between them); a deadline written before the mode switch took effect is ignored.
 *    lapic_timer_deadline_mode() ends with the fence, so a deadline set after it counts.
 *  - IA32_TSC_DEADLINE writes are ignored when the LVT is not in TSC-deadline mode, and
 *    initial-count writes are ignored while it is (SDM 11.5.4.1). Switching modes disarms.
 *  - Several Intel generations (Haswell to Kaby Lake, and their server parts) have errata
 *    that lose or delay TSC-deadline interrupts on old microcode (e.g. Haswell HSD162,
 *    Skylake SKL142: "the timer may fire late or not at all"); a microcode update fixes them.
 *    Linux refuses the mode below a per-model, per-stepping minimum revision
 *    (arch/x86/kernel/apic/apic.c, deadline_match[] and apic_validate_deadline_timer()).
 *    ticklab carries the same facts (lapic_timer_deadline_erratum()): on an affected CPU
 *    the "tsc_deadline" device is unusable with the reason, so erratum behaviour is never
 *    measured and published as the CPU's latency. Under a hypervisor the microcode a guest
 *    reads is the hypervisor's, so the table cannot be applied (Linux trusts the mode there;
 *    ticklab measures it and says the erratum is unknown).
 *  - Under QEMU TCG CPUID never offers TSC-deadline and the MSR does nothing: the mode can
 *    only run on hardware or KVM, so lapic_timer_deadline_mode() says -ENOTSUP there.
 *  - Periodic reload: whether the count shows 0 for one clock before reloading is not
 *    specified, so the free-running clocksource's wrap may be 2^32 - 1 or 2^32 clocks: one
 *    clock in 2^32 (0.23 ppb), below anything measured here.
 *  - The divide register should be written before the initial count: the SDM leaves the
 *    effect of changing it on a running count unspecified. Every function here does that. */
#ifndef TICKLAB_DRIVERS_LAPIC_TIMER_H
#define TICKLAB_DRIVERS_LAPIC_TIMER_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/lapic.h"

struct cpu_info;

#define MSR_TSC_DEADLINE            0x6E0
#define LAPIC_TIMER_MODE_ONESHOT    (0u << 17)
#define LAPIC_TIMER_MODE_PERIODIC   (1u << 17)
#define LAPIC_TIMER_MODE_DEADLINE   (2u << 17)
#define LAPIC_TIMER_MODE_MASK       (3u << 17)
#define LAPIC_TIMER_MAX_DIVIDE      128u
/* Rating of the free-running clocksource: its clock is unspecified and must be calibrated,
 * it stops in deep C-states without ARAT, it is per CPU, and it wraps every 2^32 clocks
 * (4.3 s at 1 GHz). A last resort, below the PIT. */
#define LAPIC_TIMER_RATING          50

/* The divide configuration register's value for divide = 1, 2, 4, ..., 128 (bits 3, 1, 0:
 * 0b0000 is 2, ..., 0b1010 is 128, 0b1011 is 1). -EINVAL for any other divide. */
int lapic_timer_divide_code(unsigned divide, uint32_t *code);

/* An interrupt at vector every initial_count * divide timer clocks, the first one a full
 * period from now. -EINVAL: vector below 32, count 0, bad divide. */
int lapic_timer_periodic(const struct lapic *l, uint8_t vector, uint32_t initial_count,
                         unsigned divide);
/* One interrupt after count * divide timer clocks. -EINVAL as above. */
int lapic_timer_oneshot(const struct lapic *l, uint8_t vector, uint32_t count, unsigned divide);
/* Masked, count 0, out of TSC-deadline mode (which disarms a deadline). */
void lapic_timer_stop(const struct lapic *l);
/* The current count (counts down; 0 when stopped or a one-shot has fired). */
uint32_t lapic_timer_current(const struct lapic *l);

/* LVT timer -> TSC-deadline mode at vector, unmasked, disarmed, then the fence the SDM
 * wants before a deadline write. Only where CPUID.1:ECX[24] says the mode exists
 * (struct cpu_info.tsc_deadline: the caller checks, once). -EINVAL for a vector below 32. */
int lapic_timer_deadline_mode(const struct lapic *l, uint8_t vector);
/* Arms the deadline (absolute TSC; a past value fires at once; 0 disarms), fenced as above.
 * Has no effect unless lapic_timer_deadline_mode() succeeded (the hardware ignores it). */
void lapic_timer_set_deadline(uint64_t tsc_deadline);

/* ---- TSC-deadline errata (Linux's deadline_match[] table, as facts) ---- */

/* What the table says about this CPU. */
struct lapic_deadline_erratum {
    bool listed;                /* Intel family 6, a model (and stepping) the table names */
    bool affected;              /* listed, microcode known and below the minimum */
    bool unknown;               /* listed, but the microcode is a hypervisor's or unreadable */
    uint32_t min_microcode;     /* listed: the first revision without the erratum */
};
/* Looks the CPU up: vendor GenuineIntel, family 6, model, stepping, and ci->microcode.
 * Pure: reads only *ci. */
void lapic_timer_deadline_erratum(const struct cpu_info *ci, struct lapic_deadline_erratum *out);

/* ---- the timer as clock event devices ---- */

/* Ratings: TSC-deadline 200 (absolute, no bus access, no programming lag), the count-down
 * 150 (no bus access, but relative: the time between reading the clock and the write adds
 * to every wait); both above the HPET comparator (120). */
#define LAPIC_DEADLINE_CE_RATING 200
#define LAPIC_TIMER_CE_RATING    150

/* One CPU's timer as two devices sharing it (->hw is this struct, so only one is ever
 * owned): "lapic" (CE_ONESHOT | CE_PERIODIC | CE_PERCPU, counting timer clocks at divide 1;
 * per event one initial-count write) and "tsc_deadline" (CE_ONESHOT | CE_ABS | CE_PERCPU
 * against the TSC clocksource; per event one WRMSR behind the fence the CPU needs). Both
 * CE_STOPS_IN_IDLE without ARAT. `active` is the device whose mode the LVT was last put in:
 * the owner of the interrupt. */
struct lapic_timer_ce {
    struct clockevent lapic, deadline;
    struct clockevent *active;
    const struct lapic *apic;   /* how the timer's registers are reached */
    uint8_t vector;
    bool fence;                 /* MFENCE;LFENCE before the deadline WRMSR (not on AMD) */
    struct lapic_deadline_erratum erratum;   /* what Linux's table says of this CPU */
    char erratum_reason[120];   /* "tsc_deadline" unusable for it: the reason, with figures */
};

/* Fills both for CPU `cpu` (the caller's index; call on that CPU, after lapic_init()).
 * timer_hz: the calibrated timer clock (0: "lapic" unusable); tsc: the calibrated TSC
 * clocksource (NULL or uncalibrated: "tsc_deadline" unusable); ci: what CPUID said
 * (tsc_deadline, arat, the vendor's fence rule, the model and microcode for the errata:
 * "tsc_deadline" is unusable on a CPU with a known erratum, the reason naming the
 * microcode and the minimum). The caller registers each device. */
void lapic_timer_ce_init(struct lapic_timer_ce *t, const struct lapic *l, unsigned cpu,
                         uint8_t vector, uint64_t timer_hz, const struct clocksource *tsc,
                         const struct cpu_info *ci);
/* The interrupt at t's vector, from the host's handler: the event of the mode the timer is
 * in. Inline: it is on every event's path. */
static inline void lapic_timer_ce_irq(struct lapic_timer_ce *t)
{
    clockevent_handle_irq(t->active);
}

/* Periodic, divide 1, initial count 0xFFFFFFFF, LVT masked: the counter running free for
 * the clocksource (again, after another use of the timer). */
void lapic_timer_freerun(const struct lapic *l);

/* The timer's counter as a clocksource. */
struct lapic_timer_cs {
    struct clocksource cs;      /* "lapic" */
    const struct lapic *apic;
};
/* Starts the counter free-running (lapic_timer_freerun). Fills t and returns its "lapic"
 * clocksource:
 * reads 0xFFFFFFFF - current (counting up), mask 32 bits, freq_hz 0 until calibrated. */
struct clocksource *lapic_timer_clocksource_start(struct lapic_timer_cs *t,
                                                  const struct lapic *l);

#endif
