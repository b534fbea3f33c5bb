/* kernel/discover/smbios_report.h - the SMBIOS tables as found at boot: one `smbios` record
 * (which PC this is: system, baseboard, BIOS, processor; never a serial number, asset tag
 * or UUID) and a line of the inventory table (docs/report-format.md). */
#ifndef TICKLAB_DISCOVER_SMBIOS_REPORT_H
#define TICKLAB_DISCOVER_SMBIOS_REPORT_H
#include "kernel/boot/bootinfo.h"

/* Finds the entry point (the loader's copies, the EFI configuration table, the BIOS area),
 * decodes the tables and reports them. Never fails: a missing or damaged table is reported
 * with its reason and the run goes on. */
void smbios_inventory(const struct boot_info *boot);

#endif
