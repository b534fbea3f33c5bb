/* kernel/discover/smm_handoff.c - see smm_handoff.h. */
#include "kernel/discover/smm_handoff.h"

#include "ticklab/acpi_mode.h"
#include "ticklab/calibrate.h"
#include "ticklab/core_clock.h"
#include "ticklab/muldiv.h"
#include "ticklab/pci.h"
#include "ticklab/usb_handoff.h"
#include "kernel/arch/paging.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"

#define USB_HC_MAX 16

static struct core_clock smi;

static void smis_put(struct json *j, uint64_t before, uint64_t after)
{
    if (!smi.smi) {
        json_str(j, "smis_reason", smi.smi_reason);
        return;
    }
    json_u64(j, "smis_before", before);
    json_u64(j, "smis_after", after);
}

static uint64_t smi_count(void)
{
    struct core_clock_sample s = { 0 };
    core_clock_sample(&smi, &s);
    return s.smi_count;
}

/* The TSC rate the waits are bounded by (kernel/timers owns the calibration; it is handed
 * down, not looked up). */
static uint64_t tsc_rate;

static uint64_t wait_us(uint64_t cyc)
{
    return mul_div_u64(cyc, 1000000, tsc_rate);
}

static uint64_t ms_to_cyc(uint64_t ms)
{
    return mul_div_u64(ms, tsc_rate, 1000);
}

/* ---- ACPI mode ------------------------------------------------------------------------------ */

static void acpi_mode(bool keep)
{
    const struct acpi_fadt_info *f = &acpi_facts.fadt;
    struct rec r;
    rec_begin(&r, "acpi_mode");
    json_str(&r.j, "mode", keep ? "keep" : "enable");
    if (!f->present) {
        json_str(&r.j, "action", "not_needed");
        json_str(&r.j, "reason", "no usable FADT: nothing says how to switch");
        rec_emit(&r);
        kprintf("  acpi mode   not switched: no usable FADT\n");
        return;
    }
    struct acpi_mode_regs regs = { .smi_cmd = f->smi_cmd, .acpi_enable = f->acpi_enable,
                                   .acpi_disable = f->acpi_disable,
                                   .pm1a_cnt = f->pm1a_cnt_port, .pm1b_cnt = f->pm1b_cnt_port,
                                   .hw_reduced = f->hw_reduced };
    struct acpi_mode_result res;
    uint64_t s0 = smi_count();
    acpi_mode_switch(&regs, keep, ms_to_cyc(ACPI_MODE_WAIT_MS), &res);
    uint64_t s1 = smi_count();
    json_hex(&r.j, "smi_cmd", f->smi_cmd);
    json_hex(&r.j, "acpi_enable", f->acpi_enable);
    json_hex(&r.j, "acpi_disable", f->acpi_disable);
    json_hex(&r.j, "pm1a_cnt", f->pm1a_cnt_port);
    json_hex(&r.j, "pm1b_cnt", f->pm1b_cnt_port);
    if (f->pm1_cnt_note)
        json_str(&r.j, "pm1_cnt_note", f->pm1_cnt_note);
    if (res.sci_en_known) {
        json_bool(&r.j, "sci_en_before", res.sci_en_before);
        json_bool(&r.j, "sci_en_after", res.sci_en_after);
        json_hex(&r.j, "pm1_cnt_before", res.pm1_cnt_before);
        json_hex(&r.j, "pm1_cnt_after", res.pm1_cnt_after);
    }
    json_str(&r.j, "action", acpi_mode_action_name(res.action));
    json_str(&r.j, "reason", res.reason);
    json_u64(&r.j, "wait_us", wait_us(res.wait_tsc));
    json_u64(&r.j, "polls", res.polls);
    smis_put(&r.j, s0, s1);
    rec_emit(&r);
    kprintf("  acpi mode   %s%s%s", acpi_mode_action_name(res.action), res.reason ? ": " : "",
            res.reason ? res.reason : "");
    if (res.action == ACPI_MODE_ENABLED)
        kprintf(" (SCI_EN after %llu us)", (unsigned long long)wait_us(res.wait_tsc));
    if (smi.smi)
        kprintf(", SMIs %llu -> %llu", (unsigned long long)s0, (unsigned long long)s1);
    kprintf("\n");
}

/* ---- USB ------------------------------------------------------------------------------------ */

static void usb_record(const struct pci_fn *f,
                       const struct usb_handoff *h, uint64_t s0, uint64_t s1)
{
    struct rec r;
    rec_begin(&r, "usb_handoff");
    char bdf[8] = { "0123456789abcdef"[f->bus >> 4], "0123456789abcdef"[f->bus & 15], ':',
                    "0123456789abcdef"[f->dev >> 4], "0123456789abcdef"[f->dev & 15], '.',
                    (char)('0' + f->fn), 0 };
    json_str(&r.j, "bdf", bdf);
    json_str(&r.j, "kind", usb_hc_kind_name(h->kind));
    json_hex(&r.j, "vendor", f->vendor);
    json_hex(&r.j, "device", f->device);
    json_hex(&r.j, "prog_if", f->prog_if);
    if (h->mmio_phys)
        json_hex(&r.j, "mmio", h->mmio_phys);
    if (h->action != USB_HANDOFF_SKIPPED) {
        json_str(&r.j, "legacy_cap", h->legacy_cap ? "found" : "none");
        if (!h->legacy_cap)
            json_str(&r.j, "cap_reason", h->cap_reason);
    }
    if (h->legacy_cap) {
        json_hex(&r.j, "cap_offset", h->cap_offset);
        json_bool(&r.j, "bios_owned_before", h->bios_owned_before);
        json_hex(&r.j, "legsup_before", h->legsup_before);
        json_hex(&r.j, "legsup_after", h->legsup_after);
        if (h->kind != USB_HC_UHCI) {
            json_hex(&r.j, "ctl_before", h->ctl_before);
            json_hex(&r.j, "ctl_after", h->ctl_after);
        }
    }
    json_str(&r.j, "action", usb_handoff_action_name(h->action));
    if (h->action != USB_HANDOFF_NONE || h->reason != h->cap_reason)
        json_str(&r.j, "reason", h->reason);
    json_u64(&r.j, "wait_us", wait_us(h->wait_tsc));
    smis_put(&r.j, s0, s1);
    rec_emit(&r);
    kprintf("  usb         %s %s %04x:%04x: %s", bdf, usb_hc_kind_name(h->kind), f->vendor,
            f->device, usb_handoff_action_name(h->action));
    if (h->action == USB_HANDOFF_TAKEN || h->action == USB_HANDOFF_TIMEOUT)
        kprintf(" after %llu us", (unsigned long long)wait_us(h->wait_tsc));
    if (h->reason)
        kprintf(" (%s)", h->reason);
    if (smi.smi)
        kprintf(", SMIs %llu -> %llu", (unsigned long long)s0, (unsigned long long)s1);
    kprintf("\n");
}

static void *map_uncached(uint64_t phys, uint64_t len)
{
    return phys_map_uncached(phys, len);
}

static void usb_controllers(bool off)
{
    struct pci_cfg c = { .method = PCI_CFG_PORTS };
    static struct pci_fn fns[USB_HC_MAX];
    unsigned dropped;
    unsigned n = pci_find_class(&c, PCI_CLASS_SERIAL_BUS, PCI_SUBCLASS_USB, fns, USB_HC_MAX,
                                &dropped);
    uint64_t legsup_cyc = ms_to_cyc(USB_LEGSUP_WAIT_MS);
    uint64_t ohci_cyc = ms_to_cyc(USB_OHCI_WAIT_MS);
    for (unsigned i = 0; i < n; i++) {
        struct usb_handoff h;
        uint64_t s0 = smi_count();
        if (off)
            h = (struct usb_handoff){ .kind = usb_hc_kind_of(fns[i].prog_if),
                                      .action = USB_HANDOFF_SKIPPED,
                                      .reason = "usb_handoff=keep: left with firmware" };
        else
            usb_handoff_take(&c, &fns[i], map_uncached, legsup_cyc, ohci_cyc, &h);
        usb_record(&fns[i], &h, s0, smi_count());
    }
    if (dropped)
        rec_error("usb_handoff", "more USB host controllers than the kernel keeps: the rest "
                                 "left with firmware");
    if (!n)
        kprintf("  usb         no USB host controller on PCI\n");
}

void smm_handoff_run(bool acpi_keep, bool usb_off, uint64_t tsc_hz)
{
    tsc_rate = tsc_hz ? tsc_hz : CAL_TSC_MAX_HZ;
    core_clock_probe(&smi, &cpu_facts);
    acpi_mode(acpi_keep);
    usb_controllers(usb_off);
}
