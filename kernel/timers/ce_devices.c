/* kernel/timers/ce_devices.c - see ce_devices.h. */
#include "kernel/timers/ce_devices.h"

#include "ticklab/hpet.h"
#include "ticklab/io.h"
#include "ticklab/lapic.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/pit8254.h"
#include "ticklab/rtc_cmos.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/timers/clock_report.h"
#include "kernel/timers/clocks.h"
#include "ticklab/errno.h"
#include "ticklab/kstring.h"

#define PIT_MAX_ONESHOT_CYC 65535u      /* mode 0 counts the loaded value down to 0 */
#define LAPIC_DIVIDE        1u
#define HPET_CE_COMPARATOR  0u

static void absent(const char *name, const char *reason)
{
    report_absent_device("clockevent", name, reason);
}

/* ---- PIT channel 0 ----------------------------------------------------------------------- */

static struct clockevent pit_ce;
static struct intr_route pit_route;

static void pit_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
    intr_eoi(&pit_route);
    clockevent_handle_irq(&pit_ce);
}

static int pit_set_periodic(uint64_t period_cyc)
{
    if (period_cyc < 2 || period_cyc > PIT_MAX_COUNT)
        return -ERANGE;
    intr_unmask(&pit_route);          /* first: see pit_set_next */
    pit_ch0_periodic((uint32_t)period_cyc);
    return 0;
}

static int pit_set_next(uint64_t delta_cyc)
{
    if (delta_cyc < 1 || delta_cyc > PIT_MAX_ONESHOT_CYC)
        return -ERANGE;
    /* The line is unmasked before the count is loaded: a short count could otherwise end
     * while the IOAPIC entry is still masked, and an edge that meets a masked entry is lost
     * (plain QEMU lost ~5 % of short PIT one-shots after a shutdown that way). Mode 0 then
     * never misses: the count starts at the write, so it cannot have passed. */
    intr_unmask(&pit_route);
    pit_ch0_oneshot((uint32_t)delta_cyc);
    return 0;
}

static void pit_shutdown(void)
{
    intr_mask(&pit_route);
    pit_ch0_stop();
}

static void pit_ce_init(void)
{
    if (intr_route_isa(0, VEC_ISA_BASE + 0, pit_irq, 0, &pit_route)) {
        absent("pit", "IRQ0 cannot be routed");
        return;
    }
    pit_ce = (struct clockevent){
        .name = "pit", .features = CE_PERIODIC | CE_ONESHOT, .freq_hz = PIT_HZ,
        .min_delta_cyc = 1, .max_delta_cyc = PIT_MAX_ONESHOT_CYC,
        .set_periodic = pit_set_periodic, .set_next = pit_set_next,
        .shutdown = pit_shutdown, .rating = 100, .usable = true,
    };
    clockevent_register(&pit_ce);
}

/* ---- LAPIC timer (one-shot / periodic) ---------------------------------------------------- */

static struct clockevent lapic_ce, deadline_ce;
/* The "lapic" and "tsc_deadline" devices are two modes of one timer and share its vector:
 * the one programmed last owns the interrupt. */
static struct clockevent *lapic_owner = &lapic_ce;

static void lapic_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
    intr_eoi_local();
    clockevent_handle_irq(lapic_owner);
}

static int lapic_set_periodic(uint64_t period_cyc)
{
    if (period_cyc < 1 || period_cyc > UINT32_MAX)
        return -ERANGE;
    lapic_owner = &lapic_ce;
    return lapic_timer_periodic(VEC_LAPIC_TIMER, (uint32_t)period_cyc, LAPIC_DIVIDE);
}

static int lapic_set_next(uint64_t delta_cyc)
{
    if (delta_cyc < 1 || delta_cyc > UINT32_MAX)
        return -ERANGE;
    /* A count register cannot be in the past: it starts counting at the write. */
    lapic_owner = &lapic_ce;
    return lapic_timer_oneshot(VEC_LAPIC_TIMER, (uint32_t)delta_cyc, LAPIC_DIVIDE);
}

static void lapic_ce_shutdown(void)
{
    lapic_timer_stop();
}

static void lapic_ce_init(void)
{
    if (!clock_facts.lapic_hz) {
        absent("lapic", "LAPIC timer frequency not calibrated");
        return;
    }
    irq_set_handler(VEC_LAPIC_TIMER, lapic_irq, 0);
    unsigned features = CE_PERIODIC | CE_ONESHOT;
    if (!cpu_facts.arat)
        features |= CE_STOPS_IN_C3;
    lapic_ce = (struct clockevent){
        .name = "lapic", .features = features, .freq_hz = clock_facts.lapic_hz / LAPIC_DIVIDE,
        .min_delta_cyc = 1, .max_delta_cyc = UINT32_MAX,
        .set_periodic = lapic_set_periodic, .set_next = lapic_set_next,
        .shutdown = lapic_ce_shutdown, .rating = 150, .usable = true,
    };
    clockevent_register(&lapic_ce);
}

/* ---- LAPIC TSC-deadline ------------------------------------------------------------------- */

static int deadline_set_next(uint64_t delta_cyc)
{
    int rc = lapic_timer_deadline_mode(VEC_LAPIC_TIMER);
    if (rc)
        return rc;
    lapic_owner = &deadline_ce;
    /* An absolute deadline: one already passed fires at once (SDM 11.5.4.1), so -ETIME is
     * never needed here. */
    lapic_timer_set_deadline(rdtsc() + delta_cyc);
    return 0;
}

/* The same for an absolute TSC count (clockevent_program_abs_ns() while time_ns() runs on
 * the TSC): no delay computed, nothing of the programming added to the wait. */
static int deadline_set_abs(uint64_t tsc_cyc)
{
    int rc = lapic_timer_deadline_mode(VEC_LAPIC_TIMER);
    if (rc)
        return rc;
    lapic_owner = &deadline_ce;
    lapic_timer_set_deadline(tsc_cyc ? tsc_cyc : 1);     /* 0 would disarm it */
    return 0;
}

static void deadline_shutdown(void)
{
    lapic_timer_set_deadline(0);
    lapic_timer_stop();
}

static void deadline_ce_init(void)
{
    if (!cpu_facts.tsc_deadline) {
        absent("tsc_deadline", "CPUID.1:ECX[24] is clear (QEMU TCG never offers it); the "
                               "driver's logic is tested on the host only");
        return;
    }
    if (!clock_facts.tsc_hz) {
        absent("tsc_deadline", "TSC not calibrated");
        return;
    }
    deadline_ce = (struct clockevent){
        .name = "tsc_deadline", .features = CE_ONESHOT | CE_DEADLINE, .freq_hz = clock_facts.tsc_hz,
        .min_delta_cyc = 1, .max_delta_cyc = UINT64_MAX >> 1,
        .set_next = deadline_set_next, .shutdown = deadline_shutdown, .rating = 200,
        .usable = true, .set_abs = deadline_set_abs, .abs_cs = clock_facts.tsc,
    };
    clockevent_register(&deadline_ce);
}

/* ---- HPET comparator 0 -------------------------------------------------------------------- */

static struct clockevent hpet_ce;
static struct intr_route hpet_route;

static void hpet_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
    hpet_ack(HPET_CE_COMPARATOR);
    intr_eoi(&hpet_route);
    clockevent_handle_irq(&hpet_ce);
}

static int hpet_ce_set_next(uint64_t delta_cyc)
{
    /* The comparator matches on equality: hpet_set_oneshot() reads the counter back and
     * returns -ETIME when it had already passed the value (no interrupt would come). */
    return hpet_set_oneshot(HPET_CE_COMPARATOR, hpet_read() + delta_cyc);
}

static int hpet_ce_set_periodic(uint64_t period_cyc)
{
    return hpet_set_periodic(HPET_CE_COMPARATOR, period_cyc);
}

static int hpet_ce_set_abs(uint64_t cyc)
{
    return hpet_set_oneshot(HPET_CE_COMPARATOR, cyc);
}

static void hpet_ce_shutdown(void)
{
    hpet_comparator_stop(HPET_CE_COMPARATOR);
}

/* Routes the comparator to a GSI its capabilities allow and nobody else uses: 16..23 first
 * (PCI range, no ISA device there), then the legacy 0..15. On QEMU's pc the only choice is
 * GSI 2, the PIT's, and the interrupt layer refuses a second owner: the HPET is then
 * reported absent rather than silencing the PIT. */
static int route_comparator(uint32_t route_cap)
{
    static const int order[] = { 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
                                 31, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        int g = order[i];
        if (!(route_cap & (1u << g)))
            continue;
        if (intr_route_gsi((uint32_t)g, TRIGGER_EDGE, POLARITY_HIGH, hpet_irq, 0, &hpet_route))
            continue;
        if (hpet_comparator_route(HPET_CE_COMPARATOR, (unsigned)g) == 0)
            return g;
        intr_release(&hpet_route);
    }
    return -1;
}

/* ---- HPET comparators 1..7 for the other CPUs --------------------------------------------- */

/* struct clockevent's callbacks take no argument: one small pair of functions per comparator. */
#define HPET_PC(k)                                                                             \
    static int hpet_pc_next_##k(uint64_t d) { return hpet_set_oneshot(k, hpet_read() + d); }   \
    static int hpet_pc_abs_##k(uint64_t c) { return hpet_set_oneshot(k, c); }                  \
    static void hpet_pc_stop_##k(void) { hpet_comparator_stop(k); }
HPET_PC(1) HPET_PC(2) HPET_PC(3) HPET_PC(4) HPET_PC(5) HPET_PC(6) HPET_PC(7)
static int (*const hpet_pc_next[8])(uint64_t) = { 0, hpet_pc_next_1, hpet_pc_next_2,
    hpet_pc_next_3, hpet_pc_next_4, hpet_pc_next_5, hpet_pc_next_6, hpet_pc_next_7 };
static int (*const hpet_pc_abs[8])(uint64_t) = { 0, hpet_pc_abs_1, hpet_pc_abs_2,
    hpet_pc_abs_3, hpet_pc_abs_4, hpet_pc_abs_5, hpet_pc_abs_6, hpet_pc_abs_7 };
static void (*const hpet_pc_stop[8])(void) = { 0, hpet_pc_stop_1, hpet_pc_stop_2, hpet_pc_stop_3,
    hpet_pc_stop_4, hpet_pc_stop_5, hpet_pc_stop_6, hpet_pc_stop_7 };

static struct hpet_pc {
    unsigned n;
    struct intr_route route;
    struct clockevent ce;
} hpet_pc[8];

static void hpet_pc_irq(struct trap_frame *tf, void *ctx)
{
    struct hpet_pc *h = ctx;
    (void)tf;
    hpet_ack(h->n);
    intr_eoi(&h->route);
    clockevent_handle_irq(&h->ce);
}

struct clockevent *ce_devices_hpet_for_cpu(unsigned comparator, uint32_t apic_id,
                                           const char **why)
{
    struct hpet_comparator_caps caps;
    *why = 0;
    if (!hpet_ce.usable) {
        *why = "no usable HPET comparator 0 (its clockevent record says why)";
        return 0;
    }
    if (comparator == 0 || comparator > 7 || hpet_comparator_caps(comparator, &caps)) {
        *why = "the HPET has no comparator left for this CPU";
        return 0;
    }
    struct hpet_pc *h = &hpet_pc[comparator];
    h->n = comparator;
    static const int order[] = { 16, 17, 18, 19, 20, 21, 22, 23 };
    int gsi = -1;
    for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]) && gsi < 0; i++) {
        int g = order[i];
        if (!(caps.route_cap & (1u << g)))
            continue;
        if (intr_route_gsi_to((uint32_t)g, TRIGGER_EDGE, POLARITY_HIGH, apic_id, hpet_pc_irq, h,
                              &h->route))
            continue;
        if (hpet_comparator_route(comparator, (unsigned)g) == 0)
            gsi = g;
        else
            intr_release(&h->route);
    }
    if (gsi < 0) {
        *why = "no free IOAPIC input (16..23) that this comparator can drive";
        return 0;
    }
    intr_unmask(&h->route);
    h->ce = (struct clockevent){
        .name = "hpet", .features = CE_ONESHOT, .freq_hz = hpet_ce.freq_hz,
        .min_delta_cyc = hpet_ce.min_delta_cyc, .max_delta_cyc = hpet_ce.max_delta_cyc,
        .set_next = hpet_pc_next[comparator], .shutdown = hpet_pc_stop[comparator],
        .rating = hpet_ce.rating, .usable = true,
        .set_abs = hpet_pc_abs[comparator], .abs_cs = hpet_ce.abs_cs,
    };
    h->ce.shutdown();
    return &h->ce;
}

static void hpet_ce_init(void)
{
    struct hpet_comparator_caps caps;
    if (!clock_facts.hpet || !clock_facts.hpet->usable) {
        absent("hpet", clock_facts.hpet ? clock_facts.hpet->unusable_reason : "no HPET");
        return;
    }
    if (hpet_comparator_caps(HPET_CE_COMPARATOR, &caps)) {
        absent("hpet", "comparator 0 unreadable");
        return;
    }
    if (route_comparator(caps.route_cap) < 0) {
        absent("hpet", "every IOAPIC input comparator 0 can drive is taken (QEMU pc: only "
                       "GSI 2, the PIT's)");
        return;
    }
    intr_unmask(&hpet_route);
    hpet_ce = (struct clockevent){
        .name = "hpet", .features = CE_ONESHOT | (caps.periodic ? CE_PERIODIC : 0),
        .freq_hz = clock_facts.hpet->freq_hz, .min_delta_cyc = 1,
        .max_delta_cyc = caps.cmp_mask >> 1,
        .set_periodic = caps.periodic ? hpet_ce_set_periodic : 0, .set_next = hpet_ce_set_next,
        .shutdown = hpet_ce_shutdown, .rating = 120, .usable = true,
        .set_abs = hpet_ce_set_abs, .abs_cs = clock_facts.hpet,
    };
    clockevent_register(&hpet_ce);
}

/* ---- CMOS RTC ------------------------------------------------------------------------------ */

static struct intr_route rtc_route;

static void rtc_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
    rtc_clockevent_irq();             /* reads C: no further IRQ8 until it is read */
    intr_eoi(&rtc_route);
}

static void rtc_ce_init(void)
{
    if (!rtc_probe()) {
        absent("rtc", "no CMOS RTC answers at ports 0x70/0x71");
        return;
    }
    if (intr_route_isa(8, VEC_ISA_BASE + 8, rtc_irq, 0, &rtc_route)) {
        absent("rtc", "IRQ8 cannot be routed");
        return;
    }
    intr_unmask(&rtc_route);
    clockevent_register(rtc_clockevent());
}

void ce_devices_init(void)
{
    kprintf("\nClock event devices\n");
    pit_ce_init();
    lapic_ce_init();
    deadline_ce_init();
    hpet_ce_init();
    rtc_ce_init();
}

int ce_devices_mask_irq(const char *name)
{
    struct intr_route *r = !k_strcmp(name, "pit")    ? &pit_route
                           : !k_strcmp(name, "hpet") ? &hpet_route
                           : !k_strcmp(name, "rtc")  ? &rtc_route
                                                     : 0;
    if (!r || r->path == INTR_NONE)
        return -ENODEV;
    intr_mask(r);
    return 0;
}
