/* tests/host/test_drv_acpi_pm.c - drivers/acpi_pm.c on the PM timer model (ACPI 6.5, 4.8.3.3:
 * 3,579,545 Hz, 24 bits or 32 with TMR_VAL_EXT) and on a glitching timer defined here that
 * behaves like the PIIX4 erratum (some reads return a wrong value). A port access costs 1 us
 * in the fake: 3.58 ticks. */
#include "ticklab/acpi_pm.h"
#include "fake/fake.h"
#include "ticklab/errno.h"
#include "test.h"
#include "ticklab/timekeeping.h"

/* The drivers' state, as the kernel keeps it. */
static struct acpi_pm the_pm;

#define PORT        FAKE_PMTIMER_PORT
#define GLITCH_PORT 0x1008
#define MASK24      0xFFFFFFu

/* ---- a glitching PM timer: the model's value, but every period-th read (starting at phase)
 * comes back with bits flipped, as a read that lands while the PIIX4 counter increments. */
static struct glitch {
    unsigned reads, period, phase;
    uint32_t flip;
} glitch;

static uint64_t glitch_read(void *ctx, uint64_t off, unsigned size)
{
    uint32_t v = fake_pmtimer_value();

    (void)ctx, (void)size;
    if (glitch.period && glitch.reads % glitch.period == glitch.phase)
        v ^= glitch.flip;
    glitch.reads++;
    return v >> (8 * off);
}

static void glitch_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)off, (void)size, (void)v;
}

static const struct fake_io_ops glitch_ops = { glitch_read, glitch_write };

static void glitching_timer(unsigned period, unsigned phase)
{
    glitch = (struct glitch){ .period = period, .phase = phase, .flip = 0x5A5A5A };
    fake_port_register(GLITCH_PORT, 4, &glitch_ops, NULL);
}

/* v was a value of the counter between before and after (going forward, wrap-aware). */
static bool within(uint64_t v, uint64_t before, uint64_t after, uint64_t mask)
{
    return ((v - before) & mask) <= ((after - before) & mask);
}

/* ---- init ---------------------------------------------------------------------------------- */

TEST(drv_acpi_pm_init_clocksource_fields)
{
    const char *why = "unset";

    fake_reset();
    REQUIRE(acpi_pm_init(&the_pm, PORT, false, &why) == 0);
    CHECK_EQ_STR(why, NULL);
    struct clocksource *cs = acpi_pm_clocksource(&the_pm);
    REQUIRE(cs != NULL);
    CHECK_EQ_STR(cs->name, "acpi_pm");
    CHECK_EQ_U64(cs->mask, MASK24);
    CHECK_EQ_U64(cs->nominal_hz, 3579545);
    CHECK_EQ_U64(cs->freq_hz, 3579545);
    CHECK_EQ_I64(cs->rating, 200);
    CHECK(cs->usable);
    CHECK(!the_pm.verified);
}

/* FADT PM_TMR_BLK 0: no timer. An unclaimed port reads all ones. */
TEST(drv_acpi_pm_absent_is_enodev)
{
    const char *why = NULL;

    fake_reset();
    CHECK_EQ_I64(acpi_pm_init(&the_pm, 0, false, &why), -ENODEV);
    CHECK_EQ_STR(why, "no PM timer port");
    CHECK(acpi_pm_clocksource(&the_pm) == NULL);
    fake_pmtimer_remove();
    CHECK_EQ_I64(acpi_pm_init(&the_pm, PORT, false, &why), -ENODEV);
    CHECK_EQ_STR(why, "port reads all ones: nothing there");
    CHECK_EQ_I64(acpi_pm_init(&the_pm, PORT, true, NULL), -ENODEV);
}

/* ---- reads --------------------------------------------------------------------------------- */

/* 24 bits wrap every 2^24 ticks (4.687 s); started 16 ticks before the wrap. At 1 us per
 * read: 3 ticks after the set, then 12 us later 42 ticks: 0x1A after the wrap, 39 apart. */
TEST(drv_acpi_pm_24bit_wraps)
{
    fake_reset();
    REQUIRE(acpi_pm_init(&the_pm, PORT, false, NULL) == 0);
    struct clocksource *cs = acpi_pm_clocksource(&the_pm);
    fake_pmtimer_set_value(0xFFFFF0);
    uint64_t a = acpi_pm_read(&the_pm);
    CHECK_EQ_U64(a, 0xFFFFF3);
    fake_run_for_ns(10000);
    uint64_t b = acpi_pm_read(&the_pm);
    CHECK_EQ_U64(b, 0x1A);
    CHECK_EQ_U64(cs_delta(cs, b, a), 39);
}

/* TMR_VAL_EXT: 32 bits, wrapping at 2^32 (1199.9 s). */
TEST(drv_acpi_pm_32bit_mode_wraps_at_2_pow_32)
{
    fake_reset();
    fake_pmtimer_set_32bit(true);
    REQUIRE(acpi_pm_init(&the_pm, PORT, true, NULL) == 0);
    struct clocksource *cs = acpi_pm_clocksource(&the_pm);
    CHECK_EQ_U64(cs->mask, 0xFFFFFFFFu);
    fake_pmtimer_set_value(0xFFFFFFF0u);
    uint64_t a = cs_read(cs);
    CHECK_EQ_U64(a, 0xFFFFFFF3u);
    fake_run_for_ns(10000);
    uint64_t b = cs_read(cs);
    CHECK_EQ_U64(b, 0x1A);
    CHECK_EQ_U64(cs_delta(cs, b, a), 39);
    fake_pmtimer_set_value(0x12345678u);             /* above 24 bits: all 32 count */
    CHECK_EQ_U64(cs_read(cs), 0x12345678u + 3);
}

/* Bits 31:24 of a 24-bit timer are reserved: whatever the chipset puts there is masked off.
 * (Here a 32-bit timer read through a 24-bit driver stands in for such junk.) */
TEST(drv_acpi_pm_24bit_masks_reserved_bits)
{
    fake_reset();
    fake_pmtimer_set_32bit(true);
    REQUIRE(acpi_pm_init(&the_pm, PORT, false, NULL) == 0);
    fake_pmtimer_set_value(0xAB123456u);
    CHECK_EQ_U64(acpi_pm_read(&the_pm), 0x123456u + 3);
}

/* The counter runs from power on; a stuck one is caught within the TSC bound. */
TEST(drv_acpi_pm_counting_check)
{
    fake_reset();
    REQUIRE(acpi_pm_init(&the_pm, PORT, false, NULL) == 0);
    CHECK(acpi_pm_counting(&the_pm, 21000));                  /* 10 us at 2.1 GHz */
    CHECK(acpi_pm_clocksource(&the_pm)->usable);
    fake_pmtimer_set_stuck(true);
    uint64_t t0 = vclock_now_ns();
    CHECK(!acpi_pm_counting(&the_pm, 21000));
    CHECK(vclock_now_ns() - t0 < 20000);
    CHECK(!acpi_pm_clocksource(&the_pm)->usable);
    CHECK_EQ_STR(acpi_pm_clocksource(&the_pm)->unusable_reason, "counter does not count");
}

/* A sound timer passes the monotonic check, across a wrap too, and keeps the plain read. */
TEST(drv_acpi_pm_monotonic_check_passes_on_sound_timer)
{
    fake_reset();
    REQUIRE(acpi_pm_init(&the_pm, PORT, false, NULL) == 0);
    fake_pmtimer_set_value(MASK24 - 1000);           /* 1000 reads = 3580 ticks: wraps */
    CHECK(acpi_pm_check_monotonic(&the_pm, 1000));
    CHECK(!the_pm.verified);
}

/* PIIX4-like glitches (one read in 25): the plain read steps backwards, the check sees it
 * and switches the clocksource to the verified read, which then never goes backwards and
 * always returns a value the counter had during the call. */
TEST(drv_acpi_pm_glitching_timer_switches_to_verified_read)
{
    fake_reset();
    glitching_timer(25, 7);
    REQUIRE(acpi_pm_init(&the_pm, GLITCH_PORT, false, NULL) == 0);
    struct clocksource *cs = acpi_pm_clocksource(&the_pm);
    CHECK(!acpi_pm_check_monotonic(&the_pm, 200));
    REQUIRE(the_pm.verified);
    uint64_t last = cs_read(cs);
    for (int i = 0; i < 2000; i++) {
        uint64_t before = fake_pmtimer_value();
        uint64_t v = cs_read(cs);
        uint64_t after = fake_pmtimer_value();
        if (!CHECK(within(v, before, after, MASK24)) || !CHECK(within(v, last, after, MASK24)))
            break;
        last = v;
    }
}

/* The glitch in each position of the three reads (first, middle, last, none): the verified
 * read returns a true value every time. */
TEST(drv_acpi_pm_verified_read_rejects_a_glitch_in_any_position)
{
    for (unsigned phase = 0; phase < 4; phase++) {
        fake_reset();
        glitching_timer(4, phase);
        REQUIRE(acpi_pm_init(&the_pm, GLITCH_PORT, false, NULL) == 0);
        for (int i = 0; i < 50; i++) {
            uint64_t before = fake_pmtimer_value();
            uint64_t v = acpi_pm_read_verified(&the_pm);
            uint64_t after = fake_pmtimer_value();
            if (!CHECK(within(v, before, after, MASK24)))
                break;
        }
    }
}

/* A timer that glitches the middle read every time: the verified read gives up after
 * ACPI_PM_VERIFY_TRIES triples instead of spinning (every loop on hardware is bounded). */
TEST(drv_acpi_pm_verified_read_is_bounded)
{
    fake_reset();
    glitching_timer(3, 1);
    REQUIRE(acpi_pm_init(&the_pm, GLITCH_PORT, false, NULL) == 0);
    glitch.reads = 0;                                /* count from the first of the triple */
    uint64_t reads = fake_stats.port_reads;
    (void)acpi_pm_read_verified(&the_pm);
    CHECK_EQ_U64(fake_stats.port_reads - reads, 3 * ACPI_PM_VERIFY_TRIES);
}

/* With the time core: a 24-bit timer runs 10 s (two wraps) with an accumulate every second
 * (inside the 4.69 s limit), and time_ns() keeps up. */
TEST(drv_acpi_pm_clocksource_with_core_across_wraps)
{
    fake_reset();
    timekeeping_test_reset();
    REQUIRE(acpi_pm_init(&the_pm, PORT, false, NULL) == 0);
    REQUIRE(clocksource_register(acpi_pm_clocksource(&the_pm)) == 0);
    REQUIRE(clocksource_select("acpi_pm", NULL, 0) == acpi_pm_clocksource(&the_pm));
    uint64_t t0 = time_ns();
    for (int i = 0; i < 10; i++) {
        fake_run_for_ns(1000000000);
        CHECK_EQ_I64(timekeeping_accumulate(), 0);
    }
    uint64_t dt = time_ns() - t0;
    CHECK(dt >= 10000000000ull - 1000 && dt <= 10000000000ull + 30000);
    timekeeping_test_reset();
}

/* Two PM timers at once (the driver keeps its state in the struct it is given, not in
 * statics): a second one, at another port, whose count runs 5000 ticks ahead of the model's.
 * Each reads its own port, both register (the second under another name), and time_ns()
 * runs on whichever is selected. */
static uint64_t ahead_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)size;
    return ((fake_pmtimer_value() + 5000u) & MASK24) >> (8 * off);
}

static const struct fake_io_ops ahead_ops = { ahead_read, glitch_write };

TEST(drv_acpi_pm_two_timers_coexist)
{
    static struct acpi_pm second;
    fake_reset();
    timekeeping_test_reset();
    REQUIRE(fake_port_register(GLITCH_PORT, 4, &ahead_ops, NULL) == 0);
    REQUIRE(acpi_pm_init(&the_pm, PORT, false, NULL) == 0);
    REQUIRE(acpi_pm_init(&second, GLITCH_PORT, false, NULL) == 0);
    CHECK_EQ_U64(the_pm.port, PORT);            /* the second init left the first alone */
    struct clocksource *a = acpi_pm_clocksource(&the_pm), *b = acpi_pm_clocksource(&second);
    uint64_t ra = cs_read(a), rb = cs_read(b);
    /* b was read 1 us (3.58 ticks) after a */
    CHECK(cs_delta(b, rb, ra) >= 5000 && cs_delta(b, rb, ra) <= 5004);
    second.cs.name = "acpi_pm1";
    CHECK_EQ_I64(clocksource_register(a), 0);
    CHECK_EQ_I64(clocksource_register(b), 0);
    CHECK(clocksource_select("acpi_pm1", NULL, 0) == b);
    uint64_t t0 = time_ns();
    fake_run_for_ns(1000000000);
    uint64_t dt = time_ns() - t0;
    CHECK(dt >= 1000000000ull - 1000 && dt <= 1000000000ull + 3000);
    timekeeping_test_reset();
}
