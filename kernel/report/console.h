/* kernel/report/console.h - where text leaves the machine: the serial port (records and
 * human text) and the screen (human text only; record lines would bury the summary). Every
 * byte goes through the in-memory log (klog.h): written to RAM at once, drained to the
 * consoles outside measurement windows. */
#ifndef TICKLAB_REPORT_CONSOLE_H
#define TICKLAB_REPORT_CONSOLE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/console/fbcon.h"
#include "kernel/report/klog.h"
#include "ticklab/uart16550.h"

#define CON_SERIAL KLOG_SERIAL
#define CON_SCREEN KLOG_SCREEN
#define CON_ALL    (CON_SERIAL | CON_SCREEN)

/* The first serial port output goes to (kernel/discover/serial_ports.c hands them to the
 * log), or an absent one. */
const struct uart *console_uart(void);
int console_screen_init(const struct fb_info *fb, void *(*map)(uint64_t phys, uint64_t bytes));
/* From here on output is buffered (buffered: console_log=on) and, with pace_tsc_hz (the
 * TSC's calibrated rate) not 0, the UART paced (uart_pace=1). Drains what is buffered
 * first. Call once interrupts can be taken; again, with the rate, once it is known. */
void console_start(bool buffered, uint64_t pace_tsc_hz);

void con_write(unsigned where, const char *s, size_t n);
/* Human text to every console. */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
