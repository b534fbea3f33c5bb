/* drivers/tco.c - see tco.h. */
#include "ticklab/tco.h"

#include "ticklab/errno.h"
#include "ticklab/io.h"

static uint16_t rd(const struct tco *t, uint16_t reg)
{
    return inw((uint16_t)(t->base + reg));
}

static void wr(const struct tco *t, uint16_t reg, uint16_t v)
{
    outw((uint16_t)(t->base + reg), v);
}

int tco_probe(struct tco *t, uint16_t base)
{
    *t = (struct tco){ .base = base };
    uint16_t cnt = rd(t, TCO1_CNT), tmr = rd(t, TCO_TMR);
    if (cnt == 0xFFFF || tmr == 0xFFFF || (tmr & TCO_TMR_MASK) == 0)
        return -ENODEV;
    t->present = true;
    t->running = !(cnt & TCO1_CNT_TMR_HLT);
    t->ticks = tmr & TCO_TMR_MASK;
    t->sts1 = rd(t, TCO1_STS);
    t->sts2 = rd(t, TCO2_STS);
    return 0;
}

int tco_stop(struct tco *t)
{
    wr(t, TCO1_CNT, rd(t, TCO1_CNT) | TCO1_CNT_TMR_HLT);
    if (!(rd(t, TCO1_CNT) & TCO1_CNT_TMR_HLT))
        return -EIO;
    t->running = false;
    return 0;
}

void tco_start(struct tco *t)
{
    wr(t, TCO_RLD, 1);
    wr(t, TCO1_CNT, rd(t, TCO1_CNT) & ~TCO1_CNT_TMR_HLT);
    t->running = true;
}

void tco_set_ticks(struct tco *t, uint16_t ticks)
{
    wr(t, TCO_TMR, (uint16_t)((rd(t, TCO_TMR) & ~TCO_TMR_MASK) | (ticks & TCO_TMR_MASK)));
    t->ticks = ticks & TCO_TMR_MASK;
}

void tco_reload(struct tco *t)
{
    wr(t, TCO_RLD, 1);
}

void tco_clear_status(struct tco *t)
{
    wr(t, TCO1_STS, TCO1_STS_TIMEOUT);
    wr(t, TCO2_STS, TCO2_STS_SECOND_TO);
}

int ich_gcs_no_reboot(uintptr_t gcs, bool on)
{
    uint32_t v = mmio_read32(gcs);
    mmio_write32(gcs, on ? v | ICH_GCS_NO_REBOOT : v & ~ICH_GCS_NO_REBOOT);
    bool now = (mmio_read32(gcs) & ICH_GCS_NO_REBOOT) != 0;
    return now == on ? 0 : -EIO;
}
