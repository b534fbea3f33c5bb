/* tests/host/fake/uart16550.c - see uart16550.h. */
#include "fake.h"
#include "uart16550.h"

#include <string.h>

#define FIFO_MAX 16

struct fuart {
    bool attached, mmio;
    uint64_t base;
    unsigned stride, width;         /* MMIO: register spacing, the access size it takes */
    struct fake_uart_opts o;
    uint8_t lcr, mcr, scr, ier, dll, dlm;
    bool fifo_on;                   /* FCR bit 0 written with a FIFO present */
    uint8_t q[FIFO_MAX];            /* the transmit FIFO (or the holding register) */
    uint64_t q_at[FIFO_MAX];        /* when each byte was written */
    unsigned qn;
    bool shifting;
    uint64_t shift_done_ns;         /* when the byte in the shift register has gone */
    uint64_t last_done_ns;
    uint8_t rbr;
    bool dr;
    char out[FAKE_UART_OUT_MAX];
    size_t out_len;
    uint64_t overruns;
};
static struct fuart units[FAKE_UART_UNITS];
static struct fuart *u = &units[0];   /* the unit being accessed or asked about */

static void unit_reset(void);

uint64_t fake_uart_byte_ns(void)
{
    if (u->o.byte_ns)
        return u->o.byte_ns;
    unsigned div = (unsigned)u->dlm << 8 | u->dll;
    if (div == 0)
        div = 1;
    uint64_t clock_hz = u->o.clock_hz ? u->o.clock_hz : 1843200u;
    return 10ull * 1000000000ull * 16 * div / clock_hz;
}

static unsigned depth(void)
{
    return u->fifo_on ? FIFO_MAX : 1;
}

/* Moves the transmitter on to now: bytes leave the shift register, the next enters it. */
static void advance(void)
{
    uint64_t now = vclock_now_ns();
    for (;;) {
        if (u->shifting) {
            if (u->shift_done_ns > now)
                return;
            u->shifting = false;
            u->last_done_ns = u->shift_done_ns;
        }
        if (u->qn == 0)
            return;
        uint64_t start = u->q_at[0] > u->last_done_ns ? u->q_at[0] : u->last_done_ns;
        if (start > now)
            return;
        if (u->out_len < FAKE_UART_OUT_MAX)
            u->out[u->out_len++] = (char)u->q[0];
        memmove(u->q, u->q + 1, --u->qn);
        memmove(u->q_at, u->q_at + 1, u->qn * sizeof(u->q_at[0]));
        u->shifting = true;
        u->shift_done_ns = start + fake_uart_byte_ns();
    }
}

/* MMIO: the register an access names, checked against the bus's spacing and width. */
static uint64_t reg_of(uint64_t off, unsigned size)
{
    if (!u->mmio)
        return off;
    if (off % u->stride || (u->width && size != u->width))
        fake_fault("a %u-byte UART access at offset %u: registers are %u bytes apart, %u wide",
                   size, (unsigned)off, u->stride, u->width);
    return off / u->stride;
}

static uint64_t rd(void *ctx, uint64_t off, unsigned size)
{
    u = ctx;
    off = reg_of(off, size);
    bool dlab = u->lcr & 0x80;
    advance();
    switch (off) {
    case 0:
        if (dlab)
            return u->dll;
        u->dr = false;
        return u->rbr;
    case 1: return dlab ? u->dlm : u->ier;
    case 2: return u->fifo_on ? 0xC1 : 0x01;
    case 3: return u->lcr;
    case 4: return u->mcr;
    case 5: {
        uint8_t lsr = u->dr ? 0x01 : 0;
        if (!u->o.stuck && u->qn == 0)
            lsr |= 0x20;
        if (!u->o.stuck && u->qn == 0 && !u->shifting)
            lsr |= 0x40;
        return lsr;
    }
    case 7: return u->scr;
    default: return 0;
    }
}

static void wr(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    u = ctx;
    off = reg_of(off, size);
    bool dlab = u->lcr & 0x80;
    advance();
    switch (off) {
    case 0:
        if (dlab) {
            u->dll = (uint8_t)v;
        } else if (u->mcr & 0x10) {        /* loopback: straight back to the receiver */
            u->rbr = (uint8_t)v;
            u->dr = true;
        } else if (u->o.stuck) {
            fake_fault("a byte written to a UART whose THRE never came");
        } else if (u->qn >= depth()) {
            u->overruns++;                  /* lost, as on a real UART */
        } else {
            u->q[u->qn] = (uint8_t)v;
            u->q_at[u->qn++] = vclock_now_ns();
            advance();
        }
        break;
    case 1: if (dlab) u->dlm = (uint8_t)v; else u->ier = (uint8_t)v; break;
    case 2:
        u->fifo_on = u->o.fifo && (v & 1);
        if (v & 4)
            u->qn = 0;
        break;
    case 3: u->lcr = (uint8_t)v; break;
    case 4: u->mcr = (uint8_t)v; break;
    case 7: u->scr = (uint8_t)v; break;
    default: break;
    }
}

static const struct fake_io_ops ops = { rd, wr };

void fake_uart_attach(uint16_t base, struct fake_uart_opts opts)
{
    unit_reset();
    u->o = opts;
    u->base = base;
    u->attached = fake_port_register(base, 8, &ops, u) == 0;
}

void fake_uart_attach_mmio(uint64_t addr, unsigned stride, unsigned width,
                           struct fake_uart_opts opts)
{
    unit_reset();
    u->o = opts;
    u->base = addr;
    u->mmio = true;
    u->stride = stride;
    u->width = width;
    u->attached = fake_mmio_register(addr, 8ull * stride, &ops, u) == 0;
}

unsigned fake_uart_divisor(void)
{
    return (unsigned)u->dlm << 8 | u->dll;
}

void fake_uart_set_divisor(unsigned div)
{
    u->dll = (uint8_t)div;
    u->dlm = (uint8_t)(div >> 8);
}

const char *fake_uart_output(size_t *len)
{
    advance();
    *len = u->out_len;
    return u->out;
}

uint64_t fake_uart_overruns(void)
{
    return u->overruns;
}

static void unit_reset(void)
{
    if (u->attached && u->mmio)
        fake_mmio_unregister(u->base);
    else if (u->attached)
        fake_port_unregister((uint16_t)u->base);
    memset(u, 0, sizeof(*u));
}

void fake_uart_select(unsigned unit)
{
    u = &units[unit % FAKE_UART_UNITS];
}

void fake_uart_reset(void)
{
    for (unsigned i = 0; i < FAKE_UART_UNITS; i++) {
        u = &units[i];
        unit_reset();
    }
    u = &units[0];
}
