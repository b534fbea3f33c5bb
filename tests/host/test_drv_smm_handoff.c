/* tests/host/test_drv_smm_handoff.c - drivers/acpi_mode.c and drivers/usb_handoff.c against
 * fake firmware: an SMI_CMD port that sets SCI_EN (or never does), and USB host controllers
 * whose BIOS lets go of them (or never does). Every wait is bounded by the fake TSC. */
#include "test.h"
#include "fake/fake.h"
#include "fake/pci.h"
#include "fake/tsc.h"
#include "ticklab/acpi_mode.h"
#include "ticklab/errno.h"
#include "ticklab/usb_handoff.h"

#include <string.h>

#define SMI_PORT  0xB2
#define PM1A_CNT  0x1804
#define SEC       1000000000ull

/* ---- ACPI mode: SMI_CMD and PM1a_CNT ----------------------------------------------------- */

static struct {
    uint16_t pm1_cnt;
    bool answers;               /* ACPI_ENABLE written to SMI_CMD sets SCI_EN */
    unsigned smi_writes;
    uint8_t last;
} fw;

static uint64_t pm1_rd(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)off, (void)size;
    return fw.pm1_cnt;
}

static void pm1_wr(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)off, (void)size, (void)v;
    fake_fault("PM1_CNT written: SCI_EN belongs to firmware");
}

static uint64_t smi_rd(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)off, (void)size;
    return 0;
}

static void smi_wr(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)off, (void)size;
    fw.smi_writes++;
    fw.last = (uint8_t)v;
    if (fw.answers && v == 0xA0)
        fw.pm1_cnt |= ACPI_PM1_CNT_SCI_EN;
}

static const struct fake_io_ops pm1_ops = { pm1_rd, pm1_wr }, smi_ops = { smi_rd, smi_wr };

static struct acpi_mode_regs acpi_machine(uint16_t pm1, bool answers)
{
    fake_reset();
    memset(&fw, 0, sizeof(fw));
    fw.pm1_cnt = pm1;
    fw.answers = answers;
    fake_port_register(PM1A_CNT, 2, &pm1_ops, NULL);
    fake_port_register(SMI_PORT, 1, &smi_ops, NULL);
    return (struct acpi_mode_regs){ .smi_cmd = SMI_PORT, .acpi_enable = 0xA0,
                                    .acpi_disable = 0xA1, .pm1a_cnt = PM1A_CNT };
}

static void acpi_machine_off(void)
{
    fake_port_unregister(PM1A_CNT);
    fake_port_unregister(SMI_PORT);
}

TEST(acpi_mode_already_enabled_writes_nothing)
{
    struct acpi_mode_regs r = acpi_machine(ACPI_PM1_CNT_SCI_EN, true);
    struct acpi_mode_result res;
    CHECK_EQ_I64(acpi_mode_switch(&r, false, fake_tsc_hz() * 3, &res), 0);
    CHECK_EQ_U64(res.action, ACPI_MODE_ALREADY);
    CHECK(res.sci_en_before && res.sci_en_after);
    CHECK_EQ_U64(fw.smi_writes, 0);
    CHECK_EQ_STR(acpi_mode_action_name(res.action), "already");
    acpi_machine_off();
}

TEST(acpi_mode_enable_succeeds)
{
    struct acpi_mode_regs r = acpi_machine(0, true);
    struct acpi_mode_result res;
    CHECK_EQ_I64(acpi_mode_switch(&r, false, fake_tsc_hz() * 3, &res), 0);
    CHECK_EQ_U64(res.action, ACPI_MODE_ENABLED);
    CHECK_EQ_U64(fw.smi_writes, 1);
    CHECK_EQ_U64(fw.last, 0xA0);
    CHECK(!res.sci_en_before && res.sci_en_after);
    CHECK(res.polls >= 1);
    CHECK(res.reason == NULL);
    acpi_machine_off();
}

TEST(acpi_mode_sci_en_never_sets_times_out)
{
    struct acpi_mode_regs r = acpi_machine(0, false);
    struct acpi_mode_result res;
    uint64_t t0 = vclock_now_ns();
    CHECK_EQ_I64(acpi_mode_switch(&r, false, fake_tsc_hz() * 3, &res), -ETIME);
    uint64_t took = vclock_now_ns() - t0;
    CHECK_EQ_U64(res.action, ACPI_MODE_FAILED);
    CHECK(!res.sci_en_after);
    CHECK(res.reason != NULL);
    CHECK_EQ_U64(fw.smi_writes, 1);
    /* Bounded: 3 s of the TSC, plus at most one poll. */
    CHECK(took >= 3 * SEC && took < 3 * SEC + SEC / 100);
    CHECK(res.wait_tsc >= fake_tsc_hz() * 3);
    acpi_machine_off();
}

TEST(acpi_mode_keep_and_not_needed)
{
    struct acpi_mode_regs r = acpi_machine(0, true);
    struct acpi_mode_result res;
    CHECK_EQ_I64(acpi_mode_switch(&r, true, fake_tsc_hz() * 3, &res), 0);
    CHECK_EQ_U64(res.action, ACPI_MODE_KEPT);
    CHECK_EQ_U64(fw.smi_writes, 0);
    r.smi_cmd = 0;
    CHECK_EQ_I64(acpi_mode_switch(&r, false, fake_tsc_hz() * 3, &res), 0);
    CHECK_EQ_U64(res.action, ACPI_MODE_NOT_NEEDED);
    CHECK_EQ_U64(fw.smi_writes, 0);
    r.smi_cmd = SMI_PORT;
    CHECK_EQ_I64(acpi_mode_switch(&r, false, 0, &res), -EINVAL);   /* no clock: no write */
    CHECK_EQ_U64(fw.smi_writes, 0);
    acpi_machine_off();
}

/* ---- USB controllers ----------------------------------------------------------------------- */

#define BAR       0xFEB00000u
#define EHCI_EECP 0x68

static void *map_id(uint64_t phys, uint64_t len)
{
    (void)len;
    return (void *)(uintptr_t)phys;
}

/* Controller registers at BAR: 64 KiB of dwords, with firmware behind them. */
static struct {
    uint32_t r[0x4000];
    bool bios_lets_go;          /* the OS's request is answered */
    unsigned cap;               /* xHCI legacy capability's byte offset */
    unsigned cfg_writes;
} hc;

static uint64_t hc_rd(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    if (size != 4 || (off & 3))
        fake_fault("controller register read of %u bytes at +%#x", size, (unsigned)off);
    return hc.r[off / 4];
}

static void hc_wr(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    if (size != 4 || (off & 3))
        fake_fault("controller register write of %u bytes at +%#x", size, (unsigned)off);
    uint32_t o = (uint32_t)off;
    if (o == OHCI_CMDSTATUS) {                   /* OHCI's firmware hands over */
        if ((v & OHCI_CMD_OCR) && hc.bios_lets_go)
            hc.r[OHCI_CONTROL / 4] &= ~OHCI_CTRL_IR;
        return;
    }
    if (o == OHCI_INTRDISABLE) {
        hc.r[OHCI_INTRENABLE / 4] &= ~(uint32_t)v;
        return;
    }
    hc.r[o / 4] = (uint32_t)v;
    if (hc.cap && o == hc.cap && (v & USB_LEGSUP_OS_OWNED) && hc.bios_lets_go)
        hc.r[o / 4] &= ~USB_LEGSUP_BIOS_OWNED;
}

static const struct fake_io_ops hc_ops = { hc_rd, hc_wr };

/* EHCI firmware: the OS semaphore's byte written, the BIOS one clears. */
static void ehci_fw(void *ctx, uint8_t *cfg, unsigned off, unsigned size)
{
    (void)ctx, (void)size;
    hc.cfg_writes++;
    if (off == EHCI_EECP + 3 && (cfg[EHCI_EECP + 3] & 1) && hc.bios_lets_go)
        cfg[EHCI_EECP + 2] &= (uint8_t)~1u;
}

static uint8_t *usb_machine(uint8_t prog_if, bool lets_go)
{
    fake_reset();
    fake_pci_reset();
    memset(&hc, 0, sizeof(hc));
    hc.bios_lets_go = lets_go;
    fake_pci_attach_ports();
    uint8_t *cfg = fake_pci_add(0, 4, 0, 0x8086, 0x1234, 0x0C0300u | prog_if, 0);
    uint32_t bar = BAR, cmd = 0x6;
    memcpy(cfg + 0x10, &bar, 4);
    memcpy(cfg + 0x04, &cmd, 4);
    fake_mmio_register(BAR, sizeof(hc.r), &hc_ops, NULL);
    fake_pci_on_write(ehci_fw, NULL);
    return cfg;
}

static void usb_machine_off(void)
{
    fake_mmio_unregister(BAR);
    fake_pci_reset();
}

/* Returns the virtual ns the handoff itself took (the bus walk before it not counted). */
static uint64_t take(struct usb_handoff *h)
{
    struct pci_cfg c = { .method = PCI_CFG_PORTS };
    struct pci_fn fns[4];
    unsigned dropped;
    CHECK_EQ_U64(pci_find_class(&c, PCI_CLASS_SERIAL_BUS, PCI_SUBCLASS_USB, fns, 4,
                                &dropped), 1);
    uint64_t t0 = vclock_now_ns();
    usb_handoff_take(&c, &fns[0], map_id, fake_tsc_hz(), fake_tsc_hz() / 2, h);
    return vclock_now_ns() - t0;
}

static uint32_t cfg32(const uint8_t *cfg, unsigned off)
{
    uint32_t v;
    memcpy(&v, cfg + off, 4);
    return v;
}

static uint8_t *ehci_machine(bool lets_go)
{
    uint8_t *cfg = usb_machine(USB_PROGIF_EHCI, lets_go);
    hc.r[EHCI_HCCPARAMS / 4] = EHCI_EECP << 8;
    uint32_t legsup = USB_LEGSUP_BIOS_OWNED | USB_CAP_LEGACY, ctl = 0xE000003Fu;
    memcpy(cfg + EHCI_EECP, &legsup, 4);
    memcpy(cfg + EHCI_EECP + 4, &ctl, 4);
    return cfg;
}

TEST(usb_ehci_bios_releases)
{
    uint8_t *cfg = ehci_machine(true);
    struct usb_handoff h;
    take(&h);
    CHECK_EQ_U64(h.kind, USB_HC_EHCI);
    CHECK(h.legacy_cap);
    CHECK_EQ_U64(h.cap_offset, EHCI_EECP);
    CHECK(h.bios_owned_before);
    CHECK_EQ_U64(h.action, USB_HANDOFF_TAKEN);
    CHECK_EQ_U64(cfg32(cfg, EHCI_EECP), USB_LEGSUP_OS_OWNED | USB_CAP_LEGACY);
    CHECK_EQ_U64(cfg32(cfg, EHCI_EECP + 4) & 0x3Fu, 0);   /* SMI enables off */
    CHECK(h.wait_tsc < fake_tsc_hz() / 100);
    usb_machine_off();
}

TEST(usb_ehci_bios_never_releases_is_forced)
{
    uint8_t *cfg = ehci_machine(false);
    struct usb_handoff h;
    uint64_t took = take(&h);
    CHECK_EQ_U64(h.action, USB_HANDOFF_TIMEOUT);
    CHECK(h.reason != NULL);
    CHECK(took >= SEC && took < SEC + SEC / 100);
    CHECK_EQ_U64(cfg32(cfg, EHCI_EECP) & USB_LEGSUP_BIOS_OWNED, 0);   /* by force */
    CHECK(cfg32(cfg, EHCI_EECP) & USB_LEGSUP_OS_OWNED);
    CHECK_EQ_U64(cfg32(cfg, EHCI_EECP + 4) & 0x3Fu, 0);
    usb_machine_off();
}

TEST(usb_ehci_without_eecp_is_none)
{
    usb_machine(USB_PROGIF_EHCI, true);
    struct usb_handoff h;
    take(&h);
    CHECK_EQ_U64(h.action, USB_HANDOFF_NONE);
    CHECK(!h.legacy_cap);
    CHECK(h.cap_reason != NULL);
    CHECK_EQ_U64(hc.cfg_writes, 0);
    usb_machine_off();
}

TEST(usb_xhci_bios_releases)
{
    usb_machine(USB_PROGIF_XHCI, true);
    /* A first capability (ID 2, supported protocol) then legacy support 0x20 bytes on. */
    hc.r[XHCI_HCCPARAMS1 / 4] = (0x500u / 4) << 16;
    hc.r[0x500 / 4] = 2 | (8u << 8);
    hc.cap = 0x520;
    hc.r[0x520 / 4] = USB_CAP_LEGACY | USB_LEGSUP_BIOS_OWNED;
    hc.r[0x524 / 4] = 0xE0010011u;
    struct usb_handoff h;
    take(&h);
    CHECK_EQ_U64(h.kind, USB_HC_XHCI);
    CHECK_EQ_U64(h.cap_offset, 0x520);
    CHECK_EQ_U64(h.action, USB_HANDOFF_TAKEN);
    CHECK_EQ_U64(hc.r[0x520 / 4], USB_CAP_LEGACY | USB_LEGSUP_OS_OWNED);
    CHECK_EQ_U64(hc.r[0x524 / 4] & ~(XHCI_LEGCTL_RESERVED | USB_LEGCTL_SMI_EVENTS), 0);
    CHECK_EQ_U64(hc.r[0x524 / 4] & 0x11u, 0);
    usb_machine_off();
}

TEST(usb_xhci_bios_never_releases_is_forced)
{
    usb_machine(USB_PROGIF_XHCI, false);
    hc.r[XHCI_HCCPARAMS1 / 4] = (0x500u / 4) << 16;
    hc.cap = 0x500;
    hc.r[0x500 / 4] = USB_CAP_LEGACY | USB_LEGSUP_BIOS_OWNED;
    struct usb_handoff h;
    take(&h);
    CHECK_EQ_U64(h.action, USB_HANDOFF_TIMEOUT);
    CHECK_EQ_U64(hc.r[0x500 / 4] & USB_LEGSUP_BIOS_OWNED, 0);
    CHECK(h.wait_tsc >= fake_tsc_hz());
    usb_machine_off();
}

TEST(usb_ohci_smm_releases)
{
    usb_machine(USB_PROGIF_OHCI, true);
    hc.r[OHCI_CONTROL / 4] = OHCI_CTRL_IR;
    hc.r[OHCI_INTRENABLE / 4] = OHCI_INTR_MIE | 0x5;
    struct usb_handoff h;
    take(&h);
    CHECK_EQ_U64(h.kind, USB_HC_OHCI);
    CHECK(h.bios_owned_before);
    CHECK_EQ_U64(h.action, USB_HANDOFF_TAKEN);
    CHECK_EQ_U64(hc.r[OHCI_CONTROL / 4] & OHCI_CTRL_IR, 0);
    CHECK_EQ_U64(hc.r[OHCI_INTRENABLE / 4], 0);
    usb_machine_off();
}

TEST(usb_ohci_smm_never_releases)
{
    usb_machine(USB_PROGIF_OHCI, false);
    hc.r[OHCI_CONTROL / 4] = OHCI_CTRL_IR;
    struct usb_handoff h;
    uint64_t took = take(&h);
    CHECK_EQ_U64(h.action, USB_HANDOFF_TIMEOUT);
    CHECK(took >= SEC / 2 && took < SEC / 2 + SEC / 100);
    CHECK_EQ_U64(hc.r[OHCI_CONTROL / 4] & OHCI_CTRL_IR, OHCI_CTRL_IR);   /* IR is SMM's */
    usb_machine_off();
}

TEST(usb_uhci_legsup_cleared)
{
    uint8_t *cfg = usb_machine(USB_PROGIF_UHCI, true);
    uint32_t legsup = 0x2F3F;     /* PIRQ, trap status, every trap/SMI enable */
    memcpy(cfg + UHCI_LEGSUP, &legsup, 4);
    struct usb_handoff h;
    take(&h);
    CHECK_EQ_U64(h.kind, USB_HC_UHCI);
    CHECK(h.bios_owned_before);
    CHECK_EQ_U64(h.action, USB_HANDOFF_TAKEN);
    CHECK_EQ_U64(h.legsup_before, 0x2F3F);
    /* The enables byte 0; the status byte written as its RW1C bits (the fake keeps them). */
    CHECK_EQ_U64(cfg[UHCI_LEGSUP], 0);
    CHECK_EQ_U64(cfg[UHCI_LEGSUP + 1] & (UHCI_LEGSUP_PIRQ >> 8), 0);
    usb_machine_off();
}

TEST(pci_find_class_counts_what_does_not_fit)
{
    fake_reset();
    fake_pci_reset();
    fake_pci_attach_ports();
    fake_pci_add(0, 2, 0, 0x8086, 0x1111, 0x020000u, 0);          /* a NIC: not USB */
    fake_pci_add(0, 7, 0, 0x8086, 0x2222, 0x0C0320u, 0x80);       /* EHCI, multi-function */
    fake_pci_add(0, 7, 1, 0x8086, 0x3333, 0x0C0300u, 0);          /* UHCI companion */
    fake_pci_add(1, 0, 0, 0x1B36, 0x000D, 0x0C0330u, 0);          /* xHCI behind a bridge */
    struct pci_cfg c = { .method = PCI_CFG_PORTS };
    struct pci_fn fns[2];
    unsigned dropped = 0;
    CHECK_EQ_U64(pci_find_class(&c, PCI_CLASS_SERIAL_BUS, PCI_SUBCLASS_USB, fns, 2, &dropped),
                 2);
    CHECK_EQ_U64(dropped, 1);
    CHECK_EQ_U64(fns[0].dev, 7);
    CHECK_EQ_U64(fns[0].prog_if, USB_PROGIF_EHCI);
    CHECK_EQ_U64(fns[1].fn, 1);
    CHECK_EQ_U64(usb_hc_kind_of(fns[1].prog_if), USB_HC_UHCI);
    fake_pci_reset();
}
