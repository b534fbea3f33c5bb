/* tests/host/test_calibrate.c - lib/time/calibrate.c on the fake PC: the TSC (running
 * +50 ppm fast) measured against the PM timer, the HPET (64- and 32-bit) and the PIT's
 * channel 2, each read through its real driver's clocksource (acpi_pm.c, hpet.c,
 * pit8254.c: the PIT's latched read is pit_ch2_read_up, not a copy of it here); stalls
 * injected into single reads; dead counters; the LAPIC timer against the calibrated TSC (its
 * free-running count at divide 16, set up by hand: the driver's clocksource runs at divide
 * 1); the CPUID methods; the choosing rule and its arithmetic.
 *
 * Every measured result must contain the true frequency within its stated uncertainty.
 * TICKLAB_CAL_VERBOSE=1 in the environment prints each measured result (the figures quoted
 * in docs/calibration.md). */
#include <stdlib.h>

#include "fake/fake.h"
#include "ticklab/acpi_pm.h"
#include "ticklab/calibrate.h"
#include "ticklab/errno.h"
#include "ticklab/hpet.h"
#include "ticklab/pit8254.h"
#include "test.h"

/* The drivers' state, as the kernel keeps it. */
static struct hpet the_hpet;
static struct clocksource the_pit_cs;
static struct acpi_pm the_pm;

typedef unsigned __int128 u128;

#define MS 1000000ull
#define TSC_ERR_PPM 50
/* 2.1 GHz nominal, +50 ppm: 2,100,105,000 Hz */
#define TSC_TRUE_HZ (FAKE_TSC_DEFAULT_HZ + FAKE_TSC_DEFAULT_HZ / 1000000 * TSC_ERR_PPM)
#define PIT_PROBE_CYC 2100000ull   /* pit_clocksource_init's check that channel 2 counts: 1 ms */

static uint64_t tsc_ordered(const struct clocksource *cs)
{
    (void)cs;
    return rdtsc_ordered();
}
static uint64_t tsc_frozen(const struct clocksource *cs)
{
    (void)cs;
    return 12345;
}
/* The TSC as a calibration target: ordered reads, and one that never moves. */
static const struct clocksource tsc_ordered_cs = { .name = "tsc", .read = tsc_ordered,
                                                   .mask = CLOCKSOURCE_MASK(64) };
static const struct clocksource tsc_frozen_cs = { .name = "tsc", .read = tsc_frozen,
                                                  .mask = CLOCKSOURCE_MASK(64) };

/* Every reference read goes through here, so a test can make one read (or every read
 * from a given one on) take longer: the stall happens inside the read, before the value is
 * sampled, as an SMI between the instructions would. */
static const struct clocksource *raw;
static uint64_t nreads, stall_at, stall_ns, stall_period;
static bool stall_every;

static uint64_t hooked_read(const struct clocksource *cs)
{
    (void)cs;
    nreads++;
    if (stall_at && (nreads == stall_at || (stall_every && nreads > stall_at) ||
                     (stall_period && nreads > stall_at &&
                      (nreads - stall_at) % stall_period == 0)))
        vclock_advance_ns(stall_ns);
    return cs_read(raw);
}

static struct clocksource ref;

static void use_ref(const char *name, const struct clocksource *src, uint64_t mask, uint64_t hz)
{
    raw = src;
    nreads = stall_at = stall_ns = stall_period = 0;
    stall_every = false;
    ref = (struct clocksource){ .name = name, .read = hooked_read, .mask = mask, .freq_hz = hz };
}

/* A fresh machine with the TSC 50 ppm fast. */
static void machine(void)
{
    fake_reset();
    fake_tsc_set_error_ppm(TSC_ERR_PPM);
}

static void use_driver(const struct clocksource *cs)
{
    if (!CHECK(cs != NULL))
        return;
    use_ref(cs->name, cs, cs->mask, cs->freq_hz);
}

static void use_pm(void)
{
    const char *why = NULL;
    CHECK_EQ_I64(acpi_pm_init(&the_pm, FAKE_PMTIMER_PORT, false, &why), 0);
    use_driver(acpi_pm_clocksource(&the_pm));
}

/* The HPET initialised by its driver (comparators quiet, legacy routing off), the main
 * counter enabled or, as firmware leaves it, not. */
static void use_hpet(bool enable)
{
    struct hpet_info info;
    CHECK_EQ_I64(hpet_init(&the_hpet, FAKE_HPET_BASE, false, &info), 0);
    if (enable)
        hpet_enable(&the_hpet);
    use_driver(hpet_clocksource(&the_hpet));
}

static void use_hpet64(void)
{
    use_hpet(true);
}

/* Channel 2 free-running (gate on, speaker off, mode 2, count 65536), checked to count. */
static void use_pit(void)
{
    struct clocksource *cs = pit_clocksource_init(&the_pit_cs, PIT_PROBE_CYC);
    CHECK(cs->usable);
    use_driver(cs);
}

/* ---- checks ----------------------------------------------------------------------------- */

static void show(const char *what, const struct cal_result *r)
{
    if (!getenv("TICKLAB_CAL_VERBOSE"))
        return;
    printf("    %-28s %s/%s %s err %d freq %" PRIu64 " Hz unc %" PRIu64 " ppb window %" PRIu64
           " ns brackets %" PRIu64 "/%" PRIu64 " (min %" PRIu64 ") cyc retries %u polls %"
           PRIu64 "%s%s\n", what, r->target, r->ref, cal_status_name(r->status), r->err,
           r->freq_hz, r->uncertainty_ppb, r->window_ns, r->bracket_start_cyc,
           r->bracket_end_cyc, r->bracket_min_cyc, r->retries, r->polls,
           r->reason ? " reason: " : "", r->reason ? r->reason : "");
}

/* |freq - true| <= uncertainty * true (+ the 0.5 Hz of rounding to whole Hz). */
static bool within(const struct cal_result *r, uint64_t true_hz)
{
    uint64_t d = r->freq_hz > true_hz ? r->freq_hz - true_hz : true_hz - r->freq_hz;

    if ((u128)d * 1000000000u <= (u128)r->uncertainty_ppb * true_hz + 500000000u)
        return true;
    return test_fail(__FILE__, __LINE__, "%s vs %s: %" PRIu64 " Hz is %" PRIu64
                     " Hz from the true %" PRIu64 " Hz, beyond %" PRIu64 " ppb", r->target,
                     r->ref, r->freq_hz, d, true_hz, r->uncertainty_ppb);
}

/* A good TSC measurement: ok, true value inside the bound, and the bound tight enough that
 * the +50 ppm is seen (the whole interval around the result lies above the nominal). */
static void check_tsc(const struct cal_result *r)
{
    CHECK_EQ_U64(r->status, CAL_OK);
    CHECK_EQ_I64(r->err, 0);
    CHECK(r->reason == NULL);
    CHECK_EQ_STR(r->target, "tsc");
    CHECK_EQ_STR(r->method, "measured");
    CHECK(r->measured);
    within(r, TSC_TRUE_HZ);
    int64_t off_ppb = calibrate_ppb_diff(r->freq_hz, FAKE_TSC_DEFAULT_HZ);
    CHECK(r->uncertainty_ppb < TSC_ERR_PPM * 1000 / 2);
    CHECK(off_ppb - (int64_t)r->uncertainty_ppb > 0);
    CHECK(off_ppb > TSC_ERR_PPM * 1000 - (int64_t)r->uncertainty_ppb);
    CHECK(off_ppb < TSC_ERR_PPM * 1000 + (int64_t)r->uncertainty_ppb);
}

/* ---- the TSC against each reference ------------------------------------------------------ */

TEST(calibrate_tsc_50ppm_fast_against_pm_timer)
{
    struct cal_result r;

    machine();
    use_pm();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 300 * MS, &r), 0);
    show("pm 300 ms", &r);
    check_tsc(&r);
    CHECK_EQ_STR(r.ref, "acpi_pm");
    CHECK_EQ_U64(r.retries, 0);
    /* 300 ms of a 3,579,545 Hz counter (1,073,863.5 ticks), cut at the first read past it */
    CHECK(r.ref_cyc >= 1073864 && r.ref_cyc <= 1073864 + 8);
    CHECK(r.window_ns >= 300 * MS && r.window_ns < 300 * MS + 3000);
    /* bracket: one port read (1000 ns) + one rdtsc (20 ns) = 2142 cycles */
    CHECK_EQ_U64(r.bracket_min_cyc, 2142);
}

TEST(calibrate_tsc_50ppm_fast_against_hpet_64bit)
{
    struct cal_result r;

    machine();
    use_hpet64();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 20 * MS, &r), 0);
    show("hpet64 20 ms", &r);
    check_tsc(&r);
    CHECK_EQ_STR(r.ref, "hpet");
    CHECK_EQ_U64(r.retries, 0);
}

TEST(calibrate_tsc_against_hpet_32bit_across_its_wrap)
{
    struct cal_result r;

    machine();
    fake_hpet_set_counter_32bit(true);
    fake_hpet_set_counter(0xFFFFFF00u);
    use_hpet(true);
    CHECK_EQ_U64(ref.mask, CLOCKSOURCE_MASK(32));
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 20 * MS, &r), 0);
    show("hpet32 20 ms, wraps", &r);
    check_tsc(&r);
    CHECK(fake_hpet_counter() < 0xFFFFFF00u);   /* it did wrap */
}

TEST(calibrate_tsc_against_pit_ch2_across_many_wraps)
{
    struct cal_result r;

    machine();
    use_pit();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 500 * MS, &r), 0);
    show("pit 500 ms", &r);
    check_tsc(&r);
    CHECK_EQ_STR(r.ref, "pit");
    CHECK(r.ref_cyc / 65536 >= 9);              /* 9 wraps of the 16-bit counter */
    CHECK_EQ_U64(r.retries, 0);
}

/* Windows longer than a 24-bit PM timer wrap (4.69 s). Port reads made 100 us long, so the
 * 10 s window costs 100,000 polls instead of 10 million; the brackets grow to match. */
TEST(calibrate_tsc_pm_timer_window_longer_than_two_wraps)
{
    struct cal_result r;

    machine();
    fake_cost.port_ns = 100000;
    use_pm();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 10000 * MS, &r), 0);
    show("pm 10 s, 100 us reads", &r);
    check_tsc(&r);
    CHECK(r.ref_cyc > 2 * (1ull << 24));
    CHECK(r.window_ns >= 10000 * MS);
    CHECK(r.polls < 110000);
}

/* ---- stalls ------------------------------------------------------------------------------ */

/* Read 5 is the start endpoint's (after CAL_WARMUP_SAMPLES warm-up samples). */
TEST(calibrate_stall_in_start_endpoint_is_resampled)
{
    struct cal_result r;

    machine();
    use_pm();
    stall_at = CAL_WARMUP_SAMPLES + 1;
    stall_ns = 1 * MS;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 200 * MS, &r), 0);
    show("pm 200 ms, 1 ms start stall", &r);
    check_tsc(&r);
    CHECK_EQ_U64(r.retries, 1);
    CHECK_EQ_U64(r.bracket_start_cyc, r.bracket_min_cyc);
}

/* The end endpoint's reference read is the last read of a clean run; the fake is
 * deterministic, so a second run stalls exactly that one. */
TEST(calibrate_stall_in_end_endpoint_is_resampled)
{
    struct cal_result clean, r;

    machine();
    use_pm();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 200 * MS, &clean), 0);
    uint64_t last_read = nreads;

    machine();
    use_pm();
    stall_at = last_read;
    stall_ns = 1 * MS;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 200 * MS, &r), 0);
    show("pm 200 ms, 1 ms end stall", &r);
    check_tsc(&r);
    CHECK_EQ_U64(r.retries, 1);
    CHECK_EQ_U64(nreads, last_read + 1);
    CHECK_EQ_U64(r.bracket_end_cyc, clean.bracket_end_cyc);
    /* Without the re-sample the end bracket (1 ms = 2.1 M cycles) would have added
     * ~5000 ppm to the bound. */
    CHECK(r.uncertainty_ppb < 15000);
}

/* A 60 ms stall in the middle of a PIT window: more than one whole 54.9 ms wrap of the
 * 16-bit counter, invisible to a masked delta. The gap check sees the TSC move a wrap's
 * worth between two polls; with 250 ms of ratio behind it the count is unambiguous, so the
 * wrap is added (wraps_inferred) and the window goes on, exact. */
TEST(calibrate_stall_longer_than_pit_wrap_is_counted_by_the_tsc)
{
    struct cal_result clean, r;

    machine();
    use_pit();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 500 * MS, &clean), 0);
    uint64_t reads = nreads;

    machine();
    use_pit();
    stall_at = reads / 2;
    stall_ns = 60 * MS;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 500 * MS, &r), 0);
    show("pit 500 ms, 60 ms mid stall", &r);
    check_tsc(&r);
    CHECK_EQ_U64(r.retries, 0);
    CHECK_EQ_U64(r.wraps_inferred, 1);
    CHECK_EQ_U64(clean.wraps_inferred, 0);
    /* cut at the first poll past the window: a few 3 us polls late at most */
    CHECK(r.window_ns >= 500 * MS && r.window_ns < 500 * MS + 10000);
}

/* Every reference read after the warm-up stalls 1 ms: each endpoint is re-sampled until the
 * budget is gone, then the long brackets are used and stated in the bound. */
TEST(calibrate_every_endpoint_stalled_spends_budget_and_widens_bound)
{
    struct cal_result r;

    machine();
    use_pm();
    stall_at = CAL_WARMUP_SAMPLES + 1;
    stall_ns = 1 * MS;
    stall_every = true;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 100 * MS, &r), 0);
    show("pm 100 ms, every read +1 ms", &r);
    CHECK_EQ_U64(r.status, CAL_OK);
    CHECK_EQ_U64(r.retries, CAL_MAX_RETRIES);
    within(&r, TSC_TRUE_HZ);
    /* two brackets of >= 1 ms over a window the 1 ms polls stretched to ~101 ms */
    CHECK(r.bracket_start_cyc > 2100000 && r.bracket_end_cyc > 2100000);
    CHECK(r.uncertainty_ppb >= 19000000);
}

/* The same stall 5 ms into the window: too little ratio to count wraps by (a quarter wrap
 * of ticks, 13.7 ms, is needed), so the window starts again, as it always did. */
TEST(calibrate_stall_before_the_ratio_is_known_restarts_window)
{
    struct cal_result r;

    machine();
    use_pit();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 500 * MS, &r), 0);
    uint64_t reads_per_ms = nreads / 500;

    machine();
    use_pit();
    stall_at = CAL_WARMUP_SAMPLES + 5 * reads_per_ms;
    stall_ns = 60 * MS;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 500 * MS, &r), 0);
    show("pit 500 ms, 60 ms stall at 5 ms", &r);
    check_tsc(&r);
    CHECK_EQ_U64(r.retries, 1);
    CHECK_EQ_U64(r.wraps_inferred, 0);
}

/* A loaded emulator host: after the first 20 ms the reader is away 70 ms (more than a
 * wrap) every 40 reads. Each gap's wraps are counted; the result is as exact as without. */
TEST(calibrate_pit_reader_away_again_and_again_still_exact)
{
    struct cal_result r;

    machine();
    use_pit();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 100 * MS, &r), 0);
    uint64_t reads_per_ms = nreads / 100;

    machine();
    use_pit();
    stall_at = CAL_WARMUP_SAMPLES + 20 * reads_per_ms;
    stall_ns = 70 * MS;
    stall_period = 40;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 500 * MS, &r), 0);
    show("pit 500 ms, away 70 ms every 40 reads", &r);
    check_tsc(&r);
    CHECK(r.wraps_inferred >= 6);
    CHECK_EQ_U64(r.retries, 0);
}

/* Every poll 20 ms apart on a 16-bit PIT (a quarter wrap is 13.7 ms): no window can be
 * trusted, and the retries run out. */
TEST(calibrate_lost_wraps_every_window_fails_with_eio)
{
    struct cal_result r;

    machine();
    use_pit();
    stall_at = 1;
    stall_ns = 20 * MS;
    stall_every = true;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 200 * MS, &r), -EIO);
    show("pit, every read +20 ms", &r);
    CHECK_EQ_U64(r.status, CAL_FAIL);
    CHECK_EQ_STR(r.reason, "poll gaps long enough to lose a wrap; retries exhausted");
    CHECK_EQ_U64(r.retries, CAL_MAX_RETRIES);
    CHECK_EQ_U64(r.freq_hz, 0);
}

/* ---- dead counters ----------------------------------------------------------------------- */

TEST(calibrate_stuck_pm_timer_times_out_quickly)
{
    struct cal_result r;

    machine();
    fake_pmtimer_set_stuck(true);
    use_pm();
    uint64_t t0 = vclock_now_ns();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 1000 * MS, &r), -ETIMEDOUT);
    uint64_t took_ns = vclock_now_ns() - t0;
    show("pm stuck", &r);
    CHECK_EQ_U64(r.status, CAL_FAIL);
    CHECK_EQ_STR(r.reason, "reference does not count");
    /* CAL_NO_PROGRESS_NS at 10 GHz = 1e8 cycles = 47.6 ms of a 2.1 GHz TSC */
    CHECK(took_ns > 45 * MS && took_ns < 50 * MS);
}

/* The HPET as firmware leaves it: disabled, reading 0 forever. */
TEST(calibrate_disabled_hpet_times_out_quickly)
{
    struct cal_result r;

    machine();
    use_hpet(false);
    uint64_t t0 = vclock_now_ns();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 100 * MS, &r), -ETIMEDOUT);
    show("hpet disabled", &r);
    CHECK_EQ_STR(r.reason, "reference does not count");
    CHECK(vclock_now_ns() - t0 < 50 * MS);
}

/* A TSC that does not move cannot bound anything: the poll cap does. */
TEST(calibrate_stuck_tsc_and_stuck_reference_end_by_poll_cap)
{
    struct cal_result r;

    machine();
    fake_pmtimer_set_stuck(true);
    use_pm();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_frozen_cs, 1000 * MS, &r), -ETIMEDOUT);
    CHECK_EQ_STR(r.reason, "neither counter moved (poll cap)");
    CHECK_EQ_U64(r.polls, CAL_STUCK_POLLS);
}

TEST(calibrate_stuck_tsc_against_counting_reference_is_eio)
{
    struct cal_result r;

    machine();
    use_pm();
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_frozen_cs, 1 * MS, &r), -EIO);
    CHECK_EQ_STR(r.reason, "target did not count");
    CHECK_EQ_U64(r.freq_hz, 0);
}

/* ---- the LAPIC timer against the calibrated TSC ------------------------------------------ */

#define LAPIC_SVR       0xF0
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_INITIAL   0x380
#define LAPIC_CURRENT   0x390
#define LAPIC_DIVIDE    0x3E0

static uint64_t lapic_up(const struct clocksource *cs)
{
    (void)cs;
    return 0xFFFFFFFFu - mmio_read32(FAKE_LAPIC_BASE + LAPIC_CURRENT);
}

static const struct clocksource lapic_up_cs = { .name = "lapic", .read = lapic_up,
                                                .mask = 0xFFFFFFFFu };

static uint64_t tsc_plain(const struct clocksource *cs)
{
    (void)cs;
    return rdtsc();
}

/* Periodic, masked, divide by 16 (1 GHz / 16 = 62.5 MHz), counting from 0xFFFFFFFF. */
static void freerun_div16(void)
{
    mmio_write32(FAKE_LAPIC_BASE + LAPIC_SVR, 0x1FF);
    mmio_write32(FAKE_LAPIC_BASE + LAPIC_LVT_TIMER, (1u << 17) | (1u << 16) | 0x40);
    mmio_write32(FAKE_LAPIC_BASE + LAPIC_DIVIDE, 0x3);
    mmio_write32(FAKE_LAPIC_BASE + LAPIC_INITIAL, 0xFFFFFFFFu);
}

TEST(calibrate_lapic_timer_against_calibrated_tsc)
{
    struct cal_result tsc_r, r;

    machine();
    use_hpet64();
    REQUIRE(calibrate_tsc(&ref, &tsc_ordered_cs, 20 * MS, &tsc_r) == 0);
    struct clocksource tsc_cs = {
        .name = "tsc", .read = tsc_plain, .mask = CLOCKSOURCE_MASK(64),
        .freq_hz = tsc_r.freq_hz,
    };
    const struct cal_target lapic = { .cs = &lapic_up_cs, .max_hz = 1000000000u };
    freerun_div16();
    CHECK_EQ_I64(calibrate_pair(&lapic, &tsc_cs, tsc_r.uncertainty_ppb, 20 * MS, &r), 0);
    show("lapic/16 vs tsc 20 ms", &r);
    CHECK_EQ_U64(r.status, CAL_OK);
    CHECK_EQ_STR(r.target, "lapic");
    CHECK_EQ_STR(r.ref, "tsc");
    within(&r, 62500000);
    CHECK(r.uncertainty_ppb > tsc_r.uncertainty_ppb);
    CHECK(r.uncertainty_ppb < 50000);
}

/* max_hz is the plausibility ceiling: a result above it is an error, not a frequency. */
TEST(calibrate_result_above_max_hz_is_erange)
{
    struct cal_result r;

    machine();
    use_hpet64();
    struct clocksource tsc_cs = {
        .name = "tsc", .read = tsc_plain, .mask = CLOCKSOURCE_MASK(64),
        .freq_hz = TSC_TRUE_HZ,
    };
    const struct cal_target lapic = { .cs = &lapic_up_cs, .max_hz = 60000000u };
    freerun_div16();
    CHECK_EQ_I64(calibrate_pair(&lapic, &tsc_cs, 0, 10 * MS, &r), -ERANGE);
    CHECK_EQ_U64(r.status, CAL_FAIL);
}

/* ---- arguments --------------------------------------------------------------------------- */

TEST(calibrate_rejects_bad_arguments)
{
    struct cal_result r;

    machine();
    use_pm();
    CHECK_EQ_I64(calibrate_tsc(NULL, &tsc_ordered_cs, 100 * MS, &r), -ENODEV);
    CHECK_EQ_U64(r.status, CAL_SKIP);
    CHECK_EQ_STR(r.reason, "no reference");
    CHECK_EQ_STR(r.ref, "none");

    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, CAL_MIN_WINDOW_NS - 1, &r), -EINVAL);
    CHECK_EQ_U64(r.status, CAL_FAIL);
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, CAL_MAX_WINDOW_NS + 1, &r), -EINVAL);
    CHECK_EQ_I64(calibrate_tsc(&ref, NULL, 100 * MS, &r), -EINVAL);

    struct clocksource bad = ref;
    bad.freq_hz = 0;
    CHECK_EQ_I64(calibrate_tsc(&bad, &tsc_ordered_cs, 100 * MS, &r), -EINVAL);
    CHECK_EQ_STR(r.reason, "reference frequency unknown or out of range");
    bad = ref;
    bad.mask = 0x7F;
    CHECK_EQ_I64(calibrate_tsc(&bad, &tsc_ordered_cs, 100 * MS, &r), -EINVAL);
    bad = ref;
    bad.read = NULL;
    CHECK_EQ_I64(calibrate_tsc(&bad, &tsc_ordered_cs, 100 * MS, &r), -EINVAL);

    const struct cal_target no_max = { .cs = &tsc_ordered_cs };
    CHECK_EQ_I64(calibrate_pair(&no_max, &ref, 0, 100 * MS, &r), -EINVAL);
    const struct clocksource no_read = { .name = "x", .mask = 1 };
    const struct cal_target unreadable = { .cs = &no_read, .max_hz = 1000000000u };
    CHECK_EQ_I64(calibrate_pair(&unreadable, &ref, 0, 100 * MS, &r), -EINVAL);
    const struct cal_target nothing = { .max_hz = 1000000000u };
    CHECK_EQ_I64(calibrate_pair(&nothing, &ref, 0, 100 * MS, &r), -EINVAL);
    CHECK_EQ_I64(calibrate_pair(NULL, &ref, 0, 100 * MS, &r), -EINVAL);
    CHECK_EQ_U64(nreads, 0);                    /* no argument error touched hardware */
}

/* A reference not yet calibrated is used at the frequency its hardware states. */
TEST(calibrate_uses_nominal_hz_when_reference_has_no_freq)
{
    struct cal_result r;

    machine();
    use_pm();
    ref.freq_hz = 0;
    ref.nominal_hz = FAKE_PMTIMER_HZ;
    CHECK_EQ_I64(calibrate_tsc(&ref, &tsc_ordered_cs, 200 * MS, &r), 0);
    check_tsc(&r);
}

/* ---- CPUID ------------------------------------------------------------------------------- */

TEST(calibrate_cpuid15_valid)
{
    struct cal_result r;

    /* 24 MHz * 87.5 = 2.1 GHz */
    CHECK_EQ_I64(calibrate_from_cpuid15(24000000, 175, 2, NULL, &r), 0);
    CHECK_EQ_U64(r.status, CAL_OK);
    CHECK_EQ_STR(r.method, "cpuid15");
    CHECK_EQ_STR(r.ref, "crystal");
    CHECK(!r.measured);
    CHECK_EQ_U64(r.freq_hz, 2100000000);
    CHECK_EQ_U64(r.uncertainty_ppb, CAL_CRYSTAL_TOL_PPB + 1);
    CHECK_EQ_U64(r.window_ns, 0);

    /* 36,000,001.5 Hz: rounds up */
    CHECK_EQ_I64(calibrate_from_cpuid15(24000001, 3, 2, NULL, &r), 0);
    CHECK_EQ_U64(r.freq_hz, 36000002);
    /* 58,333,333.3 Hz: rounds down */
    CHECK_EQ_I64(calibrate_from_cpuid15(25000000, 7, 3, NULL, &r), 0);
    CHECK_EQ_U64(r.freq_hz, 58333333);
    CHECK_EQ_U64(r.uncertainty_ppb, CAL_CRYSTAL_TOL_PPB + 9);   /* ceil(1e9 / 116.7e6) */
}

TEST(calibrate_cpuid15_invalid_skips_with_reason)
{
    struct cal_result r;

    CHECK_EQ_I64(calibrate_from_cpuid15(24000000, 175, 2, "crystal frequency not enumerated",
                                        &r), -ENOTSUP);
    CHECK_EQ_U64(r.status, CAL_SKIP);
    CHECK_EQ_STR(r.reason, "crystal frequency not enumerated");
    CHECK_EQ_U64(r.freq_hz, 0);

    /* "valid" by hand, ratio broken */
    CHECK_EQ_I64(calibrate_from_cpuid15(24000000, 175, 0, NULL, &r), -ENOTSUP);
    CHECK_EQ_U64(r.status, CAL_SKIP);
    CHECK_EQ_STR(r.reason, "leaf 0x15 ratio gives no frequency");
    CHECK_EQ_I64(calibrate_from_cpuid15(0, 0, 0, NULL, &r), -ENOTSUP);
}

TEST(calibrate_cpuid16_valid_and_invalid)
{
    struct cal_result r;

    CHECK_EQ_I64(calibrate_from_cpuid16(2100, NULL, &r), 0);
    CHECK_EQ_U64(r.status, CAL_OK);
    CHECK_EQ_STR(r.method, "cpuid16");
    CHECK_EQ_STR(r.ref, "nominal");
    CHECK_EQ_U64(r.freq_hz, 2100000000);
    /* ceil(0.5 MHz / 2100 MHz) = 238,096 ppb, + 100 ppm */
    CHECK_EQ_U64(r.uncertainty_ppb, 238096 + CAL_CRYSTAL_TOL_PPB);
    CHECK_EQ_I64(calibrate_from_cpuid16(1000, NULL, &r), 0);
    CHECK_EQ_U64(r.uncertainty_ppb, 500000 + CAL_CRYSTAL_TOL_PPB);

    CHECK_EQ_I64(calibrate_from_cpuid16(2100, "leaf 0x16 not enumerated", &r), -ENOTSUP);
    CHECK_EQ_U64(r.status, CAL_SKIP);
    CHECK_EQ_STR(r.reason, "leaf 0x16 not enumerated");
    CHECK_EQ_I64(calibrate_from_cpuid16(0, NULL, &r), -ENOTSUP);   /* valid by hand, base 0 */
    CHECK_EQ_STR(r.reason, "leaf 0x16 not valid");
}

/* ---- the choice -------------------------------------------------------------------------- */

static struct cal_result res(bool measured, enum cal_status st, uint64_t hz, uint64_t unc_ppb)
{
    return (struct cal_result){
        .target = "tsc", .measured = measured, .status = st, .freq_hz = hz,
        .uncertainty_ppb = unc_ppb, .chosen = true, .disagreement_ppb = 77, .agrees = true,
    };
}

TEST(calibrate_choose_prefers_smallest_measured_uncertainty)
{
    struct cal_result r[5] = {
        res(false, CAL_OK, 2100000000, 100001),     /* cpuid15: tighter than pit, not used */
        res(true, CAL_OK, 2100105000, 3000),        /* hpet */
        res(true, CAL_OK, 2100106000, 1500),        /* acpi_pm: smallest -> chosen */
        res(true, CAL_FAIL, 0, 0),                  /* failed: ignored even at 0 ppb */
        res(true, CAL_OK, 2099895000, 200000),      /* pit */
    };

    CHECK_EQ_I64(calibrate_choose(r, 5), 2);
    CHECK(!r[0].chosen && !r[1].chosen && r[2].chosen && !r[3].chosen && !r[4].chosen);
    /* (2100000000 - 2100106000) / 2100106000 = -50474.119 ppb -> -50474 */
    CHECK_EQ_I64(r[0].disagreement_ppb, -50474);
    /* -1000 / 2100106000 = -476.166 ppb -> -476 */
    CHECK_EQ_I64(r[1].disagreement_ppb, -476);
    CHECK_EQ_I64(r[2].disagreement_ppb, 0);
    CHECK_EQ_I64(r[3].disagreement_ppb, 0);
    /* -211000 / 2100106000 = -100471.121 ppb */
    CHECK_EQ_I64(r[4].disagreement_ppb, -100471);
    CHECK(r[0].agrees && r[1].agrees && r[2].agrees && !r[3].agrees && r[4].agrees);
}

TEST(calibrate_choose_ties_go_to_the_earlier_entry)
{
    struct cal_result r[3] = {
        res(true, CAL_SKIP, 0, 0),
        res(true, CAL_OK, 2100000000, 1000),
        res(true, CAL_OK, 2100004221, 1000),
    };

    CHECK_EQ_I64(calibrate_choose(r, 3), 1);
    CHECK_EQ_I64(r[2].disagreement_ppb, 2010);      /* 4221 / 2.1e9 */
    CHECK(!r[2].agrees);                            /* 2010 > 1000 + 1000 */
    CHECK(!r[0].chosen && r[0].disagreement_ppb == 0 && !r[0].agrees);
}

TEST(calibrate_choose_uses_cpuid_only_without_a_measurement)
{
    struct cal_result r[4] = {
        res(true, CAL_FAIL, 0, 0),
        res(true, CAL_SKIP, 0, 0),
        res(false, CAL_OK, 2100000000, 338096),     /* cpuid16 */
        res(false, CAL_OK, 2099999999, 100001),     /* cpuid15 -> chosen */
    };

    CHECK_EQ_I64(calibrate_choose(r, 4), 3);
    CHECK(r[3].chosen && !r[2].chosen);
    /* +1 / 2099999999 = +0.476 ppb -> 0 */
    CHECK_EQ_I64(r[2].disagreement_ppb, 0);
    CHECK(r[2].agrees);
}

TEST(calibrate_choose_takes_the_users_word_first)
{
    struct cal_result r[3] = {
        res(true, CAL_OK, 1000000120, 1040),        /* measured against the HPET */
        res(false, CAL_OK, 1000000000, 100001),     /* cpuid15 */
    };

    CHECK_EQ_I64(calibrate_from_user("tsc", 1000000000, &r[2]), 0);
    CHECK_EQ_STR(r[2].method, "cmdline");
    CHECK_EQ_STR(r[2].ref, "user");
    CHECK(r[2].user && !r[2].measured);
    CHECK_EQ_U64(r[2].uncertainty_ppb, 0);
    CHECK_EQ_I64(calibrate_choose(r, 3), 2);
    CHECK(r[2].chosen && !r[0].chosen && !r[1].chosen);
    CHECK_EQ_I64(r[0].disagreement_ppb, 120);       /* the measurement, against the word */
    CHECK(r[0].agrees);

    struct cal_result z;
    CHECK_EQ_I64(calibrate_from_user("lapic", 0, &z), -EINVAL);
    CHECK_EQ_U64(z.status, CAL_SKIP);
    CHECK_EQ_I64(calibrate_choose(&z, 1), -ENODEV);
}

TEST(calibrate_choose_nothing_usable)
{
    struct cal_result r[2] = { res(true, CAL_FAIL, 0, 0), res(false, CAL_SKIP, 0, 0) };

    CHECK_EQ_I64(calibrate_choose(r, 2), -ENODEV);
    CHECK(!r[0].chosen && !r[1].chosen);
    CHECK_EQ_I64(r[0].disagreement_ppb, 0);
    CHECK(!r[0].agrees && !r[1].agrees);
    CHECK_EQ_I64(calibrate_choose(NULL, 0), -ENODEV);
}

TEST(calibrate_ppb_diff_signs_and_rounding)
{
    CHECK_EQ_I64(calibrate_ppb_diff(2100105000, 2100000000), 50000);
    CHECK_EQ_I64(calibrate_ppb_diff(2099895000, 2100000000), -50000);
    CHECK_EQ_I64(calibrate_ppb_diff(1000000001, 1000000000), 1);
    /* exact halves round away from zero, both ways */
    CHECK_EQ_I64(calibrate_ppb_diff(2000000001, 2000000000), 1);
    CHECK_EQ_I64(calibrate_ppb_diff(1999999999, 2000000000), -1);
    CHECK_EQ_I64(calibrate_ppb_diff(4000000001, 4000000000), 0);    /* 0.25 */
    CHECK_EQ_I64(calibrate_ppb_diff(3999999999, 4000000000), 0);    /* -0.25 */
    CHECK_EQ_I64(calibrate_ppb_diff(3, 7), -571428571);             /* -571428571.43 */
    CHECK_EQ_I64(calibrate_ppb_diff(11, 7), 571428571);
    CHECK_EQ_I64(calibrate_ppb_diff(0, 12345), -1000000000);
    CHECK_EQ_I64(calibrate_ppb_diff(42, 42), 0);
    CHECK_EQ_I64(calibrate_ppb_diff(42, 0), 0);
    CHECK_EQ_I64(calibrate_ppb_diff(UINT64_MAX, 1), INT64_MAX);     /* saturated */
    CHECK_EQ_I64(calibrate_ppb_diff(10000000000ull, 1), INT64_MAX);
}

TEST(calibrate_status_names)
{
    CHECK_EQ_STR(cal_status_name(CAL_OK), "ok");
    CHECK_EQ_STR(cal_status_name(CAL_SKIP), "skip");
    CHECK_EQ_STR(cal_status_name(CAL_FAIL), "fail");
}

/* The rate applied: the roundest the measurement cannot tell from what it measured. */
TEST(calibrate_roundest_takes_the_roundest_rate_within_the_uncertainty)
{
    /* exact mode's TSC: the HPET's 1.36 ppm and the LAPIC's 99 ppm both hold 1 GHz */
    CHECK_EQ_U64(calibrate_roundest(999999920ull, 1360), 1000000000ull);
    CHECK_EQ_U64(calibrate_roundest(1000001180ull, 1360), 1000000000ull);
    CHECK_EQ_U64(calibrate_roundest(999996357ull, 99191), 1000000000ull);
    /* a PC's: +-2394 Hz holds 2394570000 (a multiple of 10^4) but no multiple of 10^5 */
    CHECK_EQ_U64(calibrate_roundest(2394567890ull, 1000), 2394570000ull);
    /* no uncertainty (the user's word): the value itself */
    CHECK_EQ_U64(calibrate_roundest(2394567890ull, 0), 2394567890ull);
    CHECK_EQ_U64(calibrate_roundest(1193182ull, 1), 1193182ull);
    /* two multiples of the largest power: the nearer, the lower on a tie */
    CHECK_EQ_U64(calibrate_roundest(17, 300000000), 20ull);
    CHECK_EQ_U64(calibrate_roundest(15, 340000000), 10ull);
    CHECK_EQ_U64(calibrate_roundest(5, 1000000000), 10ull);
}
