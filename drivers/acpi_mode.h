/* drivers/acpi_mode.h - the switch from legacy mode (firmware's SMM handles the fixed
 * events and GPEs) to ACPI mode (they raise the SCI for the OS), as ACPI 6.5 section 4.8.2.5
 * ("Legacy/ACPI Select and the SCI Interrupt") and 16.3.1 describe it.
 *
 * The FADT gives SMI_CMD (an I/O port) and the byte ACPI_ENABLE to write there; the SMI that
 * write raises makes firmware set SCI_EN (bit 0 of PM1_CNT, in the PM1a control block and,
 * when there is one, PM1b: the bit reads as their OR, as ACPICA reads it). Firmware may take
 * its time: ACPICA polls SCI_EN for up to 3 s, and so does this, bounded by the TSC.
 *
 * Nothing to do (ACPI 2.0 and later): SMI_CMD 0, or ACPI_ENABLE and ACPI_DISABLE both 0, is
 * hardware that is always in ACPI mode; so is a hardware-reduced platform (no PM1 blocks).
 *
 * Hazards: the enable write is an SMI, so the CPU disappears into SMM for as long as firmware
 * likes (a few microseconds to milliseconds) while it runs. A PM1a_CNT that reads all ones
 * is no ACPI hardware at that port (or a bad FADT): no write is made. This file never writes
 * PM1_CNT itself (SCI_EN belongs to firmware, ACPI 4.8.3.2.1) and enables no event: the SCI
 * stays quiet until someone sets an enable bit. */
#ifndef TICKLAB_DRIVERS_ACPI_MODE_H
#define TICKLAB_DRIVERS_ACPI_MODE_H
#include <stdbool.h>
#include <stdint.h>

#define ACPI_PM1_CNT_SCI_EN   (1u << 0)
#define ACPI_MODE_WAIT_MS     3000u      /* ACPICA's bound on firmware's switch */

/* What the FADT says (drivers/acpi.h, struct acpi_fadt_info). */
struct acpi_mode_regs {
    uint32_t smi_cmd;           /* the FADT's field: a port when <= 0xffff, 0 none */
    uint8_t acpi_enable, acpi_disable;
    uint16_t pm1a_cnt, pm1b_cnt;   /* ports, 0: none */
    bool hw_reduced;
};

enum acpi_mode_action {
    ACPI_MODE_NOT_NEEDED,       /* ACPI-only hardware: reason says which field says so */
    ACPI_MODE_ALREADY,          /* SCI_EN was set: firmware (or a loader) switched already */
    ACPI_MODE_KEPT,             /* legacy mode, left so because the caller asked */
    ACPI_MODE_ENABLED,          /* ACPI_ENABLE written and SCI_EN came */
    ACPI_MODE_FAILED,           /* reason says why: a bad FADT field, or SCI_EN never came */
};

struct acpi_mode_result {
    enum acpi_mode_action action;
    const char *reason;         /* NULL for ENABLED and ALREADY */
    bool sci_en_known;          /* PM1_CNT was read */
    bool sci_en_before, sci_en_after;
    uint16_t pm1_cnt_before, pm1_cnt_after;   /* PM1a | PM1b */
    uint64_t wait_tsc;          /* TSC cycles from the write to SCI_EN (or to giving up) */
    uint32_t polls;             /* PM1_CNT reads in the wait */
};

/* Switches to ACPI mode unless it is not needed, already done, or keep is set; every outcome
 * is described in *out. timeout_tsc: TSC cycles to wait for SCI_EN after the write
 * (ACPI_MODE_WAIT_MS worth); 0 makes a needed switch fail with "no clock to bound the
 * wait". Returns 0 for NOT_NEEDED, ALREADY, KEPT and ENABLED, -ETIME when SCI_EN never came,
 * -EINVAL for a FADT it cannot act on. */
int acpi_mode_switch(const struct acpi_mode_regs *r, bool keep, uint64_t timeout_tsc,
                     struct acpi_mode_result *out);

/* "not_needed", "already", "kept", "enabled", "failed". */
const char *acpi_mode_action_name(enum acpi_mode_action a);

#endif
