/* tests/host/fake/rtc.c - see rtc.h. PF is computed lazily: the periodic edge index
 * (32.768 kHz ticks since the chain started, divided by the rate's period) is compared with
 * the index at the last read of register C; an event is armed only while an interrupt could
 * follow (PIE set, IRQF clear), so a quiet RTC costs nothing. */
#include "fake.h"

#define RTC_PORT 0x70
#define REG_SEC 0x00
#define REG_MIN 0x02
#define REG_HOUR 0x04
#define REG_WDAY 0x06
#define REG_MDAY 0x07
#define REG_MONTH 0x08
#define REG_YEAR 0x09
#define REG_A 0x0A
#define   A_UIP      0x80
#define   A_DV_MASK  0x70
#define   A_DV_32K   0x20
#define   A_RS_MASK  0x0F
#define REG_B 0x0B
#define   B_PIE      0x40
#define   B_DM_BIN   0x04
#define   B_24H      0x02
#define REG_C 0x0C
#define   C_IRQF     0x80
#define   C_PF       0x40
#define REG_D 0x0D
#define   D_VRT      0x80
#define REG_CENTURY 0x32

static const struct vrate chain_rate = { 32768, 1000000000u };
static const struct fake_rtc_time default_time = { 2024, 1, 1, 2, 0, 0, 0 };

static struct {
    uint8_t index, ram[128];
    struct fake_rtc_time time;
    uint64_t origin_ns;      /* divider chain started */
    bool pf_sticky;          /* PF from before the last change of rate */
    uint64_t ref_idx;        /* periodic edge index at the last read of C */
    bool irqf;
    uint64_t irqf_idx, lost;
    struct vclock_event ev;
} r;

static bool chain_running(void)
{
    return (r.ram[REG_A] & A_DV_MASK) == A_DV_32K;
}

/* 32.768 kHz ticks per periodic edge, 0 for none. */
static uint64_t period_ticks(void)
{
    unsigned rs = r.ram[REG_A] & A_RS_MASK;

    if (rs == 0 || !chain_running())
        return 0;
    return rs == 1 ? 128 : rs == 2 ? 256 : 1u << (rs - 1);
}

static uint64_t idx_now(void)
{
    uint64_t p = period_ticks();

    if (!p)
        return r.ref_idx;   /* frozen */
    return vrate_ticks(chain_rate, vclock_now_ns() - r.origin_ns) / p;
}

static bool pf_now(void)
{
    return r.pf_sticky || idx_now() > r.ref_idx;
}

static void set_irqf(void)
{
    r.irqf = true;
    r.irqf_idx = idx_now();
    if (fake_hpet_legacy_active())
        fake_irq_count_dropped(FAKE_IRQ_ISA(8), 1);   /* the HPET owns IRQ8 */
    else
        fake_irq_raise(FAKE_IRQ_ISA(8));
}

static void schedule(void)
{
    uint64_t p = period_ticks(), next;

    vclock_event_cancel(&r.ev);
    if (!p || !(r.ram[REG_B] & B_PIE) || r.irqf)
        return;
    next = (idx_now() > r.ref_idx ? idx_now() : r.ref_idx) + 1;
    vclock_event_arm(&r.ev, vclock_add_sat(r.origin_ns, vrate_ns_for(chain_rate, next * p)));
}

static void periodic_edge(void *ctx)
{
    (void)ctx;
    set_irqf();
    schedule();
}

static uint8_t encode(unsigned v)
{
    return (r.ram[REG_B] & B_DM_BIN) ? (uint8_t)v : (uint8_t)((v / 10) << 4 | v % 10);
}

static uint8_t hour_reg(void)
{
    unsigned h = r.time.hour % 12 ? r.time.hour % 12 : 12;

    if (r.ram[REG_B] & B_24H)
        return encode(r.time.hour);
    return (uint8_t)(encode(h) | (r.time.hour >= 12 ? 0x80 : 0));
}

static uint8_t reg_c(void)
{
    bool pf = pf_now();

    return (uint8_t)((pf ? C_PF : 0) | (r.irqf || (pf && (r.ram[REG_B] & B_PIE)) ? C_IRQF : 0));
}

uint8_t fake_rtc_reg(unsigned index)
{
    switch (index & 0x7F) {
    case REG_SEC:     return encode(r.time.sec);
    case REG_MIN:     return encode(r.time.min);
    case REG_HOUR:    return hour_reg();
    case REG_WDAY:    return encode(r.time.wday);
    case REG_MDAY:    return encode(r.time.mday);
    case REG_MONTH:   return encode(r.time.month);
    case REG_YEAR:    return encode(r.time.year % 100);
    case REG_CENTURY: return encode(r.time.year / 100);
    case REG_A:       return r.ram[REG_A] & ~A_UIP;
    case REG_C:       return reg_c();
    case REG_D:       return D_VRT;
    }
    return r.ram[index & 0x7F];
}

static uint8_t read_c(void)
{
    uint8_t v = reg_c();

    if (r.irqf && idx_now() > r.irqf_idx) {
        r.lost += idx_now() - r.irqf_idx;
        fake_irq_count_dropped(FAKE_IRQ_ISA(8), idx_now() - r.irqf_idx);
    }
    r.pf_sticky = false;
    r.ref_idx = idx_now();
    r.irqf = false;
    schedule();
    return v;
}

static void write_a(uint8_t v)
{
    bool was_running = chain_running();
    uint64_t old_idx = idx_now();

    r.pf_sticky = pf_now();
    if (r.irqf && old_idx > r.irqf_idx)
        r.lost += old_idx - r.irqf_idx;
    r.ram[REG_A] = v & ~A_UIP;
    if (chain_running() && !was_running)
        r.origin_ns = vclock_now_ns();
    r.ref_idx = r.irqf_idx = idx_now();
    schedule();
}

static void write_b(uint8_t v)
{
    bool pie_on = (v & B_PIE) && !(r.ram[REG_B] & B_PIE);

    r.ram[REG_B] = v;
    if (pie_on && !r.irqf && pf_now())
        set_irqf();   /* a stale PF interrupts as soon as PIE is set */
    schedule();
}

static uint64_t rtc_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)size;
    if (off == 0)
        return 0xFF;   /* the index register is write-only */
    return r.index == REG_C ? read_c() : fake_rtc_reg(r.index);
}

static void rtc_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)size;
    if (off == 0) {
        r.index = (uint8_t)(v & 0x7F);   /* bit 7 is the NMI mask: not modelled */
        return;
    }
    if (r.index == REG_A)
        write_a((uint8_t)v);
    else if (r.index == REG_B)
        write_b((uint8_t)v);
    else if (r.index > REG_D && r.index != REG_CENTURY)
        r.ram[r.index] = (uint8_t)v;   /* time and C, D: read-only here */
}

static const struct fake_io_ops rtc_ops = { rtc_read, rtc_write };

void fake_rtc_set_time(const struct fake_rtc_time *t)
{
    r.time = *t;
}

uint64_t fake_rtc_periodic_lost(void)
{
    return r.lost;
}

void fake_rtc_reset(void)
{
    for (unsigned i = 0; i < sizeof(r.ram); i++)
        r.ram[i] = 0;
    r.index = 0;
    r.ram[REG_A] = A_DV_32K | 6;   /* what a BIOS leaves: 32.768 kHz, 1024 Hz */
    r.ram[REG_B] = B_24H;          /* BCD, 24-hour, no interrupts */
    r.time = default_time;
    r.origin_ns = 0;
    r.pf_sticky = r.irqf = false;
    r.ref_idx = r.irqf_idx = r.lost = 0;
    vclock_event_init(&r.ev, "rtc periodic", periodic_edge, NULL);
    fake_port_register(RTC_PORT, 2, &rtc_ops, NULL);
}
