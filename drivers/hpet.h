/* drivers/hpet.h - the High Precision Event Timer (IA-PC HPET Specification 1.0a, section 2.3
 * "Register Descriptions": register map 2.3.1, capabilities 2.3.4, configuration 2.3.5,
 * interrupt status 2.3.6, main counter 2.3.7, timer N configuration 2.3.8 (Tn_VAL_SET_CNF),
 * comparator and periodic mode 2.3.9).
 *
 * One block of up to 32 comparators around one up-counting main counter, 32 or 64 bits wide
 * (COUNT_SIZE_CAP), at a period in femtoseconds stated in the capability register. The caller
 * finds the block's base in the ACPI HPET table, maps 1 KiB of it uncached and passes the
 * address: this file never maps memory. In host tests the address is the model's physical
 * base (0xFED00000).
 *
 * Quirks and hazards handled:
 *  - Nothing there: an absent block reads all ones (empty bus) or all zeros (QEMU with the
 *    HPET off): hpet_init() says -ENODEV with a reason.
 *  - A period outside 100,000..100,000,000 fs (10 GHz..10 MHz) is not an HPET: -EINVAL.
 *  - 64-bit counter, 32-bit accesses only (hpet_init(..., access32 = true): a bus or a
 *    platform that splits or forbids 64-bit MMIO): the two halves are read separately and the
 *    low half may roll over between them, so hpet_read() reads high, low, high and retries
 *    until the two high halves agree.
 *  - 32-bit counter (COUNT_SIZE_CAP = 0): only the low half is read; the clocksource's mask is
 *    0xFFFFFFFF and it wraps every 2^32 periods (42.9 s at 100 MHz).
 *  - The comparator is an EQUALITY match: it fires when the counter becomes equal to it. A
 *    value the counter has already passed, or passes while the write is on its way, never
 *    fires (64-bit) or fires a whole wrap later (32-bit). Every comparator write is followed
 *    by a read of the counter, and the value must still be HPET_CMP_MARGIN_CYC ahead of it,
 *    or the write returns -ETIME.
 *  - Some chipsets apply a comparator write up to two HPET clocks after it was made (AMD
 *    SB700/SB800 per Linux's arch/x86/kernel/hpet.c, which keeps a margin of 128 clocks for
 *    this and for slow reads): a value one or two clocks ahead at the read-back can be
 *    passed before the write takes effect, and then never matches. HPET_CMP_MARGIN_CYC is
 *    that delay plus one; it is also the clock event device's floor for min_delta_cyc,
 *    which the kernel then measures (ce_search.h) and which bounds every arming path.
 *  - Periodic mode takes two comparator writes: with VAL_SET the first lands in the
 *    comparator itself, and the second (VAL_SET has cleared itself) sets the increment
 *    added at each match. The spec does not say what the first write does to the
 *    increment: QEMU sets both, other parts (Xen's, some chipsets) only the comparator,
 *    so the second write is always made.
 *  - When a 64-bit comparator would have to be written in halves (access32), it is switched
 *    to 32-bit mode (Tn_32MODE_CNF): a half-written comparator could match a value nobody
 *    asked for. Such comparators then compare the low 32 bits of the counter.
 *  - Legacy replacement (LEG_RT_CNF) steals IRQ0 and IRQ8 from the PIT and the RTC: hpet_init()
 *    turns it off, and only hpet_legacy_replacement(true) turns it on.
 *
 * Concurrency: one CPU; the configuration writes are read-modify-write without a lock, so the
 * caller keeps interrupt handlers from reprogramming a comparator while it does. hpet_read()
 * may be called from any context. */
#ifndef TICKLAB_DRIVERS_HPET_H
#define TICKLAB_DRIVERS_HPET_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"

#define HPET_MMIO_BYTES       0x400
#define HPET_MAX_COMPARATORS  32
#define HPET_FS_PER_SEC       1000000000000000ull
/* Rating: a stated rate and a counter that never stops, but every read is an uncached MMIO
 * access (~0.5-1 us on chipsets): below an invariant TSC (300), above the PM timer (200). */
#define HPET_RATING           250
/* A comparator value must be this many clocks ahead of the counter read back after the
 * write (see the top: up to two clocks of write delay, plus the clock in progress). */
#define HPET_CMP_MARGIN_CYC   3
/* Rating of a comparator as a clock event device: one-shot and absolute, an MMIO write per
 * event, no per-CPU limits; below the LAPIC timer (150: no bus access at all), above the
 * PIT (100: three port writes, 838 ns granularity). */
#define HPET_CE_RATING        120

/* One HPET block: where it is mapped, what its capabilities say, and its main counter as a
 * clocksource. Filled by hpet_init(); every function takes the block it works on, so two
 * blocks can coexist (give the second clocksource another name before registering it). */
struct hpet {
    uintptr_t mmio;             /* the mapped block */
    bool present;               /* hpet_init() succeeded */
    bool access32;              /* 32-bit accesses only */
    bool counter64;             /* COUNT_SIZE_CAP */
    bool legacy_cap;            /* LEG_RT_CAP */
    unsigned comparators;       /* NUM_TIM_CAP + 1 */
    struct clocksource cs;      /* "hpet", the main counter (hpet_clocksource) */
};

struct hpet_info {
    uint32_t period_fs;         /* COUNTER_CLK_PERIOD */
    uint64_t nominal_hz;        /* 1e15 / period_fs, rounded to nearest */
    unsigned comparators;       /* NUM_TIM_CAP + 1 */
    bool counter_64bit;         /* COUNT_SIZE_CAP */
    bool legacy_capable;        /* LEG_RT_CAP */
    uint16_t vendor;            /* VENDOR_ID (PCI numbering) */
    uint8_t rev;                /* REV_ID */
    bool access32;              /* as asked: only 32-bit accesses are made */
    const char *reason;         /* why hpet_init() failed; NULL when it succeeded */
};

struct hpet_comparator_caps {
    bool periodic;              /* Tn_PER_INT_CAP */
    bool size_64bit;            /* Tn_SIZE_CAP */
    bool fsb;                   /* Tn_FSB_INT_DEL_CAP: can send an MSI-like message */
    uint32_t route_cap;         /* Tn_INT_ROUTE_CAP: bit g set = may drive IOAPIC input g */
    uint64_t cmp_mask;          /* the width ticklab compares in: UINT32_MAX or UINT64_MAX
                                   (64 only with a 64-bit counter, comparator and access) */
};

/* Reads the capabilities, checks them, turns legacy replacement off and disables every
 * comparator's interrupt (firmware may have left one armed). Does not touch the main
 * counter's value or its ENABLE_CNF (see hpet_enable). mmio: the mapped block; access32:
 * make 32-bit accesses only. Returns 0, -ENODEV (capabilities read all ones or all zeros:
 * nothing there) or -EINVAL (period out of range); out->reason says which. */
int hpet_init(struct hpet *h, uintptr_t mmio, bool access32, struct hpet_info *out);

/* ENABLE_CNF: the main counter counts (and comparators can match) only while enabled. */
void hpet_enable(struct hpet *h);
void hpet_disable(struct hpet *h);

/* The main counter now, low 32 bits only for a 32-bit counter. Never torn: see the top. */
uint64_t hpet_read(const struct hpet *h);

/* Whether the main counter moves within probe_cyc TSC cycles (call after hpet_enable). On
 * false the clocksource is marked unusable with the reason ("counter not enabled", "counter
 * does not count"). */
bool hpet_counting(struct hpet *h, uint64_t probe_cyc);

/* The block's "hpet" clocksource: filled by hpet_init() (mask, nominal_hz and freq_hz = the
 * stated rate, rating HPET_RATING, usable); NULL before a successful hpet_init(). */
struct clocksource *hpet_clocksource(struct hpet *h);

/* ---- comparators: n is 0 .. comparators - 1; -EINVAL otherwise, -ENODEV before init ---- */

int hpet_comparator_caps(const struct hpet *h, unsigned n, struct hpet_comparator_caps *out);

/* INT_ROUTE_CNF = ioapic_gsi (edge-triggered, FSB off). -EINVAL when ioapic_gsi is not in
 * the comparator's INT_ROUTE_CAP (writing it anyway is undefined by the spec). */
int hpet_comparator_route(struct hpet *h, unsigned n, unsigned ioapic_gsi);
/* Tn_INT_TYPE_CNF: level-triggered (status bit stays set until hpet_ack) or edge. */
int hpet_comparator_level(struct hpet *h, unsigned n, bool level);

/* Raw comparator access (the clock event device below is the way for timer users): the
 * mode and the value in one call, a read-modify-write of TN_CONF each time.
 * One interrupt when the counter becomes equal to abs_cyc (masked to the comparator's width).
 * abs_cyc must be ahead of the counter by less than half the comparator's range (2^31 ticks,
 * 21.5 s at 100 MHz, for a 32-bit comparator). Returns 0, or -ETIME when the counter read
 * back after the write is less than HPET_CMP_MARGIN_CYC short of abs_cyc: no interrupt may
 * come for it (a 32-bit comparator fires a whole wrap later), though one may still come if
 * the write landed in time; handlers must tolerate that one early event. A one-shot comparator stays armed: it matches again when the counter
 * wraps round to the value; hpet_comparator_stop() when no next event is wanted. */
int hpet_set_oneshot(struct hpet *h, unsigned n, uint64_t abs_cyc);

/* An interrupt every period_cyc counter ticks, the first period_cyc from now (VAL_SET
 * sequence). Returns 0; -ENOTSUP (comparator not periodic-capable), -EINVAL (period 0),
 * -ERANGE (period beyond half the comparator's range), -ETIME (the first match was passed
 * while it was written: call again, perhaps with a longer period). */
int hpet_set_periodic(struct hpet *h, unsigned n, uint64_t period_cyc);

/* Interrupt disabled, back to one-shot, status cleared. */
int hpet_comparator_stop(struct hpet *h, unsigned n);

/* Clears comparator n's bit in GINTR_STA (write 1 to clear): a level-triggered comparator
 * keeps its line asserted until this. Harmless for edge-triggered ones. */
void hpet_ack(const struct hpet *h, unsigned n);

/* ---- a comparator as a clock event device ---- */

/* Comparator n as a struct clockevent ("hpet" for comparator 0, "hpetN" otherwise):
 * CE_ONESHOT | CE_ABS (armed with an absolute main-counter value: set_next_abs, abs_cs the
 * "hpet" clocksource), CE_PERIODIC when the comparator can; freq_hz the block's stated
 * rate; max delta half the compare range; min delta HPET_CMP_MARGIN_CYC until measured.
 * Per event: one comparator write and one counter read (the -ETIME check). */
struct hpet_channel {
    struct clockevent ce;                  /* ce.line: the input the host routed it to */
    struct hpet *hpet;                     /* its block */
    unsigned n;                            /* comparator number */
    uint32_t conf;                         /* TN_CONF as the current state set it */
    bool level;                            /* ... level-triggered: acknowledge each event */
    char name[8];
};

/* Fills ch for comparator n, whose interrupt the host has routed (hpet_comparator_route()
 * to a GSI delivered to CPU `cpu`) behind `line`; the comparator is left stopped. The
 * caller registers ch->ce (clockevent_register). Returns 0, or hpet_comparator_caps()'s
 * error. hpet_init() first. */
int hpet_channel_init(struct hpet_channel *ch, struct hpet *h, unsigned n, unsigned cpu,
                      const struct clockevent_line *line);
/* The interrupt, from the host's handler: acknowledges a level-triggered comparator (it
 * holds its line until its status bit is cleared; an edge needs no HPET access here) and
 * passes the event to the core. Inline: it is on every event's path. */
static inline void hpet_channel_irq(struct hpet_channel *ch)
{
    if (ch->level)
        hpet_ack(ch->hpet, ch->n);
    clockevent_handle_irq(&ch->ce);
}

/* LEG_RT_CNF: comparator 0 -> IRQ0 (GSI 2 through the usual override), comparator 1 -> IRQ8,
 * ignoring their INT_ROUTE_CNF. -ENOTSUP when turning it on without LEG_RT_CAP. */
int hpet_legacy_replacement(struct hpet *h, bool on);

#endif
