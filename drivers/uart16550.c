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
           (inb(u->base + UART_LSR) & LSR_THR_EMPTY);
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
        if (inb(u->base + UART_LSR) & LSR_THR_EMPTY)
            return true;
        if (rdtsc() - t0 > TX_TIMEOUT_CYC)
            break;
        cpu_relax();
    }
    return tx_timed_out(u);
}

/* Scratch register holds a value and the loopback path returns a byte: a real 16550 behind
 * the port, not an empty bus that reads 0xFF. */
static bool probe(uint16_t base)
{
    outb(base + UART_SCR, 0x5A);
    if (inb(base + UART_SCR) != 0x5A)
        return false;
    outb(base + UART_SCR, 0xA5);
    if (inb(base + UART_SCR) != 0xA5)
        return false;

    outb(base + UART_MCR, MCR_LOOP);
    for (unsigned i = 0; i < 2 * UART_FIFO_BYTES && (inb(base + UART_LSR) & LSR_DATA_READY); i++)
        (void)inb(base + UART_RBR);           /* drop stale input so the echo is ours */
    outb(base + UART_THR, 0xAE);
    bool ok = false;
    for (uint32_t polls = 0; polls < PROBE_POLLS; polls++) {
        if (inb(base + UART_LSR) & LSR_DATA_READY) {
            ok = inb(base + UART_RBR) == 0xAE;
            break;
        }
        cpu_relax();
    }
    outb(base + UART_MCR, MCR_DTR | MCR_RTS | MCR_OUT2);
    return ok;
}

int uart_init(struct uart *u, uint16_t base, uint32_t baud)
{
    u->base = base;
    u->baud = baud;
    u->present = false;
    u->dead = false;
    u->tx_timeouts = 0;
    u->fifo_bytes = 1;
    u->pace_byte_cyc = 0;
    u->pace_idle_at = 0;
    if (baud == 0 || baud > UART_BASE_BAUD || UART_BASE_BAUD % baud != 0)
        return -EINVAL;

    uint16_t divisor = (uint16_t)(UART_BASE_BAUD / baud);
    outb(base + UART_IER, 0);
    outb(base + UART_LCR, LCR_DLAB);
    outb(base + UART_DLL, divisor & 0xFF);
    outb(base + UART_DLM, divisor >> 8);
    outb(base + UART_LCR, LCR_8N1);
    outb(base + UART_FCR, FCR_ENABLE | FCR_CLEAR_RX | FCR_CLEAR_TX);
    if (!probe(base))
        return -ENODEV;
    if ((inb(base + UART_IIR) & IIR_FIFO_MASK) == IIR_FIFO_MASK)
        u->fifo_bytes = UART_FIFO_BYTES;
    u->present = true;
    return 0;
}

void uart_set_pacing(struct uart *u, uint64_t tsc_hz)
{
    /* 10 bit times; tsc_hz * 10 fits 64 bits for any TSC under 1.8e18 Hz. */
    u->pace_byte_cyc = tsc_hz ? (tsc_hz * UART_BITS_PER_BYTE + u->baud - 1) / u->baud : 0;
    u->pace_idle_at = rdtsc();
}

unsigned uart_tx_put(struct uart *u, const char *s, unsigned long n)
{
    if (!u->present || u->dead)
        return 0;
    unsigned k = n < u->fifo_bytes ? (unsigned)n : u->fifo_bytes;
    for (unsigned i = 0; i < k; i++)
        outb(u->base + UART_THR, (uint8_t)s[i]);
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
