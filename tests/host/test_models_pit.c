/* tests/host/test_models_pit.c - the 8254 model against the data sheet's timing. */
#include "fake/fake.h"
#include "test.h"

static struct fake_irq_log irqlog;
static const struct vrate pit = { FAKE_PIT_HZ, 1000000000u };

static void reset_with_log(void)
{
    fake_reset();
    memset(&irqlog, 0, sizeof(irqlog));
    fake_set_irq_handler(fake_irq_log_handler, &irqlog);
}

/* Control word (LSB then MSB) and count; returns the clock edge index at the MSB write. */
static uint64_t program(unsigned ch, unsigned mode, unsigned count)
{
    outb(0x43, (uint8_t)(ch << 6 | 3 << 4 | mode << 1));
    outb((uint16_t)(0x40 + ch), (uint8_t)count);
    outb((uint16_t)(0x40 + ch), (uint8_t)(count >> 8));
    return fake_pit_clock_edges();
}

static uint16_t latched_read(unsigned ch)
{
    uint16_t v;

    outb(0x43, (uint8_t)(ch << 6));   /* counter latch command */
    v = inb((uint16_t)(0x40 + ch));
    return (uint16_t)(v | inb((uint16_t)(0x40 + ch)) << 8);
}

TEST(models_pit_mode2_count_1193_is_1000_152_hz)
{
    uint64_t k0, first, span;

    reset_with_log();
    k0 = program(0, 2, 1193);
    irq_enable();
    fake_run_for_ns(1000000000);
    CHECK_EQ_U64(irqlog.total, 1000);   /* 1000.152 Hz: the 1001st is at 1.0008 s */
    REQUIRE(irqlog.n == 1000);
    first = irqlog.e[0].t_ns;
    CHECK_EQ_U64(first, vrate_ns_for(pit, k0 + 1 + 1193));   /* loaded at the next edge */
    span = irqlog.e[999].t_ns - first;    /* 999 periods */
    CHECK(span >= 998847619 && span <= 998847620);   /* 998,847,619.2 ns */
    for (unsigned i = 1; i < irqlog.n; i++) {
        uint64_t period = irqlog.e[i].t_ns - irqlog.e[i - 1].t_ns;
        if (!CHECK(period == 999847 || period == 999848))
            break;
    }
    fake_run_for_ns(1000000000);
    /* 1000 periods = 999,847,466.7 ns (999.847 ms), to the nanosecond */
    span = irqlog.e[1000].t_ns - first;
    CHECK(span >= 999847466 && span <= 999847467);
    CHECK_EQ_U64(fake_irq_stats(0)->coalesced, 0);
}

TEST(models_pit_mode0_interrupts_once_at_terminal_count)
{
    uint64_t k;

    reset_with_log();
    k = program(0, 0, 1000);
    CHECK(!fake_pit_out(0));
    irq_enable();
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK_EQ_U64(irqlog.e[0].t_ns, vrate_ns_for(pit, k + 1 + 1000));
    CHECK(fake_pit_out(0));
    /* a new count restarts it: the first byte sets OUT low at once */
    outb(0x40, 50);
    CHECK(!fake_pit_out(0));
    outb(0x40, 0);
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(irqlog.total, 2);
}

TEST(models_pit_count_zero_means_65536)
{
    reset_with_log();
    program(0, 2, 0);
    irq_enable();
    fake_run_for_ns(120000000);
    REQUIRE(irqlog.n == 2);
    /* 65536 / 1193182 Hz = 54,925,401.6 ns */
    CHECK(irqlog.e[1].t_ns - irqlog.e[0].t_ns >= 54925401);
    CHECK(irqlog.e[1].t_ns - irqlog.e[0].t_ns <= 54925402);
}

/* Elapsed clocks summed from latched reads, (prev - cur) mod N, must match the clock: a read
 * that ran backwards would add almost a whole period. */
TEST(models_pit_latched_reads_never_run_backwards_across_reloads)
{
    const unsigned n = 1193;
    uint64_t k_first, k_last = 0, elapsed = 0;
    uint16_t prev, cur;

    fake_reset();
    program(0, 2, n);
    outb(0x43, 0x00);
    k_first = fake_pit_clock_edges();   /* the latch samples the edge of its own write */
    prev = inb(0x40);
    prev |= (uint16_t)(inb(0x40) << 8);
    for (int i = 0; i < 5000; i++) {
        outb(0x43, 0x00);
        k_last = fake_pit_clock_edges();
        cur = inb(0x40);   /* LSB first: two statements, C leaves argument order open */
        cur |= (uint16_t)(inb(0x40) << 8);
        if (!CHECK(cur >= 1 && cur <= n))
            return;
        elapsed += cur <= prev ? (unsigned)(prev - cur) : prev + n - cur;
        prev = cur;
        if (i % 7 == 0)
            fake_run_for_ns(1234);   /* vary the phase */
    }
    CHECK_EQ_U64(elapsed, k_last - k_first);
    CHECK(elapsed > 10 * n);   /* many reloads crossed */
}

/* Without a latch each byte is sampled at its own access: the pair can tear. */
TEST(models_pit_unlatched_byte_reads_sample_at_each_access)
{
    uint16_t lo, lo_expected, hi, hi_expected;

    fake_reset();
    program(0, 2, 0x1000);
    lo = inb(0x40);
    lo_expected = fake_pit_count(0) & 0xFF;
    hi = inb(0x40);
    hi_expected = fake_pit_count(0) >> 8;
    CHECK_EQ_U64(lo, lo_expected);
    CHECK_EQ_U64(hi, hi_expected);
}

TEST(models_pit_lsb_only_and_msb_only_access)
{
    uint16_t at_latch;

    fake_reset();
    outb(0x61, 0x01);                  /* gate 2 high */
    outb(0x43, 0x90);                  /* ch2, LSB only, mode 0 */
    outb(0x42, 200);
    outb(0x43, 0x80);                  /* latch ch2 */
    at_latch = fake_pit_count(2);
    CHECK(at_latch <= 200 && at_latch >= 198);
    fake_run_for_ns(10000);
    CHECK_EQ_U64(inb(0x42), at_latch); /* one byte ends the latched read */
    CHECK(inb(0x42) < at_latch);       /* the next read is live again */
    outb(0x43, 0xA0);                  /* ch2, MSB only, mode 0 */
    outb(0x42, 0x02);                  /* count 0x200 */
    outb(0x43, 0x80);
    at_latch = fake_pit_count(2);
    CHECK(at_latch <= 0x200 && at_latch >= 0x1FF);   /* 1 us after the load edge */
    CHECK_EQ_U64(inb(0x42), at_latch >> 8);
}

TEST(models_pit_readback_latches_status_then_count)
{
    fake_reset();
    outb(0x43, 0x34);                  /* ch0, LSB/MSB, mode 2 */
    outb(0x43, 0xE2);                  /* read-back status of ch0 */
    CHECK_EQ_U64(inb(0x40), 0x80 | 0x40 | 0x34);   /* OUT high, NULL COUNT, rw 3, mode 2 */
    outb(0x40, 1000 & 0xFF);
    outb(0x40, 1000 >> 8);
    outb(0x43, 0xC2);                  /* read-back count and status of ch0 */
    CHECK_EQ_U64(inb(0x40), 0x80 | 0x34);          /* loaded: NULL COUNT clear */
    {
        uint16_t v = inb(0x40);
        v |= (uint16_t)(inb(0x40) << 8);
        CHECK(v < 1000 && v > 1000 - 4);
    }
}

TEST(models_pit_dead_never_interrupts_but_counts)
{
    uint16_t a, b;

    reset_with_log();
    fake_pit_set_irq_dead(true);
    program(0, 2, 1193);
    irq_enable();
    a = latched_read(0);
    fake_run_for_ns(100000000);
    b = latched_read(0);
    CHECK_EQ_U64(irqlog.total, 0);
    CHECK(a != b);
}

/* The classic calibration loop: gate channel 2, mode 0, poll OUT2 in port 0x61. */
TEST(models_pit_channel2_out2_rises_at_terminal_count)
{
    uint64_t k, t_seen;
    int polls = 0;

    fake_reset();
    outb(0x61, (uint8_t)((inb(0x61) & ~0x02) | 0x01));
    k = program(2, 0, 11932);          /* ~10 ms */
    CHECK(!(inb(0x61) & 0x20));
    while (!(inb(0x61) & 0x20) && polls < 100000)
        polls++;
    t_seen = vclock_now_ns();
    CHECK(t_seen >= vrate_ns_for(pit, k + 1 + 11932));
    CHECK(t_seen < vrate_ns_for(pit, k + 1 + 11932) + 1000);
    /* gate low pauses mode 0 */
    program(2, 0, 11932);
    outb(0x61, 0x00);
    {
        uint16_t a = fake_pit_count(2);
        fake_run_for_ns(5000000);
        CHECK_EQ_U64(fake_pit_count(2), a);
        CHECK(!(inb(0x61) & 0x20));
    }
}

TEST(models_pit_port61_refresh_bit_toggles)
{
    uint8_t a, b;

    fake_reset();
    a = inb(0x61) & 0x10;
    fake_run_for_ns(15085);
    b = inb(0x61) & 0x10;
    CHECK(a != b);
}

TEST(models_pit_mode2_new_count_takes_effect_at_next_reload)
{
    uint64_t k;

    reset_with_log();
    k = program(0, 2, 1000);
    irq_enable();
    fake_run_until_ns(vrate_ns_for(pit, k + 1 + 400));
    outb(0x40, 2000 & 0xFF);
    outb(0x40, 2000 >> 8);
    fake_run_for_ns(5000000);
    REQUIRE(irqlog.n >= 3);
    CHECK_EQ_U64(irqlog.e[0].t_ns, vrate_ns_for(pit, k + 1 + 1000));
    CHECK_EQ_U64(irqlog.e[1].t_ns, vrate_ns_for(pit, k + 1 + 1000 + 2000));
    CHECK_EQ_U64(irqlog.e[2].t_ns, vrate_ns_for(pit, k + 1 + 1000 + 4000));
}

TEST(models_pit_mode3_square_wave)
{
    uint64_t k;
    unsigned high = 0;

    reset_with_log();
    outb(0x61, 0x01);
    k = program(2, 3, 1000);
    for (unsigned e = 0; e < 1000; e++) {
        vclock_advance_to_ns(vrate_ns_for(pit, k + 1 + 1000 + e));
        high += fake_pit_out(2);
    }
    CHECK_EQ_U64(high, 500);
    k = program(0, 3, 1001);
    irq_enable();
    fake_run_for_ns(10000000);
    REQUIRE(irqlog.n >= 2);
    CHECK_EQ_U64(irqlog.e[1].t_ns, vrate_ns_for(pit, k + 1 + 2002));
}

TEST(models_pit_unmodelled_mode_is_a_fault)
{
    fake_reset();
    fake_faults_fatal(false);
    outb(0x43, 0x38);   /* ch0 mode 4 */
    CHECK_EQ_U64(fake_stats.faults, 1);
}

/* The idle loop of a periodic tick: each HLT wakes at the next IRQ0. */
TEST(models_pit_cpu_halt_wakes_on_each_tick)
{
    uint64_t k;

    reset_with_log();
    k = program(0, 2, 11932);          /* 100.0015 Hz */
    irq_enable();
    for (unsigned i = 1; i <= 5; i++) {
        cpu_halt();
        if (!CHECK_EQ_U64(vclock_now_ns(), vrate_ns_for(pit, k + 1 + 11932 * i)))
            break;
    }
    CHECK_EQ_U64(irqlog.total, 5);
    CHECK_EQ_U64(fake_stats.halt_stuck, 0);
}
