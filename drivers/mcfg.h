/* drivers/mcfg.h - ACPI's MCFG table (PCI Firmware Specification 3.2, 4.1.2): where each PCI
 * segment's memory-mapped configuration space ("ECAM") is, and for which buses. Decoded by
 * acpi_parse() (acpi.h) once the checksum is verified; used by the PCI walk (pci.h). */
#ifndef TICKLAB_DRIVERS_MCFG_H
#define TICKLAB_DRIVERS_MCFG_H
#include <stdbool.h>
#include <stdint.h>

/* ACPI's MCFG (PCI Firmware Spec 4.1.2): one ECAM window per segment and bus range. */
#define ACPI_MCFG_MAX 4
struct acpi_mcfg_entry {
    uint64_t base;
    uint16_t segment;
    uint8_t start_bus, end_bus;
};
/* Decoding reasons: "shorter than MCFG fields", "no entry". */
struct acpi_mcfg_info {
    bool present;
    const char *reason, *table_reason;
    struct acpi_mcfg_entry e[ACPI_MCFG_MAX];
    unsigned n, dropped;
};
void acpi_mcfg_decode(struct acpi_mcfg_info *o, const uint8_t *t, uint32_t len);

#endif
