/* drivers/rtc_cmos.c - see rtc_cmos.h. */
#include "ticklab/rtc_cmos.h"

#include "ticklab/io.h"
#include "ticklab/clockevent.h"
#include "ticklab/errno.h"

#define RTC_INDEX   0x70            /* write-only; bit 7 masks NMI (kept clear: see header) */
#define RTC_DATA    0x71
#define REG_A       0x0A
#define   A_UIP         0x80        /* update in progress; read-only */
#define   A_DV_MASK     0x70        /* divider select */
#define   A_DV_32K      0x20        /* 010: 32.768 kHz time base, chain running */
#define   A_RS_MASK     0x0F        /* rate select */
#define REG_B       0x0B
#define   B_PIE         0x40        /* periodic interrupt enable */
#define REG_C       0x0C            /* flags; reading clears them */
#define REG_D       0x0D
#define EMPTY_BUS   0xFF
#define RS_FASTEST  3               /* 8192 Hz */
#define RS_SLOWEST  15              /* 2 Hz */

/* Unlocked register access: callers hold interrupts off across index + data. */
static uint8_t reg_read(uint8_t reg)
{
    outb(RTC_INDEX, reg);
    return inb(RTC_DATA);
}

static void reg_write(uint8_t reg, uint8_t v)
{
    outb(RTC_INDEX, reg);
    outb(RTC_DATA, v);
}

static uint8_t cmos_read(uint8_t reg)
{
    unsigned long flags = irq_save();
    uint8_t v = reg_read(reg);

    irq_restore(flags);
    return v;
}

int rtc_periodic_rate_code(uint32_t hz)
{
    if (hz < RTC_PERIODIC_MIN_HZ || hz > RTC_PERIODIC_MAX_HZ || (hz & (hz - 1)))
        return -EINVAL;
    /* hz = 2^k = 32768 >> (r - 1) = 2^(16 - r), so r = 16 - k. */
    return 16 - __builtin_ctz(hz);
}

uint32_t rtc_periodic_hz(int code)
{
    if (code < RS_FASTEST || code > RS_SLOWEST)
        return 0;
    return RTC_BASE_HZ >> (code - 1);
}

int rtc_start_periodic(uint32_t hz)
{
    int code = rtc_periodic_rate_code(hz);
    unsigned long flags;

    if (code < 0)
        return code;
    flags = irq_save();
    reg_write(REG_A, (uint8_t)((reg_read(REG_A) & ~(A_UIP | A_RS_MASK)) | code));
    (void)reg_read(REG_C);    /* a stale PF would interrupt the moment PIE is set */
    reg_write(REG_B, reg_read(REG_B) | B_PIE);
    irq_restore(flags);
    return 0;
}

/* Register A's rate select as the firmware left it (rtc_probe): A and B live in battery-backed
 * CMOS, so anything ticklab leaves there would outlast a power cycle. */
static uint8_t boot_rs;
static bool boot_rs_saved;

void rtc_stop(void)
{
    unsigned long flags = irq_save();

    reg_write(REG_B, reg_read(REG_B) & (uint8_t)~B_PIE);
    if (boot_rs_saved)
        reg_write(REG_A, (uint8_t)((reg_read(REG_A) & ~(A_UIP | A_RS_MASK)) | boot_rs));
    /* An edge between the last handler and the PIE write left IRQF set; clear it so the
     * next start begins clean. (An IRQ8 already latched by the interrupt controller still
     * arrives once; its handler reads C = 0 and passes nothing on.) */
    (void)reg_read(REG_C);
    irq_restore(flags);
}

uint8_t rtc_ack(void)
{
    return cmos_read(REG_C);
}

static const char *probe_reason;

bool rtc_probe(void)
{
    uint8_t a = cmos_read(REG_A), d = cmos_read(REG_D);

    probe_reason = NULL;
    /* A real RTC can read 0xFF in one of them (D's low bits hold a date alarm on some
     * chipsets), never in both: A = 0xFF would be a divider in reset. */
    if (a == EMPTY_BUS && d == EMPTY_BUS)
        probe_reason = "registers A and D read 0xFF: no RTC on the bus";
    else if ((a & A_DV_MASK) != A_DV_32K)
        probe_reason = "divider not on the 32.768 kHz time base (DV != 010)";
    if (probe_reason)
        return false;
    boot_rs = a & A_RS_MASK;
    boot_rs_saved = true;
    return true;
}

const char *rtc_probe_reason(void)
{
    return probe_reason;
}

/* ---- the periodic interrupt as a clock event device ------------------------------------- */

static int rtc_ce_periodic(struct clockevent *ce, uint64_t period_cyc)
{
    /* Only a tap of the divider chain: a power of two of 32.768 kHz cycles. */
    if (period_cyc == 0 || (period_cyc & (period_cyc - 1)) || period_cyc > RTC_BASE_HZ)
        return -EINVAL;
    clockevent_line_unmask(ce->line);
    return rtc_start_periodic((uint32_t)(RTC_BASE_HZ / period_cyc));
}

static int rtc_ce_shutdown(struct clockevent *ce)
{
    rtc_stop();
    clockevent_line_mask(ce->line);
    return 0;
}

void rtc_clockevent_init(struct rtc_clockevent *r, const struct clockevent_line *line)
{
    *r = (struct rtc_clockevent){ 0 };
    /* The limits are the rate-select table's (RS 3 and RS 15), not measured: the RTC has
     * no one-shot mode whose programming cost could make a short delta late. */
    r->ce = (struct clockevent){
        .name = "rtc", .line = line, .features = CE_PERIODIC, .freq_hz = RTC_BASE_HZ,
        .min_delta_cyc = RTC_BASE_HZ / RTC_PERIODIC_MAX_HZ,   /* 4 cycles, 8192 Hz */
        .max_delta_cyc = RTC_BASE_HZ / RTC_PERIODIC_MIN_HZ,   /* 16384 cycles, 2 Hz */
        .set_state_periodic = rtc_ce_periodic, .set_state_shutdown = rtc_ce_shutdown,
        .rating = RTC_RATING, .usable = boot_rs_saved && !probe_reason,
        .unusable_reason = !boot_rs_saved ? "not probed" : probe_reason,
    };
}

void rtc_clockevent_irq(struct rtc_clockevent *r)
{
    /* PF is one bit: a handler that runs more than a period late merges edges into one
     * event, so ->events can only undercount, never overcount. */
    if (rtc_ack() & RTC_REG_C_PF)
        clockevent_handle_irq(&r->ce);
}
