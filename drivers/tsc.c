/* drivers/tsc.c - see tsc.h. */
#include "ticklab/tsc.h"

#include "ticklab/cpuid.h"
#include "ticklab/io.h"

/* The clocksource's read is ordered (LFENCE; RDTSC): time_ns() must not be read before the
 * instructions it is meant to follow, and on another CPU a read taken early could sit
 * behind the boot CPU's last fold. */
static uint64_t tsc_cs_read(void)
{
    return rdtsc_ordered();
}

static struct clocksource tsc_cs = {
    .name = "tsc",
    .read = tsc_cs_read,
    .mask = CLOCKSOURCE_MASK(64),
    .read_is_tsc = true,
};

static bool invariant;

uint64_t tsc_read(void)
{
    return rdtsc();
}

uint64_t tsc_read_ordered(void)
{
    return rdtsc_ordered();
}

bool tsc_invariant(void)
{
    return invariant;
}

struct clocksource *tsc_clocksource_init(const struct cpu_info *ci)
{
    invariant = ci->tsc && ci->invariant_tsc;
    tsc_cs.rating = invariant ? TSC_RATING_INVARIANT : TSC_RATING_NOT_INVARIANT;
    tsc_cs.usable = ci->tsc;
    tsc_cs.unusable_reason = ci->tsc ? NULL : "CPUID: no TSC";
    return &tsc_cs;
}
