/* tests/host/tsc_machine.c - the fake PC the tick's and idle's host tests start from. */
#include "tsc_machine.h"
#include "ticklab/clockevent.h"
#include "ticklab/timekeeping.h"
#include "fake/fake.h"
#include "test.h"

bool tsc_machine_start(struct tsc *tsc_dev, struct clocksource *tsc, struct lapic *apic,
                       struct cpu_info *ci, struct lapic_info *li,
                       void (*entry)(int line, void *ctx))
{
    fake_reset();
    timekeeping_test_reset();
    clockevent_test_reset();
    fake_set_irq_handler(entry, NULL);
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_TSC_DEADLINE, true);
    cpu_probe(ci);
    *tsc = *tsc_clocksource_init(tsc_dev, ci);
    tsc->next = NULL;
    return CHECK_EQ_I64(clocksource_register(tsc), 0) &&
           CHECK_EQ_I64(clocksource_set_freq(tsc, FAKE_TSC_DEFAULT_HZ), 0) &&
           CHECK(clocksource_select("tsc", NULL, 0) == tsc) &&
           CHECK_EQ_I64(lapic_init(apic, FAKE_LAPIC_BASE, false, 0xFF, 0xFE, li), 0);
}
