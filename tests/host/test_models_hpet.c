/* tests/host/test_models_hpet.c - the HPET model against IA-PC HPET 1.0a: capabilities,
 * a counter that counts only when enabled, 32-bit wrap and tearing, the equality comparator
 * (including one written just behind the counter), a comparator write that lands late,
 * periodic accumulation, level status, legacy replacement, a stuck counter. */
#include "fake/fake.h"
#include "test.h"

#define GCAP 0x000
#define CONF 0x010
#define STATUS 0x020
#define COUNTER 0x0F0
#define TCONF(n) (0x100 + 0x20 * (n))
#define TCMP(n)  (0x108 + 0x20 * (n))
#define ENABLE 0x1
#define LEG_RT 0x2
#define T_LEVEL (1u << 1)
#define T_ENB   (1u << 2)
#define T_PERIODIC (1u << 3)
#define T_VAL_SET (1u << 6)
#define T_32MODE (1u << 8)
#define T_ROUTE(r) ((uint64_t)(r) << 9)

static struct fake_irq_log irqlog;

static void reset_with_log(void)
{
    fake_reset();
    memset(&irqlog, 0, sizeof(irqlog));
    fake_set_irq_handler(fake_irq_log_handler, &irqlog);
}

static uint64_t rd(uint32_t off) { return mmio_read64(FAKE_HPET_BASE + off); }
static void wr(uint32_t off, uint64_t v) { mmio_write64(FAKE_HPET_BASE + off, v); }
static uint32_t rd32(uint32_t off) { return mmio_read32(FAKE_HPET_BASE + off); }

TEST(models_hpet_capabilities_default_like_qemu)
{
    uint64_t cap, tconf;

    fake_reset();
    cap = rd(GCAP);
    CHECK_EQ_U64(cap >> 32, 10000000);               /* fs: 100 MHz */
    CHECK_EQ_U64((cap >> 16) & 0xFFFF, 0x8086);
    CHECK_EQ_U64((cap >> 8) & 0x1F, 2);              /* three comparators */
    CHECK(cap & (1u << 13));                         /* 64-bit counter */
    CHECK(cap & (1u << 15));                         /* legacy replacement capable */
    CHECK_EQ_U64(cap & 0xFF, 1);
    tconf = rd(TCONF(2));
    CHECK(tconf & (1u << 4));                        /* periodic capable */
    CHECK(tconf & (1u << 5));                        /* 64-bit comparator */
    CHECK_EQ_U64(tconf >> 32, FAKE_HPET_ROUTE_CAP);
    CHECK_EQ_U64(rd(TCMP(0)), UINT64_MAX);
    CHECK_EQ_U64(rd(CONF), 0);
    CHECK_EQ_U64(rd(TCONF(3)), 0);                   /* no fourth timer */
}

TEST(models_hpet_counter_counts_only_when_enabled)
{
    fake_reset();
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(rd(COUNTER), 0);
    wr(CONF, ENABLE);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(rd(COUNTER), 100010);               /* 1 ms + the 100 ns read, at 10 ns */
    wr(CONF, 0);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(rd(COUNTER), 100020);
}

TEST(models_hpet_counter_writable_when_halted_only)
{
    fake_reset();
    wr(COUNTER, 0x123456789ull);
    CHECK_EQ_U64(rd(COUNTER), 0x123456789ull);
    wr(CONF, ENABLE);
    fake_faults_fatal(false);
    wr(COUNTER, 0);
    CHECK_EQ_U64(fake_stats.faults, 1);
}

TEST(models_hpet_32bit_counter_wraps_at_2_32)
{
    uint64_t v;

    fake_reset();
    fake_hpet_set_counter_32bit(true);
    CHECK(!(rd(GCAP) & (1u << 13)));
    CHECK(!(rd(TCONF(0)) & (1u << 5)));
    fake_hpet_set_counter(0xFFFFFF00u);
    wr(CONF, ENABLE);
    fake_run_for_ns(5000);                           /* 500 ticks */
    v = rd(COUNTER);
    CHECK(v < 0x100);                                /* wrapped */
    CHECK_EQ_U64(v, (0xFFFFFF00u + 500 + 10) & 0xFFFFFFFF);   /* + the 100 ns read */
    CHECK_EQ_U64(rd32(COUNTER + 4), 0);
}

/* Two 32-bit reads sample the counter 100 ns apart: high then low across a carry tears. */
TEST(models_hpet_32bit_halves_of_a_running_counter_tear)
{
    uint32_t hi, lo, hi2;

    fake_reset();
    fake_hpet_set_counter(0xFFFFFFF0u);
    wr(CONF, ENABLE);
    hi = rd32(COUNTER + 4);                          /* counter 0x0_FFFFFFFA */
    lo = rd32(COUNTER);                              /* counter 0x1_00000004 */
    hi2 = rd32(COUNTER + 4);
    CHECK_EQ_U64(hi, 0);
    CHECK(lo < 0x10);                                /* (hi << 32 | lo) ran backwards */
    CHECK_EQ_U64(hi2, 1);                            /* high/low/high sees the carry */
}

TEST(models_hpet_one_shot_fires_at_equality_once)
{
    uint64_t c, t_cmp;

    reset_with_log();
    wr(CONF, ENABLE);
    wr(TCONF(0), T_ENB | T_ROUTE(2));
    c = rd(COUNTER);
    t_cmp = vclock_now_ns();
    wr(TCMP(0), c + 100000);                         /* 1 ms after the read */
    irq_enable();
    fake_run_for_ns(100000000);
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_I64(irqlog.e[0].line, FAKE_IRQ_HPET(0));
    CHECK_EQ_U64(irqlog.e[0].t_ns, t_cmp + 1000000);
    CHECK_EQ_I64(fake_hpet_route(0), 2);
    fake_run_for_ns(100000000000ull);                /* 64-bit: no second match */
    CHECK_EQ_U64(irqlog.total, 1);
}

/* The hazard Linux's hpet.c names: a comparator the counter has already passed does not
 * fire until the counter comes round again. */
TEST(models_hpet_comparator_just_behind_fires_only_after_wrap)
{
    uint64_t c, t_write, late;

    reset_with_log();
    wr(CONF, ENABLE);
    wr(TCONF(0), T_ENB | T_32MODE | T_ROUTE(2));
    c = rd(COUNTER);
    wr(TCMP(0), (c + 5) & 0xFFFFFFFF);               /* 5 ticks ahead of the read ... */
    t_write = vclock_now_ns();                       /* ... but the write took 10 ticks */
    irq_enable();
    fake_run_for_ns(1000000000);
    CHECK_EQ_U64(irqlog.total, 0);
    fake_run_for_ns(43000000000ull);                 /* 2^32 ticks = 42.95 s */
    REQUIRE(irqlog.n == 1);
    late = irqlog.e[0].t_ns - t_write;
    CHECK_EQ_U64(late, ((1ull << 32) - 5) * 10);
    /* a 64-bit comparator in the past never fires */
    wr(TCONF(1), T_ENB | T_ROUTE(2));
    wr(TCMP(1), rd(COUNTER) - 1);
    fake_run_for_ns(100000000000ull);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(1))->raised, 0);
}

/* fake_hpet_set_cmp_write_delay(2): a comparator write lands two clocks after it is made.
 * Until then the old value is what the register reads and what matches; a value the
 * counter reaches within those two clocks is passed when it lands and never fires (64-bit);
 * one further ahead fires at its count. */
TEST(models_hpet_comparator_write_lands_after_its_delay)
{
    reset_with_log();
    fake_cost.mmio_ns = 0;                           /* the counter stands still meanwhile */
    fake_hpet_set_cmp_write_delay(2);
    wr(CONF, ENABLE);
    wr(TCONF(0), T_ENB | T_ROUTE(2));
    irq_enable();
    fake_run_for_ns(1000);
    uint64_t c = rd(COUNTER), old = rd(TCMP(0));
    wr(TCMP(0), c + 2);
    CHECK_EQ_U64(rd(TCMP(0)), old);                  /* not landed yet */
    fake_run_for_ns(20);                             /* two clocks: landed, already reached */
    CHECK_EQ_U64(rd(TCMP(0)), c + 2);
    fake_run_for_ns(1000000000);
    CHECK_EQ_U64(irqlog.total, 0);
    c = rd(COUNTER);
    uint64_t t = vclock_now_ns();
    wr(TCMP(0), c + 3);
    fake_run_for_ns(1000);
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_U64(irqlog.e[0].t_ns - t, 30);          /* at c + 3, three clocks later */
    /* A write that replaces one still on its way: only the last one lands. */
    c = rd(COUNTER);
    wr(TCMP(0), c + 50);
    wr(TCMP(0), c + 80);
    fake_run_for_ns(2000);
    CHECK_EQ_U64(irqlog.total, 2);
    CHECK_EQ_U64(irqlog.e[1].t_ns - irqlog.e[0].t_ns, 1000 + 800 - 30);
    /* The old value keeps matching while the new one is on its way: an early event. */
    fake_hpet_set_cmp_write_delay(5);
    c = rd(COUNTER);
    wr(TCMP(0), c + 3);                              /* lands at c + 5 */
    wr(TCMP(0), c + 3);                              /* (the same: still on its way) */
    fake_run_for_ns(1000);
    CHECK_EQ_U64(irqlog.total, 2);                   /* c + 3 passed before it landed */
}

TEST(models_hpet_periodic_accumulator)
{
    uint64_t c, t0;

    reset_with_log();
    wr(CONF, ENABLE);
    wr(TCONF(0), T_ENB | T_PERIODIC | T_VAL_SET | T_ROUTE(2));
    c = rd(COUNTER);
    t0 = vclock_now_ns();
    wr(TCMP(0), c + 100000);                         /* VAL_SET: first match */
    wr(TCMP(0), 100000);                             /* the period */
    CHECK(!(rd(TCONF(0)) & T_VAL_SET));
    irq_enable();
    fake_run_until_ns(t0 + 10500000);
    REQUIRE(irqlog.n == 10);
    for (unsigned i = 0; i < 10; i++)
        CHECK_EQ_U64(irqlog.e[i].t_ns, t0 + 1000000 * (i + 1));
    CHECK_EQ_U64(rd(TCMP(0)), c + 11 * 100000);      /* advanced by the period per match */
}

TEST(models_hpet_level_status_write_one_to_clear)
{
    reset_with_log();
    wr(CONF, ENABLE);
    wr(TCONF(1), T_ENB | T_LEVEL | T_PERIODIC | T_VAL_SET | T_ROUTE(8));
    wr(TCMP(1), rd(COUNTER) + 1000);
    wr(TCMP(1), 1000);                               /* every 10 us */
    irq_enable();
    fake_run_for_ns(100000);                         /* ~10 matches, status never cleared */
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK(rd(STATUS) & 0x2);
    CHECK(fake_irq_stats(FAKE_IRQ_HPET(1))->dropped >= 8);
    wr(STATUS, 0x2);
    CHECK(!(rd(STATUS) & 0x2));
    fake_run_for_ns(20000);
    CHECK_EQ_U64(irqlog.total, 2);
}

TEST(models_hpet_legacy_replacement_owns_irq0_and_irq8)
{
    reset_with_log();
    outb(0x43, 0x34);                                /* PIT mode 2, 1 kHz */
    outb(0x40, 1193 & 0xFF);
    outb(0x40, 1193 >> 8);
    wr(CONF, ENABLE | LEG_RT);
    wr(TCONF(0), T_ENB | T_ROUTE(5));                /* route ignored under LEG_RT */
    wr(TCONF(1), T_ENB);
    wr(TCMP(0), rd(COUNTER) + 50000);
    wr(TCMP(1), rd(COUNTER) + 70000);
    irq_enable();
    fake_run_for_ns(5000000);
    REQUIRE(irqlog.n == 2);
    CHECK_EQ_I64(irqlog.e[0].line, 0);
    CHECK_EQ_I64(irqlog.e[1].line, 8);
    CHECK(fake_irq_stats(0)->dropped >= 4);          /* the PIT's IRQ0 went nowhere */
    CHECK_EQ_U64(fake_stats.faults, 0);
}

TEST(models_hpet_stuck_counter_never_counts_or_fires)
{
    reset_with_log();
    fake_hpet_set_stuck(true);
    wr(CONF, ENABLE);
    wr(TCONF(0), T_ENB | T_ROUTE(2));
    wr(TCMP(0), 100);
    irq_enable();
    fake_run_for_ns(1000000000);
    CHECK_EQ_U64(rd(COUNTER), 0);
    CHECK_EQ_U64(irqlog.total, 0);
}

TEST(models_hpet_route_outside_cap_is_a_fault)
{
    reset_with_log();
    fake_hpet_set_route_cap(0, 0x4);                 /* QEMU pc: IRQ2 only */
    fake_faults_fatal(false);
    wr(CONF, ENABLE);
    wr(TCONF(0), T_ENB | T_ROUTE(20));
    wr(TCMP(0), rd(COUNTER) + 100);
    irq_enable();
    fake_run_for_ns(10000);
    CHECK_EQ_U64(fake_stats.faults, 1);
    CHECK_EQ_U64(irqlog.total, 0);
}

TEST(models_hpet_comparator_by_32bit_halves)
{
    fake_reset();
    mmio_write32(FAKE_HPET_BASE + TCMP(2), 0x89ABCDEF);
    mmio_write32(FAKE_HPET_BASE + TCMP(2) + 4, 0x01234567);
    CHECK_EQ_U64(rd(TCMP(2)), 0x0123456789ABCDEFull);
    wr(TCONF(2), T_32MODE);
    CHECK_EQ_U64(rd(TCMP(2)), 0x89ABCDEF);           /* 32MODE truncates */
}

TEST(models_hpet_absent_reads_all_ones)
{
    fake_reset();
    fake_hpet_remove();
    CHECK_EQ_U64(rd(GCAP), UINT64_MAX);
}

TEST(models_hpet_other_base_and_period)
{
    fake_reset();
    fake_hpet_set_base(0xFED01000);
    fake_hpet_set_period_fs(69841279);               /* a 14.318 MHz HPET */
    CHECK_EQ_U64(mmio_read64(0xFED01000) >> 32, 69841279);
    mmio_write64(0xFED01000 + CONF, ENABLE);
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(mmio_read64(0xFED01000 + COUNTER), 14319);   /* 1.0001 ms * 14.318 MHz */
}

#define T_FSB_EN  (1u << 14)
#define T_FSB_CAP (1u << 15)
#define TFSB(n)   (0x110 + 0x20 * (n))

/* FSB delivery: with the capability the timer writes its message (value to address) to the
 * local APIC when it matches, whatever legacy replacement says; without it, or with a
 * level-triggered timer, FSB_EN is a fault. */
TEST(models_hpet_fsb_message_to_the_lapic)
{
    reset_with_log();
    mmio_write32(FAKE_LAPIC_BASE + 0x0F0, 0x1FF);        /* the APIC takes messages */
    CHECK_EQ_U64(rd(TCONF(1)) & T_FSB_CAP, 0);           /* default: none (QEMU msi=off) */
    fake_hpet_set_fsb_cap(1, true);
    CHECK(rd(TCONF(1)) & T_FSB_CAP);
    wr(TFSB(1), (uint64_t)0xFEE00000u << 32 | 0x44);
    CHECK_EQ_U64(rd(TFSB(1)), (uint64_t)0xFEE00000u << 32 | 0x44);
    wr(CONF, ENABLE | LEG_RT);
    wr(TCMP(1), 1000);
    wr(TCONF(1), T_ENB | T_FSB_EN);
    irq_enable();
    fake_run_for_ns(20000);
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_U64(irqlog.e[0].line, FAKE_IRQ_LAPIC);
    CHECK_EQ_U64(irqlog.e[0].vector, 0x44);
    CHECK_EQ_I64(fake_hpet_route(1), FAKE_HPET_ROUTE_FSB);
    CHECK_EQ_U64(fake_hpet_stats()->fsb_messages, 1);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_ISA(8))->raised, 0);   /* not IRQ8 */

    reset_with_log();
    fake_faults_fatal(false);
    wr(CONF, ENABLE);
    wr(TCMP(0), 1000);
    wr(TCONF(0), T_ENB | T_FSB_EN | T_ROUTE(20));       /* no capability */
    fake_run_for_ns(20000);
    CHECK_EQ_U64(fake_stats.faults, 1);
    fake_hpet_set_fsb_cap(2, true);
    wr(TCMP(2), 3000);
    wr(TCONF(2), T_ENB | T_FSB_EN | T_LEVEL);           /* a message is an edge */
    fake_run_for_ns(20000);
    CHECK_EQ_U64(fake_stats.faults, 2);
}

/* The ICH9/10 erratum: the first comparator read after a write returns the value before it;
 * the next read the new one. */
TEST(models_hpet_stale_comparator_readback)
{
    fake_reset();
    wr(TCMP(0), 1000);
    CHECK_EQ_U64(rd(TCMP(0)), 1000);
    fake_hpet_set_stale_cmp_readback(true);
    wr(TCMP(0), 2000);
    CHECK_EQ_U64(rd(TCMP(0)), 1000);
    CHECK_EQ_U64(rd(TCMP(0)), 2000);
    CHECK_EQ_U64(fake_hpet_stats()->stale_cmp_reads, 1);
}

/* QEMU's way with a passed comparator: enabling the timer's interrupt (or writing the
 * comparator) with the counter past it fires one clock later, not never. Off, the model
 * keeps to the spec's equality. */
TEST(models_hpet_passed_comparator_fires_when_rearmed_like_qemu)
{
    reset_with_log();
    wr(CONF, ENABLE);
    wr(TCMP(0), 10);
    fake_run_for_ns(10000);                                /* the counter is at 1000 */
    wr(TCONF(0), T_ENB | T_ROUTE(20));
    fake_run_for_ns(10000);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->raised, 0);   /* spec: never */

    reset_with_log();
    fake_hpet_set_passed_fires(true);
    wr(CONF, ENABLE);
    wr(TCMP(0), 10);
    fake_run_for_ns(10000);
    uint64_t t = vclock_now_ns();
    wr(TCONF(0), T_ENB | T_ROUTE(20));
    fake_run_for_ns(10000);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->raised, 1);
    CHECK(fake_irq_stats(FAKE_IRQ_HPET(0))->last_raise_ns <= t + 100 + 10);
    wr(TCMP(0), 20);                                       /* written behind: fires too */
    fake_run_for_ns(10000);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->raised, 2);
    fake_run_for_ns(1000000);                              /* and only once each */
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(0))->raised, 2);
}
