/* tests/host/fake/hpet.c - see hpet.h. The main counter is cnt_base + ticks since cnt_t0
 * while enabled; each timer keeps one event at the moment the counter next equals its
 * comparator, recomputed whenever anything it depends on changes. */
#include "fake.h"

#define HPET_LEN 0x400
#define GCAP_ID    0x000
#define   CAP_REV          0x01ull
#define   CAP_NUM_TIM_SHIFT 8
#define   CAP_COUNT_SIZE   (1ull << 13)
#define   CAP_LEG_RT       (1ull << 15)
#define   CAP_VENDOR_INTEL (0x8086ull << 16)
#define   CAP_PERIOD_SHIFT 32
#define GEN_CONF   0x010
#define   CONF_ENABLE  0x1ull
#define   CONF_LEG_RT  0x2ull
#define GINTR_STA  0x020
#define MAIN_CNT   0x0F0
#define TIMER(n)   (0x100 + 0x20 * (n))
#define   TN_CONF      0x00
#define     TN_INT_LEVEL   (1ull << 1)
#define     TN_INT_ENB     (1ull << 2)
#define     TN_PERIODIC    (1ull << 3)
#define     TN_PER_CAP     (1ull << 4)
#define     TN_SIZE_CAP    (1ull << 5)
#define     TN_VAL_SET     (1ull << 6)
#define     TN_32MODE      (1ull << 8)
#define     TN_ROUTE_SHIFT 9
#define     TN_ROUTE_MASK  (0x1Full << TN_ROUTE_SHIFT)
#define     TN_FSB_EN      (1ull << 14)
#define     TN_FSB_CAP     (1ull << 15)
#define     TN_WRITABLE    (TN_INT_LEVEL | TN_INT_ENB | TN_PERIODIC | TN_VAL_SET | TN_32MODE | \
                            TN_ROUTE_MASK | TN_FSB_EN)
#define   TN_CMP       0x08
#define   TN_FSB       0x10

struct timer {
    uint64_t conf, cmp, period;
    uint32_t route_cap;
    bool periodic_cap, fsb_cap;
    uint32_t fsb_val, fsb_addr;   /* Tn_FSB_INT_VAL, Tn_FSB_INT_ADDR */
    int last_route;
    /* fake_hpet_set_stale_cmp_readback: the value before the last write, which the next
     * comparator read returns once */
    bool stale_pending;
    uint64_t stale_cmp;
    bool rearm;   /* a write re-armed it: fake_hpet_set_passed_fires applies once */
    struct vclock_event ev;
    /* A comparator write on its way (fake_hpet_set_cmp_write_delay): the value the
     * comparator takes when `land` fires; until then the old value keeps matching. */
    bool write_pending, land_registered;
    uint64_t pending_cmp;
    struct vclock_event land;   /* registered with the clock on first use: every event
                                   costs every primitive a look */
};

static struct fake_hpet_stats stats;

static struct {
    bool present;
    uint64_t base;
    uint32_t period_fs;
    unsigned ntimers;
    bool counter64, legacy_cap, stuck, stale_readback, passed_fires;
    uint64_t cmp_write_delay;   /* HPET clocks between a comparator write and its effect */
    uint64_t gen_conf, status;
    uint64_t cnt_base, cnt_t0;
    struct timer t[FAKE_HPET_MAX_TIMERS];
} h;

static bool running(void)
{
    return (h.gen_conf & CONF_ENABLE) && !h.stuck;
}

static uint64_t cnt_mask(void)
{
    return h.counter64 ? UINT64_MAX : UINT32_MAX;
}

static struct vrate rate(void)
{
    return (struct vrate){ 1000000, h.period_fs };   /* ticks per ns = 1e6 fs / period */
}

uint64_t fake_hpet_counter(void)
{
    uint64_t v = h.cnt_base;

    if (running())
        v += vrate_ticks(rate(), vclock_now_ns() - h.cnt_t0);
    return v & cnt_mask();
}

static void rebase(uint64_t value)
{
    h.cnt_base = value & cnt_mask();
    h.cnt_t0 = vclock_now_ns();
}

static bool timer_is32(const struct timer *t)
{
    return !h.counter64 || (t->conf & TN_32MODE);
}

static uint64_t tmask(const struct timer *t)
{
    return timer_is32(t) ? UINT32_MAX : UINT64_MAX;
}

/* The next moment the counter becomes equal to the comparator: d ticks from now, where
 * d = 0 means it is equal already, i.e. the match happened and the next is a wrap away. */
static void schedule(struct timer *t)
{
    uint64_t now = vclock_now_ns(), raw, d, dt;

    vclock_event_cancel(&t->ev);
    if (!running() || t - h.t >= (long)h.ntimers)
        return;
    raw = vrate_ticks(rate(), now - h.cnt_t0);
    d = (t->cmp - (h.cnt_base + raw)) & tmask(t);
    bool rearm = t->rearm;
    t->rearm = false;
    if (h.passed_fires && rearm && (t->conf & TN_INT_ENB) && (d == 0 || d > tmask(t) / 2))
        d = 1;        /* QEMU: passed, so it fires one clock after being re-armed */
    if (d == 0) {
        if (!timer_is32(t))
            return;   /* 2^64 ticks: never */
        d = 1ull << 32;
    }
    if (d > UINT64_MAX - raw)
        return;   /* beyond the end of time */
    dt = vrate_ns_for(rate(), raw + d);
    vclock_event_arm(&t->ev, vclock_add_sat(h.cnt_t0, dt));
}

static void schedule_all(void)
{
    for (unsigned i = 0; i < h.ntimers; i++)
        schedule(&h.t[i]);
}

/* FSB delivery: the comparator writes its message itself (to the local APIC), whatever the
 * legacy replacement route says (PCH datasheets: the legacy option does not preclude FSB
 * messages; QEMU does the same). */
static void send_fsb(unsigned n, struct timer *t)
{
    if (!t->fsb_cap) {
        fake_fault("HPET timer %u: FSB_EN set without Tn_FSB_INT_DEL_CAP", n);
        return;
    }
    t->last_route = FAKE_HPET_ROUTE_FSB;
    stats.fsb_messages++;
    fake_lapic_msi(t->fsb_addr, t->fsb_val);
}

static void raise_timer(unsigned n, struct timer *t)
{
    int route = (int)((t->conf & TN_ROUTE_MASK) >> TN_ROUTE_SHIFT);

    if (t->conf & TN_FSB_EN) {
        send_fsb(n, t);
    } else if ((h.gen_conf & CONF_LEG_RT) && n < 2) {
        t->last_route = n == 0 ? 0 : 8;
        fake_irq_raise(FAKE_IRQ_ISA(t->last_route));
    } else if (!(t->route_cap & (1u << route))) {
        fake_fault("HPET timer %u: route %d is not in INT_ROUTE_CAP 0x%08x", n, route,
                   t->route_cap);
    } else {
        t->last_route = route;
        fake_irq_raise(FAKE_IRQ_HPET(n));
    }
}

static void timer_match(void *ctx)
{
    struct timer *t = ctx;
    unsigned n = (unsigned)(t - h.t);
    int line = (h.gen_conf & CONF_LEG_RT) && n < 2 ? (n ? 8 : 0) : FAKE_IRQ_HPET(n);

    if ((t->conf & TN_FSB_EN) && (t->conf & TN_INT_LEVEL)) {
        fake_fault("HPET timer %u: FSB delivery in level-triggered mode (messages are edges)", n);
    } else if (!(t->conf & TN_INT_LEVEL)) {
        if (t->conf & TN_INT_ENB)
            raise_timer(n, t);
    } else if (h.status & (1ull << n)) {
        if (t->conf & TN_INT_ENB)
            fake_irq_count_dropped(line, 1);   /* still asserted: no new edge */
    } else {
        h.status |= 1ull << n;
        if (t->conf & TN_INT_ENB)
            raise_timer(n, t);
    }
    if ((t->conf & TN_PERIODIC) && t->periodic_cap)
        t->cmp = (t->cmp + t->period) & tmask(t);
    schedule(t);
}

/* ---- registers ------------------------------------------------------------------------- */

static uint64_t gcap(void)
{
    return (uint64_t)h.period_fs << CAP_PERIOD_SHIFT | CAP_VENDOR_INTEL |
           (h.legacy_cap ? CAP_LEG_RT : 0) | (h.counter64 ? CAP_COUNT_SIZE : 0) |
           (uint64_t)(h.ntimers - 1) << CAP_NUM_TIM_SHIFT | CAP_REV;
}

static uint64_t timer_conf(const struct timer *t)
{
    return t->conf | (t->periodic_cap ? TN_PER_CAP : 0) | (h.counter64 ? TN_SIZE_CAP : 0) |
           (t->fsb_cap ? TN_FSB_CAP : 0) | (uint64_t)t->route_cap << 32;
}

/* The comparator as a read sees it: once after a write, on a chip with the ICH9/10 erratum,
 * the value it had before. */
static uint64_t read_cmp(struct timer *t)
{
    if (t->stale_pending) {
        t->stale_pending = false;
        stats.stale_cmp_reads++;
        return t->stale_cmp & tmask(t);
    }
    return t->cmp & tmask(t);
}

static uint64_t reg_read(uint64_t reg)
{
    if (reg == GCAP_ID)
        return gcap();
    if (reg == GEN_CONF)
        return h.gen_conf;
    if (reg == GINTR_STA) {
        stats.status_reads++;
        return h.status;
    }
    if (reg == MAIN_CNT) {
        stats.counter_reads++;
        return fake_hpet_counter();
    }
    if (reg >= TIMER(0) && reg < TIMER(h.ntimers)) {
        struct timer *t = &h.t[(reg - TIMER(0)) / 0x20];
        uint64_t r = (reg - TIMER(0)) % 0x20;
        if (r == TN_CONF) {
            stats.conf_reads++;
            return timer_conf(t);
        }
        if (r == TN_CMP) {
            stats.cmp_reads++;
            return read_cmp(t);
        }
        if (r == TN_FSB)
            return t->fsb_cap ? (uint64_t)t->fsb_addr << 32 | t->fsb_val : 0;
    }
    return 0;
}

static void write_gen_conf(uint64_t v)
{
    uint64_t now_cnt = fake_hpet_counter();

    h.gen_conf = v & (CONF_ENABLE | (h.legacy_cap ? CONF_LEG_RT : 0));
    rebase(now_cnt);   /* enabling counts on from here, disabling holds the value */
    schedule_all();
}

static void write_conf(struct timer *t, uint64_t v)
{
    uint64_t old = t->conf;

    t->conf = v & TN_WRITABLE;
    t->rearm = !(old & TN_INT_ENB) && (t->conf & TN_INT_ENB);
    if (!t->periodic_cap)
        t->conf &= ~TN_PERIODIC;
    if (!h.counter64)
        t->conf &= ~TN_32MODE;
    if ((t->conf & TN_32MODE) && !(old & TN_32MODE)) {
        t->cmp &= UINT32_MAX;
        t->period &= UINT32_MAX;
    }
    schedule(t);
}

/* A delayed comparator write lands: from now on the counter is compared with the new value
 * (one it has already passed, or reaches at this very clock, matches only after a wrap). */
static void cmp_lands(void *ctx)
{
    struct timer *t = ctx;

    t->cmp = t->pending_cmp;
    t->write_pending = false;
    schedule(t);
}

/* The comparator takes new_cmp now, or cmp_write_delay clocks from now on a chip that
 * delays the write (only while the counter runs: a halted counter has no clocks to wait
 * for). A second write before the first landed replaces it, with its own delay. */
static void set_cmp(struct timer *t, uint64_t new_cmp)
{
    uint64_t now = vclock_now_ns();

    vclock_event_cancel(&t->land);
    t->write_pending = false;
    if (!h.cmp_write_delay || !running()) {
        t->cmp = new_cmp;
        schedule(t);
        return;
    }
    if (!t->land_registered) {
        vclock_event_init(&t->land, "hpet comparator write", cmp_lands, t);
        t->land_registered = true;
    }
    t->pending_cmp = new_cmp;
    t->write_pending = true;
    uint64_t raw = vrate_ticks(rate(), now - h.cnt_t0);
    vclock_event_arm(&t->land,
                     vclock_add_sat(h.cnt_t0, vrate_ns_for(rate(), raw + h.cmp_write_delay)));
}

/* mask: the bits this access wrote (a 32-bit half or all 64). */
static void write_cmp(struct timer *t, uint64_t v, uint64_t mask)
{
    mask &= tmask(t);
    uint64_t base = t->write_pending ? t->pending_cmp : t->cmp;
    if (h.stale_readback) {
        t->stale_pending = true;
        t->stale_cmp = t->cmp;
    }
    bool sets_cmp = !(t->conf & TN_PERIODIC) || (t->conf & TN_VAL_SET);
    t->rearm = true;
    if (t->conf & TN_PERIODIC)
        t->period = (t->period & ~mask) | (v & mask);
    t->conf &= ~TN_VAL_SET;
    if (sets_cmp)
        set_cmp(t, (base & ~mask) | (v & mask));
    else
        schedule(t);
}

static void reg_write(uint64_t reg, uint64_t v, uint64_t mask)
{
    if (reg == GEN_CONF) {
        write_gen_conf((h.gen_conf & ~mask) | (v & mask));
    } else if (reg == GINTR_STA) {
        stats.status_writes++;
        h.status &= ~(v & mask);
    } else if (reg == MAIN_CNT) {
        if (running())
            fake_fault("HPET: main counter written while enabled (halt it first)");
        rebase((fake_hpet_counter() & ~mask) | (v & mask));
        schedule_all();
    } else if (reg >= TIMER(0) && reg < TIMER(h.ntimers)) {
        struct timer *t = &h.t[(reg - TIMER(0)) / 0x20];
        uint64_t r = (reg - TIMER(0)) % 0x20;
        if (r == TN_CONF) {
            stats.conf_writes++;
            write_conf(t, (timer_conf(t) & ~mask) | (v & mask));
        } else if (r == TN_CMP) {
            stats.cmp_writes++;
            write_cmp(t, v, mask);
        } else if (r == TN_FSB && t->fsb_cap) {
            uint64_t old = (uint64_t)t->fsb_addr << 32 | t->fsb_val;
            uint64_t nv = (old & ~mask) | (v & mask);
            t->fsb_val = (uint32_t)nv;
            t->fsb_addr = (uint32_t)(nv >> 32);
        }
    }
}

static uint64_t hpet_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    stats.reads++;
    uint64_t v = reg_read(off & ~7ull);

    if (size == 8)
        return v;
    if (size != 4)
        fake_fault("HPET: %u-byte read (only 32 and 64 bits are allowed)", size);
    return (off & 4) ? v >> 32 : v & UINT32_MAX;
}

static void hpet_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    stats.writes++;
    if (size == 8) {
        reg_write(off, v, UINT64_MAX);
        return;
    }
    if (size != 4)
        fake_fault("HPET: %u-byte write (only 32 and 64 bits are allowed)", size);
    if (off & 4)
        reg_write(off & ~7ull, v << 32, (uint64_t)UINT32_MAX << 32);
    else
        reg_write(off, v & UINT32_MAX, UINT32_MAX);
}

static const struct fake_io_ops hpet_ops = { hpet_read, hpet_write };

/* ---- machine shape and queries --------------------------------------------------------- */

void fake_hpet_set_base(uint64_t base)
{
    if (h.present)
        fake_mmio_unregister(h.base);
    h.base = base;
    h.present = fake_mmio_register(base, HPET_LEN, &hpet_ops, NULL) == 0;
}

void fake_hpet_remove(void)
{
    if (h.present)
        fake_mmio_unregister(h.base);
    h.present = false;
    h.gen_conf = 0;
    schedule_all();
}

void fake_hpet_set_period_fs(uint32_t period_fs)
{
    uint64_t now_cnt = fake_hpet_counter();

    if (period_fs == 0 || period_fs > 100000000u) {
        fake_fault("HPET: period %u fs is outside 1..100,000,000 (spec)", period_fs);
        return;
    }
    h.period_fs = period_fs;
    rebase(now_cnt);
    schedule_all();
}

void fake_hpet_set_num_timers(unsigned n)
{
    if (n < 1 || n > FAKE_HPET_MAX_TIMERS) {
        fake_fault("HPET: %u timers (1..32)", n);
        return;
    }
    for (unsigned i = n; i < h.ntimers; i++)
        vclock_event_cancel(&h.t[i].ev);
    h.ntimers = n;
    schedule_all();
}

void fake_hpet_set_counter_32bit(bool on)
{
    h.counter64 = !on;
    for (unsigned i = 0; i < FAKE_HPET_MAX_TIMERS; i++)
        write_conf(&h.t[i], h.t[i].conf);
    rebase(h.cnt_base);
    schedule_all();
}

void fake_hpet_set_legacy_cap(bool on)
{
    h.legacy_cap = on;
    if (!on)
        h.gen_conf &= ~CONF_LEG_RT;
}

void fake_hpet_set_route_cap(unsigned timer, uint32_t cap)
{
    if (timer < FAKE_HPET_MAX_TIMERS)
        h.t[timer].route_cap = cap;
}

void fake_hpet_set_fsb_cap(unsigned timer, bool on)
{
    if (timer < FAKE_HPET_MAX_TIMERS)
        h.t[timer].fsb_cap = on;
}

void fake_hpet_set_stale_cmp_readback(bool on)
{
    h.stale_readback = on;
}

void fake_hpet_set_passed_fires(bool on)
{
    h.passed_fires = on;
}

uint32_t fake_hpet_conf(unsigned timer)
{
    return timer < FAKE_HPET_MAX_TIMERS ? (uint32_t)timer_conf(&h.t[timer]) : 0;
}

void fake_hpet_set_periodic_cap(unsigned timer, bool on)
{
    if (timer < FAKE_HPET_MAX_TIMERS)
        h.t[timer].periodic_cap = on;
}

void fake_hpet_set_stuck(bool stuck)
{
    uint64_t now_cnt = fake_hpet_counter();

    h.stuck = stuck;
    rebase(now_cnt);
    schedule_all();
}

void fake_hpet_set_cmp_write_delay(uint64_t clocks)
{
    h.cmp_write_delay = clocks;
}

void fake_hpet_set_counter(uint64_t value)
{
    rebase(value);
    schedule_all();
}

const struct fake_hpet_stats *fake_hpet_stats(void)
{
    return &stats;
}

int fake_hpet_route(unsigned timer)
{
    return timer < FAKE_HPET_MAX_TIMERS ? h.t[timer].last_route : -1;
}

bool fake_hpet_legacy_active(void)
{
    return h.present && (h.gen_conf & CONF_LEG_RT);
}

void fake_hpet_reset(void)
{
    h.present = false;
    h.period_fs = FAKE_HPET_PERIOD_FS;
    h.ntimers = 3;
    h.counter64 = h.legacy_cap = true;
    h.stuck = h.stale_readback = h.passed_fires = false;
    h.cmp_write_delay = 0;
    stats = (struct fake_hpet_stats){ 0 };
    h.gen_conf = h.status = 0;
    h.cnt_base = h.cnt_t0 = 0;
    for (unsigned i = 0; i < FAKE_HPET_MAX_TIMERS; i++) {
        struct timer *t = &h.t[i];
        *t = (struct timer){ .cmp = UINT64_MAX, .route_cap = FAKE_HPET_ROUTE_CAP,
                             .periodic_cap = true, .last_route = -1 };
        vclock_event_init(&t->ev, "hpet comparator", timer_match, t);
    }
    fake_hpet_set_base(FAKE_HPET_BASE);
}
