/* tests/host/test_drv_hpet_firmware.c - the HPET as firmware may leave it (drivers/hpet.c,
 * hpet_boot_quiet()): legacy replacement on, comparators armed, one with FSB delivery, a
 * level status bit set. Everything is recorded as found, then quieted before the kernel
 * relies on any interrupt; the counter is left running. */
#include "ticklab/hpet.h"
#include "fake/fake.h"
#include "ticklab/errno.h"
#include "test.h"

#define GEN_CONF     0x010
#define GINTR_STA    0x020
#define TN_CONF(n)   (0x100 + 0x20 * (n))
#define TN_CMP(n)    (0x108 + 0x20 * (n))
#define TN_FSB(n)    (0x110 + 0x20 * (n))
#define   T_LEVEL    (1u << 1)
#define   T_ENB      (1u << 2)
#define   T_PERIODIC (1u << 3)
#define   T_VAL_SET  (1u << 6)
#define   T_FSB_EN   (1u << 14)
#define PROBE_CYC    (1ull << 20)     /* 0.5 ms of the model's 2.1 GHz TSC */

static struct fake_irq_log irqs;

static void wr(uint32_t off, uint64_t v) { mmio_write64(FAKE_HPET_BASE + off, v); }

/* What a firmware could leave: the counter running, legacy replacement on with comparator
 * 0 periodic (IRQ0, the PIT's), comparator 1 armed with FSB delivery to the boot CPU's local
 * APIC (past every IOAPIC mask), comparator 2 level-triggered on GSI 20, already matched
 * (status set, line held). */
static void firmware_leftovers(void)
{
    fake_reset();
    memset(&irqs, 0, sizeof(irqs));
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
    fake_hpet_set_fsb_cap(1, true);
    mmio_write32(FAKE_LAPIC_BASE + 0x0F0, 0x1FF);      /* the APIC would take the message */
    wr(GEN_CONF, 0x3);                                  /* ENABLE, LEG_RT */
    wr(TN_CONF(0), T_ENB | T_PERIODIC | T_VAL_SET);
    wr(TN_CMP(0), 10000);
    wr(TN_CMP(0), 10000);
    wr(TN_FSB(1), (uint64_t)0xFEE00000u << 32 | 0x61);
    wr(TN_CMP(1), 50000);
    wr(TN_CONF(1), T_ENB | T_FSB_EN);
    wr(TN_CMP(2), 100);
    wr(TN_CONF(2), T_ENB | T_LEVEL | 20u << 9);
    fake_run_for_ns(5000);                              /* comparator 2 matches: status set */
}

TEST(hpet_boot_quiet_records_and_quiets_legacy_and_an_armed_fsb_comparator)
{
    struct hpet_boot_state st;
    firmware_leftovers();
    REQUIRE(fake_hpet_legacy_active());
    REQUIRE(hpet_boot_quiet(FAKE_HPET_BASE, true, PROBE_CYC, &st) == 0);
    CHECK_EQ_STR(st.reason, NULL);
    CHECK_EQ_U64(st.comparators, 3);
    CHECK(st.counter_enabled);
    CHECK(st.counter_counting);
    CHECK(st.legacy_replacement);
    CHECK_EQ_U64(st.int_enabled, 0x7);
    CHECK_EQ_U64(st.fsb_enabled, 0x2);
    CHECK_EQ_U64(st.periodic, 0x1);
    CHECK_EQ_U64(st.level, 0x4);
    CHECK_EQ_U64(st.status, 0x4);
    CHECK_EQ_U64(st.route[2], 20);
    CHECK_EQ_U64(st.fsb_addr[1], 0xFEE00000u);
    CHECK_EQ_U64(st.fsb_data[1], 0x61);
    CHECK_EQ_U64(st.left_armed, 3);
    CHECK(st.quieted);

    /* quiet: nothing fires any more, on any path; the counter still runs. (Comparator 2's
     * line went up before, while interrupts were off: the model latches it as an edge, so
     * its one delivery below is firmware's, not a new one.) */
    CHECK(!fake_hpet_legacy_active());
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + GINTR_STA), 0);
    for (unsigned n = 0; n < 3; n++)
        CHECK_EQ_U64(fake_hpet_conf(n) & (T_ENB | T_FSB_EN | T_PERIODIC), 0);
    uint64_t c = fake_hpet_counter();
    uint64_t raised = fake_irq_stats(FAKE_IRQ_HPET(2))->raised;
    CHECK_EQ_U64(raised, 1);
    irq_enable();
    fake_run_for_ns(100000000);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_HPET(2))->raised, raised);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_ISA(0))->raised, 0);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_ISA(8))->raised, 0);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_LAPIC)->raised, 0);
    CHECK_EQ_U64(irqs.total, 1);
    CHECK_EQ_U64(fake_hpet_stats()->fsb_messages, 0);
    CHECK_EQ_U64(fake_lapic_stats()->msi, 0);
    CHECK(fake_hpet_counter() > c);
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + GEN_CONF), 0x1);   /* ENABLE kept */
}

/* Without quieting, the same firmware state sends the FSB message and owns IRQ0: what the
 * test above prevents (the model is not lying about the danger). */
TEST(hpet_boot_leftovers_fire_when_nothing_quiets_them)
{
    firmware_leftovers();
    irq_enable();
    fake_run_for_ns(1000000);
    CHECK(fake_hpet_stats()->fsb_messages >= 1);
    CHECK(fake_irq_stats(FAKE_IRQ_ISA(0))->raised >= 1);
}

/* A clean block: nothing armed, counter stopped: recorded as such, and quieting changes
 * nothing it should not (the counter stays stopped). */
TEST(hpet_boot_quiet_of_a_clean_block)
{
    struct hpet_boot_state st;
    fake_reset();
    REQUIRE(hpet_boot_quiet(FAKE_HPET_BASE, false, PROBE_CYC, &st) == 0);
    CHECK(!st.counter_enabled);
    CHECK(!st.counter_counting);
    CHECK(!st.legacy_replacement);
    CHECK_EQ_U64(st.int_enabled | st.fsb_enabled | st.periodic | st.level | st.status, 0);
    CHECK_EQ_U64(st.left_armed, 0);
    CHECK(st.quieted);
    CHECK_EQ_U64(mmio_read32(FAKE_HPET_BASE + GEN_CONF), 0);
}

/* Nothing there (or a period no HPET has): the reason, and not one write. */
TEST(hpet_boot_quiet_of_nothing_touches_nothing)
{
    struct hpet_boot_state st;
    fake_reset();
    fake_hpet_remove();
    CHECK_EQ_I64(hpet_boot_quiet(FAKE_HPET_BASE, true, PROBE_CYC, &st), -ENODEV);
    CHECK(st.reason != NULL);
    CHECK(!st.quieted);
    CHECK_EQ_U64(fake_stats.mmio_writes, 0);
}
