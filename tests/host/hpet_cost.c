/* tests/host/hpet_cost.c - see hpet_cost.h. */
#include "hpet_cost.h"

#include "fake/fake.h"
#include "ticklab/clockevent.h"
#include "ticklab/hpet.h"
#include "ticklab/timekeeping.h"

#define GSI            20
#define MSI_VEC        0x41
#define LAPIC_EOI_REG  0xB0
#define TSC_HZ_OF_FAKE 2100000000ull

static struct hpet hpet;
static struct hpet_channel ch;
static uint64_t events;
static int owner;

static void on_event(struct clockevent *ce)
{
    (void)ce;
    events++;
}

static void entry(int line, void *ctx)
{
    (void)ctx;
    if (line == FAKE_IRQ_HPET(0)) {
        hpet_channel_irq(&ch);
    } else if (line == FAKE_IRQ_LAPIC) {
        hpet_channel_irq(&ch);
        mmio_write32(FAKE_LAPIC_BASE + LAPIC_EOI_REG, 0);
    }
}

static uint64_t accesses(void)
{
    const struct fake_hpet_stats *s = fake_hpet_stats();
    return s->reads + s->writes;
}

static uint64_t status_accesses(void)
{
    const struct fake_hpet_stats *s = fake_hpet_stats();
    return s->status_reads + s->status_writes;
}

static bool route(enum hpet_cost_route r)
{
    if (r == HPET_COST_FSB)
        return hpet_comparator_fsb(&hpet, 0, 0xFEE00000u, MSI_VEC) == 0;
    if (hpet_comparator_route(&hpet, 0, GSI) != 0)
        return false;
    return r != HPET_COST_LEVEL || hpet_comparator_level(&hpet, 0, true) == 0;
}

static bool machine(bool access32, enum hpet_cost_route r, bool tsc_known)
{
    struct hpet_info info;
    fake_reset();
    timekeeping_test_reset();
    clockevent_test_reset();
    fake_set_irq_handler(entry, 0);
    events = 0;
    if (r == HPET_COST_FSB) {
        fake_hpet_set_fsb_cap(0, true);
        mmio_write32(FAKE_LAPIC_BASE + 0x0F0, 0x1FF);       /* software-enabled */
    }
    if (hpet_init(&hpet, FAKE_HPET_BASE, access32, &info) != 0)
        return false;
    hpet_enable(&hpet);
    struct clocksource *cs = hpet_clocksource(&hpet);
    if (clocksource_register(cs) != 0 || clocksource_select("hpet", 0, 0) != cs || !route(r) ||
        hpet_channel_init(&ch, &hpet, 0, 0, 0) != 0)
        return false;
    if (tsc_known)
        hpet_channel_set_tsc_hz(&ch, TSC_HZ_OF_FAKE);
    if (clockevent_register(&ch.ce) != 0 || clockevent_claim(&ch.ce, on_event, &owner) != 0)
        return false;
    fake_run_for_ns(1000000);
    irq_enable();
    /* into ONESHOT, and one event: the measured armings are each re-armings after one */
    if (clockevent_program_ns(&ch.ce, 10000) != 0)
        return false;
    fake_run_for_ns(20000);
    return events == 1;
}

bool hpet_cost_measure(bool access32, enum hpet_cost_route r, bool tsc_known, unsigned rounds,
                       struct hpet_cost *out)
{
    *out = (struct hpet_cost){ 0 };
    if (!rounds || !machine(access32, r, tsc_known))
        return false;
    struct clocksource *cs = hpet_clocksource(&hpet);
    uint64_t cmp_reads0 = fake_hpet_stats()->cmp_reads, reads = 0, abs = 0, rel = 0, irq = 0;
    uint64_t events0 = events;
    for (unsigned i = 0; i < rounds; i++) {
        uint64_t a = accesses();
        (void)cs_read(cs);
        reads += accesses() - a;

        uint64_t now = time_ns();
        a = accesses();
        if (clockevent_program_abs_ns(&ch.ce, now + 5000 + 10 * (uint64_t)i, now) != 0)
            return false;
        abs += accesses() - a;
        a = status_accesses();
        fake_run_for_ns(20000);
        irq += status_accesses() - a;

        a = accesses();
        if (clockevent_program_ns(&ch.ce, 5000 + 10 * (uint64_t)i) != 0)
            return false;
        rel += accesses() - a;
        a = status_accesses();
        fake_run_for_ns(20000);
        irq += status_accesses() - a;
    }
    out->counter_read = (double)reads / rounds;
    out->arm_abs = (double)abs / rounds;
    out->arm_rel = (double)rel / rounds;
    out->irq = (double)irq / (2.0 * rounds);
    out->cmp_reads = fake_hpet_stats()->cmp_reads - cmp_reads0;
    out->events = events - events0;
    out->armings = 2ull * rounds;
    clockevent_shutdown(&ch.ce);
    timekeeping_test_reset();
    return true;
}

const char *hpet_cost_route_name(enum hpet_cost_route r)
{
    return r == HPET_COST_EDGE ? "edge" : r == HPET_COST_LEVEL ? "level" : "fsb";
}
