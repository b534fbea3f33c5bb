/* drivers/uart16550.h - the 16550A UART (PC COM ports), transmit only, polled.
 *
 * Follows the NS16550A data sheet register map. Quirks handled: a port with nothing behind it
 * reads 0xFF and must not be waited on (probe with the scratch register and a loopback byte);
 * a transmitter that never drains (a stuck or absent device) is given up after a bound taken
 * from the TSC, not a loop count alone, and the port is then marked dead rather than retried
 * for every byte. */
#ifndef TICKLAB_DRIVERS_UART16550_H
#define TICKLAB_DRIVERS_UART16550_H
#include <stdbool.h>
#include <stdint.h>

#define UART_CLOCK_HZ   1843200u          /* the PC's 1.8432 MHz crystal; divisor base 115200 */
#define UART_BASE_BAUD  (UART_CLOCK_HZ / 16)

struct uart {
    uint16_t base;          /* I/O port, e.g. 0x3F8 for COM1 */
    uint32_t baud;
    bool present;           /* passed the probe */
    bool dead;              /* the transmitter stopped draining; no more output */
    uint32_t tx_timeouts;
};

/* Probes and programs 8N1 with FIFOs at baud. -EINVAL when UART_BASE_BAUD is not a whole
 * multiple of baud (the divisor must be exact), -ENODEV when no UART answers at base. */
int uart_init(struct uart *u, uint16_t base, uint32_t baud);
/* Writes bytes; never blocks longer than the bound described above. A dead or absent port
 * swallows the bytes. */
void uart_write(struct uart *u, const char *s, unsigned long n);

#endif
