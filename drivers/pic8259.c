/* drivers/pic8259.c - see pic8259.h. Follows the Intel 8259A data sheet (ICW1..ICW4, OCW2/3). */
#include "ticklab/pic8259.h"

#include "ticklab/io.h"

#define PIC1_CMD  0x20
#define PIC1_DATA 0x21
#define PIC2_CMD  0xA0
#define PIC2_DATA 0xA1
#define ICW1_INIT_ICW4 0x11       /* edge triggered, cascade, ICW4 follows */
#define ICW4_8086      0x01
#define OCW2_EOI       0x20
#define OCW3_READ_ISR  0x0B
#define CASCADE_IRQ    2

/* A write to port 0x80 (the POST code port) takes about 1 us on a real ISA bus; old 8259s
 * need a pause between initialisation words. */
static void io_pause(void)
{
    outb(0x80, 0);
}

void pic_remap_and_mask(void)
{
    outb(PIC1_DATA, 0xFF);
    outb(PIC2_DATA, 0xFF);
    outb(PIC1_CMD, ICW1_INIT_ICW4); io_pause();
    outb(PIC2_CMD, ICW1_INIT_ICW4); io_pause();
    outb(PIC1_DATA, PIC_VECTOR_BASE); io_pause();          /* ICW2: vector base */
    outb(PIC2_DATA, PIC_VECTOR_BASE + 8); io_pause();
    outb(PIC1_DATA, 1 << CASCADE_IRQ); io_pause();         /* ICW3: slave on IRQ2 */
    outb(PIC2_DATA, CASCADE_IRQ); io_pause();
    outb(PIC1_DATA, ICW4_8086); io_pause();
    outb(PIC2_DATA, ICW4_8086); io_pause();
    outb(PIC1_DATA, 0xFF);
    outb(PIC2_DATA, 0xFF);
}

void pic_unmask(unsigned irq)
{
    uint16_t port = irq < 8 ? PIC1_DATA : PIC2_DATA;
    outb(port, inb(port) & ~(1u << (irq & 7)));
    if (irq >= 8)
        outb(PIC1_DATA, inb(PIC1_DATA) & ~(1u << CASCADE_IRQ));
}

void pic_mask(unsigned irq)
{
    uint16_t port = irq < 8 ? PIC1_DATA : PIC2_DATA;
    outb(port, inb(port) | (1u << (irq & 7)));
}

void pic_eoi(unsigned irq)
{
    if (irq >= 8)
        outb(PIC2_CMD, OCW2_EOI);
    outb(PIC1_CMD, OCW2_EOI);
}

bool pic_is_spurious(unsigned irq)
{
    uint16_t cmd = irq < 8 ? PIC1_CMD : PIC2_CMD;
    outb(cmd, OCW3_READ_ISR);
    return !(inb(cmd) & (1u << (irq & 7)));
}
