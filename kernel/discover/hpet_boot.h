/* kernel/discover/hpet_boot.h - the HPET as firmware left it, recorded and quieted before
 * anything relies on an interrupt (drivers/hpet.h, hpet_boot_quiet()): legacy replacement
 * would take IRQ0 from the PIT during the interrupt check, and a comparator left armed with
 * FSB delivery writes its message to a local APIC past every masked IOAPIC input. One
 * `hpet_boot_state` record (docs/report-format.md). */
#ifndef TICKLAB_DISCOVER_HPET_BOOT_H
#define TICKLAB_DISCOVER_HPET_BOOT_H
#include "ticklab/hpet.h"

/* After the inventory (acpi_facts: the HPET table's address), before intr_init() and the
 * interrupt check. Maps the block, records it, quiets it; an absent or unanswering block
 * gets the record with the reason. Interrupts off. */
void hpet_boot_check(void);

#endif
