/* kernel/discover/watchdogs.c - see watchdogs.h. */
#include "kernel/discover/watchdogs.h"

#include "ticklab/amd_fch_wdt.h"
#include "ticklab/errno.h"
#include "ticklab/kstring.h"
#include "ticklab/pci.h"
#include "ticklab/tco.h"
#include "kernel/arch/machine_events.h"
#include "kernel/arch/paging.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"

#define INTEL            0x8086
#define PCI_ID           0x00
#define PCI_CLASS        0x08     /* revision, prog-if, subclass, class */
#define CLASS_LPC        0x0601   /* ISA bridge: Intel's LPC/eSPI function, 00:1f.0 */
#define CLASS_SMBUS      0x0C05
#define LPC_DEV          0x1F
/* ICH6-ICH10 and 5-9 series PCHs: the ACPI base in the LPC bridge (ABASE, 128 bytes), its
 * decode enable, the root complex block (RCBA); the TCO block at ABASE + 0x60. */
#define LPC_ABASE        0x40
#define   ABASE_MASK     0xFF80u
#define LPC_ACPI_CNTL    0x44
#define   ACPI_EN        (1u << 7)
#define LPC_RCBA         0xF0
#define   RCBA_EN        (1u << 0)
#define   RCBA_MASK      0xFFFFC000u
#define ABASE_TCO        0x60
/* 100-series PCHs and later: the TCO block at the SMBus function's TCOBASE. */
#define SMB_TCOBASE      0x50
#define   TCOBASE_MASK   0xFFE0u
#define SMB_TCOCTL       0x54
#define   TCO_BASE_EN    (1u << 8)
/* The 6300ESB's watchdog (QEMU's i6300esb): its lock register in configuration space. */
#define ESB_VENDOR       0x8086
#define ESB_DEVICE       0x25AB
#define ESB_LOCK_REG     0x68
#define   ESB_LOCKED     (1u << 0)
#define   ESB_ENABLE     (1u << 1)
/* The test aid's timeout: 2 ticks, about 1.2 s to the first timeout and 2.4 s to a reset. */
#define ARM_TICKS        2

enum wd_action { WD_NOT_RUNNING, WD_STOPPED, WD_FED, WD_LEFT, WD_UNREACHABLE };
static const char *const action_names[] = { "not_running", "stopped", "fed", "left",
                                            "unreachable" };

static struct {
    struct tco tco;
    bool tco_fed;
    uintptr_t fch_regs;
    bool fch_fed;
    unsigned found, fed;
} w;

static void feed(void)
{
    if (w.tco_fed)
        tco_reload(&w.tco);
    if (w.fch_fed)
        fch_wdt_reload(w.fch_regs);
}

static void begin(struct rec *r, const char *kind, const char *where)
{
    rec_begin(r, "watchdog");
    json_str(&r->j, "kind", kind);
    json_str(&r->j, "where", where);
    w.found++;
}

static void finish(struct rec *r, const char *kind, bool running, enum wd_action a,
                   const char *reason)
{
    json_bool(&r->j, "running_at_boot", running);
    json_str(&r->j, "action", action_names[a]);
    json_str(&r->j, "reason", reason);
    rec_emit(r);
    kprintf("  watchdog    %s: %s%s\n", kind, running ? "running, " : "not running",
            running ? action_names[a] : "");
    if (reason)
        kprintf("              %s\n", reason);
    if (a == WD_FED)
        w.fed++;
}

/* ---- Intel's TCO --------------------------------------------------------------------------- */

/* Where the TCO block is: the SMBus function's TCOBASE (100 series on), else the LPC
 * bridge's ACPI base + 0x60 (ICH6 to the 9 series); gcs: the mapped GCS register on the
 * latter, where NO_REBOOT is, or 0. */
static uint16_t tco_base(const struct pci_cfg *c, uintptr_t *gcs, const char **where)
{
    *gcs = 0;
    for (uint8_t fn = 0; fn < 8; fn++) {
        uint32_t id = pci_read32(c, 0, LPC_DEV, fn, PCI_ID);
        if ((id & 0xFFFF) != INTEL || (pci_read32(c, 0, LPC_DEV, fn, PCI_CLASS) >> 16) != CLASS_SMBUS)
            continue;
        if (pci_read32(c, 0, LPC_DEV, fn, SMB_TCOCTL) & TCO_BASE_EN) {
            *where = "the SMBus function's TCOBASE (100-series PCH or later)";
            return (uint16_t)(pci_read32(c, 0, LPC_DEV, fn, SMB_TCOBASE) & TCOBASE_MASK);
        }
    }
    uint32_t id = pci_read32(c, 0, LPC_DEV, 0, PCI_ID);
    if ((id & 0xFFFF) != INTEL || (pci_read32(c, 0, LPC_DEV, 0, PCI_CLASS) >> 16) != CLASS_LPC)
        return 0;
    if (!(pci_read32(c, 0, LPC_DEV, 0, LPC_ACPI_CNTL) & ACPI_EN))
        return 0;
    uint16_t abase = (uint16_t)(pci_read32(c, 0, LPC_DEV, 0, LPC_ABASE) & ABASE_MASK);
    uint32_t rcba = pci_read32(c, 0, LPC_DEV, 0, LPC_RCBA);
    if (rcba & RCBA_EN) {
        void *m = phys_map_uncached((rcba & RCBA_MASK) + ICH_GCS_OFFSET, 4);
        *gcs = m ? (uintptr_t)m : 0;
    }
    *where = "the LPC bridge's ACPI base + 0x60 (ICH6 to the 9-series PCH)";
    return abase ? (uint16_t)(abase + ABASE_TCO) : 0;
}

/* The test aid: the TCO running with a short timeout and NO_REBOOT clear, as firmware that
 * leaves it running would hand it over. */
static void arm_tco(struct tco *t, uintptr_t gcs)
{
    if (gcs)
        (void)ich_gcs_no_reboot(gcs, false);
    tco_set_ticks(t, ARM_TICKS);
    tco_start(t);
    kprintf("watchdog_arm=tco: the TCO started with %u ticks (about %u ms to its first "
            "timeout), NO_REBOOT cleared\n", ARM_TICKS, ARM_TICKS * TCO_TICK_MS);
}

static void tco_found(const struct pci_cfg *c, bool arm, bool leave)
{
    uintptr_t gcs;
    const char *where = 0;
    uint16_t base = tco_base(c, &gcs, &where);
    struct tco *t = &w.tco;
    if (!base || tco_probe(t, base))
        return;
    if (arm) {
        arm_tco(t, gcs);
        tco_probe(t, base);
    }
    struct rec r;
    begin(&r, "intel_tco", where);
    json_hex(&r.j, "io_base", base);
    json_u64(&r.j, "timeout_ms", (uint64_t)t->ticks * TCO_TICK_MS);
    json_bool(&r.j, "first_timeout_seen", (t->sts1 & TCO1_STS_TIMEOUT) != 0);
    json_bool(&r.j, "last_boot_reset_by_it", (t->sts2 & TCO2_STS_SECOND_TO) != 0);
    json_bool(&r.j, "no_reboot_reachable", gcs != 0);
    bool running = t->running;
    enum wd_action a = WD_NOT_RUNNING;
    const char *why = 0;
    if (running && leave) {
        a = WD_LEFT;
        why = "watchdog=leave: it may reset the PC during the run";
    } else if (running && tco_stop(t) == 0) {
        a = WD_STOPPED;
    } else if (running) {
        a = WD_FED;
        tco_set_ticks(t, TCO_TICKS_MAX);
        tco_reload(t);
        w.tco_fed = true;
        why = "TCO_TMR_HLT did not take: the longest timeout set, and it is fed at every "
              "measurement window's open and close";
    }
    if (a != WD_LEFT) {
        if (gcs)
            json_bool(&r.j, "no_reboot_set", ich_gcs_no_reboot(gcs, true) == 0);
        tco_clear_status(t);
    }
    finish(&r, "intel_tco", running, a, why);
}

/* ---- AMD's embedded FCH -------------------------------------------------------------------- */

static void fch_found(const struct pci_cfg *c, bool leave)
{
    uint8_t dev, fn;
    if (!pci_find_id(c, 0, FCH_SMBUS_VENDOR, FCH_SMBUS_DEVICE, &dev, &fn) ||
        (pci_read32(c, 0, dev, fn, PCI_CLASS) & 0xFF) < FCH_SMBUS_MIN_REV)
        return;
    struct fch_wdt_where at;
    fch_wdt_locate(&at);
    struct rec r;
    begin(&r, "amd_fch", "the FCH's power-management registers (ports 0xCD6/0xCD7)");
    if (!at.pm_reachable || !at.addr) {
        finish(&r, "amd_fch", false, WD_UNREACHABLE,
               !at.pm_reachable ? "the PM index pair reads all ones (turned off): the "
                                  "watchdog's state is not known"
                                : "its registers are not decoded: it cannot be running");
        return;
    }
    void *m = phys_map_uncached(at.addr, FCH_WDT_BYTES);
    uint32_t ctl = m ? fch_wdt_control((uintptr_t)m) : 0xFFFFFFFFu;
    json_hex(&r.j, "mmio", at.addr);
    json_hex(&r.j, "control", ctl);
    bool running = m && ctl != 0xFFFFFFFFu && (ctl & FCH_WDT_RUN) && !(ctl & FCH_WDT_DISABLED) &&
                   !at.disabled_in_pm;
    json_bool(&r.j, "fired_before", ctl != 0xFFFFFFFFu && (ctl & FCH_WDT_FIRED));
    enum wd_action a = running ? WD_STOPPED : WD_NOT_RUNNING;
    const char *why = 0;
    if (running && leave) {
        a = WD_LEFT;
        why = "watchdog=leave: it may reset the PC during the run";
    } else if (running && fch_wdt_stop((uintptr_t)m)) {
        a = WD_FED;
        w.fch_regs = (uintptr_t)m;
        w.fch_fed = true;
        fch_wdt_reload(w.fch_regs);
        why = "its run bit did not clear: it is fed at every measurement window's open and "
              "close";
    }
    finish(&r, "amd_fch", running, a, why);
}

/* ---- the 6300ESB (QEMU's i6300esb) ---------------------------------------------------------- */

static void esb_found(const struct pci_cfg *c, bool leave)
{
    uint8_t dev, fn;
    if (!pci_find_id(c, 0, ESB_VENDOR, ESB_DEVICE, &dev, &fn))
        return;
    uint32_t v = pci_read32(c, 0, dev, fn, ESB_LOCK_REG & ~3u);
    unsigned shift = (ESB_LOCK_REG & 3u) * 8;
    uint8_t lock = (uint8_t)(v >> shift);
    struct rec r;
    begin(&r, "i6300esb", "PCI configuration space");
    bool running = (lock & ESB_ENABLE) != 0;
    enum wd_action a = running ? WD_STOPPED : WD_NOT_RUNNING;
    const char *why = 0;
    if (running && leave) {
        a = WD_LEFT;
        why = "watchdog=leave: it may reset the PC during the run";
    } else if (running && (lock & ESB_LOCKED)) {
        a = WD_LEFT;
        why = "enabled and locked until the next reset: it cannot be stopped, and is not fed "
              "(its reload needs the unlock sequence in its memory BAR)";
    } else if (running) {
        pci_write32(c, 0, dev, fn, ESB_LOCK_REG & ~3u, v & ~((uint32_t)ESB_ENABLE << shift));
    }
    finish(&r, "i6300esb", running, a, why);
}

/* ---- what ACPI says --------------------------------------------------------------------- */

static bool has_table(const char *sig)
{
    for (unsigned i = 0; i < acpi_facts.n_tables; i++)
        if (k_strcmp(acpi_facts.tables[i].sig, sig) == 0)
            return true;
    return false;
}

void watchdogs_init(bool arm_tco, bool leave)
{
    struct pci_cfg c = { .method = PCI_CFG_PORTS };
    tco_found(&c, arm_tco, leave);
    fch_found(&c, leave);
    esb_found(&c, leave);
    if (w.fed)
        machine_events_add_poll(feed);
    struct rec r;
    rec_begin(&r, "watchdogs");
    json_str(&r.j, "mode", leave ? "leave" : "auto");
    json_u64(&r.j, "found", w.found);
    json_u64(&r.j, "fed", w.fed);
    json_bool(&r.j, "acpi_wdat", has_table("WDAT"));
    json_bool(&r.j, "acpi_wdrt", has_table("WDRT"));
    json_bool(&r.j, "bmc_spmi", has_table("SPMI"));
    if (has_table("SPMI"))
        json_str(&r.j, "bmc_note", "a BMC (IPMI) is described: its watchdog, if the firmware "
                                   "armed it, is not serviced (no IPMI driver here); turn it "
                                   "off in the BMC or the firmware set-up for long runs");
    rec_emit(&r);
    if (!w.found)
        kprintf("  watchdog    none found (Intel TCO, AMD FCH, 6300ESB)%s\n",
                has_table("SPMI") ? "; a BMC is described (SPMI): its watchdog is not serviced"
                                  : "");
}
