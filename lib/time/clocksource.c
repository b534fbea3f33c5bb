/* lib/time/clocksource.c - cycle -> ns conversion and the registry of clocksources. The
 * monotonic clock built on the selected one is timekeeping.c's. See clocksource.h for the
 * contracts. */
#include "ticklab/clocksource.h"

#include "ticklab/errno.h"
#include "ticklab/hotpath.h"
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

static int conversion_for(uint64_t freq_hz, uint64_t mask, struct clocksource_rate *c)
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
    c->freq_hz = freq_hz;
    return 0;
}

static void apply_conversion(struct clocksource *cs, const struct clocksource_rate *c)
{
    cs->freq_hz = c->freq_hz;
    cs->mult = c->mult;
    cs->shift = c->shift;
    cs->max_ns = c->max_ns;
    cs->max_cyc = c->max_cyc;
    cs->wrap_ns = c->wrap_ns;
}

/* ---- registry ---------------------------------------------------------------------------*/

static struct clocksource *cs_list;

/* A compiler barrier: a source is complete before it is linked in. */
#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

static const char REASON_NO_FREQ[] = "no usable frequency (0 or above 2^40 Hz)";
static const char REASON_DRIVER[] = "not marked usable by its driver";

struct clocksource *clocksource_list(void)
{
    return cs_list;
}

char *clocksource_names(char *buf, size_t buf_len)
{
    size_t used = 0;
    if (buf_len == 0)
        return buf;
    buf[0] = '\0';
    for (struct clocksource *cs = cs_list; cs && used < buf_len; cs = cs->next) {
        int n = fmt_snprintf(buf + used, buf_len - used, "%s%s", used ? ", " : "", cs->name);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
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
    struct clocksource_rate c = { 0 };
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
    c.freq_hz = cs->freq_hz;
    apply_conversion(cs, &c);
    cs->behind_cyc = cs->mask == UINT64_MAX ? UINT64_MAX >> 1 : cs->mask;
    if (!cs->usable && !cs->unusable_reason)
        cs->unusable_reason = REASON_DRIVER;
    cs->next = NULL;
    barrier();
    *tail = cs;
    return 0;
}

struct clocksource *clocksource_best(void)
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

    char names[96];
    if (!asked)
        fmt_snprintf(why, why_len, "clocksource=%s: no such clocksource here (%s%s); using %s",
                     name, cs_list ? "registered: " : "none registered",
                     clocksource_names(names, sizeof(names)), using);
    else
        fmt_snprintf(why, why_len, "clocksource=%s: unusable (%s); using %s", name,
                     asked->unusable_reason ? asked->unusable_reason : "no reason given",
                     using);
}

int clocksource_rate_for(const struct clocksource *cs, uint64_t freq_hz,
                         struct clocksource_rate *rate)
{
    return conversion_for(freq_hz, cs->mask, rate);
}

void clocksource_rate_apply(struct clocksource *cs, const struct clocksource_rate *rate)
{
    apply_conversion(cs, rate);
    if (cs->unusable_reason == REASON_NO_FREQ) {
        cs->usable = true;
        cs->unusable_reason = NULL;
    }
}

struct clocksource *clocksource_pick(const char *name, char *why, size_t why_len)
{
    struct clocksource *asked = name ? clocksource_find(name) : NULL;
    struct clocksource *pick = asked && asked->usable ? asked : clocksource_best();

    if (why && why_len)
        why[0] = '\0';
    if (name && pick != asked && why && why_len)
        explain(why, why_len, name, asked, pick);
    else if (!pick && why && why_len)
        k_strlcpy(why, "no usable clocksource", why_len);
    return pick;
}

#ifdef TICKLAB_HOSTED
void clocksource_test_reset(void)
{
    cs_list = NULL;
}
#endif
