/* tests/host/test_timekeeping.c - the time core of lib/time/clocksource.c driven by
 * fake counters stepped by hand (a 24-bit PM timer across many wraps, a 32-bit HPET started
 * just before its wrap, a 64-bit TSC, one that never moves), source selection and switching,
 * and readers and writers interrupting each other. mult/shift: test_clocksource.c. */
#include <stdlib.h>

#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/errno.h"
#include "ticklab/muldiv.h"
#include "fake/fake.h"
#include "rng.h"
#include "test.h"

typedef unsigned __int128 u128;

#define U64_MAX UINT64_MAX

static u128 exact_ns(uint64_t cyc, uint64_t freq_hz)
{
    return (u128)cyc * NSEC_PER_SEC / freq_hz;
}

/* floor(ns * f / 1e9): the cycles whose exact duration is at most ns. */
static uint64_t cycles_within(uint64_t ns, uint64_t freq_hz)
{
    u128 c = (u128)ns * freq_hz / NSEC_PER_SEC;

    return c > U64_MAX ? U64_MAX : (uint64_t)c;
}

/* ---- the time core: fake counters ------------------------------------------------------- */

/* Each fake's true count runs unbounded in a uint64_t; read() shows the low bits only. */
static uint64_t pm_count, hpet_count, tsc_count, stuck_count = 0x123456;
static uint64_t pm_read(const struct clocksource *cs)
{
    (void)cs;
    return pm_count & CLOCKSOURCE_MASK(24);
}
static uint64_t hpet_read(const struct clocksource *cs)
{
    (void)cs;
    return hpet_count & CLOCKSOURCE_MASK(32);
}
static uint64_t tsc_read(const struct clocksource *cs)
{
    (void)cs;
    return tsc_count;
}
static uint64_t stuck_read(const struct clocksource *cs)
{
    (void)cs;
    return stuck_count;
}

static struct clocksource pm, hpet, tsc, stuck;

static void fakes_init(void)
{
    timekeeping_test_reset();
    pm_count = hpet_count = tsc_count = 0;
    pm = (struct clocksource){ .name = "acpi_pm", .read = pm_read,
                               .mask = CLOCKSOURCE_MASK(24), .freq_hz = 3579545,
                               .nominal_hz = 3579545, .rating = 200, .usable = true };
    hpet = (struct clocksource){ .name = "hpet", .read = hpet_read,
                                 .mask = CLOCKSOURCE_MASK(32), .freq_hz = 14318180,
                                 .nominal_hz = 14318180, .rating = 250, .usable = true };
    tsc = (struct clocksource){ .name = "tsc", .read = tsc_read, .mask = U64_MAX,
                                .freq_hz = 2100000000, .rating = 300, .usable = true };
    stuck = (struct clocksource){ .name = "stuck", .read = stuck_read, .mask = U64_MAX,
                                  .freq_hz = 1000000, .rating = 100, .usable = true };
}

/* What time_ns() must say after `cyc` cycles of cs since the epoch began on it: one
 * conversion of the total, because folding carries the remainder. */
static uint64_t model_ns(const struct clocksource *cs, uint64_t cyc)
{
    return (uint64_t)(((u128)cyc * cs->mult) >> cs->shift);
}

/* ... and how far that may be from the exact floor(cyc * 1e9 / f): 1 ns plus the rate error
 * of mult over cyc, rounded up (see the derivation in clocksource.c). */
static uint64_t model_tolerance_ns(const struct clocksource *cs, uint64_t cyc)
{
    u128 ideal = (u128)NSEC_PER_SEC << cs->shift, scaled = (u128)cs->mult * cs->freq_hz;
    u128 d = scaled > ideal ? scaled - ideal : ideal - scaled;
    u128 denom = (u128)cs->freq_hz << cs->shift;

    return 1 + (uint64_t)(((u128)cyc * d + denom - 1) / denom);
}

static bool check_time(const struct clocksource *cs, uint64_t cyc, uint64_t *last)
{
    uint64_t t = time_ns();
    u128 exact = exact_ns(cyc, cs->freq_hz);
    u128 dev = t > exact ? t - exact : exact - t;
    bool ok = true;

    ok &= CHECK_EQ_U64(t, model_ns(cs, cyc));
    ok &= CHECK(dev <= model_tolerance_ns(cs, cyc));
    ok &= CHECK(t >= *last);
    *last = t;
    if (!ok)
        printf("    %s after %" PRIu64 " cycles\n", cs->name, cyc);
    return ok;
}

TEST(time_before_any_source)
{
    struct timekeeping_stats st;

    fakes_init();
    CHECK_EQ_U64(time_ns(), 0);
    CHECK_EQ_I64(timekeeping_accumulate(), -ENODEV);
    CHECK_EQ_U64(timekeeping_max_idle_ns(), U64_MAX);
    CHECK(clocksource_current() == NULL);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.accumulates, 0);
}

TEST(register_validates_and_fills_conversion)
{
    struct clocksource noname, noread, nomask, dup, nofreq;

    fakes_init();
    noname = noread = nomask = pm;
    dup = nofreq = hpet;
    noname.name = NULL;
    noread.read = NULL;
    nomask.mask = 0;
    CHECK_EQ_I64(clocksource_register(NULL), -EINVAL);
    CHECK_EQ_I64(clocksource_register(&noname), -EINVAL);
    CHECK_EQ_I64(clocksource_register(&noread), -EINVAL);
    CHECK_EQ_I64(clocksource_register(&nomask), -EINVAL);
    CHECK_EQ_I64(clocksource_register(&pm), 0);
    CHECK_EQ_I64(clocksource_register(&pm), -EBUSY);
    dup.name = "acpi_pm";
    CHECK_EQ_I64(clocksource_register(&dup), -EBUSY);
    CHECK(clocksource_list() == &pm && pm.next == NULL);

    /* PM timer: the 24-bit wrap (4.69 s) is what limits it, not the conversion. */
    CHECK_EQ_U64(pm.wrap_ns, mul_div_u64(1ull << 24, NSEC_PER_SEC, 3579545));
    CHECK_EQ_U64(pm.max_ns, pm.wrap_ns);
    CHECK_EQ_U64(pm.max_cyc, cycles_within(pm.max_ns, pm.freq_hz));
    CHECK(pm.max_cyc >= pm.mask);
    CHECK(pm.usable && pm.unusable_reason == NULL);

    /* No frequency: listed, not usable, with a reason; a calibration later makes it usable. */
    nofreq.name = "nofreq";
    nofreq.freq_hz = 0;
    CHECK_EQ_I64(clocksource_register(&nofreq), 0);
    CHECK(!nofreq.usable && nofreq.unusable_reason != NULL);
    CHECK(clocksource_find("nofreq") == &nofreq);
    CHECK_EQ_I64(clocksource_set_freq(&nofreq, 0), -EINVAL);
    CHECK_EQ_I64(clocksource_set_freq(&nofreq, CLOCKSOURCE_MAX_FREQ_HZ + 1), -EINVAL);
    CHECK(!nofreq.usable);
    CHECK_EQ_I64(clocksource_set_freq(&nofreq, 14318180), 0);
    CHECK(nofreq.usable && nofreq.unusable_reason == NULL && nofreq.mult != 0);

    /* A driver's own verdict is kept, and given a reason if it gave none. */
    tsc.usable = false;
    CHECK_EQ_I64(clocksource_register(&tsc), 0);
    CHECK(!tsc.usable && tsc.unusable_reason != NULL);
    CHECK_EQ_I64(clocksource_set_freq(&tsc, 2000000000), 0);
    CHECK(!tsc.usable);
    /* A 64-bit counter's wrap in ns: 2^64 / 2 GHz = 292 years. */
    CHECK_EQ_U64(tsc.wrap_ns, (uint64_t)(((u128)1 << 64) * NSEC_PER_SEC / 2000000000));
    /* max_cyc: the most cycles whose exact duration is within max_ns. */
    CHECK((u128)tsc.max_cyc * NSEC_PER_SEC <= (u128)tsc.max_ns * tsc.freq_hz);
    CHECK((u128)(tsc.max_cyc + 1) * NSEC_PER_SEC > (u128)tsc.max_ns * tsc.freq_hz);
}

/* The PM timer wraps every 4.69 s; accumulating just under that keeps time exact. */
TEST(time_pm_timer_across_wraps_accumulate_just_under_limit)
{
    struct timekeeping_stats st;
    uint64_t last = 0, total = 0;
    char why[128];

    fakes_init();
    pm_count = 0xffff00;                            /* start just before a wrap */
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_select(NULL, why, sizeof(why)) == &pm);
    CHECK_EQ_STR(why, "");
    CHECK_EQ_U64(time_ns(), 0);

    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.limit_cyc, pm.mask);
    CHECK_EQ_U64(timekeeping_max_idle_ns(), mul_div_u64(pm.mask, NSEC_PER_SEC, pm.freq_hz));
    CHECK(timekeeping_max_idle_ns() > 4686000000ull &&
          timekeeping_max_idle_ns() < 4687000000ull);

    /* 40 wraps, each step between limit - 20 and the limit itself. */
    for (int i = 0; i < 40; i++) {
        uint64_t step = pm.mask - (uint64_t)(i % 21);
        for (int part = 1; part <= 4; part++) {     /* readers in between */
            pm_count += step / 4 + (part == 4 ? step % 4 : 0);
            total += step / 4 + (part == 4 ? step % 4 : 0);
            if (!check_time(&pm, total, &last))
                return;
        }
        CHECK_EQ_I64(timekeeping_accumulate(), 0);
        if (!check_time(&pm, total, &last))
            return;
    }
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.accumulates, 40);
    CHECK_EQ_U64(st.late, 40);                      /* every one was close to the limit */
    CHECK_EQ_U64(st.max_delta_cyc, pm.mask);

    /* Accumulating at half the limit is not late. */
    for (int i = 0; i < 10; i++) {
        pm_count += pm.mask / 2;
        total += pm.mask / 2;
        CHECK_EQ_I64(timekeeping_accumulate(), 0);
        if (!check_time(&pm, total, &last))
            return;
    }
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 40);

    /* The threshold itself: 7/8 of the limit is on time, one cycle more is late. */
    uint64_t on_time = st.limit_cyc - st.limit_cyc / 8;
    pm_count += on_time;
    total += on_time;
    timekeeping_accumulate();
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 40);
    pm_count += on_time + 1;
    total += on_time + 1;
    timekeeping_accumulate();
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 41);
    CHECK(check_time(&pm, total, &last));
    /* ~3 minutes of PM time, exact to the ns model and within its bound of floor(c/f). */
    CHECK(last > 180 * NSEC_PER_SEC);
}

/* What a missed accumulate does: one wrap vanishes from time, but the accumulates that
 * came close to the limit before it are counted, so the report shows a late tick. */
TEST(time_pm_timer_lost_wrap_is_preceded_by_late_counts)
{
    struct timekeeping_stats st;
    uint64_t t0;

    fakes_init();
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == &pm);
    pm_count += pm.mask - pm.mask / 16;             /* 15/16 of the limit: late */
    timekeeping_accumulate();
    t0 = time_ns();
    pm_count += pm.mask + 1 + 1000;                 /* one wrap and 1000 cycles: missed */
    timekeeping_accumulate();
    CHECK_EQ_U64(time_ns() - t0, model_ns(&pm, 1000 + (pm.mask - pm.mask / 16)) -
                                 model_ns(&pm, pm.mask - pm.mask / 16));
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 1);
}

/* The wrap guard: the TSC read beside the PM timer counts the wraps no fold saw. */
static void pm_and_tsc_advance(uint64_t pm_cyc)
{
    pm_count += pm_cyc;
    tsc_count += (uint64_t)((u128)pm_cyc * tsc.freq_hz / pm.freq_hz);
}

TEST(guard_counts_wraps_no_fold_saw)
{
    struct timekeeping_stats st;

    fakes_init();
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == &pm);
    REQUIRE(timekeeping_set_guard(&tsc) == 0);
    CHECK(timekeeping_guard() == &tsc);
    pm_and_tsc_advance(3 * (pm.mask + 1) + 1000);     /* 14 s: three wraps, no fold */
    uint64_t want = model_ns(&pm, 3 * (pm.mask + 1) + 1000);
    CHECK_EQ_U64(time_ns(), want);                    /* a reader before the fold */
    REQUIRE(timekeeping_accumulate() == 0);
    CHECK_EQ_U64(time_ns(), want);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.wraps_recovered, 3);
    CHECK_EQ_U64(st.late, 1);
    pm_and_tsc_advance(1000);                         /* and on from there, nothing added */
    REQUIRE(timekeeping_accumulate() == 0);
    CHECK_EQ_U64(time_ns(), model_ns(&pm, 3 * (pm.mask + 1) + 2000));
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.wraps_recovered, 3);
}

/* The guard only picks the count of wraps: a guard 1 % fast over two wraps still picks two,
 * and the phase is the source's own (the time is exactly the source's). */
TEST(guard_off_by_a_percent_picks_the_right_wrap_count)
{
    fakes_init();
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == &pm);
    REQUIRE(timekeeping_set_guard(&tsc) == 0);
    uint64_t cyc = 2 * (pm.mask + 1) + pm.mask / 3;
    pm_count += cyc;
    tsc_count += (uint64_t)((u128)cyc * tsc.freq_hz / pm.freq_hz * 101 / 100);
    CHECK_EQ_U64(time_ns(), model_ns(&pm, cyc));
}

/* A guard that says less time passed than the source's delta (it never does by much: the
 * delta is below one wrap) adds nothing and takes nothing away. */
TEST(guard_never_takes_cycles_away)
{
    fakes_init();
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == &pm);
    REQUIRE(timekeeping_set_guard(&tsc) == 0);
    pm_count += pm.mask - 5;                          /* the guard did not move at all */
    CHECK_EQ_U64(time_ns(), model_ns(&pm, pm.mask - 5));
    tsc_count += (uint64_t)((u128)(pm.mask - 5 + (pm.mask + 1) / 2 - 10) * tsc.freq_hz /
                            pm.freq_hz);              /* half a wrap ahead, just under */
    CHECK_EQ_U64(time_ns(), model_ns(&pm, pm.mask - 5));
}

/* Refused: a guard narrower than 64 bits or of unknown frequency. Off: for a 64-bit source,
 * for the guard itself as the source, and after set_guard(NULL). */
TEST(guard_refused_and_off_where_it_does_not_apply)
{
    fakes_init();
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_register(&hpet) == 0);
    REQUIRE(clocksource_register(&tsc) == 0);
    CHECK_EQ_I64(timekeeping_set_guard(&hpet), -EINVAL);
    struct clocksource slow = tsc;
    slow.freq_hz = 0;
    CHECK_EQ_I64(timekeeping_set_guard(&slow), -EINVAL);
    REQUIRE(clocksource_select("tsc", NULL, 0) == &tsc);
    REQUIRE(timekeeping_set_guard(&tsc) == 0);
    CHECK(timekeeping_guard() == NULL);               /* the source is the guard */
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == &pm);
    CHECK(timekeeping_guard() == &tsc);               /* a switch takes it up */
    REQUIRE(timekeeping_set_guard(NULL) == 0);
    CHECK(timekeeping_guard() == NULL);
    uint64_t t0 = time_ns();
    pm_and_tsc_advance(pm.mask + 1 + 1000);           /* lost again without it */
    CHECK_EQ_U64(time_ns() - t0, model_ns(&pm, 1000));
}

/* A guard recalibrated while in use is followed: its new rate counts from the change on. */
TEST(guard_follows_its_own_recalibration)
{
    fakes_init();
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == &pm);
    REQUIRE(timekeeping_set_guard(&tsc) == 0);
    REQUIRE(clocksource_set_freq(&tsc, 1000000000) == 0);  /* was 2.1 GHz: really 1 GHz */
    uint64_t cyc = 5 * (pm.mask + 1) + 77;
    pm_count += cyc;
    tsc_count += (uint64_t)((u128)cyc * 1000000000 / pm.freq_hz);
    CHECK_EQ_U64(time_ns(), model_ns(&pm, cyc));
}

/* A 32-bit HPET started just before its wrap. Its 1-ns range (8.7 s at 14.318 MHz) is far
 * shorter than its 300 s wrap, so max_cyc is the limit; going past it is counted as late and
 * costs only accuracy, within the stated bound. */
TEST(time_hpet32_starting_just_before_wrap)
{
    struct timekeeping_stats st;
    uint64_t last = 0, total = 0;

    fakes_init();
    hpet_count = 0xffffffffull - 1000;
    REQUIRE(clocksource_register(&hpet) == 0);
    REQUIRE(clocksource_select("hpet", NULL, 0) == &hpet);
    CHECK(hpet.max_cyc < hpet.mask);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.limit_cyc, hpet.max_cyc);
    CHECK_EQ_U64(timekeeping_max_idle_ns(), mul_div_u64(hpet.max_cyc, NSEC_PER_SEC,
                                                        hpet.freq_hz));

    for (uint64_t step = 1; step < 5000; step = step * 3 + 1) {    /* across the wrap */
        hpet_count += step;
        total += step;
        check_time(&hpet, total, &last);
        timekeeping_accumulate();
        check_time(&hpet, total, &last);
    }
    for (int i = 0; i < 30; i++) {                  /* at the limit, several wraps */
        hpet_count += hpet.max_cyc - (uint64_t)i;
        total += hpet.max_cyc - (uint64_t)i;
        timekeeping_accumulate();
        if (!check_time(&hpet, total, &last))
            return;
    }
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 30);
    /* Beyond max_cyc but within the wrap: late, and still within the model's bound. */
    hpet_count += hpet.mask - 7;
    total += hpet.mask - 7;
    CHECK(check_time(&hpet, total, &last));
    timekeeping_accumulate();
    CHECK(check_time(&hpet, total, &last));
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 31);
    CHECK_EQ_U64(st.max_delta_cyc, hpet.mask - 7);
}

TEST(time_tsc64_across_its_wrap)
{
    uint64_t last = 0, total = 0;

    fakes_init();
    tsc_count = U64_MAX - 123456;
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_select(NULL, NULL, 0) == &tsc);
    CHECK_EQ_U64(timekeeping_max_idle_ns(),
                 mul_div_u64(tsc.max_cyc, NSEC_PER_SEC, tsc.freq_hz));
    rng_seed(5);
    for (int i = 0; i < 2000; i++) {
        uint64_t step = rng() % (tsc.max_cyc / 2);
        tsc_count += step;
        total += step;
        if (!check_time(&tsc, total, &last))
            return;
        if (i % 3 == 0)
            timekeeping_accumulate();
        if (!check_time(&tsc, total, &last))
            return;
    }
}

/* Regression: a 64-bit counter read one cycle BEHIND the last fold (an AP whose TSC lags
 * the boot CPU's base_cyc by a cycle) made the masked delta 2^64 - 1 cycles: time_ns()
 * jumped a century ahead. It now gives the fold's own time, and behind_reads counts it;
 * the next reading past the fold goes on from there. time_ns_paired() does the same. */
TEST(time_ns_clamps_a_reading_behind_the_fold)
{
    struct timekeeping_stats st;

    fakes_init();
    tsc_count = 5000000;
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_select("tsc", NULL, 0) == &tsc);
    tsc_count += 2100000000;                          /* one second */
    REQUIRE(timekeeping_accumulate() == 0);
    uint64_t fold_ns = time_ns();
    CHECK_EQ_U64(fold_ns, 1000000000);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.behind_reads, 0);

    tsc_count -= 1;                                   /* one cycle behind base_cyc */
    CHECK_EQ_U64(time_ns(), fold_ns);                 /* not 2^64 cycles (278 years) on */
    uint64_t other = 0;
    CHECK_EQ_U64(time_ns_paired(&tsc, &other), fold_ns);
    CHECK_EQ_U64(other, tsc_count);
    tsc_count -= 2100000;                             /* a millisecond behind */
    CHECK_EQ_U64(time_ns(), fold_ns);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.behind_reads, 3);

    tsc_count += 2100000 + 1 + 2100;                  /* 1 us past the fold */
    CHECK_EQ_U64(time_ns(), fold_ns + 1000);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.behind_reads, 3);
}

/* A counter narrower than 64 bits cannot tell "behind" from "wrapped": a reading one count
 * below base_cyc is a whole wrap later, as it always was, and is not counted. */
TEST(time_ns_narrow_counter_behind_the_fold_is_a_wrap)
{
    struct timekeeping_stats st;

    fakes_init();
    hpet_count = 1000;
    REQUIRE(clocksource_register(&hpet) == 0);
    REQUIRE(clocksource_select("hpet", NULL, 0) == &hpet);
    hpet_count += 14318180;                           /* one second */
    REQUIRE(timekeeping_accumulate() == 0);
    uint64_t fold_ns = time_ns();
    hpet_count += (1ull << 32) - 1;                   /* reads one below base_cyc */
    CHECK_EQ_U64(time_ns(), model_ns(&hpet, 14318180 + (1ull << 32) - 1));
    CHECK(time_ns() > fold_ns + 299 * NSEC_PER_SEC);  /* 2^32 counts: 300 s later */
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.behind_reads, 0);
}

TEST(time_stuck_counter_stands_still)
{
    struct timekeeping_stats st;

    fakes_init();
    REQUIRE(clocksource_register(&stuck) == 0);
    REQUIRE(clocksource_select("stuck", NULL, 0) == &stuck);
    for (int i = 0; i < 1000; i++) {
        CHECK_EQ_I64(timekeeping_accumulate(), 0);
        if (!CHECK_EQ_U64(time_ns(), 0))
            return;
    }
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 0);
    CHECK_EQ_U64(st.max_delta_cyc, 0);
    CHECK_EQ_U64(st.accumulates, 1000);
}

TEST(select_by_rating_and_by_name)
{
    char why[160];

    fakes_init();
    CHECK(clocksource_select(NULL, why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "no usable clocksource");
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_register(&hpet) == 0);
    CHECK(clocksource_select(NULL, why, sizeof(why)) == &tsc);
    CHECK_EQ_STR(why, "");
    CHECK(clocksource_current() == &tsc);
    CHECK(clocksource_select("acpi_pm", why, sizeof(why)) == &pm);
    CHECK_EQ_STR(why, "");
    CHECK(clocksource_select("acpi_pm", why, sizeof(why)) == &pm);    /* no-op */

    CHECK(clocksource_select("foo", why, sizeof(why)) == &tsc);
    CHECK_EQ_STR(why, "clocksource=foo: no such clocksource here (registered: acpi_pm, tsc, "
                      "hpet); using tsc");

    tsc.usable = false;
    tsc.unusable_reason = "TSC not invariant";
    CHECK(clocksource_select("tsc", why, sizeof(why)) == &hpet);
    CHECK_EQ_STR(why, "clocksource=tsc: unusable (TSC not invariant); using hpet");
    CHECK(clocksource_select(NULL, why, sizeof(why)) == &hpet);       /* stays */

    /* A short buffer truncates the line; a zero-length one is left alone. */
    CHECK(clocksource_select("tsc", why, 16) == &hpet);
    CHECK_EQ_STR(why, "clocksource=tsc");
    CHECK(clocksource_select("tsc", NULL, 0) == &hpet);

    /* Nothing usable: NULL, the current source stays. */
    pm.usable = hpet.usable = false;
    CHECK(clocksource_select("hpet", why, sizeof(why)) == NULL);
    CHECK_EQ_STR(why, "clocksource=hpet: unusable (no reason given); using none usable");
    CHECK(clocksource_current() == &hpet);
}

TEST(select_rating_tie_goes_to_first_registered)
{
    fakes_init();
    hpet.rating = pm.rating;
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_register(&hpet) == 0);
    CHECK(clocksource_select(NULL, NULL, 0) == &pm);
}

/* Switching sources continues from the current value, both ways, many times. */
TEST(time_switching_sources_stays_monotonic)
{
    struct clocksource *srcs[] = { &pm, &hpet, &tsc };
    uint64_t *counts[] = { &pm_count, &hpet_count, &tsc_count };
    uint64_t last = 0, exact_sum = 0, pending = 0;
    int switches = 0;

    fakes_init();
    pm_count = 0xfffff0;
    hpet_count = 0xfffffff0;
    tsc_count = U64_MAX - 5;
    for (int i = 0; i < 3; i++)
        REQUIRE(clocksource_register(srcs[i]) == 0);
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == &pm);

    rng_seed(6);
    int cur = 0;
    for (int i = 0; i < 3000; i++) {
        uint64_t limit = srcs[cur]->max_cyc < srcs[cur]->mask ? srcs[cur]->max_cyc
                                                               : srcs[cur]->mask;
        uint64_t step = rng() % (limit / 4);
        uint64_t t;

        *counts[cur] += step;
        exact_sum += (uint64_t)exact_ns(step, srcs[cur]->freq_hz);
        pending += step;
        if (rng() % 4 == 0 || pending > limit / 2) {     /* never near the limit */
            timekeeping_accumulate();
            pending = 0;
        }
        t = time_ns();
        if (!CHECK(t >= last))
            return;
        last = t;
        if (rng() % 8 == 0) {
            int next = (int)(rng() % 3);
            if (next != cur) {
                REQUIRE(clocksource_select(srcs[next]->name, NULL, 0) == srcs[next]);
                /* the counter has not moved: time is exactly where it was */
                if (!CHECK_EQ_U64(time_ns(), last))
                    return;
                cur = next;
                pending = 0;
                switches++;
            }
        }
    }
    /* Each switch drops < 1 ns of fraction, each source segment errs by its bound. */
    u128 dev = last > exact_sum ? last - exact_sum : exact_sum - last;
    CHECK(switches > 100);
    CHECK(dev <= (u128)3000 * 2);
    struct timekeeping_stats st;
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.switches, (uint64_t)switches + 1);
    CHECK_EQ_U64(st.late, 0);
}

TEST(set_freq_on_current_source_does_not_jump)
{
    uint64_t t0, t1;

    fakes_init();
    REQUIRE(clocksource_register(&tsc) == 0);
    REQUIRE(clocksource_select(NULL, NULL, 0) == &tsc);
    tsc_count += 2100000000ull / 3;                 /* 1/3 s at the nominal rate */
    t0 = time_ns();
    CHECK_EQ_I64(clocksource_set_freq(&tsc, 2000000000), 0);      /* calibrated: slower */
    CHECK_EQ_U64(time_ns(), t0);
    tsc_count += 2000000000;                        /* one second at the new rate */
    t1 = time_ns();
    CHECK(t1 - t0 >= NSEC_PER_SEC - 1 && t1 - t0 <= NSEC_PER_SEC + 1);
    CHECK_EQ_U64(tsc.freq_hz, 2000000000);
    CHECK_EQ_U64(timekeeping_max_idle_ns(),
                 mul_div_u64(tsc.max_cyc, NSEC_PER_SEC, tsc.freq_hz));
}

/* ---- interrupts, simulated from inside read() ------------------------------------------- */

static int hook_reads;
static bool hook_armed;
static int hook_result;
static uint64_t hook_time;
enum hook_action { HOOK_ACCUMULATE, HOOK_TIME_NS };
static enum hook_action hook_action;

/* A PM timer whose read is "interrupted" once by an accumulate or a time_ns() call. */
static uint64_t pm_read_interrupted(const struct clocksource *cs)
{
    (void)cs;
    uint64_t v = pm_read(0);

    hook_reads++;
    if (hook_armed) {
        hook_armed = false;
        pm_count += 1000;                           /* the interrupt comes a bit later */
        if (hook_action == HOOK_ACCUMULATE)
            hook_result = timekeeping_accumulate();
        else
            hook_time = time_ns();
    }
    return v;
}

TEST(time_reader_interrupted_by_accumulate_rereads)
{
    uint64_t t;

    fakes_init();
    pm.read = pm_read_interrupted;
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_select(NULL, NULL, 0) == &pm);
    pm_count += 5000;
    hook_reads = 0;
    hook_action = HOOK_ACCUMULATE;
    hook_armed = true;
    t = time_ns();
    CHECK_EQ_I64(hook_result, 0);
    CHECK_EQ_U64(hook_reads, 3);                    /* reader, accumulate, reader again */
    CHECK_EQ_U64(t, model_ns(&pm, 6000));           /* the state after the accumulate */
}

TEST(accumulate_interrupting_a_writer_does_nothing)
{
    struct timekeeping_stats st;

    fakes_init();
    pm.read = pm_read_interrupted;
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_select(NULL, NULL, 0) == &pm);
    pm_count += 5000;
    hook_action = HOOK_ACCUMULATE;
    hook_armed = true;
    CHECK_EQ_I64(timekeeping_accumulate(), 0);
    CHECK_EQ_I64(hook_result, -EBUSY);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.busy_skips, 1);
    CHECK_EQ_U64(st.accumulates, 1);
    CHECK_EQ_U64(time_ns(), model_ns(&pm, 6000));
}

TEST(reader_interrupting_a_writer_sees_the_old_state)
{
    fakes_init();
    pm.read = pm_read_interrupted;
    REQUIRE(clocksource_register(&pm) == 0);
    REQUIRE(clocksource_select(NULL, NULL, 0) == &pm);
    pm_count += 5000;
    hook_action = HOOK_TIME_NS;
    hook_armed = true;
    CHECK_EQ_I64(timekeeping_accumulate(), 0);      /* folds 5000; the reader saw 6000 */
    CHECK_EQ_U64(hook_time, model_ns(&pm, 6000));
    CHECK_EQ_U64(time_ns(), model_ns(&pm, 6000));
}

/* ---- the tick's read: timekeeping_tick_ns() ---------------------------------------------- */

/* Counters read in line, as the tick's fast read takes them: the fake CPU's TSC and the fake
 * HPET's 64-bit main counter, both held still (no cost for a TSC read, a stuck HPET) and
 * set by hand. */
static uint64_t tsc_direct_read(const struct clocksource *cs)
{
    (void)cs;
    return fake_tsc_read();
}
static uint64_t hpet_direct_read(const struct clocksource *cs)
{
    (void)cs;
    return fake_hpet_counter();
}
static void tsc_set(uint64_t v)
{
    fake_tsc_set_value(v);
}
static void hpet_set(uint64_t v)
{
    fake_hpet_set_counter(v);
}

/* From `start`, 20,000 readings at random distances (mostly short; often exactly at, one
 * past and just below an eighth of the limit): each gives time_ns()'s own value (its 128-bit
 * product) and the model's one conversion of the total, and folds exactly when the count
 * passed an eighth of the limit since the last fold. Then a reading one count behind the
 * fold: folded too, as before (the time stands at the fold's). */
static void tick_ns_run(struct clocksource *cs, void (*set)(uint64_t), uint64_t start)
{
    struct timekeeping_stats st;

    set(start);
    REQUIRE(clocksource_register(cs) == 0);
    REQUIRE(clocksource_select(cs->name, NULL, 0) == cs);
    timekeeping_get_stats(&st);
    uint64_t fold = st.limit_cyc / 8, base = start, cur = start, folds = 0, acc = st.accumulates;
    REQUIRE(fold > 8);
    rng_seed(28);
    for (int i = 0; i < 20000; i++) {
        uint64_t r = rng() % 16, since = cur - base, d;
        if (r == 0)
            d = fold - since;           /* the last delta the fast read takes */
        else if (r == 1)
            d = fold - since + 1;       /* the first it folds */
        else if (r == 2)
            d = fold - since - 1 - rng() % 3;
        else
            d = rng() % (fold / 4 + 1);
        if ((int64_t)d < 0)
            d = 0;
        cur += d;
        set(cur);
        bool folds_now = cur - base > fold;
        uint64_t t = timekeeping_tick_ns();
        timekeeping_get_stats(&st);
        bool ok = CHECK_EQ_U64(st.accumulates, acc + folds_now);
        acc = st.accumulates;
        if (folds_now) {
            base = cur;
            folds++;
        }
        ok &= CHECK_EQ_U64(t, time_ns());
        ok &= CHECK_EQ_U64(t, model_ns(cs, cur - start));
        if (!ok) {
            printf("    %s: reading %d, %" PRIu64 " counts since the fold\n", cs->name, i,
                   cur - base);
            return;
        }
    }
    CHECK(folds > 1000);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.late, 0);
    CHECK(st.max_delta_cyc > fold && st.max_delta_cyc <= fold + fold / 4 + 1);
    /* a fold here, then a reading one count behind it */
    cur += fold + 1;
    set(cur);
    uint64_t at_fold = timekeeping_tick_ns();
    CHECK_EQ_U64(at_fold, model_ns(cs, cur - start));
    set(cur - 1);
    timekeeping_get_stats(&st);
    acc = st.accumulates;
    CHECK_EQ_U64(timekeeping_tick_ns(), at_fold);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.accumulates, acc + 1);
}

TEST(tick_ns_on_the_tsc_is_time_ns_and_folds_past_an_eighth)
{
    fakes_init();
    fake_reset();
    fake_cost.rdtsc_ns = 0;
    tsc.read = tsc_direct_read;
    tsc.direct = (struct io_counter){ IO_COUNTER_TSC, 0 };
    tick_ns_run(&tsc, tsc_set, 0xFFFFFFFFull * 1000);
}

TEST(tick_ns_on_a_64bit_mmio_counter_is_time_ns_and_folds_past_an_eighth)
{
    fakes_init();
    fake_reset();
    fake_hpet_set_stuck(true);
    hpet = (struct clocksource){ .name = "hpet64", .read = hpet_direct_read, .mask = U64_MAX,
                                 .freq_hz = 14318180, .rating = 250, .usable = true,
                                 .direct = { IO_COUNTER_MMIO64, FAKE_HPET_BASE + 0xF0 } };
    tick_ns_run(&hpet, hpet_set, 12345);
}

/* A slow counter (32768 Hz: a large mult) held to the same, near the 64-bit product's edge. */
TEST(tick_ns_on_a_slow_counter_is_time_ns_and_folds_past_an_eighth)
{
    fakes_init();
    fake_reset();
    fake_cost.rdtsc_ns = 0;
    tsc.read = tsc_direct_read;
    tsc.freq_hz = 32768;
    tsc.direct = (struct io_counter){ IO_COUNTER_TSC, 0 };
    tick_ns_run(&tsc, tsc_set, 1);
}
