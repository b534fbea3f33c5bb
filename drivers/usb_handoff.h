/* drivers/usb_handoff.h - USB host controllers taken from firmware: the "legacy support"
 * handshakes by which a BIOS that drives USB keyboards and disks from SMM (and emulates an
 * i8042 for them with I/O traps) gives the controller up. Until it does, every frame-list
 * rollover, port change or trapped port 0x60/0x64 access can be an SMI.
 *
 * Follows, per controller kind (PCI class 0Ch subclass 03h, by prog-if):
 *  - UHCI (00h): Intel's PIIX4/ICH datasheets, LEGSUP at configuration offset 0xC0: trap and
 *    SMI enables in bits 0-5 and 7, status bits 8-11 and 15 write-1-to-clear, the PCI
 *    interrupt enable in bit 13. All enables (the PIRQ one too) are turned off and the
 *    status cleared, as Linux's uhci_reset_hc() writes it.
 *  - OHCI (10h): OHCI 1.0a 5.1.1.3.3: HcControl.InterruptRouting (bit 8) set means SMM owns
 *    the controller; the OS enables the OwnershipChange interrupt, sets
 *    HcCommandStatus.OwnershipChangeRequest and waits for IR to clear (bounded, 500 ms).
 *    Then every interrupt is disabled (HcInterruptDisable, MasterInterruptEnable too) and
 *    the status cleared, so the controller raises neither an SMI nor an IRQ.
 *  - EHCI (20h): EHCI 1.0 2.2.4 and 2.1.7-2.1.8: HCCPARAMS.EECP (bits 15:8 of capability
 *    register 0x08) is the configuration-space offset of the first extended capability;
 *    ID 1 is USBLEGSUP (BIOS-owned semaphore bit 16, OS-owned bit 24), USBLEGCTLSTS follows
 *    it (SMI enables in bits 0-5 and 13-15, write-1-to-clear status in 29-31). The OS sets
 *    its semaphore with a byte write and waits (bounded, 1 s) for firmware's to clear.
 *  - xHCI (30h): xHCI 1.2 5.3.6 and 7.1: HCCPARAMS1.xECP (bits 31:16 of capability
 *    register 0x10) is the dword offset from the MMIO base of the first extended capability;
 *    each capability's next pointer (bits 15:8) is a dword offset from itself, 0 ends; ID 1
 *    is USB Legacy Support (semaphores as EHCI's, dword accesses only), USBLEGCTLSTS at +4
 *    (reserved bits kept, SMI enables cleared, RW1C events 29-31 written as 1).
 *
 * On a timeout the BIOS semaphore is cleared by force and the SMI enables turned off anyway,
 * as Linux's quirk_usb_early_handoff does: a BIOS that does not answer is a BIOS bug, and its
 * SMIs would otherwise go on through every measurement.
 *
 * Trust nothing: a BAR of 0, memory decoding off, an extended-capability pointer below 0x40
 * or past the mapped registers, a chain longer than its space allows, a register reading all
 * ones (the controller gone) each end the attempt with one reason; nothing loops or faults.
 * Every wait is bounded by the TSC (the caller's timeout in cycles). */
#ifndef TICKLAB_DRIVERS_USB_HANDOFF_H
#define TICKLAB_DRIVERS_USB_HANDOFF_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/pci.h"

#define PCI_CLASS_SERIAL_BUS  0x0C
#define PCI_SUBCLASS_USB      0x03
#define USB_PROGIF_UHCI       0x00
#define USB_PROGIF_OHCI       0x10
#define USB_PROGIF_EHCI       0x20
#define USB_PROGIF_XHCI       0x30

/* UHCI: LEGSUP in configuration space. */
#define UHCI_LEGSUP           0xC0
#define   UHCI_LEGSUP_ENABLES   0x00BFu    /* traps on 60h/64h, SMI on IRQ, A20, end of pass */
#define   UHCI_LEGSUP_RWC       0x8F00u    /* trap status 8-11, A20 pass-through end 15 */
#define   UHCI_LEGSUP_PIRQ      0x2000u

/* OHCI: operational registers from BAR0. */
#define OHCI_CONTROL          0x04
#define   OHCI_CTRL_IR          (1u << 8)  /* InterruptRouting: interrupts go to SMM */
#define OHCI_CMDSTATUS        0x08
#define   OHCI_CMD_OCR          (1u << 3)  /* OwnershipChangeRequest */
#define OHCI_INTRSTATUS       0x0C
#define OHCI_INTRENABLE       0x10
#define OHCI_INTRDISABLE      0x14
#define   OHCI_INTR_OC          (1u << 30) /* OwnershipChange */
#define   OHCI_INTR_MIE         (1u << 31) /* MasterInterruptEnable */
#define OHCI_REGS_BYTES       0x1000u

/* EHCI: HCCPARAMS among the capability registers (BAR0), the rest in configuration space. */
#define EHCI_HCCPARAMS        0x08
#define   EHCI_HCC_EECP(p)      (((p) >> 8) & 0xFFu)
#define EHCI_REGS_BYTES       0x1000u
#define EHCI_CFG_CAP_MIN      0x40u      /* extended capabilities live above the header */

/* The USBLEGSUP / USBLEGCTLSTS pair, EHCI's and xHCI's alike. */
#define USB_CAP_ID(v)         ((v) & 0xFFu)
#define USB_CAP_NEXT(v)       (((v) >> 8) & 0xFFu)
#define USB_CAP_LEGACY        1u
#define   USB_LEGSUP_BIOS_OWNED (1u << 16)
#define   USB_LEGSUP_OS_OWNED   (1u << 24)
#define USB_LEGCTLSTS         4          /* from the capability */
#define   USB_LEGCTL_SMI_EVENTS   (7u << 29)   /* RW1C: ownership change, PCI command, BAR */
#define   EHCI_LEGCTL_RESERVED    0x1FC01FC0u  /* bits 6-12, 22-28 */
#define   XHCI_LEGCTL_RESERVED    0x000E1FEEu  /* RsvdP bits 1-3, 5-12, 17-19 */

/* xHCI: HCCPARAMS1 among the capability registers at the MMIO base. */
#define XHCI_HCCPARAMS1       0x10
#define   XHCI_HCC_XECP(p)      ((p) >> 16)  /* dwords from the base */
#define XHCI_REGS_BYTES       0x10000u   /* mapped, read only where the chain points */
#define XHCI_CAPS_MAX         256u

#define USB_OHCI_WAIT_MS      500u       /* Linux's bounds */
#define USB_LEGSUP_WAIT_MS    1000u

enum usb_hc_kind { USB_HC_UHCI, USB_HC_OHCI, USB_HC_EHCI, USB_HC_XHCI, USB_HC_OTHER };

enum usb_handoff_action {
    USB_HANDOFF_TAKEN,          /* firmware owned it and let go (or its SMIs were turned off) */
    USB_HANDOFF_NOT_OWNED,      /* firmware did not own it; SMI enables cleared all the same */
    USB_HANDOFF_TIMEOUT,        /* firmware did not let go in time: taken by force */
    USB_HANDOFF_NONE,           /* no legacy support to act on, or out of reach: reason */
    USB_HANDOFF_SKIPPED,        /* not looked at: reason (the caller's word, a kind unknown) */
};

struct usb_handoff {
    enum usb_hc_kind kind;
    bool legacy_cap;            /* its legacy-support register or capability was found */
    const char *cap_reason;     /* !legacy_cap: why none */
    uint32_t cap_offset;        /* UHCI 0xC0; EHCI: configuration offset; xHCI: from BAR0 */
    uint64_t mmio_phys;         /* BAR0 (OHCI, EHCI, xHCI), 0 when not read */
    bool bios_owned_before;     /* UHCI: an enable set; OHCI: IR; EHCI/xHCI: BIOS semaphore */
    enum usb_handoff_action action;
    const char *reason;         /* TIMEOUT, NONE, SKIPPED: why; else NULL */
    uint32_t legsup_before, legsup_after;   /* LEGSUP, HcControl or USBLEGSUP */
    uint32_t ctl_before, ctl_after;         /* USBLEGCTLSTS (EHCI, xHCI), HcInterruptEnable */
    uint64_t wait_tsc;          /* TSC cycles waited for firmware to let go (0: no wait) */
};

/* The kernel's (or a test's) way to reach device registers: a virtual address for len bytes
 * at phys, uncached, or NULL. */
typedef void *(*usb_map_fn)(uint64_t phys, uint64_t len);

enum usb_hc_kind usb_hc_kind_of(uint8_t prog_if);
/* "uhci", "ohci", "ehci", "xhci", "other"; "taken", "not_owned", "timeout", "none",
 * "skipped". */
const char *usb_hc_kind_name(enum usb_hc_kind k);
const char *usb_handoff_action_name(enum usb_handoff_action a);

/* Takes the controller at f from firmware as its kind says (the header's list), every wait
 * bounded by timeout_tsc TSC cycles per handshake (USB_LEGSUP_WAIT_MS / USB_OHCI_WAIT_MS
 * worth). Never fails: the outcome is in *out. */
void usb_handoff_take(const struct pci_cfg *c, const struct pci_fn *f, usb_map_fn map,
                      uint64_t legsup_timeout_tsc, uint64_t ohci_timeout_tsc,
                      struct usb_handoff *out);

#endif
