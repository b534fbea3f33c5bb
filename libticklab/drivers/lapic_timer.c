/* libticklab/drivers/lapic_timer.c - see lapic_timer.h. */
#include "ticklab/lapic_timer.h"

#include "ticklab/io.h"
#include "ticklab/lapic.h"
#include "ticklab/errno.h"

#define LEAF_FEATURES    0x01
#define   ECX_TSC_DEADLINE (1u << 24)
#define LEAF_THERMAL     0x06
#define   EAX_ARAT         (1u << 2)
#define FIRST_USABLE_VECTOR 32   /* 0-31 are exceptions; below 16 the APIC flags an error */
#define FREERUN_COUNT    0xFFFFFFFFu
#define TDCR_DIVIDE_1    0xBu     /* what lapic_timer_divide_code(1) gives */

static uint64_t freerun_read(void)
{
    return FREERUN_COUNT - lapic_read(LAPIC_TIMER_CUR);
}

static struct clocksource lapic_cs = {
    .name = "lapic",
    .read = freerun_read,
    .mask = CLOCKSOURCE_MASK(32),
    .rating = LAPIC_TIMER_RATING,
};

int lapic_timer_divide_code(unsigned divide, uint32_t *code)
{
    if (divide == 0 || divide > LAPIC_TIMER_MAX_DIVIDE || (divide & (divide - 1)))
        return -EINVAL;
    /* log2: 0 (divide 1) .. 7. The register numbers divide 2..128 as 0..6 and divide 1 as 7,
     * with the 3-bit number's top bit moved up to bit 3 (bit 2 is reserved). */
    unsigned n = ((unsigned)__builtin_ctz(divide) + 7) & 7;
    *code = (n & 3) | (n & 4) << 1;
    return 0;
}

static int start_count(uint8_t vector, uint32_t mode, uint32_t count, unsigned divide)
{
    uint32_t code;

    if (vector < FIRST_USABLE_VECTOR || count == 0 || lapic_timer_divide_code(divide, &code))
        return -EINVAL;
    lapic_write(LAPIC_TIMER_DIV, code);        /* before the count: see the errata list */
    lapic_write(LAPIC_LVT_TIMER, mode | vector);
    lapic_write(LAPIC_TIMER_INIT, count);      /* the write that starts it */
    return 0;
}

int lapic_timer_periodic(uint8_t vector, uint32_t initial_count, unsigned divide)
{
    return start_count(vector, LAPIC_TIMER_MODE_PERIODIC, initial_count, divide);
}

int lapic_timer_oneshot(uint8_t vector, uint32_t count, unsigned divide)
{
    return start_count(vector, LAPIC_TIMER_MODE_ONESHOT, count, divide);
}

void lapic_timer_stop(void)
{
    /* Leaving TSC-deadline mode disarms the deadline; a zero count stops the others. */
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED | LAPIC_TIMER_MODE_ONESHOT);
    lapic_write(LAPIC_TIMER_INIT, 0);
}

uint32_t lapic_timer_current(void)
{
    return lapic_read(LAPIC_TIMER_CUR);
}

bool lapic_timer_has_deadline(void)
{
    return (cpuid(LEAF_FEATURES, 0).ecx & ECX_TSC_DEADLINE) != 0;
}

bool lapic_timer_arat(void)
{
    if (cpuid(0, 0).eax < LEAF_THERMAL)
        return false;
    return (cpuid(LEAF_THERMAL, 0).eax & EAX_ARAT) != 0;
}

int lapic_timer_deadline_mode(uint8_t vector)
{
    if (vector < FIRST_USABLE_VECTOR)
        return -EINVAL;
    if (!lapic_timer_has_deadline())
        return -ENOTSUP;
    lapic_write(LAPIC_LVT_TIMER, LAPIC_TIMER_MODE_DEADLINE | vector);
    serialize();   /* SDM 11.5.4.1: order the LVT write before any deadline WRMSR */
    return 0;
}

void lapic_timer_set_deadline(uint64_t tsc_deadline)
{
    serialize();   /* the WRMSR is not serialising: let earlier stores land first */
    wrmsr(MSR_TSC_DEADLINE, tsc_deadline);
}

struct clocksource *lapic_timer_clocksource_start(void)
{
    lapic_write(LAPIC_TIMER_DIV, TDCR_DIVIDE_1);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED | LAPIC_TIMER_MODE_PERIODIC);
    lapic_write(LAPIC_TIMER_INIT, FREERUN_COUNT);
    lapic_cs.usable = true;   /* freq_hz 0: the core keeps it unusable until calibrated */
    lapic_cs.unusable_reason = NULL;
    return &lapic_cs;
}
