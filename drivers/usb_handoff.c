/* drivers/usb_handoff.c - see usb_handoff.h. */
#include "ticklab/usb_handoff.h"

#include "ticklab/io.h"

#define ALL_ONES 0xFFFFFFFFu
#define EHCI_CAPS_MAX ((256u - EHCI_CFG_CAP_MIN) / 4)   /* dwords above the header */

static const char *const kind_names[] = { "uhci", "ohci", "ehci", "xhci", "other" };
static const char *const action_names[] = { "taken", "not_owned", "timeout", "none",
                                            "skipped" };

enum usb_hc_kind usb_hc_kind_of(uint8_t prog_if)
{
    switch (prog_if) {
    case USB_PROGIF_UHCI: return USB_HC_UHCI;
    case USB_PROGIF_OHCI: return USB_HC_OHCI;
    case USB_PROGIF_EHCI: return USB_HC_EHCI;
    case USB_PROGIF_XHCI: return USB_HC_XHCI;
    }
    return USB_HC_OTHER;
}

const char *usb_hc_kind_name(enum usb_hc_kind k)
{
    return (unsigned)k <= USB_HC_OTHER ? kind_names[k] : "?";
}

const char *usb_handoff_action_name(enum usb_handoff_action a)
{
    return (unsigned)a <= USB_HANDOFF_SKIPPED ? action_names[a] : "?";
}

static void none(struct usb_handoff *out, const char *why)
{
    out->action = USB_HANDOFF_NONE;
    out->reason = why;
}

static void no_cap(struct usb_handoff *out, const char *why)
{
    out->legacy_cap = false;
    out->cap_reason = why;
    none(out, why);
}

/* ---- UHCI ----------------------------------------------------------------------------------- */

static void uhci(const struct pci_cfg *c, const struct pci_fn *f, struct usb_handoff *out)
{
    uint32_t v = pci_read32(c, f->bus, f->dev, f->fn, UHCI_LEGSUP);
    if (v == ALL_ONES) {
        no_cap(out, "LEGSUP reads all ones: the function is gone");
        return;
    }
    out->legacy_cap = true;
    out->cap_offset = UHCI_LEGSUP;
    out->legsup_before = v & 0xFFFF;
    out->bios_owned_before = (v & UHCI_LEGSUP_ENABLES) != 0;
    /* Two bytes, the enables first: the status is cleared once nothing can set it again. */
    pci_write8(c, f->bus, f->dev, f->fn, UHCI_LEGSUP, 0);
    pci_write8(c, f->bus, f->dev, f->fn, UHCI_LEGSUP + 1, (uint8_t)(UHCI_LEGSUP_RWC >> 8));
    out->legsup_after = pci_read32(c, f->bus, f->dev, f->fn, UHCI_LEGSUP) & 0xFFFF;
    out->action = out->bios_owned_before ? USB_HANDOFF_TAKEN : USB_HANDOFF_NOT_OWNED;
}

/* ---- OHCI ----------------------------------------------------------------------------------- */

static void ohci(uintptr_t regs, uint64_t timeout_tsc, struct usb_handoff *out)
{
    uint32_t ctl = mmio_read32(regs + OHCI_CONTROL);
    if (ctl == ALL_ONES) {
        no_cap(out, "HcControl reads all ones: nothing at BAR0");
        return;
    }
    out->legacy_cap = true;
    out->cap_offset = OHCI_CONTROL;
    out->legsup_before = out->legsup_after = ctl;
    out->ctl_before = mmio_read32(regs + OHCI_INTRENABLE);
    out->bios_owned_before = (ctl & OHCI_CTRL_IR) != 0;
    out->action = USB_HANDOFF_NOT_OWNED;
    if (out->bios_owned_before) {
        /* SMM hears the request through the OwnershipChange interrupt. */
        mmio_write32(regs + OHCI_INTRENABLE, OHCI_INTR_OC);
        mmio_write32(regs + OHCI_CMDSTATUS, OHCI_CMD_OCR);
        uint64_t t0 = rdtsc();
        out->action = USB_HANDOFF_TAKEN;
        while ((out->legsup_after = mmio_read32(regs + OHCI_CONTROL)) & OHCI_CTRL_IR) {
            out->wait_tsc = rdtsc() - t0;
            if (out->wait_tsc >= timeout_tsc) {
                out->action = USB_HANDOFF_TIMEOUT;
                out->reason = "SMM did not give the controller up (InterruptRouting still "
                              "set): its interrupts disabled anyway";
                break;
            }
            cpu_relax();
        }
        if (out->action == USB_HANDOFF_TAKEN)
            out->wait_tsc = rdtsc() - t0;
    }
    /* Neither SMM nor an unhandled IRQ from here on. */
    mmio_write32(regs + OHCI_INTRDISABLE, ALL_ONES);
    mmio_write32(regs + OHCI_INTRSTATUS, ALL_ONES);
    out->ctl_after = mmio_read32(regs + OHCI_INTRENABLE);
}

/* ---- EHCI and xHCI: the semaphores ------------------------------------------------------- */

/* Where a capability's USBLEGSUP and USBLEGCTLSTS are: configuration space (EHCI) or MMIO
 * (xHCI). */
struct legsup_regs {
    const struct pci_cfg *c;
    const struct pci_fn *f;
    uintptr_t mmio;             /* 0: configuration space at off */
    uint32_t off;
};

static uint32_t rd(const struct legsup_regs *r, uint32_t at)
{
    if (r->mmio)
        return mmio_read32(r->mmio + r->off + at);
    return pci_read32(r->c, r->f->bus, r->f->dev, r->f->fn, (uint16_t)(r->off + at));
}

static void wr(const struct legsup_regs *r, uint32_t at, uint32_t v)
{
    if (r->mmio)
        mmio_write32(r->mmio + r->off + at, v);
    else
        pci_write32(r->c, r->f->bus, r->f->dev, r->f->fn, (uint16_t)(r->off + at), v);
}

/* Ask for the controller: EHCI by the OS semaphore's byte alone (firmware may clear its own
 * in the same dword meanwhile), xHCI by a dword (its registers take no byte writes). */
static void ask(const struct legsup_regs *r, uint32_t legsup)
{
    if (r->mmio)
        wr(r, 0, legsup | USB_LEGSUP_OS_OWNED);
    else
        pci_write8(r->c, r->f->bus, r->f->dev, r->f->fn, (uint16_t)(r->off + 3), 1);
}

static void force(const struct legsup_regs *r, uint32_t legsup)
{
    if (r->mmio)
        wr(r, 0, (legsup | USB_LEGSUP_OS_OWNED) & ~USB_LEGSUP_BIOS_OWNED);
    else
        pci_write8(r->c, r->f->bus, r->f->dev, r->f->fn, (uint16_t)(r->off + 2), 0);
}

static void semaphores(const struct legsup_regs *r, uint32_t reserved, uint64_t timeout_tsc,
                       struct usb_handoff *out)
{
    uint32_t v = rd(r, 0);
    out->legsup_before = out->legsup_after = v;
    out->ctl_before = rd(r, USB_LEGCTLSTS);
    out->bios_owned_before = (v & USB_LEGSUP_BIOS_OWNED) != 0;
    out->action = USB_HANDOFF_NOT_OWNED;
    if (out->bios_owned_before) {
        ask(r, v);
        uint64_t t0 = rdtsc();
        out->action = USB_HANDOFF_TAKEN;
        for (;;) {
            out->legsup_after = rd(r, 0);
            out->wait_tsc = rdtsc() - t0;
            if (out->legsup_after == ALL_ONES) {
                none(out, "USBLEGSUP read all ones while waiting: the controller gone");
                break;
            }
            if (!(out->legsup_after & USB_LEGSUP_BIOS_OWNED))
                break;
            if (out->wait_tsc >= timeout_tsc) {
                out->action = USB_HANDOFF_TIMEOUT;
                out->reason = "firmware did not clear its semaphore: cleared by force, its "
                              "SMIs disabled anyway";
                force(r, v);
                out->legsup_after = rd(r, 0);
                break;
            }
            cpu_relax();
        }
    }
    /* SMIs off whether or not firmware let go: enables cleared, events acknowledged. */
    wr(r, USB_LEGCTLSTS, (rd(r, USB_LEGCTLSTS) & reserved) | USB_LEGCTL_SMI_EVENTS);
    out->ctl_after = rd(r, USB_LEGCTLSTS);
}

/* ---- EHCI ----------------------------------------------------------------------------------- */

static void ehci(const struct pci_cfg *c, const struct pci_fn *f, uintptr_t regs,
                 uint64_t timeout_tsc, struct usb_handoff *out)
{
    uint32_t hcc = mmio_read32(regs + EHCI_HCCPARAMS);
    if (hcc == ALL_ONES) {
        no_cap(out, "HCCPARAMS reads all ones: nothing at BAR0");
        return;
    }
    uint32_t off = EHCI_HCC_EECP(hcc);
    if (off == 0) {
        no_cap(out, "HCCPARAMS.EECP is 0: no extended capabilities, so no USBLEGSUP");
        return;
    }
    for (unsigned n = 0; n < EHCI_CAPS_MAX; n++) {
        if (off < EHCI_CFG_CAP_MIN || (off & 3u)) {
            no_cap(out, "an extended-capability pointer below 0x40 or not dword aligned");
            return;
        }
        uint32_t v = pci_read32(c, f->bus, f->dev, f->fn, (uint16_t)off);
        if (v == ALL_ONES) {
            no_cap(out, "an extended capability reads all ones: the function is gone");
            return;
        }
        if (USB_CAP_ID(v) == USB_CAP_LEGACY) {
            out->legacy_cap = true;
            out->cap_offset = off;
            struct legsup_regs r = { .c = c, .f = f, .off = off };
            semaphores(&r, EHCI_LEGCTL_RESERVED, timeout_tsc, out);
            return;
        }
        off = USB_CAP_NEXT(v);
        if (off == 0) {
            no_cap(out, "no USBLEGSUP among the extended capabilities");
            return;
        }
    }
    no_cap(out, "the extended-capability chain loops (more entries than configuration space "
                "holds)");
}

/* ---- xHCI ----------------------------------------------------------------------------------- */

static void xhci(uintptr_t regs, uint64_t timeout_tsc, struct usb_handoff *out)
{
    uint32_t hcc = mmio_read32(regs + XHCI_HCCPARAMS1);
    if (hcc == ALL_ONES) {
        no_cap(out, "HCCPARAMS1 reads all ones: nothing at BAR0");
        return;
    }
    uint64_t off = (uint64_t)XHCI_HCC_XECP(hcc) << 2;
    if (off == 0) {
        no_cap(out, "HCCPARAMS1.xECP is 0: no extended capabilities, so no legacy support");
        return;
    }
    for (unsigned n = 0; n < XHCI_CAPS_MAX; n++) {
        if (off + 8 > XHCI_REGS_BYTES) {
            no_cap(out, "an extended capability past the 64 KiB of registers mapped: a bad "
                        "pointer");
            return;
        }
        uint32_t v = mmio_read32(regs + (uintptr_t)off);
        if (v == ALL_ONES) {
            no_cap(out, "an extended capability reads all ones: a bad pointer, or the "
                        "controller gone");
            return;
        }
        if (USB_CAP_ID(v) == USB_CAP_LEGACY) {
            out->legacy_cap = true;
            out->cap_offset = (uint32_t)off;
            struct legsup_regs r = { .mmio = regs, .off = (uint32_t)off };
            semaphores(&r, XHCI_LEGCTL_RESERVED, timeout_tsc, out);
            return;
        }
        if (USB_CAP_NEXT(v) == 0) {
            no_cap(out, "no USB Legacy Support among the extended capabilities");
            return;
        }
        off += (uint64_t)USB_CAP_NEXT(v) << 2;   /* from this capability, always forward */
    }
    no_cap(out, "more extended capabilities than 256: the chain is taken as broken");
}

/* ---- the controller ------------------------------------------------------------------------- */

/* BAR0 mapped, or 0 with the reason in *out. */
static uintptr_t bar0(const struct pci_cfg *c, const struct pci_fn *f, usb_map_fn map,
                      uint64_t len, struct usb_handoff *out)
{
    out->mmio_phys = pci_bar_mem(c, f->bus, f->dev, f->fn, 0);
    if (out->mmio_phys == 0) {
        no_cap(out, "BAR0 is not a memory BAR, or is 0: firmware cannot be using it");
        return 0;
    }
    if (!pci_mem_enabled(c, f->bus, f->dev, f->fn)) {
        no_cap(out, "memory decoding is off: firmware is not using it");
        return 0;
    }
    void *m = map(out->mmio_phys, len);
    if (!m)
        no_cap(out, "BAR0 could not be mapped");
    return (uintptr_t)m;
}

void usb_handoff_take(const struct pci_cfg *c, const struct pci_fn *f, usb_map_fn map,
                      uint64_t legsup_timeout_tsc, uint64_t ohci_timeout_tsc,
                      struct usb_handoff *out)
{
    *out = (struct usb_handoff){ .kind = usb_hc_kind_of(f->prog_if) };
    uintptr_t regs;
    switch (out->kind) {
    case USB_HC_UHCI:
        uhci(c, f, out);
        return;
    case USB_HC_OHCI:
        if ((regs = bar0(c, f, map, OHCI_REGS_BYTES, out)) != 0)
            ohci(regs, ohci_timeout_tsc, out);
        return;
    case USB_HC_EHCI:
        if ((regs = bar0(c, f, map, EHCI_REGS_BYTES, out)) != 0)
            ehci(c, f, regs, legsup_timeout_tsc, out);
        return;
    case USB_HC_XHCI:
        if ((regs = bar0(c, f, map, XHCI_REGS_BYTES, out)) != 0)
            xhci(regs, legsup_timeout_tsc, out);
        return;
    case USB_HC_OTHER:
        break;
    }
    out->action = USB_HANDOFF_SKIPPED;
    out->reason = "not a UHCI, OHCI, EHCI or xHCI controller (prog-if): no legacy support "
                  "defined";
}
