/* kernel/report/console.h - where text leaves the machine: the serial port (records and
 * human text) and the screen (human text only; record lines would bury the summary). */
#ifndef TICKLAB_REPORT_CONSOLE_H
#define TICKLAB_REPORT_CONSOLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/console/fbcon.h"
#include "ticklab/uart16550.h"

#define CON_SERIAL 1u
#define CON_SCREEN 2u
#define CON_ALL    (CON_SERIAL | CON_SCREEN)

/* COM1 at 115200 8N1. Returns the uart_init() result (0, -ENODEV). */
int console_serial_init(uint16_t port, uint32_t baud);
const struct uart *console_uart(void);
int console_screen_init(const struct fb_info *fb, void *(*map)(uint64_t phys, uint64_t bytes));

void con_write(unsigned where, const char *s, size_t n);
/* Around a write that must stay whole (a record line): interrupts off and the console's
 * lock, for this CPU against the others. kprintf takes it by itself. */
unsigned long con_lock(void);
void con_unlock(unsigned long flags);
/* Human text to every console. */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Ends a partly written serial line, so that a record emitted from a fault handler in the
 * middle of another line still starts a line of its own. */
void con_break_line(void);

#endif
