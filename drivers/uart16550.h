/* drivers/uart16550.h - the 16550A UART (PC COM ports), transmit only, polled.
 *
 * Follows the NS16550A data sheet register map. Quirks handled: a port with nothing behind it
 * reads 0xFF and must not be waited on (probe with the scratch register and a loopback byte);
 * an 8250/16450, or a 16550 whose FIFO is broken (IIR bits 7:6 not both set once the FIFO
 * is enabled), takes one byte per THRE, not sixteen; a transmitter that never drains (a
 * stuck or absent device) is given up after a bound taken from the TSC, not a loop count
 * alone, and the port is then marked dead rather than retried for every byte.
 *
 * Writing is split so that a caller can keep interrupts on while the line is busy:
 * uart_tx_wait() polls LSR.THRE (bounded) and uart_tx_put() then writes at most one FIFO's
 * worth without waiting. At 115200 baud 8N1 a byte takes 86.8 us on the wire, a FIFO 1.4 ms.
 *
 * Where the registers are (struct uart_regs): I/O ports (the PC's COM ports, most PCI cards) or
 * memory (an MMIO UART described by ACPI's SPCR, a PCI card with a memory BAR, Intel's
 * AMT serial-over-LAN), eight registers one byte wide at a stride of 1 or 4 bytes, read and
 * written with byte accesses or, where the hardware wants them (SPCR's GAS access size 3),
 * 32-bit accesses whose low byte is the register. The input clock is the PC's 1.8432 MHz
 * crystal unless the firmware (SPCR revision 3+) or the user says otherwise (PCI cards often
 * run at 14.7456 MHz or more); the divisor is the nearest whole clock / (16 * baud), refused
 * when the baud rate it makes is more than 2 % off (a UART at the other end tolerates
 * about 2-3 % of total mismatch), or baud 0 leaves the divisor the firmware programmed.
 *
 * Pacing (uart_set_pacing): QEMU's 16550 takes every byte at once, so nobody sees what a
 * real line costs. With pacing on, the driver also holds THRE low, on the TSC, for as long
 * as a real transmitter would still be sending what it was given (10 bit times a byte at the
 * programmed baud), so that code above it pays the real cost under emulation. */
#ifndef TICKLAB_DRIVERS_UART16550_H
#define TICKLAB_DRIVERS_UART16550_H
#include <stdbool.h>
#include <stdint.h>

#define UART_CLOCK_HZ   1843200u          /* the PC's 1.8432 MHz crystal; divisor base 115200 */
#define UART_BASE_BAUD  (UART_CLOCK_HZ / 16)
#define UART_FIFO_BYTES 16                /* the 16550A's transmit FIFO */
#define UART_BITS_PER_BYTE 10             /* 8N1: start, 8 data, stop */

#define UART_BAUD_TOLERANCE_PCT 2   /* the most the divisor's baud may miss the asked one */

enum uart_space { UART_SPACE_IO, UART_SPACE_MMIO };

/* Where a UART's eight registers are. */
struct uart_regs {
    enum uart_space space;
    uint64_t addr;          /* I/O port or physical address (what the records show) */
    uintptr_t mapped;       /* MMIO: where the kernel reaches addr (0 for I/O) */
    uint8_t stride;         /* bytes from one register to the next: 1 or 4 */
    uint8_t access_bytes;   /* 1 (byte accesses) or 4 (32-bit accesses, MMIO only) */
};

struct uart {
    uint16_t base;          /* I/O port, e.g. 0x3F8 for COM1 (0 for an MMIO UART) */
    struct uart_regs regs;
    uint32_t clock_hz;      /* the input clock the divisor divides */
    uint32_t baud;          /* as programmed, or (baud 0 asked) as the firmware's divisor
                               makes it: 0 when that divisor reads 0 */
    bool present;           /* passed the probe */
    bool dead;              /* the transmitter stopped draining; no more output */
    uint8_t fifo_bytes;     /* bytes one THRE takes: 16 (working FIFO) or 1 */
    uint32_t tx_timeouts;
    uint64_t pace_byte_cyc; /* pacing: TSC cycles a byte holds the line (0: pacing off) */
    uint64_t pace_idle_at;  /* pacing: TSC when the last byte given has left the wire */
};

/* Probes and programs 8N1 with FIFOs at baud. -EINVAL when UART_BASE_BAUD is not a whole
 * multiple of baud (the divisor must be exact), -ENODEV when no UART answers at base. */
int uart_init(struct uart *u, uint16_t base, uint32_t baud);
/* The same for a UART anywhere: regs (mapped already when MMIO; stride 1 or 4, access 1 or 4,
 * 4 only for MMIO), clock_hz its input clock (0: 1.8432 MHz). baud 0: keep the divisor the
 * firmware left (u->baud is then what it makes). -EINVAL for a bad stride, access size or
 * clock, or a baud no divisor makes within UART_BAUD_TOLERANCE_PCT; -ENODEV when the probe
 * fails. */
int uart_init_regs(struct uart *u, const struct uart_regs *regs, uint32_t clock_hz,
                   uint32_t baud);
/* The divisor for baud from clock_hz (nearest whole), or 0 when none is within
 * UART_BAUD_TOLERANCE_PCT or it exceeds 16 bits. */
uint32_t uart_divisor(uint32_t clock_hz, uint32_t baud);
/* Pacing on (tsc_hz > 0: the TSC's calibrated rate) or off (0). */
void uart_set_pacing(struct uart *u, uint64_t tsc_hz);
/* Waits until the transmitter takes a FIFO's worth (LSR.THRE, and the pacing's), polling
 * with the caller's interrupt state. Bounded: TX_TIMEOUT_CYC of TSC time and a poll cap
 * (uart16550.c); on timeout the port is marked dead and false returned. False at once
 * for a dead or absent port. */
bool uart_tx_wait(struct uart *u);
/* Whether uart_tx_wait() would return at once (no waiting, no timeout counted). */
bool uart_tx_ready(const struct uart *u);
/* Writes at most fifo_bytes of s without waiting (call after uart_tx_wait() said true).
 * Returns the bytes taken. */
unsigned uart_tx_put(struct uart *u, const char *s, unsigned long n);
/* Writes bytes, waiting as above for each FIFO's worth. A dead or absent port swallows the
 * bytes. */
void uart_write(struct uart *u, const char *s, unsigned long n);

#endif
