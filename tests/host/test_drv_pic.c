/* tests/host/test_drv_pic.c - drivers/pic8259.c against a port spy standing in for
 * the two 8259As (the fake PC has no 8259 model: its lines go straight to the handler). The
 * spy logs every write and answers reads as the chips would: the data ports give the mask
 * register (OCW1), the command ports the in-service register after OCW3 "read ISR". Checked:
 * the initialisation words in the data sheet's order (ICW1..ICW4, both chips, masked before
 * and after), mask/unmask as read-modify-write of one bit (IRQ8-15 also open the cascade),
 * EOI to the slave before the master, and the spurious-IRQ7/15 test. */
#include "ticklab/pic8259.h"
#include "fake/fake.h"
#include "test.h"

#define LOG_MAX 64
static struct {
    unsigned n;
    uint16_t port[LOG_MAX];
    uint8_t val[LOG_MAX];
    uint8_t imr[2], isr[2];
    bool read_isr[2];
} spy;

static unsigned chip_of(uint16_t port) { return port >= 0xA0; }

static uint64_t spy_read(void *ctx, uint64_t off, unsigned size)
{
    uint16_t port = (uint16_t)(uintptr_t)ctx + (uint16_t)off;
    (void)size;
    unsigned c = chip_of(port);
    if (port & 1)
        return spy.imr[c];
    return spy.read_isr[c] ? spy.isr[c] : 0;
}

static void spy_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    uint16_t port = (uint16_t)(uintptr_t)ctx + (uint16_t)off;
    (void)size;
    if (spy.n < LOG_MAX) {
        spy.port[spy.n] = port;
        spy.val[spy.n] = (uint8_t)v;
    }
    spy.n++;
    unsigned c = chip_of(port);
    if (port == 0x80)
        return;
    if (port & 1)
        spy.imr[c] = (uint8_t)v;             /* ICW2-4 land here too; OCW1 last wins */
    else if ((v & 0x18) == 0x08)
        spy.read_isr[c] = (v & 3) == 3;      /* OCW3 */
}

static const struct fake_io_ops spy_ops = { spy_read, spy_write };

static void machine(void)
{
    fake_reset();
    memset(&spy, 0, sizeof(spy));
    REQUIRE(fake_port_register(0x20, 2, &spy_ops, (void *)(uintptr_t)0x20) == 0);
    REQUIRE(fake_port_register(0xA0, 2, &spy_ops, (void *)(uintptr_t)0xA0) == 0);
    REQUIRE(fake_port_register(0x80, 1, &spy_ops, (void *)(uintptr_t)0x80) == 0);
}

/* Writes other than the POST-port pauses, in order. */
static unsigned writes(uint16_t *port, uint8_t *val, unsigned max)
{
    unsigned k = 0;
    for (unsigned i = 0; i < spy.n && i < LOG_MAX && k < max; i++) {
        if (spy.port[i] == 0x80)
            continue;
        port[k] = spy.port[i];
        val[k++] = spy.val[i];
    }
    return k;
}

TEST(drv_pic_remap_and_mask_sends_the_icws_in_order)
{
    static const struct { uint16_t port; uint8_t val; } want[] = {
        { 0x21, 0xFF }, { 0xA1, 0xFF },                     /* masked first */
        { 0x20, 0x11 }, { 0xA0, 0x11 },                     /* ICW1: edge, cascade, ICW4 */
        { 0x21, PIC_VECTOR_BASE }, { 0xA1, PIC_VECTOR_BASE + 8 },   /* ICW2: vectors */
        { 0x21, 0x04 }, { 0xA1, 0x02 },                     /* ICW3: slave on IRQ2 */
        { 0x21, 0x01 }, { 0xA1, 0x01 },                     /* ICW4: 8086 mode */
        { 0x21, 0xFF }, { 0xA1, 0xFF },                     /* and masked again */
    };
    uint16_t port[LOG_MAX];
    uint8_t val[LOG_MAX];
    machine();
    pic_remap_and_mask();
    unsigned n = writes(port, val, LOG_MAX);
    REQUIRE(n == sizeof(want) / sizeof(want[0]));
    for (unsigned i = 0; i < n; i++) {
        CHECK_EQ_U64(port[i], want[i].port);
        CHECK_EQ_U64(val[i], want[i].val);
    }
    CHECK(spy.n > n);                                  /* with pauses between the ICWs */
}

TEST(drv_pic_mask_unmask_change_one_bit)
{
    machine();
    spy.imr[0] = spy.imr[1] = 0xFF;
    pic_unmask(0);
    CHECK_EQ_U64(spy.imr[0], 0xFE);
    CHECK_EQ_U64(spy.imr[1], 0xFF);
    pic_unmask(8);                                     /* the RTC: the slave's bit 0 ... */
    CHECK_EQ_U64(spy.imr[1], 0xFE);
    CHECK_EQ_U64(spy.imr[0], 0xFA);                    /* ... and the cascade, IRQ2 */
    pic_mask(0);
    CHECK_EQ_U64(spy.imr[0], 0xFB);
    pic_mask(8);
    CHECK_EQ_U64(spy.imr[1], 0xFF);
}

TEST(drv_pic_eoi_slave_first_and_spurious_check)
{
    uint16_t port[LOG_MAX];
    uint8_t val[LOG_MAX];
    machine();
    pic_eoi(8);
    unsigned n = writes(port, val, LOG_MAX);
    REQUIRE(n == 2);
    CHECK(port[0] == 0xA0 && val[0] == 0x20);
    CHECK(port[1] == 0x20 && val[1] == 0x20);
    pic_eoi(3);
    CHECK_EQ_U64(spy.n, 3);
    /* IRQ7 with its in-service bit clear: spurious; set: real. */
    spy.isr[0] = 0;
    CHECK(pic_is_spurious(7));
    spy.isr[0] = 0x80;
    CHECK(!pic_is_spurious(7));
    spy.isr[1] = 0x80;
    CHECK(!pic_is_spurious(15));
    spy.isr[1] = 0;
    CHECK(pic_is_spurious(15));
}
