/* kernel/discover/acpi_report.h - the ACPI tables as found at boot: `acpi`, `acpi_summary`,
 * `madt`, `hpet_table`, `fadt` (and with dump=acpi `acpi_dump`) records, a human table, and
 * the decoded facts kept for the IOAPIC, HPET and PM timer code (docs/report-format.md). */
#ifndef TICKLAB_DISCOVER_ACPI_REPORT_H
#define TICKLAB_DISCOVER_ACPI_REPORT_H
#include "ticklab/acpi.h"
#include "kernel/boot/bootinfo.h"

/* Filled by acpi_inventory() during the inventory; read-only afterwards. */
extern struct acpi_info acpi_facts;

/* Parses the firmware's tables (the loader's RSDP copy in boot, else the BIOS areas) into
 * *out and reports them. Never fails: what is missing says why in its record. */
void acpi_inventory(const struct boot_info *boot, struct acpi_info *out);

#endif
