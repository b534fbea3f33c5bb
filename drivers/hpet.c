/* drivers/hpet.c - see hpet.h. */
#include "ticklab/hpet.h"

#include "ticklab/acpi.h"
#include "ticklab/io.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"

#define GCAP_ID        0x000      /* general capabilities and ID, read-only */
#define   CAP_REV(c)         ((uint8_t)((c) & 0xFF))
#define   CAP_NUM_TIM(c)     ((unsigned)(((c) >> 8) & 0x1F) + 1)   /* field is count - 1 */
#define   CAP_COUNT_SIZE     (1ull << 13)                         /* 64-bit main counter */
#define   CAP_LEG_RT         (1ull << 15)
#define   CAP_VENDOR(c)      ((uint16_t)((c) >> 16))
#define   CAP_PERIOD_FS(c)   ((uint32_t)((c) >> 32))
#define GEN_CONF       0x010
#define   CONF_ENABLE        (1u << 0)
#define   CONF_LEG_RT        (1u << 1)
#define GINTR_STA      0x020      /* level-triggered status, write 1 to clear */
#define MAIN_CNT       0x0F0
#define MAIN_CNT_HI    0x0F4
#define TN_CONF(n)     (0x100 + 0x20 * (n))   /* config bits in 31:0, INT_ROUTE_CAP 63:32 */
#define   TN_INT_LEVEL       (1u << 1)
#define   TN_INT_ENB         (1u << 2)
#define   TN_PERIODIC        (1u << 3)        /* TYPE_CNF */
#define   TN_PER_CAP         (1u << 4)
#define   TN_SIZE_CAP        (1u << 5)        /* 64-bit comparator */
#define   TN_VAL_SET         (1u << 6)
#define   TN_32MODE          (1u << 8)
#define   TN_ROUTE_SHIFT     9
#define   TN_ROUTE_MASK      (0x1Fu << TN_ROUTE_SHIFT)
#define   TN_FSB_EN          (1u << 14)
#define   TN_FSB_CAP         (1u << 15)
#define   TN_OFF_BITS        (TN_INT_ENB | TN_PERIODIC | TN_VAL_SET | TN_FSB_EN)  /* stopped */
#define TN_ROUTE_CAP(n)  (TN_CONF(n) + 4)
#define TN_CMP(n)        (0x108 + 0x20 * (n))
#define TN_FSB_VAL(n)    (0x110 + 0x20 * (n))     /* FSB message data (the vector) */
#define TN_FSB_ADDR(n)   (TN_FSB_VAL(n) + 4)      /* ... and where it is written */

/* The high half of the counter changes once per 2^32 ticks, so a second try always agrees
 * on a counting HPET; more tries only guard against a broken one. */
#define HLH_TRIES 4

static uint32_t rd32(const struct hpet *h, uint32_t reg)
{
    return mmio_read32(h->mmio + reg);
}

static void wr32(const struct hpet *h, uint32_t reg, uint32_t v)
{
    mmio_write32(h->mmio + reg, v);
}

/* A register whose halves do not move (not the counter): two halves are as good as one. */
static uint64_t rd64_static(const struct hpet *h, uint32_t reg)
{
    if (!h->access32)
        return mmio_read64(h->mmio + reg);
    return rd32(h, reg) | (uint64_t)rd32(h, reg + 4) << 32;
}

/* ---- main counter ------------------------------------------------------------------------ */

static uint64_t read_high_low_high(const struct hpet *h)
{
    uint32_t hi = rd32(h, MAIN_CNT_HI), lo, again;

    for (unsigned i = 0; i < HLH_TRIES; i++) {
        lo = rd32(h, MAIN_CNT);
        again = rd32(h, MAIN_CNT_HI);
        if (again == hi)
            return (uint64_t)hi << 32 | lo;
        hi = again;   /* the low half rolled over between the reads: once more */
    }
    /* Only a broken counter gets here. hi:0 is a value it passed during the last try. */
    return (uint64_t)hi << 32;
}

uint64_t hpet_read(const struct hpet *h)
{
    if (!h->counter64)
        return rd32(h, MAIN_CNT);   /* a 32-bit counter: the high half is not a count */
    if (!h->access32)
        return mmio_read64(h->mmio + MAIN_CNT);
    return read_high_low_high(h);
}

static const struct hpet *of_cs(const struct clocksource *cs)
{
    return clocksource_container(cs, struct hpet, cs);
}

static uint64_t hpet_cs_read(const struct clocksource *cs)
{
    return hpet_read(of_cs(cs));
}

/* The read where the counter is 64 bits wide and 64-bit accesses are allowed: one load,
 * nothing to decide (time_ns() is on every timer interrupt's path). */
static uint64_t hpet_cs_read64(const struct clocksource *cs)
{
    return mmio_read64(of_cs(cs)->mmio + MAIN_CNT);
}

void hpet_enable(struct hpet *h)
{
    wr32(h, GEN_CONF, rd32(h, GEN_CONF) | CONF_ENABLE);
}

void hpet_disable(struct hpet *h)
{
    wr32(h, GEN_CONF, rd32(h, GEN_CONF) & ~CONF_ENABLE);
}

static bool not_counting(struct hpet *h, const char *why)
{
    h->cs.usable = false;
    h->cs.unusable_reason = why;
    return false;
}

/* Whether the counter moves within probe_cyc TSC cycles. */
static bool moves(const struct hpet *h, uint64_t probe_cyc)
{
    uint64_t first = hpet_read(h), t0 = rdtsc();
    while (rdtsc() - t0 < probe_cyc)
        if (hpet_read(h) != first)
            return true;
    return false;
}

bool hpet_counting(struct hpet *h, uint64_t probe_cyc)
{
    if (!h->present)
        return false;
    if (!(rd32(h, GEN_CONF) & CONF_ENABLE))
        return not_counting(h, "counter not enabled");
    return moves(h, probe_cyc) ? true : not_counting(h, "counter does not count");
}

struct clocksource *hpet_clocksource(struct hpet *h)
{
    return h->present ? &h->cs : NULL;
}

/* ---- init -------------------------------------------------------------------------------- */

static int check_caps(uint64_t cap, const char **reason)
{
    if (cap == UINT64_MAX) {
        *reason = "capabilities read all ones: nothing there";
        return -ENODEV;
    }
    if (cap == 0) {
        *reason = "capabilities read zero: nothing there";
        return -ENODEV;
    }
    if (!acpi_hpet_period_ok(CAP_PERIOD_FS(cap), reason))
        return -EINVAL;
    return 0;
}

/* Comparators first, so that nothing is armed when the routing changes; then legacy
 * replacement (its change may raise a spurious interrupt on some chipsets); then every
 * status bit, which holds a level-triggered line asserted. */
static void quiet(struct hpet *h)
{
    for (unsigned n = 0; n < h->comparators; n++)
        wr32(h, TN_CONF(n), rd32(h, TN_CONF(n)) & ~TN_OFF_BITS);
    wr32(h, GEN_CONF, rd32(h, GEN_CONF) & ~CONF_LEG_RT);
    wr32(h, GINTR_STA, h->comparators == 32 ? UINT32_MAX : (1u << h->comparators) - 1);
    h->fsb_mask = 0;
}

/* The block's shape from its capabilities, for a struct hpet not yet initialised. */
static void take_caps(struct hpet *h, uint64_t cap)
{
    h->counter64 = (cap & CAP_COUNT_SIZE) != 0;
    h->legacy_cap = (cap & CAP_LEG_RT) != 0;
    h->comparators = CAP_NUM_TIM(cap);
    h->present = true;
}

static void record_comparator(const struct hpet *h, unsigned n, struct hpet_boot_state *out)
{
    uint32_t conf = rd32(h, TN_CONF(n)), bit = 1u << n;
    out->int_enabled |= conf & TN_INT_ENB ? bit : 0;
    out->fsb_enabled |= conf & TN_FSB_EN ? bit : 0;
    out->periodic |= conf & TN_PERIODIC ? bit : 0;
    out->level |= conf & TN_INT_LEVEL ? bit : 0;
    out->route[n] = (uint8_t)((conf & TN_ROUTE_MASK) >> TN_ROUTE_SHIFT);
    if (conf & TN_FSB_EN) {
        out->fsb_data[n] = rd32(h, TN_FSB_VAL(n));
        out->fsb_addr[n] = rd32(h, TN_FSB_ADDR(n));
    }
    if (conf & (TN_INT_ENB | TN_FSB_EN))
        out->left_armed++;
}

int hpet_boot_quiet(uintptr_t mmio, bool access32, uint64_t probe_cyc,
                    struct hpet_boot_state *out)
{
    struct hpet h = { .mmio = mmio, .access32 = access32 };
    uint64_t cap = rd64_static(&h, GCAP_ID);
    *out = (struct hpet_boot_state){ 0 };
    int rc = check_caps(cap, &out->reason);
    if (rc)
        return rc;
    take_caps(&h, cap);
    uint32_t gen = rd32(&h, GEN_CONF);
    out->comparators = h.comparators;
    out->counter_enabled = (gen & CONF_ENABLE) != 0;
    out->legacy_replacement = (gen & CONF_LEG_RT) != 0;
    out->status = rd32(&h, GINTR_STA);
    for (unsigned n = 0; n < h.comparators; n++)
        record_comparator(&h, n, out);
    out->counter_counting = out->counter_enabled && moves(&h, probe_cyc);
    quiet(&h);
    out->quieted = true;
    return 0;
}

static void fill_clocksource(struct hpet *h, uint32_t period_fs)
{
    bool one_load = h->counter64 && !h->access32;
    h->cs = (struct clocksource){
        .name = "hpet", .read = one_load ? hpet_cs_read64 : hpet_cs_read,
        .direct = { .kind = one_load ? IO_COUNTER_MMIO64 : IO_COUNTER_CALL,
                    .mmio = one_load ? h->mmio + MAIN_CNT : 0 },
        .mask = h->counter64 ? CLOCKSOURCE_MASK(64) : CLOCKSOURCE_MASK(32),
        .nominal_hz = (HPET_FS_PER_SEC + period_fs / 2) / period_fs, .rating = HPET_RATING,
        .usable = true,
    };
    /* The rate is the hardware's own statement, not a guess: usable before calibration. */
    h->cs.freq_hz = h->cs.nominal_hz;
}

static void margin_floor(struct hpet *h)
{
    h->margin = (struct hpet_margin){ .margin_cyc = HPET_CMP_MARGIN_FLOOR_CYC };
    h->cmp_margin_cyc = HPET_CMP_MARGIN_FLOOR_CYC;
}

int hpet_init(struct hpet *h, uintptr_t mmio, bool access32, struct hpet_info *out)
{
    *h = (struct hpet){ .mmio = mmio, .access32 = access32 };
    uint64_t cap = rd64_static(h, GCAP_ID);
    *out = (struct hpet_info){
        .period_fs = CAP_PERIOD_FS(cap), .comparators = CAP_NUM_TIM(cap),
        .counter_64bit = (cap & CAP_COUNT_SIZE) != 0,
        .legacy_capable = (cap & CAP_LEG_RT) != 0,
        .vendor = CAP_VENDOR(cap), .rev = CAP_REV(cap), .access32 = access32,
    };
    int rc = check_caps(cap, &out->reason);
    if (rc)
        return rc;
    take_caps(h, cap);
    quiet(h);
    margin_floor(h);
    fill_clocksource(h, out->period_fs);
    out->nominal_hz = h->cs.nominal_hz;
    return 0;
}

int hpet_legacy_replacement(struct hpet *h, bool on)
{
    if (!h->present)
        return -ENODEV;
    if (on && !h->legacy_cap)
        return -ENOTSUP;
    uint32_t conf = rd32(h, GEN_CONF) & ~CONF_LEG_RT;
    wr32(h, GEN_CONF, on ? conf | CONF_LEG_RT : conf);
    return 0;
}

/* ---- comparators ------------------------------------------------------------------------- */

static int check_comparator(const struct hpet *h, unsigned n)
{
    if (!h->present)
        return -ENODEV;
    return n < h->comparators ? 0 : -EINVAL;
}

/* 64-bit compares need a 64-bit counter, a 64-bit comparator and a 64-bit write. */
static bool compares_64(const struct hpet *h, uint32_t conf)
{
    return h->counter64 && (conf & TN_SIZE_CAP) && !h->access32;
}

static uint64_t cmp_mask(const struct hpet *h, uint32_t conf)
{
    return compares_64(h, conf) ? UINT64_MAX : UINT32_MAX;
}

/* The configuration bits for the width ticklab compares in. */
static uint32_t with_width(const struct hpet *h, uint32_t conf)
{
    if ((conf & TN_SIZE_CAP) && !compares_64(h, conf))
        return conf | TN_32MODE;
    return conf & ~TN_32MODE;
}

/* a - b in the compare width, wrap-safe: signed, 64 or 32 bits. */
static inline int64_t width_diff(bool cmp64, uint64_t a, uint64_t b)
{
    return cmp64 ? (int64_t)(a - b) : (int32_t)((uint32_t)a - (uint32_t)b);
}

static void write_cmp(const struct hpet *h, unsigned n, uint64_t v, bool cmp64)
{
    if (cmp64)
        mmio_write64(h->mmio + TN_CMP(n), v);
    else
        wr32(h, TN_CMP(n), (uint32_t)v);
}

static void write_comparator(const struct hpet *h, unsigned n, uint64_t v, uint32_t conf)
{
    write_cmp(h, n, v, compares_64(h, conf));
}

/* Whether target is still at least the block's -ETIME margin ahead of the counter at `now`
 * (wrap-safe, in the comparator's width). */
static bool ahead_by_margin(const struct hpet *h, uint64_t target, uint64_t now, bool cmp64)
{
    return width_diff(cmp64, target, now) >= (int64_t)h->cmp_margin_cyc;
}

/* Whether a comparator just written with target may never match: the counter, read back
 * after the write, is within the margin of target or past it. The read is ordered after
 * the write, but the chip may apply the write later (hpet.h). */
static bool too_late(const struct hpet *h, uint64_t target, uint32_t conf)
{
    return !ahead_by_margin(h, target, hpet_read(h), compares_64(h, conf));
}

/* The delivery bit the comparator's interrupt is enabled with: FSB where it was set up. */
static uint32_t delivery(const struct hpet *h, unsigned n)
{
    return (h->fsb_mask >> n) & 1 ? TN_FSB_EN : 0;
}

/* The interrupt on, with its delivery. Only ever after the comparator holds a value ahead
 * of the counter: an emulated HPET fires a passed one as soon as it is enabled (hpet.h). */
static uint32_t enable(const struct hpet *h, unsigned n, uint32_t conf)
{
    conf |= TN_INT_ENB | delivery(h, n);
    wr32(h, TN_CONF(n), conf);
    return conf;
}

/* One-shot mode, the one way (the channel's state and the raw call): the configuration
 * (not periodic, the compare width) written with the interrupt off, the comparator given a
 * value ahead (*abs_cyc, or half its range ahead: parked), then the interrupt on. Each
 * event is then channel_next_abs(): one comparator write and one counter read. */
static uint32_t oneshot_mode(const struct hpet *h, unsigned n, const uint64_t *abs_cyc)
{
    uint32_t conf = with_width(h, rd32(h, TN_CONF(n)) &
                                      ~(TN_PERIODIC | TN_VAL_SET | TN_INT_ENB | TN_FSB_EN));
    wr32(h, TN_CONF(n), conf);
    write_comparator(h, n, abs_cyc ? *abs_cyc : hpet_read(h) + (cmp_mask(h, conf) >> 1), conf);
    return enable(h, n, conf);
}

int hpet_comparator_caps(const struct hpet *h, unsigned n, struct hpet_comparator_caps *out)
{
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    uint32_t conf = rd32(h, TN_CONF(n));
    *out = (struct hpet_comparator_caps){
        .periodic = (conf & TN_PER_CAP) != 0, .size_64bit = (conf & TN_SIZE_CAP) != 0,
        .fsb = (conf & TN_FSB_CAP) != 0, .route_cap = rd32(h, TN_ROUTE_CAP(n)),
        .cmp_mask = cmp_mask(h, conf),
    };
    return 0;
}

int hpet_comparator_route(struct hpet *h, unsigned n, unsigned ioapic_gsi)
{
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    if (ioapic_gsi >= 32 || !(rd32(h, TN_ROUTE_CAP(n)) & (1u << ioapic_gsi)))
        return -EINVAL;
    uint32_t conf = rd32(h, TN_CONF(n)) & ~(TN_ROUTE_MASK | TN_FSB_EN | TN_INT_LEVEL);
    wr32(h, TN_CONF(n), conf | ioapic_gsi << TN_ROUTE_SHIFT);
    h->fsb_mask &= ~(1u << n);
    return 0;
}

/* The message registers first, so that the comparator never sends a half-written one; FSB
 * delivery itself is enabled with the interrupt (delivery()). */
int hpet_comparator_fsb(struct hpet *h, unsigned n, uint32_t msg_addr, uint32_t msg_data)
{
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    uint32_t conf = rd32(h, TN_CONF(n));
    if (!(conf & TN_FSB_CAP))
        return -ENOTSUP;
    wr32(h, TN_CONF(n), conf & ~(TN_INT_ENB | TN_FSB_EN | TN_INT_LEVEL));
    wr32(h, TN_FSB_VAL(n), msg_data);
    wr32(h, TN_FSB_ADDR(n), msg_addr);
    h->fsb_mask |= 1u << n;
    return 0;
}

int hpet_comparator_level(struct hpet *h, unsigned n, bool level)
{
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    if (level && (h->fsb_mask >> n) & 1)
        return -EINVAL;
    uint32_t conf = rd32(h, TN_CONF(n)) & ~TN_INT_LEVEL;
    wr32(h, TN_CONF(n), level ? conf | TN_INT_LEVEL : conf);
    return 0;
}

int hpet_set_oneshot(struct hpet *h, unsigned n, uint64_t abs_cyc)
{
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    uint32_t conf = oneshot_mode(h, n, &abs_cyc);
    return too_late(h, abs_cyc, conf) ? -ETIME : 0;
}

int hpet_set_periodic(struct hpet *h, unsigned n, uint64_t period_cyc)
{
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    uint32_t conf = with_width(h, rd32(h, TN_CONF(n)));
    if (!(conf & TN_PER_CAP))
        return -ENOTSUP;
    if (period_cyc == 0)
        return -EINVAL;
    if (period_cyc > cmp_mask(h, conf) / 2)
        return -ERANGE;
    conf = (conf & ~(TN_INT_ENB | TN_FSB_EN)) | TN_PERIODIC | TN_VAL_SET;
    wr32(h, TN_CONF(n), conf);                  /* interrupt off while the values change */
    uint64_t first = hpet_read(h) + period_cyc;
    write_comparator(h, n, first, conf);        /* VAL_SET: the comparator itself */
    write_comparator(h, n, period_cyc, conf);   /* VAL_SET has cleared: the increment */
    conf = enable(h, n, conf & ~TN_VAL_SET);
    return too_late(h, first, conf) ? -ETIME : 0;
}

int hpet_comparator_stop(struct hpet *h, unsigned n)
{
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    wr32(h, TN_CONF(n), rd32(h, TN_CONF(n)) & ~TN_OFF_BITS);
    hpet_ack(h, n);
    return 0;
}

void hpet_ack(const struct hpet *h, unsigned n)
{
    if (n < HPET_MAX_COMPARATORS)
        wr32(h, GINTR_STA, 1u << n);
}

bool hpet_status_take(const struct hpet *h, unsigned n)
{
    if (n >= HPET_MAX_COMPARATORS || !(rd32(h, GINTR_STA) & (1u << n)))
        return false;
    wr32(h, GINTR_STA, 1u << n);
    return true;
}

/* ---- the -ETIME margin ------------------------------------------------------------------- */

static void sort_u64(uint64_t *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++)
        for (unsigned k = i; k > 0 && v[k - 1] > v[k]; k--) {
            uint64_t x = v[k];
            v[k] = v[k - 1];
            v[k - 1] = x;
        }
}

/* The counter before a comparator write to the counter read back after it: the per-event
 * path (channel_next_abs()) with the value far ahead and the comparator's interrupt off. */
static uint64_t write_readback_cyc(const struct hpet *h, unsigned n, uint32_t conf)
{
    uint64_t mask = cmp_mask(h, conf), before = hpet_read(h);
    write_comparator(h, n, before + (mask >> 2), conf);
    return (hpet_read(h) - before) & mask;
}

int hpet_measure_margin(struct hpet *h, unsigned n)
{
    uint64_t rt[HPET_MARGIN_TRIES];
    int rc = check_comparator(h, n);
    if (rc)
        return rc;
    hpet_comparator_stop(h, n);
    uint32_t conf = with_width(h, rd32(h, TN_CONF(n)));
    wr32(h, TN_CONF(n), conf);
    for (unsigned i = 0; i < HPET_MARGIN_TRIES; i++)
        rt[i] = write_readback_cyc(h, n, conf);
    hpet_comparator_stop(h, n);
    sort_u64(rt, HPET_MARGIN_TRIES);
    if (rt[HPET_MARGIN_TRIES - 1] == 0) {
        margin_floor(h);
        return -EIO;
    }
    struct hpet_margin m = { .measured = true, .tries = HPET_MARGIN_TRIES,
                             .median_cyc = rt[HPET_MARGIN_TRIES / 2] };
    uint64_t stall = HPET_MARGIN_STALL_FACTOR * (m.median_cyc ? m.median_cyc : 1);
    for (unsigned i = 0; i < HPET_MARGIN_TRIES; i++) {
        if (rt[i] > stall)
            m.stalls++;
        else
            m.worst_cyc = rt[i];
    }
    m.margin_cyc = HPET_MARGIN_SAFETY * m.worst_cyc;
    if (m.margin_cyc < HPET_CMP_MARGIN_FLOOR_CYC)
        m.margin_cyc = HPET_CMP_MARGIN_FLOOR_CYC;
    if (m.margin_cyc > UINT32_MAX / 4)     /* a block this slow is broken, not slow */
        m.margin_cyc = UINT32_MAX / 4;
    h->margin = m;
    h->cmp_margin_cyc = m.margin_cyc;
    return 0;
}

/* ---- a comparator as a clock event device ------------------------------------------------ */

static struct hpet_channel *to_channel(struct clockevent *ce)
{
    return clockevent_container(ce, struct hpet_channel, ce);
}

static int channel_oneshot(struct clockevent *ce)
{
    struct hpet_channel *ch = to_channel(ce);
    ch->conf = oneshot_mode(ch->hpet, ch->n, 0);
    ch->level = (ch->conf & TN_INT_LEVEL) != 0;
    /* No count armed yet in this mode (the shutdown before it cleared the status bit):
     * nothing for the first arming to find stale. */
    ch->events_at_arm = ch->ce.events - 1;
    clockevent_line_unmask(ch->ce.line);
    return 0;
}

static int channel_periodic(struct clockevent *ce, uint64_t period_cyc)
{
    struct hpet_channel *ch = to_channel(ce);
    clockevent_line_unmask(ch->ce.line);
    int rc = hpet_set_periodic(ch->hpet, ch->n, period_cyc);
    ch->conf = rd32(ch->hpet, TN_CONF(ch->n));
    ch->level = (ch->conf & TN_INT_LEVEL) != 0;
    return rc;
}

static int channel_shutdown(struct clockevent *ce)
{
    struct hpet_channel *ch = to_channel(ce);
    hpet_comparator_stop(ch->hpet, ch->n);
    clockevent_line_mask(ch->ce.line);
    return 0;
}

/* One event at count cyc, keeping the status bit a proof (hpet_channel_irq). Equality
 * match: if the counter got there before the write landed, nothing fires (-ETIME). After the
 * write, a level comparator's bit may still hold a match of the count before, reached with
 * its interrupt not handled yet (no event since that arming, and the counter read after the
 * write is past that count). It is cleared then, and the counter read again after the
 * clearing: the new count was still ahead when the bit was cleared, so from here the bit
 * can only mean the new count. The interrupt the old match had raised finds the bit clear
 * (hpet_channel_foreign_irqs()); the old count's timer was replaced by this arming anyway. A 32-bit
 * comparator matches its count again at every wrap of the counter's low half (43 s at
 * 100 MHz), handled or not, so there the bit is cleared at every arming. Otherwise the
 * arming is what it was: one write and one read. */
static int channel_next_abs(struct clockevent *ce, uint64_t cyc)
{
    struct hpet_channel *ch = to_channel(ce);
    const struct hpet *h = ch->hpet;
    uint64_t before = ch->armed_cyc;
    const uint32_t conf = ch->conf;
    const bool cmp64 = compares_64(h, conf);    /* asked once for the write and the checks */

    ch->armed_cyc = cmp64 ? cyc : (uint32_t)cyc;
    write_cmp(h, ch->n, cyc, cmp64);
    uint64_t now = hpet_read(h);
    if (ch->level) {
        /* no interrupt handled since the last arming, and the counter past its count */
        bool stale = ch->ce.events == ch->events_at_arm && width_diff(cmp64, now, before) >= 0;
        if (stale || !cmp64) {
            hpet_ack(h, ch->n);
            ch->stale_cleared += stale;
            now = hpet_read(h);
        }
        ch->events_at_arm = ch->ce.events;
    }
    return ahead_by_margin(h, cyc, now, cmp64) ? 0 : -ETIME;
}

static void (*foreign_batch_hook)(struct hpet_channel *ch);

void hpet_set_foreign_batch_hook(void (*hook)(struct hpet_channel *ch))
{
    foreign_batch_hook = hook;
}

void hpet_channel_foreign_batch(struct hpet_channel *ch)
{
    ch->foreign_batches++;
    ch->foreign_budget = HPET_FOREIGN_BATCH;
    if (foreign_batch_hook)
        foreign_batch_hook(ch);
}

bool hpet_storm_batch(struct hpet_storm_watch *w)
{
    if (!w->batch_cyc)
        return false;
    uint64_t now = rdtsc();
    if (now - w->last_tsc > w->batch_cyc)
        w->run = 0;                 /* a pause before this batch: a new run */
    w->last_tsc = now;
    if (++w->run != HPET_STORM_BATCHES)
        return false;
    w->storms++;
    return true;
}

/* The counter has not reached the value last armed yet (wrap-safe, in the compare width).
 * The comparator itself is not read: straight after a write it may still hold the value
 * before it (hpet.h). */
static int channel_pending(struct clockevent *ce)
{
    struct hpet_channel *ch = to_channel(ce);
    uint64_t now = hpet_read(ch->hpet);
    return width_diff(compares_64(ch->hpet, ch->conf), ch->armed_cyc, now) > 0;
}

static int channel_next_event(struct clockevent *ce, uint64_t delta_cyc)
{
    return channel_next_abs(ce, hpet_read(to_channel(ce)->hpet) + delta_cyc);
}

/* The margin, and the write + read-back that the check itself takes (measured, or half the
 * margin as Linux's HPET_MIN_PROG_DELTA allows): a delta this short still passes it. */
static uint64_t min_delta_of(const struct hpet *h)
{
    uint64_t prog = h->margin.measured ? h->margin.worst_cyc : h->cmp_margin_cyc / 2;
    return h->cmp_margin_cyc + prog;
}

int hpet_channel_init(struct hpet_channel *ch, struct hpet *h, unsigned n, unsigned cpu,
                      const struct clockevent_line *line)
{
    struct hpet_comparator_caps caps;
    int rc = hpet_comparator_caps(h, n, &caps);
    if (rc)
        return rc;
    *ch = (struct hpet_channel){ .hpet = h, .n = n, .status_reg = h->mmio + GINTR_STA,
                                 .status_bit = 1u << n, .foreign_budget = HPET_FOREIGN_BATCH };
    if (n == 0)
        fmt_snprintf(ch->name, sizeof(ch->name), "hpet");   /* what clockevent=hpet names */
    else
        fmt_snprintf(ch->name, sizeof(ch->name), "hpet%u", n);
    ch->conf = rd32(h, TN_CONF(n));
    ch->ce = (struct clockevent){
        .name = ch->name, .cpu = cpu, .line = line,
        .features = CE_ONESHOT | CE_ABS | (caps.periodic ? CE_PERIODIC : 0),
        .freq_hz = h->cs.freq_hz, .min_delta_cyc = min_delta_of(h),
        .max_delta_cyc = caps.cmp_mask >> 1, .rating = HPET_CE_RATING, .usable = true,
        .set_state_oneshot = channel_oneshot, .set_state_shutdown = channel_shutdown,
        .set_state_periodic = caps.periodic ? channel_periodic : 0,
        .set_next_event = channel_next_event, .set_next_abs = channel_next_abs,
        .abs_cs = &h->cs, .pending = channel_pending,
    };
    hpet_comparator_stop(h, n);
    return 0;
}
