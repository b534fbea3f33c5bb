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
 *  - What firmware left (hpet_boot_quiet()): legacy replacement on (the HPET then owns IRQ0
 *    and IRQ8 and the PIT and RTC interrupts are blocked), a comparator armed, one armed with
 *    FSB delivery (its message goes straight to a local APIC, past every masked IOAPIC pin),
 *    a level status bit still set (its line held asserted). hpet_boot_quiet() records all of
 *    it and quiets the block with nothing more than the mapped registers, before anything
 *    relies on interrupts: comparators off first, then legacy replacement (a chipset may
 *    raise a spurious interrupt when LEG_RT_CNF changes, Intel PCH datasheets' HPET
 *    "Interrupt Mapping"), then the status bits. The counter is left as it was.
 *  - 64-bit counter, 32-bit accesses only (hpet_init(..., access32 = true): a bus or a
 *    platform that splits or forbids 64-bit MMIO): the two halves are read separately and the
 *    low half may roll over between them, so hpet_read() reads high, low, high and retries
 *    until the two high halves agree.
 *  - 32-bit counter (COUNT_SIZE_CAP = 0): only the low half is read; the clocksource's mask is
 *    0xFFFFFFFF and it wraps every 2^32 periods (42.9 s at 100 MHz).
 *  - The comparator is an EQUALITY match: it fires when the counter becomes equal to it. A
 *    value the counter has already passed, or passes while the write is on its way, never
 *    fires (64-bit) or fires a whole wrap later (32-bit). Every comparator write is followed
 *    by a read of the counter, and the value must still be the block's margin
 *    (struct hpet.cmp_margin_cyc) ahead of it, or the write returns -ETIME. A stall between
 *    reading "now" and the write (an SMI, a hypervisor taking the CPU) is caught the same
 *    way: the read-back comes after it.
 *  - The write reaches the comparator logic late. The read-back is ordered after the write
 *    (uncached accesses stay in program order, and a read never passes a posted write on
 *    the way to the chipset), so only the chipset's own internal delay is left uncovered:
 *    up to two HPET clocks on ATI SB700/SB800 and Intel ICH9/ICH10, and, by Linux's account
 *    (arch/x86/kernel/hpet.c, the comment in hpet_clkevt_set_next_event(), hpet_next_event()
 *    in older kernels), longer on some later AMD parts,
 *    for which no figure is published. Linux answers with a fixed -ETIME margin of 128
 *    clocks (HPET_MIN_CYCLES) and a minimum programming delta of 1.5 times that
 *    (HPET_MIN_PROG_DELTA), after an earlier 5 us minimum that an SMI could still defeat.
 *    Here the margin is HPET_CMP_MARGIN_FLOOR_CYC (128, Linux's figure: the only one tested
 *    on the parts with the unpublished delay; 9 us at 14.318 MHz, 1.3 us at 100 MHz) or,
 *    on a slower path, HPET_MARGIN_SAFETY times the worst comparator write plus counter
 *    read-back measured on this block (hpet_measure_margin(): a chipset behind more
 *    bridges, an HPET emulated in SMM or by a hypervisor, applies a write no sooner than it
 *    reaches it), whichever is larger. The clock event device's min_delta_cyc starts at
 *    the margin plus that worst programming time (Linux's extra half), and the kernel then
 *    measures it (ce_search.h).
 *  - A comparator read straight after a write may return the value before the write (Intel
 *    ICH9/ICH10, per the same Linux comment): nothing here reads a comparator back. The
 *    channel keeps what it wrote (struct hpet_channel.armed_cyc) and compares the counter
 *    with that.
 *  - An emulated HPET does not wait for equality: QEMU 7.2 (hw/timer/hpet.c,
 *    hpet_calculate_diff) fires a comparator the counter has passed one clock after the
 *    timer is re-armed (its interrupt enabled, or the comparator written). A comparator's
 *    interrupt is therefore only ever enabled after the comparator holds a value ahead: the
 *    caller's, or (entering one-shot mode with nothing to arm yet) half its range ahead,
 *    "parked". Enabled first, the value an earlier use left behind fired at once (seen: one
 *    early tick when the tick took the HPET after the clock event checks had used it). On
 *    a 32-bit comparator a parked one-shot left unarmed matches after 2^31 clocks (21 s at
 *    100 MHz), as any value left in it would at the wrap.
 *  - Periodic mode takes two comparator writes: with VAL_SET the first lands in the
 *    comparator itself, and the second (VAL_SET has cleared itself) sets the increment
 *    added at each match. The spec does not say what the first write does to the
 *    increment: QEMU sets both, other parts (Xen's, some chipsets) only the comparator,
 *    so the second write is always made.
 *  - When a 64-bit comparator would have to be written in halves (access32), it is switched
 *    to 32-bit mode (Tn_32MODE_CNF): a half-written comparator could match a value nobody
 *    asked for. Such comparators then compare the low 32 bits of the counter.
 *  - Three ways out for a comparator's interrupt, chosen by the caller:
 *    FSB delivery (hpet_comparator_fsb(), Tn_FSB_INT_DEL_CAP): the comparator writes a
 *    message (an MSI: the local APIC's address and a vector) itself, edge-triggered as the
 *    PCH datasheets require; no pin, nothing shared, and it still works under legacy
 *    replacement. An IOAPIC input (hpet_comparator_route(), INT_ROUTE_CAP): on Intel PCHs
 *    only inputs 20..23 (and 11, 12 for comparators 2, 3), which are shared with PCI
 *    interrupts (PIRQE..H#, level, active low); the datasheets forbid edge-triggered
 *    comparators on a shared input, so the caller sets level (hpet_comparator_level())
 *    and the channel's interrupt checks the comparator's status bit before it claims the
 *    interrupt, as a shared-line handler must. Legacy replacement (LEG_RT_CNF): comparator
 *    0 to IRQ0 and comparator 1 to IRQ8 whatever their routes, and the PIT's and RTC's own
 *    interrupts blocked: hpet_init() and hpet_boot_quiet() turn it off; only
 *    hpet_legacy_replacement(true) turns it on.
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
#include "ticklab/io.h"

#define HPET_MMIO_BYTES       0x400
#define HPET_MAX_COMPARATORS  32
#define HPET_FS_PER_SEC       1000000000000000ull
/* Rating: a stated rate and a counter that never stops, but every read is an uncached MMIO
 * access (~0.5-1 us on chipsets): below an invariant TSC (300), above the PM timer (200). */
#define HPET_RATING           250
/* The -ETIME margin's floor, in HPET clocks: Linux's HPET_MIN_CYCLES (see the top). */
#define HPET_CMP_MARGIN_FLOOR_CYC 128
/* The margin covers this many times the worst write + read-back measured (see the top). */
#define HPET_MARGIN_SAFETY        2
/* hpet_measure_margin(): tries, and how far above the median a try must be to count as the
 * CPU taken away (an SMI, a hypervisor) rather than as the device's own time. */
#define HPET_MARGIN_TRIES         64
#define HPET_MARGIN_STALL_FACTOR  4
/* Rating of a comparator as a clock event device: one-shot and absolute, an MMIO write per
 * event, no per-CPU limits; below the LAPIC timer (150: no bus access at all), above the
 * PIT (100: three port writes, 838 ns granularity). */
#define HPET_CE_RATING        120

/* What hpet_measure_margin() found: how long one comparator write plus the counter read
 * after it takes on this block, in HPET clocks, and the -ETIME margin made from it. */
struct hpet_margin {
    bool measured;              /* false: the floor alone (not measured yet, or it failed) */
    unsigned tries;             /* HPET_MARGIN_TRIES */
    unsigned stalls;            /* tries over HPET_MARGIN_STALL_FACTOR x the median: left out */
    uint64_t median_cyc;        /* counter before the write to counter read back after it */
    uint64_t worst_cyc;         /* the longest try that was not a stall */
    uint64_t margin_cyc;        /* max(HPET_CMP_MARGIN_FLOOR_CYC, SAFETY x worst_cyc) */
};

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
    uint32_t fsb_mask;          /* bit n: comparator n delivers by FSB (hpet_comparator_fsb) */
    uint64_t cmp_margin_cyc;    /* the -ETIME margin: margin.margin_cyc, the floor until
                                   hpet_measure_margin() */
    struct hpet_margin margin;
    struct clocksource cs;      /* "hpet", the main counter (hpet_clocksource) */
};

/* The block as firmware left it (hpet_boot_quiet()). Bit n of a mask is comparator n. */
struct hpet_boot_state {
    const char *reason;         /* why nothing was read or quieted; NULL when it was */
    unsigned comparators;
    bool counter_enabled;       /* GEN_CONF ENABLE_CNF */
    bool counter_counting;      /* ... and the counter moved within the probe */
    bool legacy_replacement;    /* GEN_CONF LEG_RT_CNF */
    uint32_t int_enabled;       /* Tn_INT_ENB_CNF */
    uint32_t fsb_enabled;       /* Tn_FSB_EN_CNF */
    uint32_t periodic;          /* Tn_TYPE_CNF */
    uint32_t level;             /* Tn_INT_TYPE_CNF */
    uint32_t status;            /* GINTR_STA */
    uint8_t route[HPET_MAX_COMPARATORS];     /* Tn_INT_ROUTE_CNF */
    uint32_t fsb_addr[HPET_MAX_COMPARATORS]; /* Tn_FSB_INT_ADDR, where fsb_enabled */
    uint32_t fsb_data[HPET_MAX_COMPARATORS]; /* Tn_FSB_INT_VAL, where fsb_enabled */
    unsigned left_armed;        /* comparators with interrupt or FSB delivery enabled */
    bool quieted;               /* everything above turned off, status cleared */
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

/* Records the block as firmware left it into *out, then quiets it: every comparator's
 * interrupt and FSB delivery off (and back to one-shot), legacy replacement off, every
 * status bit cleared. The counter's value and ENABLE_CNF are left alone. Needs nothing but
 * the mapped block (mmio; access32: 32-bit accesses only, the safe choice before anything is
 * known of the platform); probe_cyc: how many TSC cycles an enabled counter gets to show it
 * moves (need not be calibrated). Returns 0, -ENODEV or -EINVAL as hpet_init() (nothing
 * touched; out->reason says why). */
int hpet_boot_quiet(uintptr_t mmio, bool access32, uint64_t probe_cyc,
                    struct hpet_boot_state *out);

/* Reads the capabilities, checks them, turns legacy replacement off and disables every
 * comparator's interrupt and FSB delivery (firmware may have left one armed). Does not touch
 * the main counter's value or its ENABLE_CNF (see hpet_enable). mmio: the mapped block;
 * access32: make 32-bit accesses only. The -ETIME margin is HPET_CMP_MARGIN_FLOOR_CYC until
 * hpet_measure_margin(). Returns 0, -ENODEV (capabilities read all ones or all zeros:
 * nothing there) or -EINVAL (period out of range); out->reason says which. */
int hpet_init(struct hpet *h, uintptr_t mmio, bool access32, struct hpet_info *out);

/* Measures the block's comparator write plus counter read-back HPET_MARGIN_TRIES times on
 * comparator n (its interrupt off, values far ahead, left stopped) and sets the -ETIME
 * margin from it (struct hpet_margin; see the top). Call with the counter counting
 * (hpet_counting()), interrupts off, before any channel is initialised (the channels take
 * their min_delta_cyc from it). Returns 0, -ENODEV / -EINVAL as the comparator calls, or
 * -EIO when the counter did not move (the floor is kept). */
int hpet_measure_margin(struct hpet *h, unsigned n);

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

/* INT_ROUTE_CNF = ioapic_gsi (edge-triggered, FSB delivery off). -EINVAL when ioapic_gsi is
 * not in the comparator's INT_ROUTE_CAP (writing it anyway is undefined by the spec). */
int hpet_comparator_route(struct hpet *h, unsigned n, unsigned ioapic_gsi);
/* FSB delivery: when the comparator fires it writes msg_data to msg_addr (Tn_FSB_INT_VAL,
 * Tn_FSB_INT_ADDR; for a local APIC 0xFEE00000 | dest << 12 and the vector), edge-triggered.
 * Enabled with the comparator's interrupt (hpet_set_oneshot, hpet_set_periodic, the channel's
 * states), disabled by hpet_comparator_stop(). -ENOTSUP without Tn_FSB_INT_DEL_CAP.
 * hpet_comparator_route() goes back to the IOAPIC input. */
int hpet_comparator_fsb(struct hpet *h, unsigned n, uint32_t msg_addr, uint32_t msg_data);
/* Tn_INT_TYPE_CNF: level-triggered (status bit stays set until hpet_ack) or edge. -EINVAL
 * for level on a comparator that delivers by FSB (messages are edges). */
int hpet_comparator_level(struct hpet *h, unsigned n, bool level);

/* Raw comparator access (the clock event device below is the way for timer users): the
 * mode and the value in one call, a read-modify-write of TN_CONF each time.
 * One interrupt when the counter becomes equal to abs_cyc (masked to the comparator's width).
 * abs_cyc must be ahead of the counter by less than half the comparator's range (2^31 ticks,
 * 21.5 s at 100 MHz, for a 32-bit comparator). Returns 0, or -ETIME when the counter read
 * back after the write is less than h->cmp_margin_cyc short of abs_cyc: no interrupt may
 * come for it (a 32-bit comparator fires a whole wrap later), though one may still come if
 * the write landed in time; handlers must tolerate that one early event. A one-shot
 * comparator stays armed: it matches again when the counter wraps round to the value;
 * hpet_comparator_stop() when no next event is wanted. */
int hpet_set_oneshot(struct hpet *h, unsigned n, uint64_t abs_cyc);

/* An interrupt every period_cyc counter ticks, the first period_cyc from now (VAL_SET
 * sequence). Returns 0; -ENOTSUP (comparator not periodic-capable), -EINVAL (period 0),
 * -ERANGE (period beyond half the comparator's range), -ETIME (the first match was passed
 * while it was written: call again, perhaps with a longer period). */
int hpet_set_periodic(struct hpet *h, unsigned n, uint64_t period_cyc);

/* Interrupt and FSB delivery disabled, back to one-shot, status cleared. */
int hpet_comparator_stop(struct hpet *h, unsigned n);

/* Clears comparator n's bit in GINTR_STA (write 1 to clear): a level-triggered comparator
 * keeps its line asserted until this. Harmless for edge-triggered ones. */
void hpet_ack(const struct hpet *h, unsigned n);
/* For a level-triggered comparator's interrupt: whether its status bit is set (the interrupt
 * is its own, not another device's on a shared input), and if so clears it. */
bool hpet_status_take(const struct hpet *h, unsigned n);

/* ---- a comparator as a clock event device ---- */

/* Comparator n as a struct clockevent ("hpet" for comparator 0, "hpetN" otherwise):
 * CE_ONESHOT | CE_ABS (armed with an absolute main-counter value: set_next_abs, abs_cs the
 * "hpet" clocksource), CE_PERIODIC when the comparator can; freq_hz the block's stated
 * rate; max delta half the compare range; min delta the -ETIME margin plus the worst
 * write + read-back hpet_measure_margin() saw (half the margin when not measured), until the
 * kernel measures it. Per event: one comparator write and one counter read (the -ETIME
 * check); a level-triggered comparator's interrupt adds a status read and its clearing. */
struct hpet_channel {
    struct clockevent ce;                  /* ce.line: the input the host routed it to */
    struct hpet *hpet;                     /* its block */
    unsigned n;                            /* comparator number */
    uint32_t conf;                         /* TN_CONF as the current state set it */
    bool level;                            /* ... level-triggered: check and clear the
                                              status bit at each interrupt */
    uintptr_t status_reg;                  /* GINTR_STA's address and this comparator's
                                              bit in it, for that check in place */
    uint32_t status_bit;
    uint64_t armed_cyc;                    /* the comparator value last written for a
                                              one-shot, in the compare width: what pending()
                                              compares with (never read back, see the top) */
    uint32_t foreign_budget;               /* level interrupts whose status bit was clear
                                              (another device's on a shared input, or an
                                              input of the wrong polarity, or one of a count
                                              the arming after it cleared: not passed on)
                                              left before the next batch is counted; the
                                              count so far is hpet_channel_foreign_irqs() */
    uint32_t foreign_batches;              /* whole batches of HPET_FOREIGN_BATCH (the two
                                              share what was one 64-bit count: the channel's
                                              layout is as it was) */
    uint64_t events_at_arm;                /* ce.events at the last one-shot arming: equal
                                              at the next, no interrupt was handled since */
    uint64_t stale_cleared;                /* armings that cleared a status bit a count
                                              before them had set (it had been reached, its
                                              interrupt not yet handled) */
    char name[8];
};

/* A shared level input held asserted by a device nobody services (no other driver runs
 * here), or an input whose polarity is not what the route says, re-fires at every EOI for
 * ever. The foreign interrupts are counted in batches of HPET_FOREIGN_BATCH, so that each
 * costs one instruction more than a bare count did (exact mode's figures move with every
 * instruction on an interrupt path); at the end of each batch the hook the host installed
 * (hpet_set_foreign_batch_hook) is called, from the interrupt, and it can judge the rate
 * with a struct hpet_storm_watch. Linux's genirq disables a line nobody handles in the same
 * spirit (note_interrupt). */
#define HPET_FOREIGN_BATCH 64u
#define HPET_STORM_BATCHES 16u
#define HPET_STORM_IRQS    (HPET_FOREIGN_BATCH * HPET_STORM_BATCHES)

void hpet_set_foreign_batch_hook(void (*hook)(struct hpet_channel *ch));
/* A batch has come (hpet_channel_irq_level): counted, the hook called. Out of line: never on
 * the path of the comparator's own events. */
void hpet_channel_foreign_batch(struct hpet_channel *ch);

/* A storm is HPET_STORM_BATCHES batches in a row, each ending within batch_cyc TSC cycles
 * of the one before (a held line re-fires within microseconds of each EOI). */
struct hpet_storm_watch {
    uint64_t batch_cyc;         /* 0: not watched */
    unsigned run;               /* quick batches in a row */
    uint64_t last_tsc;          /* when the last batch ended */
    uint64_t storms;            /* storms seen */
};
/* At the end of a batch: true once, as the run reaches HPET_STORM_BATCHES. */
bool hpet_storm_batch(struct hpet_storm_watch *w);

static inline uint64_t hpet_channel_foreign_irqs(const struct hpet_channel *ch)
{
    return (uint64_t)ch->foreign_batches * HPET_FOREIGN_BATCH +
           (HPET_FOREIGN_BATCH - ch->foreign_budget);
}

/* Fills ch for comparator n, whose interrupt the host has routed (hpet_comparator_route() to
 * a GSI, hpet_comparator_fsb(), or legacy replacement, delivered to CPU `cpu`) behind `line`;
 * the comparator is left stopped. The caller registers ch->ce (clockevent_register). Returns
 * 0, or hpet_comparator_caps()'s error. hpet_init() first (and hpet_measure_margin(), for a
 * measured min_delta_cyc). */
int hpet_channel_init(struct hpet_channel *ch, struct hpet *h, unsigned n, unsigned cpu,
                      const struct clockevent_line *line);
/* The interrupt, from the host's handler: a level-triggered comparator's status bit is
 * checked and cleared (it holds its line until then; clear, the interrupt was another
 * device's: counted (hpet_channel_foreign_irqs) and not passed on); an edge needs no HPET access here.
 * Then the event goes to the core. Inline: it is on every event's path.
 *
 * A set status bit is also a proof: one-shot armings keep it (channel_next_abs) such that
 * it can only have been set by the count armed last, so the main counter has reached that
 * count, and when the core armed it for an exact time_ns() moment (ce.abs_exact_ns, the
 * counter being time_ns()'s own), the event passes that moment on as ce.reached_ns: its
 * owner need not read the clock to know it is due. An edge proves nothing (its interrupt may
 * be one an earlier count left in flight). hpet_channel_irq_level() is the level half alone,
 * for a host whose route is level by construction (an IOAPIC input it set level with
 * hpet_comparator_level(), which every one-shot or periodic mode then keeps in ch->level):
 * one test fewer on the way. */
static inline void hpet_channel_irq_level(struct hpet_channel *ch)
{
    /* hpet_status_take(), without its call and its range check (n is the channel's) */
    uintptr_t reg = ch->status_reg;
    uint32_t bit = ch->status_bit;
    if (!(mmio_read32(reg) & bit)) {
        if (__builtin_expect(--ch->foreign_budget == 0, 0))
            hpet_channel_foreign_batch(ch);
        return;
    }
    mmio_write32(reg, bit);
    clockevent_handle_irq_reached(&ch->ce);
}

static inline void hpet_channel_irq(struct hpet_channel *ch)
{
    if (ch->level) {
        hpet_channel_irq_level(ch);
        return;
    }
    ch->ce.reached_ns = 0;
    clockevent_handle_irq(&ch->ce);
}

/* LEG_RT_CNF: comparator 0 -> IRQ0 (GSI 2 through the usual override), comparator 1 -> IRQ8,
 * ignoring their INT_ROUTE_CNF. -ENOTSUP when turning it on without LEG_RT_CAP. */
int hpet_legacy_replacement(struct hpet *h, bool on);

#endif
