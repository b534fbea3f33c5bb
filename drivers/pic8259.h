/* drivers/pic8259.h - the two cascaded 8259A interrupt controllers of the PC.
 *
 * ticklab routes timer interrupts through the IOAPIC and LAPIC; the 8259s are remapped away
 * from the CPU exception vectors (SeaBIOS leaves the master at vector 8, the double-fault
 * vector) and masked. A masked 8259 can still deliver a spurious IRQ7/IRQ15 (a request that
 * went away before the acknowledge cycle): those are recognised via the in-service register
 * and counted, and get no EOI (IRQ15 still needs one on the master, for the cascade). */
#ifndef TICKLAB_DRIVERS_PIC8259_H
#define TICKLAB_DRIVERS_PIC8259_H
#include <stdbool.h>
#include <stdint.h>

#define PIC_VECTOR_BASE 0x20     /* IRQ0..15 -> vectors 0x20..0x2F */

void pic_remap_and_mask(void);
void pic_unmask(unsigned irq);
void pic_mask(unsigned irq);
void pic_eoi(unsigned irq);
/* For IRQ7/IRQ15: true when the in-service bit is clear, i.e. the request was spurious. */
bool pic_is_spurious(unsigned irq);

#endif
