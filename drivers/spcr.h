/* drivers/spcr.h - ACPI's Serial Port Console Redirection table: where the firmware's own
 * console is (the serial-over-LAN port a server's BMC shows, often COM2 or a memory-mapped
 * UART), and how it is set up.
 *
 * Follows Microsoft's "Serial Port Console Redirection Table" specification (revisions 2 to
 * 4) and the interface subtypes of its DBG2 specification (table 3). Decoded by acpi_parse()
 * (acpi.h) once the table's checksum has been verified; acpi_spcr_decode() is public so
 * crafted bytes can be decoded alone.
 *
 * Quirks handled:
 *  - baud rate code 0: the firmware's divisor is left as it is (baud 0 here); codes other
 *    than 3/4/6/7 are reserved: also left as is, with a note;
 *  - access size 0 (ACPI 1.0's "undefined", still written by firmware): byte access;
 *    for a system-memory UART, 32-bit access (size 3) means registers 4 bytes apart, as
 *    Linux's "mmio32" and the DesignWare UARTs in Intel's PCH have them;
 *  - the UART clock field exists from revision 3 on (0 there too: not given): before it,
 *    the 1.8432 MHz a PC's COM port has is assumed by the caller;
 *  - PCI fields (device ID 0xFFFF: not a PCI device) are kept for the report and to match
 *    the port against the PCI walk's finds.
 * Reasons (stable, in records): "shorter than SPCR fields", "interface type not
 * 16550-compatible" (the number in interface_type), "address space not memory or I/O",
 * "address zero", "access size not byte or dword", "I/O port over 0xffff". */
#ifndef TICKLAB_DRIVERS_SPCR_H
#define TICKLAB_DRIVERS_SPCR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPCR_IF_16550        0x00   /* full 16550 */
#define SPCR_IF_16450        0x01   /* 16450 (a 16550 subset) */
#define SPCR_IF_16550_GAS    0x12   /* 16550-compatible, parameters in the GAS */
#define SPCR_FIELDS_BYTES    80u    /* revision 2 and 3 tables end here */

/* Interrupt type bits. */
#define SPCR_IRQ_8259        (1u << 0)
#define SPCR_IRQ_IOAPIC      (1u << 1)
#define SPCR_IRQ_SAPIC       (1u << 2)
#define SPCR_IRQ_GIC         (1u << 3)

struct acpi_spcr_info {
    bool present;               /* decoded and usable: a 16550 this driver can drive */
    bool decoded;               /* the fields below come from a table (usable or not) */
    const char *reason, *table_reason;
    const char *note;           /* e.g. a reserved baud code kept as is; NULL otherwise */
    uint8_t revision;
    uint8_t interface_type;
    uint8_t space;              /* ACPI_GAS_MEMORY or ACPI_GAS_IO (others refused) */
    uint8_t bit_width, access_size;   /* as in the GAS */
    uint64_t addr;
    uint8_t stride, access_bytes;     /* derived: 1/1 or 4/4 */
    uint8_t baud_code;          /* as in the table */
    uint32_t baud;              /* 0: leave the firmware's divisor */
    uint8_t irq_type, irq;
    uint32_t gsi;
    uint8_t parity, stop_bits, flow_control, terminal_type;
    uint16_t pci_device, pci_vendor;  /* 0xFFFF: not a PCI device */
    uint8_t pci_bus, pci_dev, pci_fn, pci_segment;
    uint32_t pci_flags;
    uint32_t clock_hz;          /* revision >= 3 and not 0: the UART's input clock */
};

/* Decodes a verified SPCR of len bytes (header included) into *o. */
void acpi_spcr_decode(struct acpi_spcr_info *o, const uint8_t *t, uint32_t len);
/* The baud rate a code stands for (0 for "as is" and reserved codes). */
uint32_t spcr_baud(uint8_t code);

#endif
