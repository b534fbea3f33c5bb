/* lib/time/clocksource.c - cycle -> ns conversion, the registry of clocksources, and the
 * monotonic time_ns() built on the selected one. See clocksource.h for the contracts. */
#include "ticklab/clocksource.h"

#include "ticklab/errno.h"
#include "ticklab/io.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"

/* ---- mult/shift -------------------------------------------------------------------------
 *
 * Why round-to-nearest, and where the 1-ns bound comes from. For a shift s the ideal factor
 * is r = 1e9 * 2^s / f (f = freq_hz); mult = round(r) = r + e with |e| <= 1/2. For a delta
 * of c cycles let x = c * 1e9 / f be the exact ns. Then
 *
 *     c * mult / 2^s = x + d,   d = c * e / 2^s,
 *
 * and the conversion returns floor(x + d) against the reference floor(x). If |d| <= 1 then
 * x - 1 <= x + d <= x + 1, and since floor is monotonic and floor(x +- 1) = floor(x) +- 1,
 * the result is within 1 of the reference. In integers, with
 *
 *     D = |mult * f - 1e9 * 2^s|   (so |e| = D / f),
 *
 * |d| <= 1 is exactly c * D <= f * 2^s, i.e. c <= floor(f * 2^s / D) (any c when D = 0).
 * Round-to-nearest makes D <= f/2, so the bound is at least 2^(s+1) cycles; truncating mult
 * would only guarantee 2^s (D < f), half the range for the same precision, and the time core,
 * which carries the sub-ns remainder and so drifts only by the rate error e / r, would drift
 * up to twice as fast. D is computed exactly, so a lucky frequency (D = 0 for 1 GHz, or for
 * 32768 Hz at small shifts) gets the range it really has.
 *
 * The second limit is the product: c * mult <= 2^64 - 1, i.e. c <= floor((2^64 - 1) / mult).
 *
 * In ns the error limit is about 2^(s+1) * 1e9 / f at worst and grows with s; the overflow
 * limit is about 2^(64-s) and shrinks with s. So the usable range peaks: around s = 32 and a
 * few seconds for a GHz counter, longer for slow ones. clocks_calc_mult_shift() tries every
 * shift from 63 down, keeps the first (largest) whose range reaches the request, and falls
 * back to the longest range when none does. */

struct conversion {
    uint32_t mult, shift;
    uint64_t max_ns, max_cyc, wrap_ns;
};

/* The longest interval (in cycles) both limits above allow for this mult and shift. */
static uint64_t valid_cycles(uint64_t freq_hz, uint32_t mult, uint32_t shift)
{
    unsigned __int128 scaled_rate = (unsigned __int128)mult * freq_hz;     /* < 2^72 */
    unsigned __int128 ideal = (unsigned __int128)NSEC_PER_SEC << shift;    /* < 2^93 */
    uint64_t d = (uint64_t)(scaled_rate > ideal ? scaled_rate - ideal      /* <= f/2 */
                                                : ideal - scaled_rate);
    uint64_t err_cyc = d ? mul_div_u64(freq_hz, 1ull << shift, d) : UINT64_MAX;
    uint64_t ovf_cyc = UINT64_MAX / mult;

    return err_cyc < ovf_cyc ? err_cyc : ovf_cyc;
}

int clocks_calc_mult_shift(uint64_t freq_hz, uint64_t want_max_ns, uint32_t *mult,
                           uint32_t *shift, uint64_t *max_ns)
{
    uint64_t best_ns = 0;
    uint32_t best_mult = 0, best_shift = 0;

    if (freq_hz == 0 || freq_hz > CLOCKSOURCE_MAX_FREQ_HZ || want_max_ns == 0)
        return -EINVAL;

    for (int s = 63; s >= 0; s--) {
        uint64_t m;

        if (!mul_div_u64_round_checked(NSEC_PER_SEC, 1ull << s, freq_hz, &m) ||
            m > UINT32_MAX)
            continue;       /* mult would not fit 32 bits: a smaller shift will */
        if (m == 0)
            break;          /* and it stays 0 for every smaller shift */

        uint64_t range_ns = mul_div_u64(valid_cycles(freq_hz, (uint32_t)m, (uint32_t)s),
                                        NSEC_PER_SEC, freq_hz);
        if (range_ns >= want_max_ns) {
            best_ns = want_max_ns;
            best_mult = (uint32_t)m;
            best_shift = (uint32_t)s;
            break;
        }
        if (range_ns > best_ns) {
            best_ns = range_ns;
            best_mult = (uint32_t)m;
            best_shift = (uint32_t)s;
        }
    }
    /* mult about halves with each shift, so walking down it passes through 1..2^32-1
     * before it can round to 0; and any such shift covers at least 1 ns for freq_hz <=
     * 2^40 (err_cyc >= 2^(s+1), ovf_cyc >= 4). So best_mult is set here. */
    *mult = best_mult;
    *shift = best_shift;
    *max_ns = best_ns;
    return 0;
}

static int conversion_for(uint64_t freq_hz, uint64_t mask, struct conversion *c)
{
    /* mask + 1 cycles, one more than the largest delta cs_delta() returns (2^64 written as
     * 2^63 * 2 for a 64-bit counter). Saturates beyond 64 bits of ns, and for freq_hz 0,
     * which clocks_calc_mult_shift() then refuses. */
    uint64_t wrap_ns = mask == UINT64_MAX
                           ? mul_div_u64(1ull << 63, 2 * NSEC_PER_SEC, freq_hz)
                           : mul_div_u64(mask + 1, NSEC_PER_SEC, freq_hz);
    uint64_t want_ns = wrap_ns < CLOCKSOURCE_WANT_MAX_NS ? wrap_ns : CLOCKSOURCE_WANT_MAX_NS;
    int err;

    if (want_ns == 0)
        want_ns = 1;        /* a counter wrapping in under 1 ns: still a valid request */
    err = clocks_calc_mult_shift(freq_hz, want_ns, &c->mult, &c->shift, &c->max_ns);
    if (err)
        return err;
    /* Cycles whose exact duration is <= max_ns; by construction they are inside the range
     * clocks_calc_mult_shift() validated. */
    c->max_cyc = mul_div_u64(c->max_ns, freq_hz, NSEC_PER_SEC);
    c->wrap_ns = wrap_ns;
    return 0;
}

static void apply_conversion(struct clocksource *cs, uint64_t freq_hz,
                             const struct conversion *c)
{
    cs->freq_hz = freq_hz;
    cs->mult = c->mult;
    cs->shift = c->shift;
    cs->max_ns = c->max_ns;
    cs->max_cyc = c->max_cyc;
    cs->wrap_ns = c->wrap_ns;
}

/* ---- time state -------------------------------------------------------------------------
 *
 * time_ns() = base_ns + ((delta * mult + base_frac) >> shift), delta = cycles since
 * base_cyc. base_frac is the sub-ns remainder of earlier folds in units of 2^-shift ns, so
 * folding loses nothing: across any number of accumulates the result equals one conversion
 * of the total cycles. The product is 128 bits wide, so a late accumulate costs accuracy
 * (the rate error of mult over the longer delta), never an overflowed value.
 *
 * The state a reader needs is one struct, kept twice: the writer updates copy 0 while the odd
 * sequence number sends readers to copy 1, then copy 1 while the even one sends them to copy
 * 0 (a "latch"). A reader never waits, which is what interrupt context needs. */
struct tk_base {
    struct clocksource *cs;  /* NULL before the first select */
    uint32_t mult, shift;    /* copies: set_freq may change the source's fields */
    uint64_t base_cyc;       /* counter value at the last fold */
    uint64_t base_ns;        /* time_ns() at base_cyc, whole ns */
    uint64_t base_frac;      /* ... plus base_frac / 2^shift ns; < 2^shift */
    uint64_t max_idle_ns;    /* timekeeping_max_idle_ns() for this source */
    uint64_t behind_cyc;     /* a masked delta above this is a reading behind base_cyc (a
                                CPU whose TSC lags the one that folded), not a wrap: only
                                64-bit counters, which never wrap, can tell the two apart */
    uint64_t mask;           /* cs->mask */
    uintptr_t mmio64;        /* cs->read_mmio64: time_ns() reads the counter itself */
    bool tsc;                /* cs->read_is_tsc: likewise, RDTSC */
};

static struct {
    uint32_t seq;            /* even: copy 0 is stable; odd: copy 1 is */
    struct tk_base copy[2];
    bool writing;            /* a writer is between enter and leave */
    uint64_t behind_reads;   /* readers that found the counter behind base_cyc */
    uint64_t late_cyc;       /* a folded delta above this counts as late */
    struct timekeeping_stats stats;
} tk;

static struct clocksource *cs_list;

/* A compiler barrier: on one CPU, interrupts see memory in program order, so only the
 * compiler can reorder what a reader interrupting the writer observes. */
#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The time at counter value now_cyc. A value behind the base (*behind set, if asked) gives
 * the base's time: it stands still for that reader instead of jumping 2^64 cycles (a
 * century) ahead. */
static inline uint64_t tk_ns_at(const struct tk_base *b, uint64_t now_cyc, uint64_t *frac,
                                bool *behind)
{
    uint64_t delta = (now_cyc - b->base_cyc) & b->mask;   /* cs_delta, on the copy */
    bool back = delta > b->behind_cyc;
    if (behind)
        *behind = back;
    if (back)
        delta = 0;
    unsigned __int128 scaled = (unsigned __int128)delta * b->mult + b->base_frac;

    if (frac)
        *frac = (uint64_t)scaled & ((1ull << b->shift) - 1);
    return b->base_ns + (uint64_t)(scaled >> b->shift);
}

/* Counted after the read was found consistent: a TSC that does this is not synchronised. */
static void count_behind(bool behind)
{
    if (behind)
        __atomic_fetch_add(&tk.behind_reads, 1, __ATOMIC_RELAXED);
}

/* The one reader of the latch: a consistent copy of the state, and (when asked) the
 * counter read after it was current, and another clock read right after the counter. Every
 * reader of the time state goes through here. */
static inline __attribute__((always_inline)) void
tk_read(struct tk_base *b, uint64_t *now_cyc, uint64_t (*other)(void), uint64_t *other_out,
        uint64_t *other_before)
{
    uint32_t seq;

    do {
        seq = __atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE);
        barrier();
        *b = tk.copy[seq & 1];
        if (other_before)
            *other_before = other();
        if (now_cyc)
            *now_cyc = b->cs ? b->cs->read() : 0;
        if (other)
            *other_out = other();
        barrier();
    } while (__atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE) != seq);
}

static void tk_publish(const struct tk_base *b)
{
    uint32_t seq = tk.seq;

    __atomic_store_n(&tk.seq, seq + 1, __ATOMIC_RELEASE);
    barrier();
    tk.copy[0] = *b;
    barrier();
    __atomic_store_n(&tk.seq, seq + 2, __ATOMIC_RELEASE);
    barrier();
    tk.copy[1] = *b;
    barrier();
}

/* A try-lock: the exchange is atomic, so a writer on another CPU or in an interrupt that
 * came in between is refused (-EBUSY) rather than let in, and the one inside completes. */
static bool tk_writer_enter(void)
{
    if (__atomic_exchange_n(&tk.writing, true, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(&tk.stats.busy_skips, 1, __ATOMIC_RELAXED);
        return false;
    }
    return true;
}

static void tk_writer_leave(void)
{
    __atomic_store_n(&tk.writing, false, __ATOMIC_RELEASE);
}

/* Moves b's base up to now_cyc without changing the time it gives for any later count. */
static void tk_fold(struct tk_base *b, uint64_t now_cyc)
{
    uint64_t delta = cs_delta(b->cs, now_cyc, b->base_cyc);

    b->base_ns = tk_ns_at(b, now_cyc, &b->base_frac, 0);
    b->base_cyc = now_cyc;
    tk.stats.accumulates++;
    if (delta > tk.stats.max_delta_cyc)
        tk.stats.max_delta_cyc = delta;
    if (delta > tk.late_cyc)
        tk.stats.late++;
}

/* Points b at cs from now on; the sub-ns fraction is dropped, so time does not go back. */
static void tk_rebase(struct tk_base *b, struct clocksource *cs)
{
    uint64_t limit_cyc = cs->max_cyc < cs->mask ? cs->max_cyc : cs->mask;

    b->cs = cs;
    b->mult = cs->mult;
    b->shift = cs->shift;
    b->base_frac = 0;
    b->base_cyc = cs->read();
    b->max_idle_ns = mul_div_u64(limit_cyc, NSEC_PER_SEC, cs->freq_hz);
    b->behind_cyc = cs->mask == UINT64_MAX ? UINT64_MAX >> 1 : cs->mask;
    b->mask = cs->mask;
    b->mmio64 = cs->read_mmio64;
    b->tsc = cs->read_is_tsc;
    tk.late_cyc = limit_cyc - limit_cyc / 8;
    tk.stats.limit_cyc = limit_cyc;
}

/* Folds the old source up to now, then continues from that ns value on `to`. */
static int tk_switch(struct clocksource *to)
{
    struct tk_base b;

    if (!tk_writer_enter())
        return -EBUSY;
    b = tk.copy[0];
    if (b.cs)
        tk_fold(&b, b.cs->read());
    tk_rebase(&b, to);
    tk.stats.max_delta_cyc = 0;
    tk.stats.switches++;
    tk_publish(&b);
    tk_writer_leave();
    return 0;
}

/* time_ns() through the driver's read(), and before the first select. */
static __attribute__((noinline)) uint64_t time_ns_call(void)
{
    struct tk_base b;
    uint64_t now_cyc;
    bool behind = false;

    tk_read(&b, &now_cyc, 0, 0, 0);
    uint64_t ns = b.cs ? tk_ns_at(&b, now_cyc, NULL, &behind) : b.base_ns;
    count_behind(behind);
    return ns;
}

/* The fast path reads the copy in place and the counter itself (an HPET's one 64-bit load,
 * or RDTSC), with no call and so no registers to save: this is on every timer interrupt's
 * path. A copy half rewritten meanwhile is caught by the sequence check and read again. */
uint64_t time_ns(void)
{
    uint32_t seq;
    uint64_t ns;
    bool behind;

    do {
        seq = __atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE);
        barrier();
        const struct tk_base *b = &tk.copy[seq & 1];
        uint64_t now;
        if (b->mmio64)
            now = mmio_read64(b->mmio64);
        else if (b->tsc)
            now = rdtsc_ordered();
        else
            return time_ns_call();
        ns = tk_ns_at(b, now, NULL, &behind);
        barrier();
    } while (__atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE) != seq);
    count_behind(behind);
    return ns;
}

uint64_t time_ns_paired(uint64_t (*other)(void), uint64_t *other_out)
{
    struct tk_base b;
    uint64_t now_cyc;
    bool behind = false;

    tk_read(&b, &now_cyc, other, other_out, 0);
    uint64_t ns = b.cs ? tk_ns_at(&b, now_cyc, NULL, &behind) : b.base_ns;
    count_behind(behind);
    return ns;
}

uint64_t time_ns_bracket_tsc(uint64_t *before, uint64_t *after)
{
    uint32_t seq;
    uint64_t ns;
    bool behind = false;

    do {
        seq = __atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE);
        barrier();
        const struct tk_base *b = &tk.copy[seq & 1];
        if (!b->cs) {
            *before = *after = rdtsc_ordered();
            return b->base_ns;
        }
        uint64_t now;
        /* nothing but the counter's read between the two TSC reads */
        if (b->mmio64) {
            *before = rdtsc_ordered();
            now = mmio_read64(b->mmio64);
            *after = rdtsc_ordered();
        } else if (b->tsc) {
            *before = now = rdtsc_ordered();
            *after = now;
        } else {
            *before = rdtsc_ordered();
            now = b->cs->read();
            *after = rdtsc_ordered();
        }
        ns = tk_ns_at(b, now, NULL, &behind);
        barrier();
    } while (__atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE) != seq);
    count_behind(behind);
    return ns;
}

/* A fold changes three fields; only they are written, in both copies, under the latch (the
 * rest of the state is the same in both, and only a writer changes it). */
static void tk_publish_fold(const struct tk_base *b)
{
    uint32_t seq = tk.seq;

    __atomic_store_n(&tk.seq, seq + 1, __ATOMIC_RELEASE);
    barrier();
    tk.copy[0].base_cyc = b->base_cyc;
    tk.copy[0].base_ns = b->base_ns;
    tk.copy[0].base_frac = b->base_frac;
    barrier();
    __atomic_store_n(&tk.seq, seq + 2, __ATOMIC_RELEASE);
    barrier();
    tk.copy[1].base_cyc = b->base_cyc;
    tk.copy[1].base_ns = b->base_ns;
    tk.copy[1].base_frac = b->base_frac;
    barrier();
}

int timekeeping_accumulate_ns(uint64_t *now_ns)
{
    if (!tk_writer_enter())
        return -EBUSY;
    struct tk_base *b = &tk.copy[0];     /* stable: only a writer changes it, and that is us */
    if (!b->cs) {
        tk_writer_leave();
        return -ENODEV;
    }
    struct tk_base next = *b;
    tk_fold(&next, b->mmio64 ? mmio_read64(b->mmio64) : b->tsc ? rdtsc_ordered()
                                                               : b->cs->read());
    tk_publish_fold(&next);
    tk_writer_leave();
    if (now_ns)
        *now_ns = next.base_ns;
    return 0;
}

int timekeeping_accumulate(void)
{
    return timekeeping_accumulate_ns(0);
}

/* A consistent copy of the state, without a counter read. */
static void tk_state(struct tk_base *b)
{
    tk_read(b, 0, 0, 0, 0);
}

uint64_t timekeeping_max_idle_ns(void)
{
    struct tk_base b;

    tk_state(&b);
    return b.cs ? b.max_idle_ns : UINT64_MAX;
}

int timekeeping_cycles_at(uint64_t ns, const struct clocksource *cs, uint64_t *cyc)
{
    struct tk_base b;

    tk_state(&b);
    if (!b.cs || b.cs != cs)
        return -ENODEV;
    if (ns <= b.base_ns) {
        *cyc = b.base_cyc;
        return -ETIME;
    }
    /* The smallest delta with base_ns + ((delta * mult + base_frac) >> shift) >= ns: start
     * from floor((ns - base_ns) * 2^shift / mult), which base_frac (< 2^shift) can move by
     * at most one cycle either way, and step to the exact answer. */
    uint64_t delta;
    if (!mul_div_u64_checked(ns - b.base_ns, 1ull << b.shift, b.mult, &delta))
        return -ERANGE;
    uint64_t limit = tk.stats.limit_cyc;
    for (int i = 0; i < 4 && delta > 0 && delta - 1 <= limit; i++) {
        if (tk_ns_at(&b, (b.base_cyc + delta - 1) & cs->mask, 0, 0) < ns)
            break;                       /* the count before does not reach ns yet */
        delta--;
    }
    for (int i = 0; i < 4 && tk_ns_at(&b, (b.base_cyc + delta) & cs->mask, 0, 0) < ns; i++)
        delta++;
    if (delta > limit || tk_ns_at(&b, (b.base_cyc + delta) & cs->mask, 0, 0) < ns)
        return -ERANGE;
    *cyc = (b.base_cyc + delta) & cs->mask;
    return 0;
}

void timekeeping_get_stats(struct timekeeping_stats *out)
{
    *out = tk.stats;
    out->behind_reads = __atomic_load_n(&tk.behind_reads, __ATOMIC_RELAXED);
}

/* ---- registry ---------------------------------------------------------------------------*/

static const char REASON_NO_FREQ[] = "no usable frequency (0 or above 2^40 Hz)";
static const char REASON_DRIVER[] = "not marked usable by its driver";

struct clocksource *clocksource_list(void)
{
    return cs_list;
}

struct clocksource *clocksource_current(void)
{
    return tk.copy[0].cs;
}

struct clocksource *clocksource_find(const char *name)
{
    for (struct clocksource *cs = cs_list; cs && name; cs = cs->next)
        if (k_strcmp(cs->name, name) == 0)
            return cs;
    return NULL;
}

int clocksource_register(struct clocksource *cs)
{
    struct conversion c = { 0 };
    struct clocksource **tail = &cs_list;

    if (!cs || !cs->name || !cs->name[0] || !cs->read || cs->mask == 0)
        return -EINVAL;
    for (; *tail; tail = &(*tail)->next)
        if (*tail == cs || k_strcmp((*tail)->name, cs->name) == 0)
            return -EBUSY;

    if (conversion_for(cs->freq_hz, cs->mask, &c) != 0) {
        cs->usable = false;             /* c stays all zero: mult 0 never converts */
        cs->unusable_reason = REASON_NO_FREQ;
    }
    apply_conversion(cs, cs->freq_hz, &c);
    if (!cs->usable && !cs->unusable_reason)
        cs->unusable_reason = REASON_DRIVER;
    cs->next = NULL;
    barrier();
    *tail = cs;
    return 0;
}

int clocksource_set_freq(struct clocksource *cs, uint64_t freq_hz)
{
    struct conversion c;
    struct tk_base b;

    if (!cs || conversion_for(freq_hz, cs->mask, &c) != 0)
        return -EINVAL;
    if (!tk_writer_enter())
        return -EBUSY;
    b = tk.copy[0];
    if (b.cs == cs)
        tk_fold(&b, cs->read());        /* the time so far, at the old rate */
    apply_conversion(cs, freq_hz, &c);
    if (cs->unusable_reason == REASON_NO_FREQ) {
        cs->usable = true;
        cs->unusable_reason = NULL;
    }
    if (b.cs == cs) {
        tk_rebase(&b, cs);
        tk_publish(&b);
    }
    tk_writer_leave();
    return 0;
}

static struct clocksource *best_usable(void)
{
    struct clocksource *best = NULL;

    for (struct clocksource *cs = cs_list; cs; cs = cs->next)
        if (cs->usable && (!best || cs->rating > best->rating))
            best = cs;
    return best;
}

static void explain(char *why, size_t why_len, const char *name,
                    const struct clocksource *asked, const struct clocksource *got)
{
    const char *using = got ? got->name : "none usable";

    if (!asked)
        fmt_snprintf(why, why_len, "clocksource=%s: unknown; using %s", name, using);
    else
        fmt_snprintf(why, why_len, "clocksource=%s: unusable (%s); using %s", name,
                     asked->unusable_reason ? asked->unusable_reason : "no reason given",
                     using);
}

struct clocksource *clocksource_select(const char *name, char *why, size_t why_len)
{
    struct clocksource *asked = name ? clocksource_find(name) : NULL;
    struct clocksource *pick = asked && asked->usable ? asked : best_usable();
    struct clocksource *cur = clocksource_current();

    if (why && why_len)
        why[0] = '\0';
    if (name && pick != asked && why && why_len)
        explain(why, why_len, name, asked, pick);
    else if (!pick && why && why_len)
        k_strlcpy(why, "no usable clocksource", why_len);
    if (!pick)
        return NULL;
    if (pick == cur)
        return cur;
    if (tk_switch(pick) != 0) {
        if (why && why_len)
            k_strlcpy(why, "timekeeping busy (select interrupted a writer); source unchanged",
                      why_len);
        return cur;
    }
    return pick;
}

struct clocksource *clocksource_demote(struct clocksource *cs, const char *reason)
{
    cs->usable = false;
    cs->unusable_reason = reason;
    struct clocksource *cur = clocksource_current();
    if (cur != cs)
        return cur;
    struct clocksource *next = best_usable();
    if (!next || tk_switch(next) != 0)
        return cs;
    return next;
}

#ifdef TICKLAB_HOSTED
void clocksource_test_reset(void)
{
    memset(&tk, 0, sizeof(tk));
    cs_list = NULL;
}
#endif
