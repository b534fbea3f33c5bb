/* drivers/uart16550.c - see uart16550.h. */
#include "ticklab/uart16550.h"

#include "ticklab/io.h"
#include "ticklab/errno.h"

#define UART_THR 0          /* transmit holding (write), DLAB=0 */
#define UART_DLL 0          /* divisor latch low, DLAB=1 */
#define UART_IER 1          /* interrupt enable, DLAB=0 */
#define UART_IIR 2          /* interrupt identification (read) */
#define   IIR_FIFO_MASK   0xC0    /* 11: FIFO enabled and working (16550A); 10: 16550 with
                                     the broken FIFO; 00: no FIFO (8250, 16450) */
#define UART_DLM 1          /* divisor latch high, DLAB=1 */
#define UART_FCR 2          /* FIFO control (write) */
#define   FCR_ENABLE      0x01
#define   FCR_CLEAR_RX    0x02
#define   FCR_CLEAR_TX    0x04
#define UART_LCR 3          /* line control */
#define   LCR_8N1         0x03
#define   LCR_DLAB        0x80
#define UART_MCR 4          /* modem control */
#define   MCR_DTR         0x01
#define   MCR_RTS         0x02
#define   MCR_OUT2        0x08
#define   MCR_LOOP        0x10
#define UART_LSR 5          /* line status */
#define   LSR_DATA_READY  0x01
#define   LSR_THR_EMPTY   0x20
#define UART_RBR 0          /* receive buffer (read), DLAB=0 */
#define UART_SCR 7          /* scratch */

/* How long one FIFO may take to drain before we call the port dead: 16 bytes at 300 baud is
 * 0.53 s; 2^31 TSC cycles is at least 0.5 s up to 4.3 GHz. The poll cap stops the wait if the
 * TSC itself does not move (port reads take ~1 us each on real buses). */
#define TX_TIMEOUT_CYC  (1ull << 31)
#define TX_TIMEOUT_POLLS 2000000u
#define PROBE_POLLS     100000u

/* Every register access goes through these two: I/O port or MMIO, byte or 32-bit wide. */
static uint8_t reg_rd(const struct uart_regs *r, unsigned reg)
{
    if (r->space == UART_SPACE_IO)
        return inb((uint16_t)(r->addr + reg * r->stride));
    uintptr_t a = r->mapped + reg * r->stride;
    return r->access_bytes == 4 ? (uint8_t)mmio_read32(a) : mmio_read8(a);
}

static void reg_wr(const struct uart_regs *r, unsigned reg, uint8_t v)
{
    if (r->space == UART_SPACE_IO) {
        outb((uint16_t)(r->addr + reg * r->stride), v);
        return;
    }
    uintptr_t a = r->mapped + reg * r->stride;
    if (r->access_bytes == 4)
        mmio_write32(a, v);
    else
        mmio_write8(a, v);
}

/* Pacing's part of THRE: a real 16550 says its FIFO is empty when the last byte it holds
 * moves to the shift register, one byte time before the line goes idle. */
static bool paced_free(const struct uart *u, uint64_t now)
{
    return !u->pace_byte_cyc || (int64_t)(now + u->pace_byte_cyc - u->pace_idle_at) >= 0;
}

/* The pacing's wait is on the TSC alone, in blocks of NOPs between reads (no port reads:
 * under QEMU -icount a TSC read or a port access ends a translation block and costs the
 * emulator far more than 32 NOPs, and a byte is 86,800 instructions at shift=0); its cap
 * on passes only guards against a TSC that stands still. */
#define PACE_MAX_SPINS  (1u << 30)

static bool tx_timed_out(struct uart *u)
{
    u->tx_timeouts++;
    u->dead = true;
    return false;
}

bool uart_tx_ready(const struct uart *u)
{
    return u->present && !u->dead && paced_free(u, rdtsc()) &&
           (reg_rd(&u->regs, UART_LSR) & LSR_THR_EMPTY);
}

bool uart_tx_wait(struct uart *u)
{
    if (!u->present || u->dead)
        return false;
    uint64_t t0 = rdtsc();
    for (uint32_t spins = 0; !paced_free(u, rdtsc()); spins++) {
        if (rdtsc() - t0 > TX_TIMEOUT_CYC || spins >= PACE_MAX_SPINS)
            return tx_timed_out(u);
        cpu_nop_block();
    }
    for (uint32_t polls = 0; polls < TX_TIMEOUT_POLLS; polls++) {
        if (reg_rd(&u->regs, UART_LSR) & LSR_THR_EMPTY)
            return true;
        if (rdtsc() - t0 > TX_TIMEOUT_CYC)
            break;
        cpu_relax();
    }
    return tx_timed_out(u);
}

/* Scratch register holds a value and the loopback path returns a byte: a real 16550 behind
 * the port, not an empty bus that reads 0xFF. */
static bool probe(const struct uart_regs *r)
{
    reg_wr(r, UART_SCR, 0x5A);
    if (reg_rd(r, UART_SCR) != 0x5A)
        return false;
    reg_wr(r, UART_SCR, 0xA5);
    if (reg_rd(r, UART_SCR) != 0xA5)
        return false;

    reg_wr(r, UART_MCR, MCR_LOOP);
    for (unsigned i = 0; i < 2 * UART_FIFO_BYTES && (reg_rd(r, UART_LSR) & LSR_DATA_READY); i++)
        (void)reg_rd(r, UART_RBR);            /* drop stale input so the echo is ours */
    reg_wr(r, UART_THR, 0xAE);
    bool ok = false;
    for (uint32_t polls = 0; polls < PROBE_POLLS; polls++) {
        if (reg_rd(r, UART_LSR) & LSR_DATA_READY) {
            ok = reg_rd(r, UART_RBR) == 0xAE;
            break;
        }
        cpu_relax();
    }
    reg_wr(r, UART_MCR, MCR_DTR | MCR_RTS | MCR_OUT2);
    return ok;
}

uint32_t uart_divisor(uint32_t clock_hz, uint32_t baud)
{
    if (clock_hz == 0 || baud == 0)
        return 0;
    uint64_t step = 16ull * baud;
    uint64_t div = ((uint64_t)clock_hz + step / 2) / step;
    if (div == 0 || div > 0xFFFF)
        return 0;
    /* |clock / (16 div) - baud| <= baud * tol / 100, in integers: */
    uint64_t made = 16ull * div * baud, err = made > clock_hz ? made - clock_hz : clock_hz - made;
    if (err * 100 > (uint64_t)clock_hz * UART_BAUD_TOLERANCE_PCT)
        return 0;
    return (uint32_t)div;
}

static bool regs_ok(const struct uart_regs *r)
{
    if (r->stride != 1 && r->stride != 4)
        return false;
    if (r->access_bytes != 1 && r->access_bytes != 4)
        return false;
    if (r->space == UART_SPACE_IO)
        return r->access_bytes == 1 && r->addr + 7u * r->stride <= 0xFFFF;
    return r->space == UART_SPACE_MMIO && r->mapped != 0 &&
           (r->access_bytes == 1 || r->stride == 4);
}

/* The divisor latch as the firmware left it, and the baud it makes (0: none programmed). */
static uint32_t baud_as_is(const struct uart_regs *r, uint32_t clock_hz, uint8_t lcr)
{
    reg_wr(r, UART_LCR, lcr | LCR_DLAB);
    uint32_t div = reg_rd(r, UART_DLL) | (uint32_t)reg_rd(r, UART_DLM) << 8;
    reg_wr(r, UART_LCR, lcr);
    return div ? (clock_hz + 8 * div) / (16 * div) : 0;
}

int uart_init_regs(struct uart *u, const struct uart_regs *regs, uint32_t clock_hz,
                   uint32_t baud)
{
    *u = (struct uart){ .regs = *regs, .baud = baud, .fifo_bytes = 1 };
    u->clock_hz = clock_hz ? clock_hz : UART_CLOCK_HZ;
    u->base = regs->space == UART_SPACE_IO ? (uint16_t)regs->addr : 0;
    if (!regs_ok(regs))
        return -EINVAL;
    uint32_t divisor = uart_divisor(u->clock_hz, baud);
    if (baud && !divisor)
        return -EINVAL;

    const struct uart_regs *r = &u->regs;
    reg_wr(r, UART_IER, 0);
    if (divisor) {
        reg_wr(r, UART_LCR, LCR_DLAB);
        reg_wr(r, UART_DLL, divisor & 0xFF);
        reg_wr(r, UART_DLM, (uint8_t)(divisor >> 8));
    }
    reg_wr(r, UART_LCR, LCR_8N1);
    reg_wr(r, UART_FCR, FCR_ENABLE | FCR_CLEAR_RX | FCR_CLEAR_TX);
    if (!probe(r))
        return -ENODEV;
    if (!baud)
        u->baud = baud_as_is(r, u->clock_hz, LCR_8N1);
    if ((reg_rd(r, UART_IIR) & IIR_FIFO_MASK) == IIR_FIFO_MASK)
        u->fifo_bytes = UART_FIFO_BYTES;
    u->present = true;
    return 0;
}

int uart_init(struct uart *u, uint16_t base, uint32_t baud)
{
    if (baud == 0 || baud > UART_BASE_BAUD || UART_BASE_BAUD % baud != 0) {
        *u = (struct uart){ .base = base, .baud = baud, .fifo_bytes = 1,
                            .clock_hz = UART_CLOCK_HZ };
        return -EINVAL;
    }
    const struct uart_regs io = { .space = UART_SPACE_IO, .addr = base, .stride = 1,
                                  .access_bytes = 1 };
    return uart_init_regs(u, &io, UART_CLOCK_HZ, baud);
}

void uart_set_pacing(struct uart *u, uint64_t tsc_hz)
{
    /* 10 bit times; tsc_hz * 10 fits 64 bits for any TSC under 1.8e18 Hz. */
    u->pace_byte_cyc = tsc_hz && u->baud ? (tsc_hz * UART_BITS_PER_BYTE + u->baud - 1) / u->baud : 0;
    u->pace_idle_at = rdtsc();
}

unsigned uart_tx_put(struct uart *u, const char *s, unsigned long n)
{
    if (!u->present || u->dead)
        return 0;
    unsigned k = n < u->fifo_bytes ? (unsigned)n : u->fifo_bytes;
    for (unsigned i = 0; i < k; i++)
        reg_wr(&u->regs, UART_THR, (uint8_t)s[i]);
    if (u->pace_byte_cyc && k) {
        /* The bytes follow whatever is still on the wire, one byte time each. */
        uint64_t now = rdtsc();
        uint64_t start = (int64_t)(now - u->pace_idle_at) > 0 ? now : u->pace_idle_at;
        u->pace_idle_at = start + k * u->pace_byte_cyc;
    }
    return k;
}

void uart_write(struct uart *u, const char *s, unsigned long n)
{
    while (n > 0 && uart_tx_wait(u)) {
        unsigned k = uart_tx_put(u, s, n);
        s += k;
        n -= k;
    }
}
