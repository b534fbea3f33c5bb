/* drivers/mcfg.c - see mcfg.h. */
#include "ticklab/mcfg.h"

#include "ticklab/kstring.h"

struct mcfg_entry_raw {
    uint64_t base;
    uint16_t segment;
    uint8_t start_bus, end_bus;
    uint32_t reserved;
} __attribute__((packed));
_Static_assert(sizeof(struct mcfg_entry_raw) == 16, "MCFG entry");
#define MCFG_ENTRIES_AT 44      /* header + 8 reserved bytes */

void acpi_mcfg_decode(struct acpi_mcfg_info *o, const uint8_t *t, uint32_t len)
{
    if (len < MCFG_ENTRIES_AT) {
        o->reason = "shorter than MCFG fields";
        return;
    }
    uint32_t n = (len - MCFG_ENTRIES_AT) / sizeof(struct mcfg_entry_raw);
    for (uint32_t i = 0; i < n; i++) {
        struct mcfg_entry_raw e;
        memcpy(&e, t + MCFG_ENTRIES_AT + i * sizeof(e), sizeof(e));
        if (o->n == ACPI_MCFG_MAX) {
            o->dropped++;
            continue;
        }
        o->e[o->n++] = (struct acpi_mcfg_entry){ e.base, e.segment, e.start_bus, e.end_bus };
    }
    o->present = o->n > 0;
    o->reason = o->present ? NULL : "no entry";
}

