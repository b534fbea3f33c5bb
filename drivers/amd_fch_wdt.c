/* drivers/amd_fch_wdt.c - see amd_fch_wdt.h. */
#include "ticklab/amd_fch_wdt.h"

#include "ticklab/errno.h"
#include "ticklab/io.h"

static uint8_t pm_read8(uint8_t reg)
{
    unsigned long f = irq_save();      /* index and data are one access */
    outb(FCH_PM_INDEX, reg);
    uint8_t v = inb(FCH_PM_DATA);
    irq_restore(f);
    return v;
}

void fch_wdt_locate(struct fch_wdt_where *out)
{
    *out = (struct fch_wdt_where){ 0 };
    uint8_t dec = pm_read8(FCH_PM_DECODEEN), dec3 = pm_read8(FCH_PM_DECODEEN3);
    uint8_t isa = pm_read8(FCH_PM_ISACONTROL);
    if (dec == 0xFF && dec3 == 0xFF && isa == 0xFF)
        return;                        /* the pair is turned off, or not there */
    out->pm_reachable = true;
    out->decoded = (dec & FCH_DECODEEN_WDT) != 0;
    out->disabled_in_pm = (dec3 & FCH_WDT_DISABLE_BITS) == FCH_WDT_DISABLE_BITS;
    if (out->decoded)
        out->addr = FCH_WDT_ADDR;
    else if (isa & FCH_ISACONTROL_MMIOEN)
        out->addr = FCH_WDT_ALT_ADDR;
}

uint32_t fch_wdt_control(uintptr_t regs)
{
    return mmio_read32(regs + FCH_WDT_CONTROL);
}

int fch_wdt_stop(uintptr_t regs)
{
    mmio_write32(regs + FCH_WDT_CONTROL, fch_wdt_control(regs) & ~FCH_WDT_RUN);
    return fch_wdt_control(regs) & FCH_WDT_RUN ? -EIO : 0;
}

void fch_wdt_reload(uintptr_t regs)
{
    mmio_write32(regs + FCH_WDT_CONTROL, fch_wdt_control(regs) | FCH_WDT_TRIGGER);
}
