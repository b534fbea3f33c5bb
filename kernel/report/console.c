/* kernel/report/console.c - see console.h. */
#include "kernel/report/console.h"

#include <stdarg.h>

#include "ticklab/fmt.h"

static struct uart serial;
static bool serial_mid_line;

int console_serial_init(uint16_t port, uint32_t baud)
{
    return uart_init(&serial, port, baud);
}

void console_serial_off(void)
{
    serial.present = false;
}

const struct uart *console_uart(void)
{
    return &serial;
}

int console_screen_init(const struct fb_info *fb)
{
    return fbcon_init(fb);
}

void con_write(unsigned where, const char *s, size_t n)
{
    if ((where & CON_SERIAL) && n > 0) {
        uart_write(&serial, s, n);
        serial_mid_line = s[n - 1] != '\n';
    }
    if (where & CON_SCREEN)
        fbcon_write(s, n);
}

void con_break_line(void)
{
    if (serial_mid_line)
        con_write(CON_SERIAL, "\n", 1);
}

void kprintf(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    con_write(CON_ALL, buf, len);
}
