/* drivers/pit8254.c - see pit8254.h. */
#include "ticklab/pit8254.h"

#include "ticklab/io.h"
#include "ticklab/clocksource.h"
#include "ticklab/errno.h"

#define PIT_CH0     0x40
#define PIT_CH2     0x42
#define PIT_CMD     0x43
#define   CMD_CH0       (0u << 6)
#define   CMD_CH2       (2u << 6)
#define   CMD_LATCH     (0u << 4)   /* counter latch command */
#define   CMD_LOHI      (3u << 4)   /* lobyte then hibyte */
#define   CMD_MODE0     (0u << 1)   /* interrupt on terminal count */
#define   CMD_MODE2     (2u << 1)   /* rate generator */
#define PORT_B      0x61            /* PC system control port B */
#define   PORTB_GATE2   0x01
#define   PORTB_SPEAKER 0x02
#define   PORTB_OUT2    0x20

static void load(uint16_t port, uint32_t count)
{
    uint16_t c = (uint16_t)(count & 0xFFFF);     /* 65536 is written as 0 */
    outb(port, c & 0xFF);
    outb(port, c >> 8);
}

/* The latch command and the two byte reads are one transaction: another read started in
 * between (an interrupt handler's time_ns(), another CPU's) would latch again and swap the
 * byte order of this one. Interrupts off and a lock around it; the lock is only ever held
 * for those three port accesses. */
static volatile int latch_lock;

static uint32_t latch_read(uint8_t channel_bits, uint16_t port)
{
    unsigned long flags = irq_save();
    while (__atomic_exchange_n(&latch_lock, 1, __ATOMIC_ACQUIRE))
        cpu_relax();
    outb(PIT_CMD, channel_bits | CMD_LATCH);
    uint32_t lo = inb(port);
    uint32_t hi = inb(port);
    __atomic_store_n(&latch_lock, 0, __ATOMIC_RELEASE);
    irq_restore(flags);
    return lo | hi << 8;
}

void pit_ch2_freerun_start(void)
{
    outb(PORT_B, (inb(PORT_B) & ~PORTB_SPEAKER) | PORTB_GATE2);
    outb(PIT_CMD, CMD_CH2 | CMD_LOHI | CMD_MODE2);
    load(PIT_CH2, PIT_MAX_COUNT);
}

uint64_t pit_ch2_read_up(void)
{
    /* Counting down from 65536 (read as 0): negating makes it count up, wrapping at 2^16. */
    return (uint64_t)(-latch_read(CMD_CH2, PIT_CH2)) & 0xFFFF;
}

bool pit_probe(uint64_t probe_cyc)
{
    pit_ch2_freerun_start();
    uint64_t first = pit_ch2_read_up(), t0 = rdtsc();
    while (rdtsc() - t0 < probe_cyc)
        if (pit_ch2_read_up() != first)
            return true;
    return false;
}

const char *pit_ch0_check(uint64_t probe_cyc)
{
    /* Mode 0 from a count that cannot be mistaken for an empty bus (0xFFFF), stopped again
     * long before it could reach 0, so no IRQ0 edge is made. */
    outb(PIT_CMD, CMD_CH0 | CMD_LOHI | CMD_MODE0);
    load(PIT_CH0, 0xF000);
    uint32_t first = latch_read(CMD_CH0, PIT_CH0);
    const char *why = NULL;
    if (first == 0xFFFF) {
        why = "ports read all ones: no PIT";
    } else {
        why = "channel 0 does not count: the PIT is there but gated (its clock stopped)";
        uint64_t t0 = rdtsc();
        while (rdtsc() - t0 < probe_cyc)
            if (latch_read(CMD_CH0, PIT_CH0) != first) {
                why = NULL;
                break;
            }
    }
    pit_ch0_stop();
    return why;
}

void pit_ch0_periodic(uint32_t count)
{
    outb(PIT_CMD, CMD_CH0 | CMD_LOHI | CMD_MODE2);
    load(PIT_CH0, count);
}

void pit_ch0_oneshot(uint32_t count)
{
    outb(PIT_CMD, CMD_CH0 | CMD_LOHI | CMD_MODE0);
    load(PIT_CH0, count);
}

void pit_ch0_stop(void)
{
    /* Writing the mode word stops the count until a new count is loaded (8254 data sheet:
     * "when a control word is written, the counter's output goes to its initial state and
     * waits for a count"), and mode 0's initial OUT is low: no further IRQ0 edge. */
    outb(PIT_CMD, CMD_CH0 | CMD_LOHI | CMD_MODE0);
}

static uint64_t pit_cs_read(const struct clocksource *cs)
{
    (void)cs;
    return pit_ch2_read_up();
}

struct clocksource *pit_clocksource_init(struct clocksource *cs, uint64_t probe_cyc)
{
    bool counts = pit_probe(probe_cyc);
    *cs = (struct clocksource){
        .name = "pit", .read = pit_cs_read, .mask = 0xFFFF, .freq_hz = PIT_HZ,
        .nominal_hz = PIT_HZ, .rating = PIT_RATING, .usable = counts,
        .unusable_reason = counts ? 0 : "channel 2 does not count",
    };
    return cs;
}

/* ---- channel 0 as a clock event device ----------------------------------------------------- */

/* The line is unmasked when the device leaves SHUTDOWN, before any count is loaded: an edge
 * that meets a masked IOAPIC entry is lost, and a short count can end within a few port
 * writes (plain QEMU lost ~5 % of short PIT one-shots when the unmask came after the load). */
static int pit_oneshot(struct clockevent *ce)
{
    clockevent_line_unmask(ce->line);
    pit_ch0_stop();             /* mode 0, OUT low, waiting for a count */
    return 0;
}

/* Mode 0 from here on: writing a count sets OUT low and starts counting from it (8254 data
 * sheet, mode 0), so each event is the two bytes of its count and nothing else. A count
 * starts at the write, so it cannot have passed: never -ETIME. */
static int pit_next(struct clockevent *ce, uint64_t delta_cyc)
{
    (void)ce;
    load(PIT_CH0, (uint32_t)delta_cyc);
    return 0;
}

static int pit_periodic(struct clockevent *ce, uint64_t period_cyc)
{
    if (period_cyc < 2 || period_cyc > PIT_MAX_COUNT)
        return -ERANGE;         /* mode 2 cannot count 1 */
    clockevent_line_unmask(ce->line);
    pit_ch0_periodic((uint32_t)period_cyc);
    return 0;
}

static int pit_shutdown(struct clockevent *ce)
{
    pit_ch0_stop();
    clockevent_line_mask(ce->line);
    return 0;
}

void pit_clockevent_init(struct pit_clockevent *p, const struct clockevent_line *line)
{
    *p = (struct pit_clockevent){ 0 };
    p->ce = (struct clockevent){
        .name = "pit", .line = line, .features = CE_PERIODIC | CE_ONESHOT, .freq_hz = PIT_HZ,
        .min_delta_cyc = 1, .max_delta_cyc = PIT_MAX_ONESHOT_COUNT,
        .rating = PIT_CE_RATING, .usable = true,
        .set_state_periodic = pit_periodic, .set_state_oneshot = pit_oneshot,
        .set_state_shutdown = pit_shutdown, .set_next_event = pit_next,
    };
    pit_ch0_stop();
}

