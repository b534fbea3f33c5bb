/* tests/host/fake/uart16550.h - a 16550A UART transmitter (NS16550A data sheet), for the
 * console tests. Registers at a port base (8 ports) when attached; fake_reset() detaches.
 *
 * What it models: the divisor latch (DLAB), the scratch register, the loopback echo the
 * probe uses, FCR's FIFO enable and IIR bits 7:6 (11 with a working FIFO), a 16-byte
 * transmit FIFO (or a 1-byte holding register: an 8250/16450, or FIFO off) feeding a shift
 * register that sends one byte per byte_ns of virtual time (10 bit times at the baud rate
 * the divisor sets, or as the test says), LSR.THRE (FIFO/holding register empty: the last
 * byte has moved to the shift register) and LSR.TEMT (nothing left at all).
 * Faults: a byte written while the FIFO or holding register is full (a real UART loses it),
 * any write when the model is stuck. stuck: THRE never comes (a transmitter held by flow
 * control, or a dead chip): the driver must give up by its bound.
 * Registers at a port base or (fake_uart_attach_mmio) in memory.
 * Simplified: no receive path besides loopback, no interrupts, no modem lines. */
#ifndef TICKLAB_TESTS_HOST_FAKE_UART16550_H
#define TICKLAB_TESTS_HOST_FAKE_UART16550_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_UART_COM1 0x3F8
#define FAKE_UART_OUT_MAX (1u << 20)
#define FAKE_UART_UNITS 2         /* UARTs the machine can have at once */

struct fake_uart_opts {
    bool fifo;            /* a 16550A's working 16-byte FIFO (else one holding register) */
    bool stuck;           /* THRE never set */
    uint64_t byte_ns;     /* 0: 10 bit times at the programmed baud */
    uint32_t clock_hz;    /* the input clock the divisor divides (0: 1.8432 MHz) */
};

/* Attaches the selected unit (fake_uart_select; unit 0 after fake_reset) at a port base. */
void fake_uart_attach(uint16_t base, struct fake_uart_opts opts);
/* Which unit the calls below (attach, output, divisor, overruns) mean. */
void fake_uart_select(unsigned unit);
/* The same UART with memory-mapped registers stride bytes apart; width: the access size it
 * takes (0: any; another size is a fault, as a bus error would be on a real one). */
void fake_uart_attach_mmio(uint64_t addr, unsigned stride, unsigned width,
                           struct fake_uart_opts opts);
/* The divisor latch (what the driver programmed, or what a test says firmware left). */
unsigned fake_uart_divisor(void);
void fake_uart_set_divisor(unsigned div);
/* The bytes that left the shift register so far (up to FAKE_UART_OUT_MAX), in order. */
const char *fake_uart_output(size_t *len);
/* Bytes written while the FIFO/holding register was full (lost on a real UART). */
uint64_t fake_uart_overruns(void);
uint64_t fake_uart_byte_ns(void);
void fake_uart_reset(void);

#endif
