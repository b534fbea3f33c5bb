/* kernel/discover/irq_check.h - proves the ISA interrupt route end to end: the PIT's IRQ0
 * must arrive on the vector the routing layer chose (through the MADT override to GSI 2 on
 * most PCs). One `irq_check` record. */
#ifndef TICKLAB_DISCOVER_IRQ_CHECK_H
#define TICKLAB_DISCOVER_IRQ_CHECK_H
#include <stdbool.h>

bool irq_check_pit(void);

#endif
