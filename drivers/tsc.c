/* drivers/tsc.c - see tsc.h. */
#include "ticklab/tsc.h"

#include "ticklab/cpuid.h"
#include "ticklab/io.h"

/* The clocksource's read is ordered (LFENCE; RDTSC): time_ns() must not be read before the
 * instructions it is meant to follow, and on another CPU a read taken early could sit
 * behind the boot CPU's last fold. */
static uint64_t tsc_cs_read(const struct clocksource *cs)
{
    (void)cs;
    return rdtsc_ordered();
}

uint64_t tsc_read(void)
{
    return rdtsc();
}

uint64_t tsc_read_ordered(void)
{
    return rdtsc_ordered();
}

struct clocksource *tsc_clocksource_init(struct tsc *t, const struct cpu_info *ci)
{
    t->invariant = ci->tsc && ci->invariant_tsc;
    t->cs = (struct clocksource){
        .name = "tsc", .read = tsc_cs_read, .direct = { .kind = IO_COUNTER_TSC },
        .mask = CLOCKSOURCE_MASK(64),
        .rating = t->invariant ? TSC_RATING_INVARIANT : TSC_RATING_NOT_INVARIANT,
        .usable = ci->tsc, .unusable_reason = ci->tsc ? NULL : "CPUID: no TSC",
    };
    return &t->cs;
}
