/* libticklab/drivers/tsc.c - see tsc.h. */
#include "ticklab/tsc.h"

#include "ticklab/io.h"

#define LEAF_FEATURES   0x01
#define   EDX_TSC         (1u << 4)
#define LEAF_EXT_MAX    0x80000000u
#define LEAF_POWER      0x80000007u
#define   EDX_INVARIANT   (1u << 8)

static uint64_t tsc_cs_read(void)
{
    return rdtsc();
}

static struct clocksource tsc_cs = {
    .name = "tsc",
    .read = tsc_cs_read,
    .mask = CLOCKSOURCE_MASK(64),
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

static bool cpuid_invariant(void)
{
    /* Leaf 0x80000007 is only meaningful when the extended maximum reaches it; beyond the
     * maximum Intel CPUs return the highest basic leaf's data, not zeros. */
    if (cpuid(LEAF_EXT_MAX, 0).eax < LEAF_POWER)
        return false;
    return (cpuid(LEAF_POWER, 0).edx & EDX_INVARIANT) != 0;
}

struct clocksource *tsc_clocksource_init(void)
{
    bool present = (cpuid(LEAF_FEATURES, 0).edx & EDX_TSC) != 0;

    invariant = present && cpuid_invariant();
    tsc_cs.rating = invariant ? TSC_RATING_INVARIANT : TSC_RATING_NOT_INVARIANT;
    tsc_cs.usable = present;
    tsc_cs.unusable_reason = present ? NULL : "CPUID: no TSC";
    return &tsc_cs;
}
