/* kernel/timers/ce_devices.c - see ce_devices.h. */
#include "kernel/timers/ce_devices.h"

#include "kernel/arch/machine_events.h"
#include "kernel/smp/smp.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/discover/irq_check.h"
#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/timers/clock_report.h"
#include "kernel/timers/clocks.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/hotpath.h"
#include "ticklab/hpet.h"
#include "ticklab/io.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/pit8254.h"
#include "ticklab/rtc_cmos.h"
#include "ticklab/timekeeping.h"

/* A device's interrupt as the kernel routed it: the route, and the line ops the driver
 * masks and unmasks it through. An MSI route has no pin to mask: `masked` is then the mask,
 * kept by the kernel's handler, which drops what arrives while it is set. */
struct device_irq {
    struct intr_route route;
    struct clockevent_line line;
    bool masked;
};

static void route_mask(void *ctx)
{
    struct device_irq *r = ctx;
    r->masked = true;
    intr_mask(&r->route);
}

static void route_unmask(void *ctx)
{
    struct device_irq *r = ctx;
    r->masked = false;
    intr_unmask(&r->route);
}

static const struct clockevent_line *line_of(struct device_irq *r)
{
    r->line = (struct clockevent_line){ route_mask, route_unmask, r };
    return &r->line;
}

static void absent(const char *name, const char *reason)
{
    report_absent_device("clockevent", name, reason);
}

/* Registers ce; a refusal (a driver's broken promise, a name taken twice) is reported as
 * the device being absent, with the core's error, and the device is not used. */
static bool add(struct clockevent *ce)
{
    int rc = clockevent_register(ce);
    if (rc == 0)
        return true;
    absent(ce->name, rc == -EBUSY ? "not registered: its name is taken on this CPU"
                                  : "not registered: the driver's fields are inconsistent");
    return false;
}

/* ---- PIT channel 0 ------------------------------------------------------------------------ */

static struct pit_clockevent pit;
static bool pit_ok;
static struct device_irq pit_irq_route;

/* Each handler passes the event on first and acknowledges the interrupt controller after:
 * the controller holds a new edge of this line meanwhile in its request register, and
 * handlers run with interrupts off, so nothing is lost, and the EOI's two accesses are not
 * between the interrupt and its timer's callback. */
static HOT_PATH void pit_irq(unsigned vector, void *ctx)
{
    (void)vector, (void)ctx;
    pit_clockevent_irq(&pit);
    intr_eoi(&pit_irq_route.route);
}

static void pit_init(void)
{
    const char *why = irq_check_pit_problem();
    if (why) {
        absent("pit", why);          /* a gated or absent PIT is never the tick's */
        return;
    }
    if (intr_route_isa(0, VEC_ISA_BASE + 0, pit_irq, 0, &pit_irq_route.route)) {
        absent("pit", "IRQ0 cannot be routed");
        return;
    }
    pit_clockevent_init(&pit, line_of(&pit_irq_route));
    pit_ok = add(&pit.ce);
}

/* ---- each CPU's local APIC timer ------------------------------------------------------------ */

static struct lapic_timer_ce lapic_timers[CPU_MAX];

/* One vector on every CPU: the interrupt is the running CPU's own timer's. */
static HOT_PATH void lapic_irq(unsigned vector, void *ctx)
{
    (void)vector, (void)ctx;
    lapic_timer_ce_irq(&lapic_timers[cpu_index()]);
    intr_eoi_local();
}

/* What Linux's TSC-deadline errata table says of this CPU: on the tsc_deadline record. */
static void erratum_members(struct json *j, const struct lapic_timer_ce *t)
{
    const struct lapic_deadline_erratum *e = &t->erratum;
    json_str(j, "erratum", !e->listed ? "none" : e->affected ? "affected"
                           : e->unknown ? "unknown" : "fixed");
    if (e->listed)
        json_hex(j, "erratum_min_microcode", e->min_microcode);
}

/* The CPU has the timer, but a microcode with a known erratum: present, not usable. */
static void erratum_record(const struct lapic_timer_ce *t)
{
    struct rec r;
    rec_begin(&r, "clockevent");
    json_str(&r.j, "name", "tsc_deadline");
    json_bool(&r.j, "present", true);
    json_bool(&r.j, "usable", false);
    json_str(&r.j, "reason", t->deadline.unusable_reason);
    erratum_members(&r.j, t);
    rec_emit(&r);
    kprintf("  %-12s NOT used: %s\n", "tsc_deadline", t->deadline.unusable_reason);
}

static void lapic_init_cpu(unsigned cpu)
{
    struct lapic_timer_ce *t = &lapic_timers[cpu];
    lapic_timer_ce_init(t, intr_apic(), cpu, VEC_LAPIC_TIMER, clock_facts.lapic_hz,
                        clock_facts.tsc, &cpu_facts);
    if (clock_facts.lapic && clocksource_current() == clock_facts.lapic) {
        /* One counter cannot be both: time_ns() reads it, so the timer must run free. */
        t->lapic.usable = t->deadline.usable = false;
        t->lapic.unusable_reason = t->deadline.unusable_reason =
            "its counter is the clocksource time_ns() runs on (clocksource=lapic)";
    } else {
        lapic_timer_stop(intr_apic());
    }
    if (!t->lapic.usable && cpu == 0)
        absent("lapic", t->lapic.unusable_reason);
    else if (t->lapic.usable)
        add(&t->lapic);
    if (t->deadline.usable)
        add(&t->deadline);
    else if (cpu == 0 && t->erratum.affected && cpu_facts.tsc_deadline)
        erratum_record(t);
    else if (cpu == 0)
        absent("tsc_deadline", t->deadline.unusable_reason);
}

struct clockevent *ce_devices_pit(void)
{
    return pit_ok ? &pit.ce : 0;
}

struct clockevent *ce_devices_deadline(unsigned cpu)
{
    if (cpu >= CPU_MAX || !lapic_timers[cpu].deadline.name || !lapic_timers[cpu].deadline.usable)
        return 0;
    return &lapic_timers[cpu].deadline;
}

struct clockevent *ce_devices_lapic(unsigned cpu)
{
    if (cpu >= CPU_MAX || !lapic_timers[cpu].lapic.name || !lapic_timers[cpu].lapic.usable)
        return 0;
    return &lapic_timers[cpu].lapic;
}

/* ---- HPET comparators: 0 for the boot CPU, n for CPU n --------------------------------------- */

/* How a comparator's interrupt reaches its CPU, in order of preference (hpet.h, "Three ways
 * out"): its own message (FSB: no pin, nothing shared), a free IOAPIC input, legacy
 * replacement (comparator 0 only, and only without a PIT). */
enum hpet_route { HPET_ROUTE_NONE, HPET_ROUTE_FSB, HPET_ROUTE_IOAPIC, HPET_ROUTE_LEGACY };
static const char *const hpet_route_name[] = { "none", "fsb", "ioapic", "legacy" };

static struct hpet_slot {
    struct hpet_channel ch;
    struct device_irq irq;
    enum hpet_route how;
    bool ready;
    const char *reason;
} hpet_slots[CPU_MAX];

/* Beside each slot, what its line's storm watch needs (kept apart: the slots' layout is what
 * it was, and exact mode's figures have been seen to move with it). */
static struct hpet_storm_state {
    struct hpet_storm_watch watch;
    unsigned cpu;
    uint32_t apic_id;
    volatile bool stormed;         /* its line was masked in a storm: to be moved */
    uint32_t storm_gsi;            /* the GSI it stormed on */
} hpet_storm_states[CPU_MAX];

/* IOAPIC inputs a comparator stormed on: never used again for a comparator (the device that
 * holds the line, or the polarity that does not match, stays). Bit g: GSI g. */
static uint32_t hpet_bad_gsi;

/* A run of foreign interrupts (hpet.h, HPET_STORM_BATCHES) ends at a batch of 64 that took
 * longer than this: a held line re-fires within microseconds of each EOI (64 in well under a
 * millisecond); a device that asserts now and then is far slower. */
#define HPET_STORM_BATCH_NS 1000000ull

/* Comparator 0 took IRQ0 by legacy replacement, which also gives IRQ8 to comparator 1. */
static bool hpet_legacy_on;

/* Legacy replacement's route (IRQ0, edge): hpet_channel_irq tests the mode. */
static HOT_PATH void hpet_irq(unsigned vector, void *ctx)
{
    struct hpet_slot *s = ctx;
    (void)vector;
    hpet_channel_irq(&s->ch);
    intr_eoi(&s->irq.route);
}

/* The IOAPIC route, level by construction (route_ioapic): the status check without the
 * test of the mode (hpet_channel_irq_level). */
static HOT_PATH void hpet_level_irq(unsigned vector, void *ctx)
{
    struct hpet_slot *s = ctx;
    (void)vector;
    hpet_channel_irq_level(&s->ch);
    intr_eoi(&s->irq.route);
}

/* A message has no pin to mask: one that arrives while its line is masked is dropped. */
static void hpet_msi_irq(unsigned vector, void *ctx)
{
    struct hpet_slot *s = ctx;
    (void)vector;
    if (!s->irq.masked)
        hpet_channel_irq(&s->ch);
    intr_eoi(&s->irq.route);
}

/* FSB delivery: the comparator writes the vector to apic_id's local APIC itself. */
static bool route_fsb(struct hpet_slot *s, unsigned n, uint32_t apic_id)
{
    if (intr_route_msi(apic_id, hpet_msi_irq, s, &s->irq.route))
        return false;
    if (hpet_comparator_fsb(clock_facts.hpet_block, n, s->irq.route.msi_addr,
                            s->irq.route.msi_data) == 0)
        return true;
    intr_release(&s->irq.route);
    return false;
}

/* An IOAPIC input from 16 up that the comparator can drive and nobody else uses, delivered
 * to apic_id. Level-triggered, active low: on Intel PCHs these inputs (20..23 for the HPET)
 * are the PCI interrupts PIRQE..H#, level and active low and shared; the datasheets forbid
 * an edge-triggered comparator on a shared input, and Linux's /dev/hpet driver
 * (drivers/char/hpet.c) routes comparators the same way (level, active low, GSI 16 and up
 * in IOAPIC mode) with a status check in its handler, as the channel's interrupt makes
 * (hpet_channel_irq). The ISA inputs 0..15 are left alone, as Linux leaves them: an ISA
 * device may drive one without ticklab knowing. */
static bool route_ioapic(struct hpet_slot *s, unsigned n, uint32_t route_cap, uint32_t apic_id)
{
    struct hpet *h = clock_facts.hpet_block;
    for (unsigned gsi = 16; gsi < 32; gsi++) {
        if (!(route_cap & (1u << gsi)) || (hpet_bad_gsi & (1u << gsi)))
            continue;
        if (intr_route_gsi_to(gsi, TRIGGER_LEVEL, POLARITY_LOW, apic_id, hpet_level_irq, s,
                              &s->irq.route))
            continue;
        if (hpet_comparator_route(h, n, gsi) == 0 && hpet_comparator_level(h, n, true) == 0)
            return true;
        intr_release(&s->irq.route);
    }
    return false;
}

/* The PIT is not there to lose IRQ0: its counter does not count (no PIT, as on
 * hardware-reduced platforms and QEMU's pit=off, or a gated one, as on many boards since
 * Skylake). A PIT that counts keeps IRQ0 even when the HPET has no other way out. */
static bool pit_gone(void)
{
    return !clock_facts.pit || !clock_facts.pit->usable || irq_check_pit_problem();
}

static const char PIT_GAVE_IRQ0[] = "its counter does not count (no PIT, or a gated one): "
                                    "IRQ0 went to HPET comparator 0 (legacy replacement)";

/* Legacy replacement: comparator 0 on IRQ0 (the ISA route, GSI 2 through the usual
 * override). It also hands IRQ8 to comparator 1 and blocks the RTC's own interrupt, so the
 * RTC is given up with it (rtc_init says so). */
static const char *route_legacy(struct hpet_slot *s)
{
    struct hpet *h = clock_facts.hpet_block;
    if (!h->legacy_cap)
        return "no FSB delivery, no free IOAPIC input from 16 it can drive, and no legacy "
               "replacement (LEG_RT_CAP clear)";
    if (!pit_gone())
        return "no FSB delivery and no free IOAPIC input from 16 it can drive (QEMU pc: only "
               "GSI 2); legacy replacement would take IRQ0 from the PIT, whose counter counts";
    if (pit_ok) {
        intr_release(&pit_irq_route.route);
        pit.ce.usable = false;
        pit.ce.unusable_reason = PIT_GAVE_IRQ0;
        pit_ok = false;
        absent("pit", PIT_GAVE_IRQ0);
    }
    if (intr_route_isa(0, VEC_ISA_BASE + 0, hpet_irq, s, &s->irq.route))
        return "legacy replacement: IRQ0 cannot be routed";
    if (hpet_comparator_level(h, 0, false) || hpet_legacy_replacement(h, true)) {
        intr_release(&s->irq.route);
        return "legacy replacement could not be turned on";
    }
    hpet_legacy_on = true;
    return 0;
}

/* Routes comparator n for CPU `cpu` (APIC ID apic_id) the best way it has; 0 or why not. */
static const char *route_comparator(struct hpet_slot *s, unsigned cpu, unsigned n,
                                    const struct hpet_comparator_caps *caps, uint32_t apic_id)
{
    s->how = HPET_ROUTE_NONE;
    if (caps->fsb && route_fsb(s, n, apic_id)) {
        s->how = HPET_ROUTE_FSB;
        return 0;
    }
    if (hpet_legacy_on && n == 1)
        return "legacy replacement gives comparator 1's interrupt to IRQ8 (comparator 0 took "
               "IRQ0), and it has no FSB delivery";
    if (route_ioapic(s, n, caps->route_cap, apic_id)) {
        s->how = HPET_ROUTE_IOAPIC;
        return 0;
    }
    if (cpu != 0 || n != 0)
        return "no FSB delivery and no free IOAPIC input from 16 that this comparator can drive";
    const char *why = route_legacy(s);
    if (!why)
        s->how = HPET_ROUTE_LEGACY;
    return why;
}

/* From the interrupt (hpet_channel_foreign): the line is masked at the IOAPIC at once, so
 * that the EOI after this does not bring the same interrupt straight back; the comparator
 * is moved in thread context (hpet_storm_service). Its own events are lost until then: the
 * waits' backup wake-ups and the rescue of overdue hrtimers carry the run. */
static void hpet_storm(struct hpet_channel *ch)
{
    struct hpet_slot *s = (struct hpet_slot *)(void *)ch;
    if (s < hpet_slots || s >= hpet_slots + CPU_MAX)
        return;
    struct hpet_storm_state *st = &hpet_storm_states[s - hpet_slots];
    if (!hpet_storm_batch(&st->watch))
        return;
    intr_mask(&s->irq.route);
    st->storm_gsi = s->irq.route.gsi;
    st->stormed = true;
    machine_events_note(&machine_events[machine_events_cpu()].storms);
}

static void storm_record(const struct hpet_slot *s, const struct hpet_storm_state *st,
                         const char *action, const char *why)
{
    struct rec r;
    rec_begin(&r, "irq_storm");
    json_str(&r.j, "device", s->ch.name);
    json_u64(&r.j, "cpu", st->cpu);
    json_u64(&r.j, "gsi", st->storm_gsi);
    json_u64(&r.j, "foreign_irqs", hpet_channel_foreign_irqs(&s->ch));
    json_u64(&r.j, "in_a_row", HPET_STORM_IRQS);
    json_u64(&r.j, "batch_ns", HPET_STORM_BATCH_NS);
    json_str(&r.j, "action", action);
    if (s->how == HPET_ROUTE_IOAPIC && !why) {
        json_u64(&r.j, "new_gsi", s->irq.route.gsi);
        json_u64(&r.j, "new_vector", s->irq.route.vector);
    }
    json_str(&r.j, "reason", why);
    rec_emit(&r);
    if (why)
        kprintf("  irq storm   %s: GSI %u kept firing without its status bit: masked; %s\n",
                s->ch.name, st->storm_gsi, why);
    else
        kprintf("  irq storm   %s: GSI %u kept firing without its status bit: masked, moved "
                "to GSI %u\n", s->ch.name, st->storm_gsi, s->irq.route.gsi);
}

static const char STORM_UNUSABLE[] = "its interrupt input kept firing without its status bit "
                                     "(a shared line held asserted, or a polarity not as "
                                     "routed): masked, and no other input it can drive is "
                                     "free";

/* Thread context, interrupts off (a machine-events poll): each comparator whose line stormed
 * goes to another free input it can drive, or is made unusable with the reason. */
static void hpet_storm_service(void)
{
    for (unsigned cpu = 0; cpu < CPU_MAX; cpu++) {
        struct hpet_slot *s = &hpet_slots[cpu];
        struct hpet_storm_state *st = &hpet_storm_states[cpu];
        if (!st->stormed)
            continue;
        st->stormed = false;
        hpet_bad_gsi |= 1u << (st->storm_gsi & 31);
        bool want_unmasked = !s->irq.masked;
        intr_release(&s->irq.route);       /* stays masked; its handler goes */
        struct hpet_comparator_caps caps;
        if (hpet_comparator_caps(clock_facts.hpet_block, s->ch.n, &caps) == 0 &&
            route_ioapic(s, s->ch.n, caps.route_cap, st->apic_id)) {
            if (want_unmasked)
                intr_unmask(&s->irq.route);
            storm_record(s, st, "moved", 0);
            continue;
        }
        s->how = HPET_ROUTE_NONE;
        s->irq.route.path = INTR_NONE;
        hpet_comparator_stop(clock_facts.hpet_block, s->ch.n);
        s->ch.ce.usable = false;
        s->ch.ce.unusable_reason = STORM_UNUSABLE;
        storm_record(s, st, "unusable", STORM_UNUSABLE);
    }
}

static const char *hpet_setup(unsigned cpu, unsigned n, uint32_t apic_id)
{
    struct hpet_comparator_caps caps;
    struct hpet_slot *s = &hpet_slots[cpu];
    if (!clock_facts.hpet || !clock_facts.hpet->usable)
        return clock_facts.hpet ? clock_facts.hpet->unusable_reason : "no HPET";
    if (hpet_comparator_caps(clock_facts.hpet_block, n, &caps))
        return cpu ? "the HPET has no comparator left for this CPU" : "comparator 0 unreadable";
    const char *why = route_comparator(s, cpu, n, &caps, apic_id);
    if (why)
        return why;
    if (hpet_channel_init(&s->ch, clock_facts.hpet_block, n, cpu, line_of(&s->irq)) != 0) {
        intr_release(&s->irq.route);
        return "the comparator's capabilities cannot be read";
    }
    if (!add(&s->ch.ce)) {
        intr_release(&s->irq.route);
        return "the comparator could not be registered";
    }
    struct hpet_storm_state *st = &hpet_storm_states[cpu];
    st->cpu = cpu;
    st->apic_id = apic_id;
    if (s->how == HPET_ROUTE_IOAPIC && clock_facts.tsc_hz) {
        st->watch.batch_cyc = tsc_ns_to_cyc(HPET_STORM_BATCH_NS);
        hpet_set_foreign_batch_hook(hpet_storm);
        machine_events_add_poll(hpet_storm_service);
    }
    s->ready = true;
    return 0;
}

static const struct hpet_slot *hpet_slot_of(const struct clockevent *ce)
{
    for (unsigned cpu = 0; ce && cpu < CPU_MAX; cpu++)
        if (hpet_slots[cpu].ready && &hpet_slots[cpu].ch.ce == ce)
            return &hpet_slots[cpu];
    return 0;
}

void ce_devices_describe(struct json *j, const struct clockevent *ce)
{
    for (unsigned cpu = 0; cpu < CPU_MAX; cpu++)
        if (ce == &lapic_timers[cpu].deadline)
            erratum_members(j, &lapic_timers[cpu]);
    const struct hpet_slot *s = hpet_slot_of(ce);
    if (!s)
        return;
    const struct intr_route *r = &s->irq.route;
    const struct hpet *h = s->ch.hpet;
    json_u64(j, "comparator", s->ch.n);
    json_str(j, "route", hpet_route_name[s->how]);
    struct hpet_comparator_caps caps;
    if (hpet_comparator_caps(h, s->ch.n, &caps) == 0) {
        json_hex(j, "route_cap", caps.route_cap);
        json_bool(j, "fsb_capable", caps.fsb);
    }
    json_u64(j, "vector", r->vector);
    if (s->how == HPET_ROUTE_FSB) {
        json_hex(j, "msi_address", r->msi_addr);
        json_hex(j, "msi_data", r->msi_data);
    } else if (r->path == INTR_IOAPIC) {
        json_u64(j, "gsi", r->gsi);
        json_str(j, "trigger", r->trigger == TRIGGER_LEVEL ? "level" : "edge");
        json_str(j, "polarity", r->polarity == POLARITY_LOW ? "low" : "high");
    }
    if (s->how == HPET_ROUTE_LEGACY)
        json_u64(j, "isa_irq", 0);
    if (s->ch.level) {
        json_u64(j, "foreign_irqs", hpet_channel_foreign_irqs(&s->ch));
        json_u64(j, "stale_cleared", s->ch.stale_cleared);
        if (hpet_storm_states[s - hpet_slots].watch.storms)
            json_u64(j, "storms", hpet_storm_states[s - hpet_slots].watch.storms);
    }
    json_u64(j, "etime_margin_cyc", h->cmp_margin_cyc);
    json_bool(j, "etime_margin_measured", h->margin.measured);
    if (h->margin.measured) {
        json_u64(j, "write_readback_median_cyc", h->margin.median_cyc);
        json_u64(j, "write_readback_worst_cyc", h->margin.worst_cyc);
        json_u64(j, "write_readback_stalls", h->margin.stalls);
    }
}

const char *ce_devices_route_name(const struct clockevent *ce)
{
    const struct hpet_slot *s = hpet_slot_of(ce);
    return s ? hpet_route_name[s->how] : 0;
}

char *ce_devices_route_text(const struct clockevent *ce, char *buf, size_t len)
{
    const struct hpet_slot *s = hpet_slot_of(ce);
    const struct intr_route *r = s ? &s->irq.route : 0;
    if (!len)
        return buf;
    buf[0] = 0;
    if (!s)
        return buf;
    if (s->how == HPET_ROUTE_FSB)
        fmt_snprintf(buf, len, "FSB message, vector %#x", r->vector);
    else if (s->how == HPET_ROUTE_IOAPIC)
        fmt_snprintf(buf, len, "IOAPIC GSI %u, %s", r->gsi,
                     r->trigger == TRIGGER_LEVEL ? "level" : "edge");
    else if (s->how == HPET_ROUTE_LEGACY)
        fmt_snprintf(buf, len, "legacy replacement, IRQ0");
    return buf;
}

struct clockevent *ce_devices_hpet_of(unsigned cpu, const char **why)
{
    if (why)
        *why = 0;
    if (cpu < CPU_MAX && hpet_slots[cpu].ready)
        return &hpet_slots[cpu].ch.ce;
    if (why)
        *why = cpu < CPU_MAX && hpet_slots[cpu].reason ? hpet_slots[cpu].reason
                                                       : "no HPET comparator of its own";
    return 0;
}

/* ---- CMOS RTC -------------------------------------------------------------------------------- */

static struct rtc_clockevent rtc;
static struct device_irq rtc_irq_route;

static void rtc_irq(unsigned vector, void *ctx)
{
    (void)vector, (void)ctx;
    rtc_clockevent_irq(&rtc);         /* reads C: no further IRQ8 until it is read */
    intr_eoi(&rtc_irq_route.route);
}

static void rtc_init(void)
{
    if (acpi_facts.fadt.present && acpi_facts.fadt.iapc_valid &&
        (acpi_facts.fadt.iapc_boot_arch & ACPI_IAPC_CMOS_RTC_ABSENT)) {
        absent("rtc", "the FADT says there is no CMOS RTC");
        return;
    }
    if (hpet_legacy_on) {
        absent("rtc", "IRQ8 is HPET comparator 1's under legacy replacement (taken for "
                      "comparator 0), which blocks the RTC's own interrupt");
        return;
    }
    if (!rtc_probe()) {
        absent("rtc", rtc_probe_reason());
        return;
    }
    if (intr_route_isa(8, VEC_ISA_BASE + 8, rtc_irq, 0, &rtc_irq_route.route)) {
        absent("rtc", "IRQ8 cannot be routed");
        return;
    }
    rtc_clockevent_init(&rtc, line_of(&rtc_irq_route));
    add(&rtc.ce);
}

void ce_devices_init(void)
{
    kprintf("\nClock event devices\n");
    irq_set_handler(VEC_LAPIC_TIMER, lapic_irq, 0);
    pit_init();
    lapic_init_cpu(0);
    const char *why = hpet_setup(0, 0, lapic_id(intr_apic()));
    if (why) {
        hpet_slots[0].reason = why;
        absent("hpet", why);
    }
    rtc_init();
}

void ce_devices_cpu_init(unsigned cpu)
{
    if (cpu == 0 || cpu >= CPU_MAX)
        return;
    lapic_init_cpu(cpu);
    hpet_slots[cpu].reason = hpet_slots[0].ready ? hpet_setup(cpu, cpu, lapic_id(intr_apic()))
                                                 : "no usable HPET comparator 0 (its "
                                                   "clockevent record says why)";
}

int ce_devices_mask_irq(struct clockevent *ce)
{
    if (!ce || !ce->line)
        return -ENODEV;       /* a LAPIC's: no line of its own to mask */
    struct device_irq *r = (struct device_irq *)(void *)((char *)ce->line -
                                                 __builtin_offsetof(struct device_irq, line));
    if (r->route.path == INTR_NONE)
        return -ENODEV;
    route_mask(r);
    r->line.unmask = 0;     /* and the driver's next state change cannot undo it */
    return 0;
}
