/* kernel/report/console.c - see console.h. */
#include "kernel/report/console.h"

#include "ticklab/io.h"

#include <stdarg.h>

#include "ticklab/fmt.h"

static struct uart serial;
static bool serial_mid_line;

int console_serial_init(uint16_t port, uint32_t baud)
{
    return uart_init(&serial, port, baud);
}

const struct uart *console_uart(void)
{
    return &serial;
}

int console_screen_init(const struct fb_info *fb, void *(*map)(uint64_t phys, uint64_t bytes))
{
    return fbcon_init(fb, map);
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

/* One writer at a time on every CPU: interrupts off and a spin lock. The spin is bounded:
 * a fault taken while this CPU held the lock (its handler writes a record) must not wait
 * for ever, so after CON_LOCK_SPINS tries the writer goes ahead (a line may then mix). */
#define CON_LOCK_SPINS (1u << 24)
static volatile int con_lock_word;

unsigned long con_lock(void)
{
    unsigned long flags = irq_save();
    for (unsigned i = 0; i < CON_LOCK_SPINS; i++) {
        if (!__atomic_exchange_n(&con_lock_word, 1, __ATOMIC_ACQUIRE))
            break;
        cpu_relax();
    }
    return flags;
}

void con_unlock(unsigned long flags)
{
    __atomic_store_n(&con_lock_word, 0, __ATOMIC_RELEASE);
    irq_restore(flags);
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
    unsigned long flags = con_lock();
    con_write(CON_ALL, buf, len);
    con_unlock(flags);
}
