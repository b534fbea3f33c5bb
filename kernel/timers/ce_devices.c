/* kernel/timers/ce_devices.c - see ce_devices.h. */
#include "kernel/timers/ce_devices.h"

#include "kernel/smp/smp.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/discover/irq_check.h"
#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/timers/clock_report.h"
#include "kernel/timers/clocks.h"
#include "ticklab/errno.h"
#include "ticklab/hpet.h"
#include "ticklab/io.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/pit8254.h"
#include "ticklab/rtc_cmos.h"

/* A device's interrupt as the kernel routed it: the route, and the line ops the driver
 * masks and unmasks it through. */
struct routed {
    struct intr_route route;
    struct clockevent_line line;
};

static void route_mask(void *ctx)
{
    intr_mask(ctx);
}

static void route_unmask(void *ctx)
{
    intr_unmask(ctx);
}

static const struct clockevent_line *line_of(struct routed *r)
{
    r->line = (struct clockevent_line){ route_mask, route_unmask, &r->route };
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
static struct routed pit_irq_route;

/* Each handler passes the event on first and acknowledges the interrupt controller after:
 * the controller holds a new edge of this line meanwhile in its request register, and
 * handlers run with interrupts off, so nothing is lost, and the EOI's two accesses are not
 * between the interrupt and its timer's callback. */
static void pit_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
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
static void lapic_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
    lapic_timer_ce_irq(&lapic_timers[cpu_index()]);
    intr_eoi_local();
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
    if (!t->deadline.usable && cpu == 0)
        absent("tsc_deadline", t->deadline.unusable_reason);
    else if (t->deadline.usable)
        add(&t->deadline);
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

static struct hpet_slot {
    struct hpet_channel ch;
    struct routed irq;
    bool ready;
    const char *reason;
} hpet_slots[CPU_MAX];

static void hpet_irq(struct trap_frame *tf, void *ctx)
{
    struct hpet_slot *s = ctx;
    (void)tf;
    hpet_channel_irq(&s->ch);
    intr_eoi(&s->irq.route);
}

/* Routes comparator n to a GSI its capabilities allow and nobody else uses, delivered to
 * apic_id: 16..23 first (PCI range, no ISA device there), then (boot CPU only) the legacy
 * 0..15. On QEMU's pc the only choice is GSI 2, the PIT's, and the interrupt layer refuses
 * a second owner: the comparator is then reported absent rather than silencing the PIT. */
static int route_comparator(struct hpet_slot *s, unsigned n, uint32_t route_cap,
                            uint32_t apic_id, bool legacy_too)
{
    for (unsigned g = 16; g < 48; g++) {
        unsigned gsi = g < 32 ? g : g - 32;
        if ((g >= 32 && !legacy_too) || !(route_cap & (1u << gsi)))
            continue;
        if (intr_route_gsi_to(gsi, TRIGGER_EDGE, POLARITY_HIGH, apic_id, hpet_irq, s,
                              &s->irq.route))
            continue;
        if (hpet_comparator_route(clock_facts.hpet_block, n, gsi) == 0)
            return (int)gsi;
        intr_release(&s->irq.route);
    }
    return -ENODEV;
}

static const char *hpet_setup(unsigned cpu, unsigned n, uint32_t apic_id)
{
    struct hpet_comparator_caps caps;
    struct hpet_slot *s = &hpet_slots[cpu];
    if (!clock_facts.hpet || !clock_facts.hpet->usable)
        return clock_facts.hpet ? clock_facts.hpet->unusable_reason : "no HPET";
    if (hpet_comparator_caps(clock_facts.hpet_block, n, &caps))
        return cpu ? "the HPET has no comparator left for this CPU" : "comparator 0 unreadable";
    if (route_comparator(s, n, caps.route_cap, apic_id, cpu == 0) < 0)
        return cpu ? "no free IOAPIC input (16..23) that this comparator can drive"
                   : "every IOAPIC input comparator 0 can drive is taken (QEMU pc: only "
                     "GSI 2, the PIT's)";
    if (hpet_channel_init(&s->ch, clock_facts.hpet_block, n, cpu, line_of(&s->irq)) != 0) {
        intr_release(&s->irq.route);
        return "the comparator's capabilities cannot be read";
    }
    if (!add(&s->ch.ce)) {
        intr_release(&s->irq.route);
        return "the comparator could not be registered";
    }
    s->ready = true;
    return 0;
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
static struct routed rtc_irq_route;

static void rtc_irq(struct trap_frame *tf, void *ctx)
{
    (void)tf, (void)ctx;
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
    struct routed *r = (struct routed *)(void *)((char *)ce->line -
                                                 __builtin_offsetof(struct routed, line));
    if (r->route.path == INTR_NONE)
        return -ENODEV;
    intr_mask(&r->route);
    r->line.unmask = 0;     /* and the driver's next state change cannot undo it */
    return 0;
}
