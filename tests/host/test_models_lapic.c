/* tests/host/test_models_lapic.c - the local APIC model against the SDM: power-on state,
 * the timer in one-shot, periodic and TSC-deadline modes, all divider encodings, EOI and
 * in-service, TPR, x2APIC through MSRs. */
#include "fake/fake.h"
#include "test.h"

#define TPR 0x080
#define EOI 0x0B0
#define DFR 0x0E0
#define SVR 0x0F0
#define ESR 0x280
#define LVT_TIMER 0x320
#define TMICT 0x380
#define TMCCT 0x390
#define TDCR 0x3E0
#define MASKED (1u << 16)
#define PERIODIC (1u << 17)
#define DEADLINE (2u << 17)
#define VEC 0x40
#define MSR_APIC_BASE 0x1B
#define MSR_DEADLINE 0x6E0

static struct fake_irq_log irqlog;

static uint32_t lr(uint32_t off) { return mmio_read32(FAKE_LAPIC_BASE + off); }
static void lw(uint32_t off, uint32_t v) { mmio_write32(FAKE_LAPIC_BASE + off, v); }

static void send_eoi(int line, void *ctx)
{
    (void)line, (void)ctx;
    lw(EOI, 0);
}

/* Software-enabled APIC, handler logging (and sending EOI when eoi is set). */
static void setup(bool eoi)
{
    fake_reset();
    memset(&irqlog, 0, sizeof(irqlog));
    irqlog.then = eoi ? send_eoi : NULL;
    fake_set_irq_handler(fake_irq_log_handler, &irqlog);
    lw(SVR, 0x1FF);
}

TEST(models_lapic_power_on_state)
{
    fake_reset();
    CHECK_EQ_U64(rdmsr(MSR_APIC_BASE), 0xFEE00900u);   /* EN, BSP */
    CHECK_EQ_U64(lr(0x030), 0x00050014u);
    CHECK_EQ_U64(lr(SVR), 0xFF);
    CHECK_EQ_U64(lr(LVT_TIMER), MASKED);
    CHECK_EQ_U64(lr(DFR), 0xFFFFFFFFu);
    CHECK_EQ_U64(lr(TMICT), 0);
    lw(LVT_TIMER, VEC);                     /* software-disabled: the mask stays */
    CHECK_EQ_U64(lr(LVT_TIMER), MASKED | VEC);
}

TEST(models_lapic_one_shot_at_divide_16)
{
    uint64_t t0;

    setup(true);
    lw(TDCR, 0x3);                          /* divide by 16 */
    lw(LVT_TIMER, VEC);
    lw(TMICT, 1000);
    t0 = vclock_now_ns();
    fake_run_for_ns(8000 - 100);
    CHECK_EQ_U64(lr(TMCCT), 500);           /* 1 GHz / 16: one count per 16 ns */
    irq_enable();
    fake_run_for_ns(100000);
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_U64(irqlog.e[0].t_ns, t0 + 16000);
    CHECK_EQ_I64(irqlog.e[0].vector, VEC);
    CHECK_EQ_U64(lr(TMCCT), 0);
    CHECK_EQ_U64(fake_lapic_stats()->eois, 1);
    CHECK_EQ_I64(fake_lapic_highest_in_service(), -1);
}

TEST(models_lapic_all_eight_divide_encodings)
{
    static const uint32_t tdcr[8] = { 0x0, 0x1, 0x2, 0x3, 0x8, 0x9, 0xA, 0xB };
    static const uint64_t div[8] = { 2, 4, 8, 16, 32, 64, 128, 1 };

    for (int i = 0; i < 8; i++) {
        uint64_t t0;
        setup(true);
        lw(TDCR, tdcr[i]);
        lw(LVT_TIMER, VEC);
        lw(TMICT, 100);
        t0 = vclock_now_ns();
        irq_enable();
        fake_run_for_ns(100000);
        if (!CHECK(irqlog.n == 1))
            return;
        CHECK_EQ_U64(irqlog.e[0].t_ns - t0, 100 * div[i]);
    }
}

TEST(models_lapic_periodic_reloads_from_initial_count)
{
    uint64_t t0;
    uint32_t cur;

    setup(true);
    lw(TDCR, 0xB);                          /* divide by 1 */
    lw(LVT_TIMER, VEC | PERIODIC);
    lw(TMICT, 10000);                       /* 10 us */
    t0 = vclock_now_ns();
    irq_enable();
    fake_run_until_ns(t0 + 1000000 + 5000);
    REQUIRE(irqlog.n == 100);
    for (unsigned i = 0; i < irqlog.n; i++)
        if (!CHECK_EQ_U64(irqlog.e[i].t_ns, t0 + 10000 * (i + 1)))
            break;
    cur = lr(TMCCT);
    CHECK(cur >= 1 && cur <= 10000);
    lw(TMICT, 0);                           /* 0 stops it */
    fake_run_for_ns(100000);
    CHECK_EQ_U64(irqlog.total, 100);
}

TEST(models_lapic_masked_timer_counts_without_interrupts)
{
    setup(true);
    lw(TDCR, 0xB);
    lw(LVT_TIMER, VEC | PERIODIC | MASKED);
    lw(TMICT, 1000);
    irq_enable();
    fake_run_for_ns(100000);
    CHECK_EQ_U64(irqlog.total, 0);
    CHECK(fake_lapic_stats()->masked_fires >= 99);
    CHECK(lr(TMCCT) != 0);
}

/* A handler that forgets the EOI: the vector stays in service, the next fire waits in IRR,
 * the rest are lost; the EOI lets the waiting one in. */
TEST(models_lapic_missing_eoi_blocks_the_vector)
{
    setup(false);
    lw(TDCR, 0xB);
    lw(LVT_TIMER, VEC | PERIODIC);
    lw(TMICT, 10000);
    irq_enable();
    fake_run_for_ns(100000);
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK(fake_lapic_in_service(VEC));
    CHECK(fake_lapic_stats()->dropped >= 8);
    lw(EOI, 0);
    CHECK_EQ_U64(irqlog.total, 1);          /* raised, not yet at a delivery point */
    fake_run_for_ns(0);
    CHECK_EQ_U64(irqlog.total, 2);
}

TEST(models_lapic_tpr_holds_back_a_lower_class)
{
    setup(true);
    lw(TPR, 0x50);
    lw(TDCR, 0xB);
    lw(LVT_TIMER, VEC);
    lw(TMICT, 1000);
    irq_enable();
    fake_run_for_ns(10000);
    CHECK_EQ_U64(irqlog.total, 0);
    lw(TPR, 0x00);
    fake_run_for_ns(0);
    CHECK_EQ_U64(irqlog.total, 1);
}

TEST(models_lapic_illegal_vector_sets_esr)
{
    setup(true);
    lw(TDCR, 0xB);
    lw(LVT_TIMER, 5);
    lw(TMICT, 100);
    irq_enable();
    fake_run_for_ns(10000);
    CHECK_EQ_U64(irqlog.total, 0);
    CHECK_EQ_U64(lr(ESR), 0);               /* not latched until ESR is written */
    lw(ESR, 0);
    CHECK_EQ_U64(lr(ESR), 0x40);            /* received illegal vector */
}

TEST(models_lapic_tsc_deadline_ignored_without_cpuid_bit)
{
    setup(true);
    lw(LVT_TIMER, VEC | DEADLINE);
    wrmsr(MSR_DEADLINE, rdtsc() + 1000);
    CHECK_EQ_U64(rdmsr(MSR_DEADLINE), 0);
    irq_enable();
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqlog.total, 0);
    CHECK_EQ_U64(fake_stats.faults, 0);     /* no #GP either, as under QEMU */
}

TEST(models_lapic_tsc_deadline_fires_when_tsc_reaches_it)
{
    uint64_t d;

    setup(true);
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_TSC_DEADLINE, true);
    lw(LVT_TIMER, VEC | DEADLINE);
    d = rdtsc() + 2100000;                  /* 1 ms at 2.1 GHz */
    wrmsr(MSR_DEADLINE, d);
    CHECK_EQ_U64(rdmsr(MSR_DEADLINE), d);
    irq_enable();
    fake_run_for_ns(2000000);
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_U64(irqlog.e[0].t_ns, (d * 10 + 20) / 21);   /* ceil(d / 2.1 GHz) */
    CHECK_EQ_I64(irqlog.e[0].vector, VEC);
    CHECK_EQ_U64(rdmsr(MSR_DEADLINE), 0);   /* disarmed after firing */
}

TEST(models_lapic_tsc_deadline_in_the_past_fires_at_once)
{
    uint64_t t;

    setup(true);
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_TSC_DEADLINE, true);
    lw(LVT_TIMER, VEC | DEADLINE);
    fake_run_for_ns(1000000);
    wrmsr(MSR_DEADLINE, 1);
    t = vclock_now_ns();
    CHECK(fake_irq_pending(FAKE_IRQ_LAPIC_TIMER));
    irq_enable();
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_U64(irqlog.e[0].t_ns, t);
}

TEST(models_lapic_tsc_deadline_zero_disarms)
{
    setup(true);
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_TSC_DEADLINE, true);
    lw(LVT_TIMER, VEC | DEADLINE);
    wrmsr(MSR_DEADLINE, rdtsc() + 21000);
    wrmsr(MSR_DEADLINE, 0);
    irq_enable();
    fake_run_for_ns(1000000);
    CHECK_EQ_U64(irqlog.total, 0);
    lw(TMICT, 100);                         /* ignored in TSC-deadline mode */
    CHECK_EQ_U64(lr(TMICT), 0);
}

TEST(models_lapic_x2apic_through_msrs)
{
    uint64_t v, t0;

    setup(true);
    irqlog.then = NULL;
    CHECK_EQ_I64(rdmsr_safe(0x803, &v), -1);          /* xAPIC mode: no x2APIC MSRs */
    fake_faults_fatal(false);
    wrmsr(MSR_APIC_BASE, 0xFEE00000u | 0xC00);       /* no CPUID x2APIC: #GP */
    CHECK_EQ_U64(fake_stats.faults, 1);
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_X2APIC, true);
    wrmsr(MSR_APIC_BASE, 0xFEE00000u | 0xC00);
    CHECK_EQ_U64(fake_stats.faults, 1);
    CHECK_EQ_U64(lr(0x030), 0xFFFFFFFFu);            /* MMIO is gone */
    CHECK_EQ_U64(rdmsr(0x803), 0x00050014u);
    CHECK_EQ_U64(rdmsr(0x80F), 0x1FF);                /* state kept across the switch */
    CHECK_EQ_I64(rdmsr_safe(0x80B, &v), -1);          /* EOI is write-only */
    wrmsr(0x83E, 0x3);
    wrmsr(0x832, VEC);
    wrmsr(0x838, 1000);
    t0 = vclock_now_ns();
    irq_enable();
    fake_run_for_ns(100000);
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_U64(irqlog.e[0].t_ns, t0 + 16000);
    wrmsr(0x80B, 1);                                  /* non-zero EOI: #GP */
    CHECK_EQ_U64(fake_stats.faults, 2);
    wrmsr(0x80B, 0);
    CHECK_EQ_U64(fake_stats.faults, 2);
    CHECK_EQ_I64(fake_lapic_highest_in_service(), -1);
    wrmsr(MSR_APIC_BASE, 0xFEE00000u | 0x800);       /* x2APIC -> xAPIC directly: #GP */
    CHECK_EQ_U64(fake_stats.faults, 3);
}

/* A message (MSI) into 0xFEE00000 | dest << 12 with the vector as data: to IRR, delivered on
 * the LAPIC's line with its vector, one at a time until EOI; another destination, or a
 * software-disabled APIC, does not take it. */
TEST(models_lapic_msi_fixed_edge_to_its_apic_id)
{
    setup(true);
    fake_lapic_set_id(3);
    irq_enable();
    fake_lapic_msi(0xFEE00000u | 3u << 12, 0x51);
    fake_run_for_ns(100);
    REQUIRE(irqlog.n == 1);
    CHECK_EQ_U64(irqlog.e[0].line, FAKE_IRQ_LAPIC);
    CHECK_EQ_U64(irqlog.e[0].vector, 0x51);
    CHECK_EQ_U64(fake_lapic_stats()->msi, 1);
    fake_lapic_msi(0xFEE00000u | 2u << 12, 0x51);          /* CPU 2's */
    fake_run_for_ns(100);
    CHECK_EQ_U64(irqlog.n, 1);
    CHECK_EQ_U64(fake_lapic_stats()->msi_not_accepted, 1);
    lw(SVR, 0xFF);                                          /* software-disabled */
    fake_lapic_msi(0xFEE00000u | 3u << 12, 0x51);
    fake_run_for_ns(100);
    CHECK_EQ_U64(irqlog.n, 1);
    CHECK_EQ_U64(fake_lapic_stats()->msi_not_accepted, 2);
    fake_faults_fatal(false);
    fake_lapic_msi(0xFEC00000u, 0x51);                      /* not the APIC's window */
    fake_lapic_msi(0xFEE00000u, 0x4051);                    /* level: not modelled */
    CHECK_EQ_U64(fake_stats.faults, 2);
}
