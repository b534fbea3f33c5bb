/* tests/host/test_drv_watchdogs.c - drivers/tco.c and drivers/amd_fch_wdt.c against small
 * models defined here: an Intel TCO block (16-bit registers at an I/O base: RLD, TCO1/2_STS
 * write-1-to-clear, TCO1_CNT with the halt bit, TCO_TMR 10 bits; a "locked" variant whose
 * halt bit does not take), the GCS register's NO_REBOOT bit, and AMD's FCH watchdog (the PM
 * index/data pair at 0xCD6/0xCD7, DECODEEN, DECODEEN3, ISACONTROL, and the control register
 * at 0xFEB00000; a variant whose index pair reads all ones, as recent parts may turn it
 * off). What only a real PC can show (a TCO that resets the machine, a BMC's watchdog) is
 * in docs/real-hardware.md; QEMU's ICH9 TCO is the boot case watchdog-tco-stopped. */
#include "ticklab/amd_fch_wdt.h"
#include "ticklab/errno.h"
#include "ticklab/tco.h"
#include "fake/fake.h"
#include "test.h"

#define TCO_BASE 0x660

static struct tco_model {
    uint16_t rld, sts1, sts2, cnt1, tmr;
    bool halt_locked;              /* TCO_TMR_HLT writes ignored */
    unsigned reloads;
} tco;

static uint64_t tco_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)size;
    switch (off) {
    case TCO1_STS: return tco.sts1;
    case TCO2_STS: return tco.sts2;
    case TCO1_CNT: return tco.cnt1;
    case TCO_TMR: return tco.tmr;
    }
    return 0;
}

static void tco_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    CHECK_EQ_U64(size, 2);                    /* every TCO register written whole */
    switch (off) {
    case TCO_RLD: tco.reloads++; return;
    case TCO1_STS: tco.sts1 &= (uint16_t)~v; return;
    case TCO2_STS: tco.sts2 &= (uint16_t)~v; return;
    case TCO1_CNT:
        if (tco.halt_locked)
            v = (v & ~TCO1_CNT_TMR_HLT) | (tco.cnt1 & TCO1_CNT_TMR_HLT);
        tco.cnt1 = (uint16_t)v;
        return;
    case TCO_TMR: tco.tmr = (uint16_t)v; return;
    }
}

static const struct fake_io_ops tco_ops = { tco_read, tco_write };

static void tco_machine(bool running, bool locked)
{
    fake_reset();
    tco = (struct tco_model){ .cnt1 = running ? 0 : TCO1_CNT_TMR_HLT, .tmr = 4,
                         .sts2 = TCO2_STS_SECOND_TO, .halt_locked = locked };
    REQUIRE(fake_port_register(TCO_BASE, TCO_IO_BYTES, &tco_ops, NULL) == 0);
}

TEST(tco_running_is_found_and_stopped)
{
    struct tco t;
    tco_machine(true, false);
    REQUIRE(tco_probe(&t, TCO_BASE) == 0);
    CHECK(t.running);
    CHECK_EQ_U64(t.ticks, 4);
    CHECK_EQ_U64(t.sts2 & TCO2_STS_SECOND_TO, TCO2_STS_SECOND_TO);   /* a reset before */
    CHECK_EQ_U64(tco_stop(&t), 0);
    CHECK_EQ_U64(tco.cnt1 & TCO1_CNT_TMR_HLT, TCO1_CNT_TMR_HLT);
    tco_clear_status(&t);
    CHECK_EQ_U64(tco.sts2 & TCO2_STS_SECOND_TO, 0);
}

/* A part whose halt does not take: tco_stop says so (-EIO) and the caller feeds it, with the
 * longest timeout the register holds. */
TEST(tco_halt_not_taken_is_eio_and_it_can_be_fed)
{
    struct tco t;
    tco_machine(true, true);
    REQUIRE(tco_probe(&t, TCO_BASE) == 0);
    CHECK_EQ_U64(tco_stop(&t), (uint64_t)-EIO);
    CHECK(t.running);
    tco_set_ticks(&t, TCO_TICKS_MAX);
    tco_reload(&t);
    CHECK_EQ_U64(tco.tmr & TCO_TMR_MASK, TCO_TICKS_MAX);
    CHECK_EQ_U64(tco.reloads, 1);
}

TEST(tco_absent_block_is_enodev)
{
    struct tco t;
    fake_reset();
    CHECK_EQ_U64(tco_probe(&t, TCO_BASE), (uint64_t)-ENODEV);   /* the empty bus: all ones */
    CHECK(!t.present);
}

static uint32_t gcs;
static bool gcs_strapped;          /* NO_REBOOT held by a strap */
static uint64_t gcs_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)off, (void)size;
    return gcs;
}
static void gcs_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)off, (void)size;
    gcs = gcs_strapped ? (uint32_t)v | ICH_GCS_NO_REBOOT : (uint32_t)v;
}
static const struct fake_io_ops gcs_ops = { gcs_read, gcs_write };

TEST(tco_no_reboot_set_and_read_back)
{
    fake_reset();
    gcs = 0x1, gcs_strapped = false;
    REQUIRE(fake_mmio_register(0xFED1F410, 4, &gcs_ops, NULL) == 0);
    CHECK_EQ_U64(ich_gcs_no_reboot(0xFED1F410, true), 0);
    CHECK_EQ_U64(gcs, 0x1 | ICH_GCS_NO_REBOOT);
    gcs_strapped = true;
    CHECK_EQ_U64(ich_gcs_no_reboot(0xFED1F410, false), (uint64_t)-EIO);
}

/* ---- AMD's FCH watchdog ---- */

static struct fch_model {
    uint8_t index, pm[8];
    bool pair_off;
    uint32_t control;
    bool run_locked;
} fch;

static uint64_t pm_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)size;
    if (fch.pair_off)
        return 0xFF;
    return off == 0 ? fch.index : fch.index < 8 ? fch.pm[fch.index] : 0;
}
static void pm_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)size;
    if (!fch.pair_off && off == 0)
        fch.index = (uint8_t)v;
}
static const struct fake_io_ops pm_ops = { pm_read, pm_write };

static uint64_t wdt_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)size;
    return off == FCH_WDT_CONTROL ? fch.control : 0;
}
static void wdt_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)size;
    if (off != FCH_WDT_CONTROL)
        return;
    if (fch.run_locked)
        v |= FCH_WDT_RUN;
    fch.control = (uint32_t)v & ~FCH_WDT_TRIGGER;    /* the trigger bit reads 0 */
}
static const struct fake_io_ops wdt_ops = { wdt_read, wdt_write };

static void fch_machine(uint8_t decodeen, bool pair_off)
{
    fake_reset();
    fch = (struct fch_model){ .pm = { decodeen, 0, 0, 0x01, 0 }, .pair_off = pair_off,
                         .control = FCH_WDT_RUN };
    REQUIRE(fake_port_register(FCH_PM_INDEX, 2, &pm_ops, NULL) == 0);
    REQUIRE(fake_mmio_register(FCH_WDT_ADDR, FCH_WDT_BYTES, &wdt_ops, NULL) == 0);
}

TEST(fch_wdt_decoded_running_is_stopped)
{
    struct fch_wdt_where at;
    fch_machine(FCH_DECODEEN_WDT, false);
    fch_wdt_locate(&at);
    CHECK(at.pm_reachable && at.decoded && !at.disabled_in_pm);
    CHECK_EQ_U64(at.addr, FCH_WDT_ADDR);
    CHECK_EQ_U64(fch_wdt_control(FCH_WDT_ADDR) & FCH_WDT_RUN, FCH_WDT_RUN);
    CHECK_EQ_U64(fch_wdt_stop(FCH_WDT_ADDR), 0);
    CHECK_EQ_U64(fch.control & FCH_WDT_RUN, 0);
}

TEST(fch_wdt_run_bit_stuck_is_eio)
{
    fch_machine(FCH_DECODEEN_WDT, false);
    fch.run_locked = true;
    CHECK_EQ_U64(fch_wdt_stop(FCH_WDT_ADDR), (uint64_t)-EIO);
}

/* Recent parts may turn the index pair off: nothing is guessed, nothing mapped. */
TEST(fch_wdt_index_pair_off_is_unreachable)
{
    struct fch_wdt_where at;
    fch_machine(FCH_DECODEEN_WDT, true);
    fch_wdt_locate(&at);
    CHECK(!at.pm_reachable);
    CHECK_EQ_U64(at.addr, 0);
}

TEST(fch_wdt_not_decoded_is_nowhere)
{
    struct fch_wdt_where at;
    fch_machine(0, false);
    fch_wdt_locate(&at);
    CHECK(at.pm_reachable && !at.decoded);
    CHECK_EQ_U64(at.addr, 0);
}
