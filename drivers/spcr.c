/* drivers/spcr.c - see spcr.h. */
#include "ticklab/spcr.h"

#include "ticklab/kstring.h"

/* acpi.h includes this header, so the few ACPI shapes needed are spelled here. */
#define SPACE_MEMORY 0          /* SPACE_MEMORY */
#define SPACE_IO     1          /* SPACE_IO */
struct spcr_gas {
    uint8_t space, bit_width, bit_offset, access_size;
    uint64_t address;
} __attribute__((packed));

/* The table as revision 3 lays it out (revision 2: clock_hz is reserved). */
struct spcr_fields {
    uint8_t header[8];
    uint8_t revision;
    uint8_t header_rest[27];
    uint8_t interface_type;
    uint8_t reserved0[3];
    struct spcr_gas base;
    uint8_t irq_type;
    uint8_t irq;
    uint32_t gsi;
    uint8_t baud_code;          /* 0 as is, 3 9600, 4 19200, 6 57600, 7 115200 */
    uint8_t parity, stop_bits, flow_control, terminal_type, language;
    uint16_t pci_device, pci_vendor;
    uint8_t pci_bus, pci_dev, pci_fn;
    uint32_t pci_flags;
    uint8_t pci_segment;
    uint32_t clock_hz;          /* revision >= 3 */
} __attribute__((packed));
_Static_assert(offsetof(struct spcr_fields, interface_type) == 36, "SPCR layout");
_Static_assert(offsetof(struct spcr_fields, base) == 40, "SPCR layout");
_Static_assert(offsetof(struct spcr_fields, irq_type) == 52, "SPCR layout");
_Static_assert(offsetof(struct spcr_fields, baud_code) == 58, "SPCR layout");
_Static_assert(offsetof(struct spcr_fields, pci_device) == 64, "SPCR layout");
_Static_assert(offsetof(struct spcr_fields, pci_flags) == 71, "SPCR layout");
_Static_assert(offsetof(struct spcr_fields, clock_hz) == 76, "SPCR layout");
_Static_assert(sizeof(struct spcr_fields) == SPCR_FIELDS_BYTES, "SPCR layout");

#define GAS_ACCESS_LEGACY 0     /* "undefined" (ACPI 1.0): byte, as a PC's COM port */
#define GAS_ACCESS_BYTE   1
#define GAS_ACCESS_DWORD  3

uint32_t spcr_baud(uint8_t code)
{
    switch (code) {
    case 3: return 9600;
    case 4: return 19200;
    case 6: return 57600;
    case 7: return 115200;
    default: return 0;
    }
}

static bool interface_16550(uint8_t type)
{
    return type == SPCR_IF_16550 || type == SPCR_IF_16450 || type == SPCR_IF_16550_GAS;
}

/* Register layout from the GAS; NULL or why it cannot be driven. */
static const char *layout(struct acpi_spcr_info *o)
{
    if (o->space != SPACE_MEMORY && o->space != SPACE_IO)
        return "address space not memory or I/O";
    if (o->addr == 0)
        return "address zero";
    if (o->access_size == GAS_ACCESS_LEGACY || o->access_size == GAS_ACCESS_BYTE)
        o->stride = o->access_bytes = 1;
    else if (o->access_size == GAS_ACCESS_DWORD && o->space == SPACE_MEMORY)
        o->stride = o->access_bytes = 4;
    else
        return "access size not byte or dword";
    if (o->space == SPACE_IO && o->addr > 0xFFFF - 7u)
        return "I/O port over 0xffff";
    return NULL;
}

void acpi_spcr_decode(struct acpi_spcr_info *o, const uint8_t *t, uint32_t len)
{
    struct spcr_fields f;
    memset(&f, 0, sizeof(f));
    if (len < offsetof(struct spcr_fields, pci_device)) {
        o->reason = "shorter than SPCR fields";
        return;
    }
    memcpy(&f, t, len < sizeof(f) ? len : sizeof(f));
    o->decoded = true;
    o->revision = f.revision;
    o->interface_type = f.interface_type;
    o->space = f.base.space;
    o->bit_width = f.base.bit_width;
    o->access_size = f.base.access_size;
    o->addr = f.base.address;
    o->irq_type = f.irq_type;
    o->irq = f.irq;
    o->gsi = f.gsi;
    o->baud_code = f.baud_code;
    o->baud = spcr_baud(f.baud_code);
    if (f.baud_code != 0 && o->baud == 0)
        o->note = "reserved baud rate code: the firmware's divisor kept";
    o->parity = f.parity, o->stop_bits = f.stop_bits;
    o->flow_control = f.flow_control, o->terminal_type = f.terminal_type;
    bool has_pci = len >= offsetof(struct spcr_fields, clock_hz);
    o->pci_device = has_pci ? f.pci_device : 0xFFFF;
    o->pci_vendor = has_pci ? f.pci_vendor : 0xFFFF;
    o->pci_bus = f.pci_bus, o->pci_dev = f.pci_dev, o->pci_fn = f.pci_fn;
    o->pci_flags = f.pci_flags, o->pci_segment = f.pci_segment;
    if (f.revision >= 3 && len >= SPCR_FIELDS_BYTES)
        o->clock_hz = f.clock_hz;
    if (!interface_16550(f.interface_type)) {
        o->reason = "interface type not 16550-compatible";
        return;
    }
    o->reason = layout(o);
    o->present = o->reason == NULL;
}
