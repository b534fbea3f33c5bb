/* drivers/acpi_mode.c - see acpi_mode.h. */
#include "ticklab/acpi_mode.h"

#include "ticklab/errno.h"
#include "ticklab/io.h"

#define PORT_MAX 0xFFFFu

static const char *const action_names[] = { "not_needed", "already", "kept", "enabled",
                                            "failed" };

const char *acpi_mode_action_name(enum acpi_mode_action a)
{
    return (unsigned)a < sizeof(action_names) / sizeof(action_names[0]) ? action_names[a]
                                                                          : "?";
}

/* PM1a_CNT | PM1b_CNT, as ACPICA reads a PM1 control bit. */
static uint16_t pm1_cnt(const struct acpi_mode_regs *r)
{
    uint16_t v = inw(r->pm1a_cnt);
    if (r->pm1b_cnt)
        v |= inw(r->pm1b_cnt);
    return v;
}

static int fail(struct acpi_mode_result *out, const char *why, int err)
{
    out->action = ACPI_MODE_FAILED;
    out->reason = why;
    return err;
}

/* The FADT says the mode never changes: the reason, or NULL when a switch is possible. */
static const char *not_needed(const struct acpi_mode_regs *r)
{
    if (r->hw_reduced)
        return "hardware-reduced ACPI: no legacy mode";
    if (r->smi_cmd == 0)
        return "SMI_CMD is 0: the hardware is always in ACPI mode";
    if (r->acpi_enable == 0 && r->acpi_disable == 0)
        return "ACPI_ENABLE and ACPI_DISABLE are both 0: the hardware is always in ACPI mode";
    return 0;
}

/* Polls SCI_EN until it is set or timeout_tsc cycles have passed since t0. */
static bool wait_sci_en(const struct acpi_mode_regs *r, uint64_t t0, uint64_t timeout_tsc,
                        struct acpi_mode_result *out)
{
    for (;;) {
        uint16_t v = pm1_cnt(r);
        uint64_t now = rdtsc();
        out->polls++;
        out->wait_tsc = now - t0;
        out->pm1_cnt_after = v;
        if (v & ACPI_PM1_CNT_SCI_EN)
            return true;
        if (now - t0 >= timeout_tsc)
            return false;
        cpu_relax();
    }
}

int acpi_mode_switch(const struct acpi_mode_regs *r, bool keep, uint64_t timeout_tsc,
                     struct acpi_mode_result *out)
{
    *out = (struct acpi_mode_result){ 0 };
    const char *why = not_needed(r);
    if (why) {
        out->action = ACPI_MODE_NOT_NEEDED;
        out->reason = why;
        return 0;
    }
    if (r->pm1a_cnt == 0)
        return fail(out, "no PM1a control block in the FADT: SCI_EN cannot be read", -EINVAL);
    out->pm1_cnt_before = out->pm1_cnt_after = pm1_cnt(r);
    if (out->pm1_cnt_before == 0xFFFFu)
        return fail(out, "PM1_CNT reads all ones: no ACPI hardware at the FADT's port",
                    -EINVAL);
    out->sci_en_known = true;
    out->sci_en_before = out->sci_en_after = out->pm1_cnt_before & ACPI_PM1_CNT_SCI_EN;
    if (out->sci_en_before) {
        out->action = ACPI_MODE_ALREADY;
        return 0;
    }
    if (keep) {
        out->action = ACPI_MODE_KEPT;
        out->reason = "acpi_mode=keep: left in legacy mode (firmware's SMM handles ACPI "
                      "events)";
        return 0;
    }
    if (r->smi_cmd > PORT_MAX)
        return fail(out, "SMI_CMD is over 0xffff: not an I/O port", -EINVAL);
    if (timeout_tsc == 0)
        return fail(out, "no clock to bound the wait for SCI_EN: not switched", -EINVAL);
    uint64_t t0 = rdtsc();
    outb((uint16_t)r->smi_cmd, r->acpi_enable);
    bool on = wait_sci_en(r, t0, timeout_tsc, out);
    out->sci_en_after = on;
    if (!on)
        return fail(out, "SCI_EN did not come within 3 s of writing ACPI_ENABLE to SMI_CMD: "
                         "firmware left legacy mode in place", -ETIME);
    out->action = ACPI_MODE_ENABLED;
    return 0;
}
