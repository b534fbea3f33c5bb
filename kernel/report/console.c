/* kernel/report/console.c - see console.h. */
#include "kernel/report/console.h"

#include <stdarg.h>

#include "ticklab/fmt.h"

static const struct uart none;     /* absent: what console_uart() shows with no port */

const struct uart *console_uart(void)
{
    const struct uart *u = klog_serial(0);
    return u ? u : &none;
}

int console_screen_init(const struct fb_info *fb, void *(*map)(uint64_t phys, uint64_t bytes))
{
    return fbcon_init(fb, map);
}

void console_start(bool buffered, uint64_t pace_tsc_hz)
{
    klog_drain_point();           /* what waits goes out first, interrupts on */
    if (pace_tsc_hz)
        klog_pace(pace_tsc_hz);
    klog_start(buffered);
}

void con_write(unsigned where, const char *s, size_t n)
{
    klog_write(where, &s, &n, 1, false);
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
    con_write(CON_ALL, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}
