/* drivers/lapic_timer.c - see lapic_timer.h. */
#include "ticklab/lapic_timer.h"

#include "ticklab/cpuid.h"
#include "ticklab/io.h"
#include "ticklab/lapic.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"

#define FIRST_USABLE_VECTOR 32   /* 0-31 are exceptions; below 16 the APIC flags an error */
#define FREERUN_COUNT    0xFFFFFFFFu
#define TDCR_DIVIDE_1    0xBu     /* what lapic_timer_divide_code(1) gives */

static uint64_t freerun_read(const struct clocksource *cs)
{
    const struct lapic_timer_cs *t = clocksource_container(cs, struct lapic_timer_cs, cs);
    return FREERUN_COUNT - lapic_read(t->apic, LAPIC_TIMER_CUR);
}

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

static int start_count(const struct lapic *l, uint8_t vector, uint32_t mode, uint32_t count,
                       unsigned divide)
{
    uint32_t code;

    if (vector < FIRST_USABLE_VECTOR || count == 0 || lapic_timer_divide_code(divide, &code))
        return -EINVAL;
    lapic_write(l, LAPIC_TIMER_DIV, code);        /* before the count: see the errata list */
    lapic_write(l, LAPIC_LVT_TIMER, mode | vector);
    lapic_write(l, LAPIC_TIMER_INIT, count);      /* the write that starts it */
    return 0;
}

int lapic_timer_periodic(const struct lapic *l, uint8_t vector, uint32_t initial_count,
                         unsigned divide)
{
    return start_count(l, vector, LAPIC_TIMER_MODE_PERIODIC, initial_count, divide);
}

int lapic_timer_oneshot(const struct lapic *l, uint8_t vector, uint32_t count, unsigned divide)
{
    return start_count(l, vector, LAPIC_TIMER_MODE_ONESHOT, count, divide);
}

void lapic_timer_stop(const struct lapic *l)
{
    /* Leaving TSC-deadline mode disarms the deadline; a zero count stops the others. */
    lapic_write(l, LAPIC_LVT_TIMER, LVT_MASKED | LAPIC_TIMER_MODE_ONESHOT);
    lapic_write(l, LAPIC_TIMER_INIT, 0);
}

uint32_t lapic_timer_current(const struct lapic *l)
{
    return lapic_read(l, LAPIC_TIMER_CUR);
}

int lapic_timer_deadline_mode(const struct lapic *l, uint8_t vector)
{
    if (vector < FIRST_USABLE_VECTOR)
        return -EINVAL;
    lapic_write(l, LAPIC_LVT_TIMER, LAPIC_TIMER_MODE_DEADLINE | vector);
    wrmsr_fence();   /* SDM 11.5.4.1: order the LVT write before any deadline WRMSR */
    return 0;
}

void lapic_timer_set_deadline(uint64_t tsc_deadline)
{
    wrmsr_fence();   /* the WRMSR is not serialising: let earlier stores land first */
    wrmsr(MSR_TSC_DEADLINE, tsc_deadline);
}

void lapic_timer_freerun(const struct lapic *l)
{
    lapic_write(l, LAPIC_TIMER_DIV, TDCR_DIVIDE_1);
    lapic_write(l, LAPIC_LVT_TIMER, LVT_MASKED | LAPIC_TIMER_MODE_PERIODIC);
    lapic_write(l, LAPIC_TIMER_INIT, FREERUN_COUNT);
}

struct clocksource *lapic_timer_clocksource_start(struct lapic_timer_cs *t,
                                                  const struct lapic *l)
{
    lapic_timer_freerun(l);
    /* freq_hz 0: the core keeps it unusable until calibrated */
    *t = (struct lapic_timer_cs){
        .cs = { .name = "lapic", .read = freerun_read, .mask = CLOCKSOURCE_MASK(32),
                .rating = LAPIC_TIMER_RATING, .usable = true },
        .apic = l,
    };
    return &t->cs;
}

/* ---- the timer as two clock event devices -------------------------------------------------- */

static struct lapic_timer_ce *of_lapic(struct clockevent *ce)
{
    return clockevent_container(ce, struct lapic_timer_ce, lapic);
}

static struct lapic_timer_ce *of_deadline(struct clockevent *ce)
{
    return clockevent_container(ce, struct lapic_timer_ce, deadline);
}

/* The LVT is one register: stopping either mode stops the timer. */
static int timer_shutdown(struct clockevent *ce)
{
    lapic_timer_stop(of_lapic(ce)->apic);
    return 0;
}

static int lapic_oneshot(struct clockevent *ce)
{
    struct lapic_timer_ce *t = of_lapic(ce);
    lapic_write(t->apic, LAPIC_TIMER_DIV, TDCR_DIVIDE_1);
    lapic_write(t->apic, LAPIC_LVT_TIMER, LAPIC_TIMER_MODE_ONESHOT | t->vector);
    t->active = ce;
    return 0;
}

static int lapic_periodic(struct clockevent *ce, uint64_t period_cyc)
{
    struct lapic_timer_ce *t = of_lapic(ce);
    t->active = ce;
    return lapic_timer_periodic(t->apic, t->vector, (uint32_t)period_cyc, 1);
}

/* A count register cannot be in the past: it starts counting at the write. */
static int lapic_next(struct clockevent *ce, uint64_t delta_cyc)
{
    lapic_write(of_lapic(ce)->apic, LAPIC_TIMER_INIT, (uint32_t)delta_cyc);
    return 0;
}

/* The one-shot count runs down to 0 and stays there. */
static int lapic_pending(struct clockevent *ce)
{
    return lapic_read(of_lapic(ce)->apic, LAPIC_TIMER_CUR) != 0;
}

/* The deadline MSR reads 0 once its interrupt has been raised (SDM 11.5.4.1). */
static int deadline_pending(struct clockevent *ce)
{
    (void)ce;
    return rdmsr(MSR_TSC_DEADLINE) != 0;
}

static int deadline_oneshot(struct clockevent *ce)
{
    struct lapic_timer_ce *t = of_deadline(ce);
    t->active = ce;
    return lapic_timer_deadline_mode(t->apic, t->vector);
}

static int deadline_shutdown(struct clockevent *ce)
{
    wrmsr(MSR_TSC_DEADLINE, 0);
    lapic_timer_stop(of_deadline(ce)->apic);
    return 0;
}

/* An absolute deadline: one already passed fires at once (SDM 11.5.4.1), so -ETIME is
 * never needed. The fence is the CPU's: Intel needs MFENCE;LFENCE before this WRMSR, AMD's
 * is ordered by itself (decided once, at init). */
static int deadline_abs(struct clockevent *ce, uint64_t tsc_cyc)
{
    if (of_deadline(ce)->fence)
        wrmsr_fence();
    wrmsr(MSR_TSC_DEADLINE, tsc_cyc ? tsc_cyc : 1);      /* 0 would disarm it */
    return 0;
}

static int deadline_next(struct clockevent *ce, uint64_t delta_cyc)
{
    return deadline_abs(ce, rdtsc() + delta_cyc);
}

/* Linux's deadline_match[] (arch/x86/kernel/apic/apic.c, as of 2024; the same models since
 * 2017, when it was added with the Haswell..Kaby Lake errata): Intel family 6, a model, a
 * stepping range, and the first microcode revision that fixes the TSC-deadline erratum. A
 * model not listed (every other Intel part, every AMD part) has no known erratum. The
 * server parts differ per stepping; Skylake-X from stepping 5 on never had it (minimum 0). */
static const struct {
    uint8_t model, stepping_lo, stepping_hi;
    uint32_t min_microcode;
} deadline_errata[] = {
    { 0x3F, 0x2, 0x2, 0x0000003a },   /* Haswell-X (EP) */
    { 0x3F, 0x4, 0x4, 0x0000000f },   /* Haswell-X (EX) */
    { 0x4F, 0x0, 0xF, 0x0b000020 },   /* Broadwell-X */
    { 0x56, 0x2, 0x2, 0x00000011 },   /* Broadwell-D */
    { 0x56, 0x3, 0x3, 0x0700000e },
    { 0x56, 0x4, 0x4, 0x0f00000c },
    { 0x56, 0x5, 0x5, 0x0e000003 },
    { 0x55, 0x3, 0x3, 0x01000136 },   /* Skylake-X */
    { 0x55, 0x4, 0x4, 0x02000014 },
    { 0x55, 0x5, 0xF, 0x00000000 },
    { 0x3C, 0x0, 0xF, 0x00000022 },   /* Haswell */
    { 0x45, 0x0, 0xF, 0x00000020 },   /* Haswell-L */
    { 0x46, 0x0, 0xF, 0x00000017 },   /* Haswell-G */
    { 0x3D, 0x0, 0xF, 0x00000025 },   /* Broadwell */
    { 0x47, 0x0, 0xF, 0x00000017 },   /* Broadwell-G */
    { 0x4E, 0x0, 0xF, 0x000000b2 },   /* Skylake-L */
    { 0x5E, 0x0, 0xF, 0x000000b2 },   /* Skylake */
    { 0x8E, 0x0, 0xF, 0x00000052 },   /* Kaby Lake-L */
    { 0x9E, 0x0, 0xF, 0x00000052 },   /* Kaby Lake */
};

void lapic_timer_deadline_erratum(const struct cpu_info *ci, struct lapic_deadline_erratum *out)
{
    *out = (struct lapic_deadline_erratum){ 0 };
    if (k_strcmp(ci->vendor, "GenuineIntel") != 0 || ci->family != 6)
        return;
    for (unsigned i = 0; i < sizeof(deadline_errata) / sizeof(deadline_errata[0]); i++) {
        if (deadline_errata[i].model != ci->model || ci->stepping < deadline_errata[i].stepping_lo ||
            ci->stepping > deadline_errata[i].stepping_hi)
            continue;
        out->listed = true;
        out->min_microcode = deadline_errata[i].min_microcode;
        if (ci->hypervisor || !ci->microcode_valid)
            out->unknown = out->min_microcode != 0;
        else
            out->affected = ci->microcode < out->min_microcode;
        return;
    }
}

/* Why "tsc_deadline" cannot be used, or NULL. */
static const char *deadline_problem(struct lapic_timer_ce *t, const struct clocksource *tsc,
                                    const struct cpu_info *ci)
{
    if (!ci->tsc_deadline)
        return "CPUID.1:ECX[24] is clear (QEMU TCG never offers it)";
    if (!tsc || !tsc->freq_hz)
        return "no calibrated TSC";
    if (t->erratum.affected) {
        fmt_snprintf(t->erratum_reason, sizeof(t->erratum_reason),
                     "known erratum on this microcode (0x%x; minimum 0x%x; Linux's table)",
                     ci->microcode, t->erratum.min_microcode);
        return t->erratum_reason;
    }
    return 0;
}

void lapic_timer_ce_init(struct lapic_timer_ce *t, const struct lapic *l, unsigned cpu,
                         uint8_t vector, uint64_t timer_hz, const struct clocksource *tsc,
                         const struct cpu_info *ci)
{
    unsigned idle = ci->arat ? 0 : CE_STOPS_IN_IDLE;
    *t = (struct lapic_timer_ce){ .apic = l, .vector = vector,
                                  .fence = !ci->amd_wrmsr_ordered };
    t->lapic = (struct clockevent){
        .name = "lapic", .cpu = cpu, .hw = t,
        .features = CE_PERIODIC | CE_ONESHOT | CE_PERCPU | idle,
        .freq_hz = timer_hz, .min_delta_cyc = 1, .max_delta_cyc = UINT32_MAX,
        .rating = LAPIC_TIMER_CE_RATING, .usable = timer_hz != 0 && vector >= 32,
        .unusable_reason = !timer_hz ? "LAPIC timer frequency not calibrated"
                           : vector < 32 ? "vector below 32 (the exceptions' range)" : 0,
        .set_state_periodic = lapic_periodic, .set_state_oneshot = lapic_oneshot,
        .set_state_shutdown = timer_shutdown, .set_next_event = lapic_next,
        .pending = lapic_pending,
        /* lapic_next() is this one write, and a count register cannot be in the past */
        .count_reg = l->x2apic ? (struct io_reg32){ IO_REG_MSR, MSR_X2APIC_BASE +
                                                                (LAPIC_TIMER_INIT >> 4), 0 }
                               : (struct io_reg32){ IO_REG_MMIO32, 0,
                                                    l->mmio + LAPIC_TIMER_INIT },
    };
    lapic_timer_deadline_erratum(ci, &t->erratum);
    const char *no_deadline = deadline_problem(t, tsc, ci);
    t->deadline = (struct clockevent){
        .name = "tsc_deadline", .cpu = cpu, .hw = t,
        /* No TSC to compare against: no ABS (register refuses ABS without abs_cs), so the
         * unusable device is still listed with its reason. */
        .features = CE_ONESHOT | (tsc ? CE_ABS : 0) | CE_PERCPU | idle,
        .freq_hz = tsc ? tsc->freq_hz : 0, .min_delta_cyc = 1,
        .max_delta_cyc = UINT64_MAX >> 1, .rating = LAPIC_DEADLINE_CE_RATING,
        .usable = !no_deadline, .unusable_reason = no_deadline,
        .set_state_oneshot = deadline_oneshot, .set_state_shutdown = deadline_shutdown,
        .set_next_event = deadline_next, .set_next_abs = deadline_abs, .abs_cs = tsc,
        .pending = deadline_pending,
    };
    t->active = &t->lapic;
}

