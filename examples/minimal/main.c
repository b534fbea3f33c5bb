/* examples/minimal/main.c - a kernel that is not ticklab, using only libticklab.a: it
 * calibrates the TSC against the PIT, makes the LAPIC timer a clock event device, starts a
 * 1 ms periodic hrtimer on the best one-shot device it registered and prints 10 measured
 * intervals. The clock event device is the library's own (struct lapic_timer_ce), its
 * shortest delta found by the library's search; everything outside the library is this
 * kernel's: entry, page tables, IDT, serial console, and the porting layer
 * (docs/library.md): memset/memcpy/memmove/memcmp, rdmsr_safe and wrmsr_safe, plus the
 * interrupt glue below (EOI, then the driver's irq function). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/calibrate.h"
#include "ticklab/ce_search.h"
#include "ticklab/clockevent.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/cpuid.h"
#include "ticklab/hrtimer.h"
#include "ticklab/io.h"
#include "ticklab/lapic.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/pit8254.h"
#include "ticklab/tsc.h"

#define TIMER_VECTOR 0x40
#define SPURIOUS_VECTOR 0xFF
#define INTERVALS 10
#define PERIOD_NS 1000000ull

/* ---- the porting layer ------------------------------------------------------------------ */

void *memset(void *d, int c, size_t n)
{
    volatile unsigned char *p = d;
    while (n--)
        *p++ = (unsigned char)c;
    return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
    volatile unsigned char *p = d;
    const unsigned char *q = s;
    while (n--)
        *p++ = *q++;
    return d;
}

void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *p = d;
    const unsigned char *q = s;
    if (p < q)
        return memcpy(d, s, n);
    while (n--)
        p[n] = q[n];
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    for (; n; n--, p++, q++)
        if (*p != *q)
            return *p - *q;
    return 0;
}

/* No #GP recovery in this kernel: it claims no MSR it was not sure of. */
int rdmsr_safe(uint32_t msr, uint64_t *val)
{
    (void)msr;
    *val = 0;
    return -1;
}

int wrmsr_safe(uint32_t msr, uint64_t val)
{
    (void)msr, (void)val;
    return -1;
}

/* ---- its own console: COM1, polled ------------------------------------------------------ */

static void putc_serial(char c)
{
    for (unsigned i = 0; i < 100000 && !(inb(0x3F8 + 5) & 0x20); i++)
        ;
    outb(0x3F8, (uint8_t)c);
}

static void puts_serial(const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            putc_serial('\r');
        putc_serial(*s);
    }
}

static void put_i64(int64_t v)
{
    char buf[24];
    int i = 0;
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    do
        buf[i++] = (char)('0' + u % 10);
    while ((u /= 10) && i < 23);
    if (v < 0)
        putc_serial('-');
    while (i)
        putc_serial(buf[--i]);
}

static void serial_init(void)
{
    outb(0x3F8 + 1, 0);        /* no interrupts */
    outb(0x3F8 + 3, 0x80);     /* divisor 1: 115200 baud */
    outb(0x3F8 + 0, 1);
    outb(0x3F8 + 1, 0);
    outb(0x3F8 + 3, 0x03);     /* 8N1 */
}

/* ---- its own IDT -------------------------------------------------------------------------- */

struct idt_entry {
    uint16_t off0, sel;
    uint8_t ist, type;
    uint16_t off1;
    uint32_t off2, zero;
} __attribute__((packed));
static struct idt_entry idt[256];
extern char timer_stub[], spurious_stub[];

static void idt_set(unsigned v, void *fn)
{
    uint64_t a = (uint64_t)(uintptr_t)fn;
    idt[v] = (struct idt_entry){ .off0 = (uint16_t)a, .sel = 0x08, .type = 0x8E,
                                 .off1 = (uint16_t)(a >> 16), .off2 = (uint32_t)(a >> 32) };
}

static void idt_load(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) p = { sizeof(idt) - 1, (uint64_t)(uintptr_t)idt };
    __asm__ volatile("lidt %0" : : "m"(p));
}

/* ---- the LAPIC timer: the library's clock event device --------------------------------- */

static struct lapic apic;                  /* how this machine's LAPIC is reached */
static struct lapic_timer_ce lapic_timer;

/* The interrupt glue: acknowledge the controller, then hand the event to the library. */
void example_timer_irq(void)
{
    lapic_eoi(&apic);
    lapic_timer_ce_irq(&lapic_timer);
}

/* The min-delta search waits for events by polling their count, bounded by the TSC. */
static uint64_t tsc_hz;

static uint64_t events_seen(void *ctx)
{
    return ((struct clockevent *)ctx)->events;
}

static bool wait_event(void *ctx, uint64_t before, uint64_t bound_ns)
{
    uint64_t t0 = tsc_read(), bound = bound_ns * (tsc_hz / 1000000ull) / 1000ull;
    __asm__ volatile("sti");
    while (events_seen(ctx) == before && tsc_read() - t0 < bound)
        cpu_relax();
    __asm__ volatile("cli");
    return events_seen(ctx) != before;
}

static void count_only(struct clockevent *ce)
{
    (void)ce;
}

/* ---- the example ---------------------------------------------------------------------------- */

static struct hrtimer_base base;
static struct hrtimer tick;
static uint64_t stamp[INTERVALS + 1];
static volatile unsigned n_stamps;

static enum hrtimer_restart on_tick(struct hrtimer *t)
{
    uint64_t now = time_ns();
    stamp[n_stamps++] = now;
    if (n_stamps > INTERVALS)
        return HRTIMER_NORESTART;
    hrtimer_forward(t, now, PERIOD_NS);
    return HRTIMER_RESTART;
}

static void fail(const char *why)
{
    puts_serial("minimal: FAILED: ");
    puts_serial(why);
    puts_serial("\n");
    outb(0xF4, 0x11);          /* QEMU isa-debug-exit: exit code 35 */
    for (;;)
        __asm__ volatile("cli; hlt");
}

void example_main(void)
{
    serial_init();
    puts_serial("minimal: a kernel linking only libticklab.a\n");
    outb(0x21, 0xFF);          /* both 8259s masked: only the LAPIC interrupts */
    outb(0xA1, 0xFF);
    idt_set(TIMER_VECTOR, timer_stub);
    idt_set(SPURIOUS_VECTOR, spurious_stub);
    idt_load();
    struct lapic_info li;
    if (lapic_init(&apic, 0xFEE00000u, false, SPURIOUS_VECTOR, SPURIOUS_VECTOR, &li) != 0)
        fail("no local APIC");

    /* the TSC, calibrated against the PIT's channel 2 over 50 ms */
    static struct clocksource pit_counter;
    static struct tsc tsc_counter;
    struct clocksource *pit = pit_clocksource_init(&pit_counter, 10000000);
    struct cpu_info cpu;
    cpu_probe(&cpu);
    struct clocksource *tsc = tsc_clocksource_init(&tsc_counter, &cpu);
    struct cal_result cal;
    if (!pit || calibrate_tsc(pit, tsc, 50000000ull, &cal) != 0)
        fail("TSC calibration against the PIT");
    clocksource_set_freq(tsc, cal.freq_hz);
    clocksource_register(tsc);
    char why[96];
    if (!clocksource_select("tsc", why, sizeof(why)))
        fail(why);
    puts_serial("minimal: TSC ");
    put_i64((int64_t)cal.freq_hz);
    puts_serial(" Hz (against the PIT)\n");

    /* the LAPIC timer's rate, against the TSC */
    static struct lapic_timer_cs lapic_counter;
    struct cal_target target = {
        .cs = lapic_timer_clocksource_start(&lapic_counter, &apic), .max_hz = 10000000000ull,
    };
    if (calibrate_pair(&target, tsc, 0, 20000000ull, &cal) != 0)
        fail("LAPIC timer calibration against the TSC");
    lapic_timer_stop(&apic);

    /* the library's clock event devices for this CPU's timer; its shortest delta measured */
    tsc_hz = tsc->freq_hz;
    lapic_timer_ce_init(&lapic_timer, &apic, 0, TIMER_VECTOR, cal.freq_hz, tsc, &cpu);
    struct clockevent *ce = &lapic_timer.lapic;
    if (clockevent_register(ce) != 0 || clockevent_claim(ce, count_only, 0) != 0)
        fail("clockevent_register");
    struct ce_search_ops ops = { events_seen, wait_event, ce };
    uint32_t etime = 0;
    clockevent_set_min_delta(ce, ce_search_min_delta(ce, &ops, &etime));
    clockevent_release(ce);
    puts_serial("minimal: LAPIC timer ");
    put_i64((int64_t)cal.freq_hz);
    puts_serial(" Hz, min delta ");
    put_i64((int64_t)ce->min_delta_ns);
    puts_serial(" ns\n");
    if (lapic_timer.deadline.usable)
        clockevent_register(&lapic_timer.deadline);

    struct clockevent *best = clockevent_select(NULL, CE_ONESHOT, 0, NULL, why, sizeof(why));
    if (!best || hrtimer_base_init(&base, best, &hrtimer_clock_time_ns, 4) != 0)
        fail("no one-shot clock event device");
    puts_serial("minimal: hrtimer on ");
    puts_serial(best->name);
    puts_serial(", 1 ms periodic\n");

    tick.fn = on_tick;
    uint64_t start = time_ns();
    stamp[n_stamps++] = start;
    hrtimer_start(&base, &tick, start + PERIOD_NS, HRTIMER_MODE_ABS);
    /* wait in HLT; the TSC bounds it at 1 s */
    uint64_t t0 = tsc_read(), bound = tsc->freq_hz;
    while (n_stamps <= INTERVALS && tsc_read() - t0 < bound)
        __asm__ volatile("sti; hlt; cli");
    if (n_stamps <= INTERVALS)
        fail("the hrtimer stopped firing");
    for (unsigned i = 1; i <= INTERVALS; i++) {
        puts_serial("minimal: interval ");
        put_i64(i);
        puts_serial(" ");
        put_i64((int64_t)(stamp[i] - stamp[i - 1]));
        puts_serial(" ns\n");
    }
    puts_serial("minimal: done\n");
    outb(0xF4, 0x10);          /* QEMU isa-debug-exit: exit code 33 */
}
