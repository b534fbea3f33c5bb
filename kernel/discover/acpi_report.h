/* kernel/discover/acpi_report.h - the ACPI tables as found at boot: `acpi`, `acpi_summary`,
 * `madt`, `hpet_table`, `fadt` (and with dump=acpi `acpi_dump`) records, a human table, and
 * the decoded facts kept for the IOAPIC, HPET and PM timer code (docs/report-format.md). */
#ifndef TICKLAB_DISCOVER_ACPI_REPORT_H
#define TICKLAB_DISCOVER_ACPI_REPORT_H
#include "ticklab/acpi.h"
#include "kernel/boot/bootinfo.h"

/* Filled by acpi_tables_parse() before the consoles (the SPCR and MCFG say where serial
 * ports are); read-only afterwards. */
extern struct acpi_info acpi_facts;

/* The bytes of firmware tables at [phys, phys + len) (a struct acpi_mem's or smbios_mem's
 * map; ctx unused), or NULL when they cannot be mapped. */
const void *firmware_map(void *ctx, uint64_t phys, size_t len);

/* Parses the firmware's tables (the loader's RSDP copy in boot, else the BIOS areas) into
 * *out, silently. Never fails: what is missing or broken is described in *out. */
void acpi_tables_parse(const struct boot_info *boot, struct acpi_info *out);
/* Reports what acpi_tables_parse() found: records and a human table. */
void acpi_inventory(const struct boot_info *boot, struct acpi_info *out);

#endif
