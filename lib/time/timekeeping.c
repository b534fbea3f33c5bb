/* lib/time/timekeeping.c - the monotonic time_ns() on the selected clocksource: the time
 * state and its readers, the folds, the wrap guard, and the writers that change the source
 * or its rate (select, set_freq, demote). See timekeeping.h for the contracts. */
#include "ticklab/timekeeping.h"

#include "ticklab/errno.h"
#include "ticklab/hotpath.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"

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
    /* The wrap guard (timekeeping_set_guard): a wide counter read beside a narrow source,
     * only to count the source's whole wraps between two reads; gmult 0 when off. */
    const struct clocksource *guard;
    uint64_t guard_base;     /* the guard's count at base_cyc */
    uint64_t gmult;          /* source cycles per guard cycle, times 2^32 */
    /* time_ns()'s fast path (tk_fast_set, at each publication): the counter read in line
     * (counter: the source's `direct`, its kind IO_COUNTER_CALL when the path cannot be
     * taken: a counter whose driver must be called, or a guard on) and the source's fields
     * it needs, so that the path touches this copy only. */
    struct io_counter counter;
    uint64_t mask, behind_cyc;
    /* timekeeping_tick_ns()'s bound (tk_rebase): a delta above it is folded. The least of
     * behind_cyc (a reading behind the fold goes the general way), tk.fold_cyc, and the
     * delta up to which delta * mult + base_frac fits 64 bits, so that the tick converts
     * with a 64-bit multiply and shift, exactly as the 128-bit product would. */
    uint64_t tick_cyc;
} __attribute__((aligned(64)));    /* a copy is found by a shift of the sequence bit */

static struct {
    uint32_t seq;            /* even: copy 0 is stable; odd: copy 1 is */
    struct tk_base copy[2];
    bool writing;            /* a writer is between enter and leave */
    uint64_t behind_reads;   /* readers that found the counter behind base_cyc */
    uint64_t late_cyc;       /* a folded delta above this counts as late */
    uint64_t fold_cyc;       /* timekeeping_tick_ns() folds past this delta: 1/8 of the
                                limit, so folds stay far from late whatever the tick rate */
    uint64_t max_idle_ns;    /* timekeeping_max_idle_ns() for the current source: written
                                by the writer, read without the latch (a bound for waits) */
    struct clocksource *guard; /* timekeeping_set_guard(); NULL: no guard */
    struct timekeeping_stats stats;
} tk;

uint32_t timekeeping_mapping_gen;

/* A compiler barrier: on one CPU, interrupts see memory in program order, so only the
 * compiler can reorder what a reader interrupting the writer observes. */
#define barrier() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The source cycles since the base, with the whole wraps the guard saw added: the guard's
 * elapsed count in source cycles (by the two frequencies) is rounded to the nearest count
 * congruent to delta modulo the wrap. So the phase is always the source's own; the guard
 * only decides how many times it went round, which needs it right to within half a wrap
 * (a 16-bit PIT: 27 ms; a 1000-ppm guard error reaches that after 27 s without a fold). */
static inline uint64_t tk_unwrap(const struct tk_base *b, uint64_t delta, uint64_t guard_now)
{
    uint64_t gdelta = guard_now - b->guard_base;   /* a 64-bit guard: no mask */
    unsigned __int128 p = (unsigned __int128)gdelta * b->gmult;
    uint64_t expect = (p >> 96) ? UINT64_MAX : (uint64_t)(p >> 32);
    uint64_t period = b->cs->mask + 1;             /* the guard is off for 64-bit sources */

    if (expect <= delta || expect - delta <= period / 2)
        return delta;
    uint64_t wraps = (expect - delta + period / 2) / period;
    return wraps > (UINT64_MAX - delta) / period ? UINT64_MAX : delta + wraps * period;
}

/* The time at counter value now_cyc (and, when the base has a guard and use_guard, the
 * guard's count read right after it). A value behind the base (*behind set) gives the base's
 * time: it stands still for that reader instead of jumping 2^64 cycles (a century) ahead. */
static inline uint64_t tk_ns_at(const struct tk_base *b, uint64_t now_cyc, uint64_t guard_now,
                                bool use_guard, uint64_t *frac, bool *behind)
{
    uint64_t delta = cs_delta(b->cs, now_cyc, b->base_cyc);
    if (use_guard && b->gmult)
        delta = tk_unwrap(b, delta, guard_now);
    *behind = delta > b->cs->behind_cyc && delta <= b->cs->mask;
    if (*behind)
        delta = 0;
    unsigned __int128 scaled = (unsigned __int128)delta * b->mult + b->base_frac;

    if (b->shift >= 64)
        __builtin_unreachable();     /* clocks_calc_mult_shift() never makes one */
    if (frac)
        *frac = (uint64_t)scaled & ((1ull << b->shift) - 1);
    return b->base_ns + (uint64_t)(scaled >> b->shift);
}

/* What a reader asks of the latch besides the time: a copy of the state (copy), and the
 * counter of another clock read right before (before) and right after (after) the
 * clocksource's. */
struct tk_read_opts {
    struct tk_base *copy;
    const struct clocksource *ref;
    uint64_t *before, *after;
    bool no_counter;         /* the state only: no counter read, the time is base_ns */
    bool direct_only;        /* time_ns(): a counter whose driver must be called is read by
                                time_ns_by_call() instead, so this path makes no call */
};

static uint64_t time_ns_by_call(void);

/* The one reader of the latch: every reader of the time state goes through here. It reads
 * the counter while a copy no writer is changing is current (the sequence count is the same
 * before and after), and returns the time at that count. Inlined, so each caller keeps only
 * what it asked for. The counter is read first and the copy's fields after the call, so
 * that little has to live across it (this is on every timer interrupt's path). */
static inline __attribute__((always_inline)) uint64_t tk_read(const struct tk_read_opts *ask)
{
    uint32_t seq;
    uint64_t ns;
    bool behind = false;

    for (;;) {
        seq = __atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE);
        barrier();
        const struct clocksource *cs = tk.copy[seq & 1].cs;
        uint64_t now = 0;
        if (ask->no_counter || !cs) {
            if (ask->before)
                *ask->before = cs_read(ask->ref);
            if (ask->after)
                *ask->after = ask->before ? *ask->before : cs_read(ask->ref);
        } else if (ask->before && cs == ask->ref) {
            now = cs_read(cs);
            *ask->before = *ask->after = now;
        } else if (ask->before && ask->ref->direct.kind != IO_COUNTER_CALL &&
                   cs->direct.kind != IO_COUNTER_CALL) {
            now = io_counter_read_between(&ask->ref->direct, &cs->direct, ask->before,
                                          ask->after);
        } else {
            if (ask->direct_only && cs->direct.kind == IO_COUNTER_CALL)
                return time_ns_by_call();
            if (ask->before)
                *ask->before = cs_read(ask->ref);
            now = cs_read(cs);
            if (ask->after)
                *ask->after = cs_read(ask->ref);
        }
        /* A narrow source's guard, read right after it (reused when it was the ref). */
        uint64_t g = 0;
        const struct clocksource *gd = tk.copy[seq & 1].guard;
        if (__builtin_expect(gd != 0, 0) && cs && !ask->no_counter)
            g = ask->after && ask->ref == gd ? *ask->after : cs_read(gd);
        barrier();
        const struct tk_base *b = &tk.copy[seq & 1];
        if (ask->copy)
            *ask->copy = *b;
        ns = cs && !ask->no_counter ? tk_ns_at(b, now, g, true, 0, &behind) : b->base_ns;
        barrier();
        if (__builtin_expect(__atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE) == seq, 1))
            break;
    }
    if (__builtin_expect(behind, 0))  /* counted once the read was found consistent */
        __atomic_fetch_add(&tk.behind_reads, 1, __ATOMIC_RELAXED);
    return ns;
}

/* What time_ns()'s fast path needs of the source, copied into the state it reads. */
static void tk_fast_set(struct tk_base *b)
{
    const struct clocksource *cs = b->cs;
    b->counter = cs && !b->gmult ? cs->direct : (struct io_counter){ IO_COUNTER_CALL, 0 };
    b->mask = cs ? cs->mask : 0;
    b->behind_cyc = cs ? cs->behind_cyc : 0;
}

/* The one publisher: copy 0 while readers are sent to copy 1, then copy 1. */
static inline __attribute__((always_inline)) void tk_publish(const struct tk_base *in)
{
    uint32_t seq = tk.seq;
    struct tk_base fb = *in, *b = &fb;

    tk_fast_set(b);

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

/* Moves b's base up to the counter's value now without changing the time it gives for any
 * later count. */
static inline __attribute__((always_inline)) void tk_fold(struct tk_base *b)
{
    uint64_t now_cyc = cs_read(b->cs);
    uint64_t g = b->guard ? cs_read(b->guard) : 0;
    uint64_t delta = cs_delta(b->cs, now_cyc, b->base_cyc);
    bool behind;

    if (b->gmult) {
        uint64_t full = tk_unwrap(b, delta, g);
        tk.stats.wraps_recovered += (full - delta) / (b->cs->mask + 1);
        delta = full;
    }
    b->base_ns = tk_ns_at(b, now_cyc, g, true, &b->base_frac, &behind);
    b->base_cyc = now_cyc;
    b->guard_base = g;
    tk.stats.accumulates++;
    if (delta > tk.stats.max_delta_cyc)
        tk.stats.max_delta_cyc = delta;
    if (delta > tk.late_cyc)
        tk.stats.late++;
}

/* Whether b's source gets the guard, and its rate against it: a source that wraps within
 * TK_GUARD_WRAP_NS (the 16-bit PIT, the 24- or 32-bit PM timer, a 32-bit HPET, the LAPIC
 * counter), when a guard of known frequency is set that is not the source itself. */
#define TK_GUARD_WRAP_NS (3600ull * NSEC_PER_SEC)
static void tk_guard_set(struct tk_base *b)
{
    const struct clocksource *g = tk.guard;
    const struct clocksource *cs = b->cs;
    uint64_t gmult = 0;

    if (g && cs && g != cs && g->freq_hz && cs->freq_hz && cs->mask != UINT64_MAX &&
        cs->wrap_ns < TK_GUARD_WRAP_NS &&
        !mul_div_u64_checked(cs->freq_hz, 1ull << 32, g->freq_hz, &gmult))
        gmult = 0;
    b->gmult = gmult;
    b->guard = gmult ? g : NULL;
    b->guard_base = gmult ? cs_read(g) : 0;
}

/* Points b at cs from now on; the sub-ns fraction is dropped, so time does not go back. */
static void tk_rebase(struct tk_base *b, struct clocksource *cs)
{
    uint64_t limit_cyc = cs->max_cyc < cs->mask ? cs->max_cyc : cs->mask;

    b->cs = cs;
    b->mult = cs->mult;
    b->shift = cs->shift;
    b->base_frac = 0;
    __atomic_store_n(&timekeeping_mapping_gen, timekeeping_mapping_gen + 1, __ATOMIC_RELAXED);
    b->base_cyc = cs_read(cs);
    tk_guard_set(b);
    __atomic_store_n(&tk.max_idle_ns, mul_div_u64(limit_cyc, NSEC_PER_SEC, cs->freq_hz),
                     __ATOMIC_RELAXED);
    tk.late_cyc = limit_cyc - limit_cyc / 8;
    __atomic_store_n(&tk.fold_cyc, limit_cyc / 8, __ATOMIC_RELAXED);
    tk.stats.limit_cyc = limit_cyc;
    /* timekeeping_tick_ns()'s bound, set with the mult it goes with (here, not at every
     * publication: a division). base_frac < 2^shift <= 2^63, so delta * mult < 2^62 keeps
     * the sum below 2^64; fold_cyc (an eighth of max_cyc, and max_cyc * mult < 2^64) is
     * below that already. */
    uint64_t fits = b->mult ? ((1ull << 62) - 1) / b->mult : 0;
    uint64_t bound = limit_cyc / 8 < cs->behind_cyc ? limit_cyc / 8 : cs->behind_cyc;
    b->tick_cyc = bound < fits ? bound : fits;
}

/* Folds the old source up to now, then continues from that ns value on `to`. */
static int tk_switch(struct clocksource *to)
{
    struct tk_base b;

    if (!tk_writer_enter())
        return -EBUSY;
    b = tk.copy[0];
    if (b.cs)
        tk_fold(&b);
    tk_rebase(&b, to);
    tk.stats.max_delta_cyc = 0;
    tk.stats.switches++;
    tk_publish(&b);
    tk_writer_leave();
    return 0;
}

/* time_ns() on a counter whose driver is called: apart, so that the path without the call
 * saves no registers for it. */
static __attribute__((noinline)) uint64_t time_ns_by_call(void)
{
    const struct tk_read_opts ask = { 0 };
    return tk_read(&ask);
}

/* The common case in a few instructions (it is on every timer interrupt's path): a counter
 * read in line (the TSC, a 64-bit MMIO counter), no guard, a reading not behind the fold:
 * true, with the time and the cycles since the fold. false: go the general way (which also
 * counts a reading behind the fold). */
static inline __attribute__((always_inline)) bool tk_read_fast(uint64_t *ns_out,
                                                               uint64_t *delta_out)
{
    for (;;) {
        uint32_t seq = __atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE);
        barrier();
        const struct tk_base *b = &tk.copy[seq & 1];
        b = opaque_ptr(b);              /* one pointer for every field (no index re-derived) */
        if (__builtin_expect(b->counter.kind == IO_COUNTER_CALL, 0))
            return false;
        uint64_t now = io_counter_read(&b->counter);
        uint64_t delta = (now - b->base_cyc) & b->mask;
        if (__builtin_expect(delta > b->behind_cyc, 0))
            return false;
        /* the 128-bit product and its shift in four instructions (a shift below 64:
         * clocks_calc_mult_shift() never makes another) */
        uint64_t ns = b->base_ns + mul_add_shr_u64(delta, b->mult, b->base_frac, b->shift);
        barrier();
        if (__builtin_expect(__atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE) == seq, 1)) {
            *ns_out = ns;
            *delta_out = delta;
            return true;
        }
    }
}

/* time_ns()'s general way, apart: so that its frame and saved registers are not set up on
 * the fast path too (the compiler does not always keep them off it). */
static __attribute__((noinline)) uint64_t time_ns_general(void)
{
    const struct tk_read_opts ask = { .direct_only = true };
    return tk_read(&ask);
}

uint64_t time_ns(void)
{
    uint64_t ns, delta;
    if (__builtin_expect(tk_read_fast(&ns, &delta), 1))
        return ns;
    return time_ns_general();
}

/* Apart, so that the path without a fold keeps no frame for it. */
static __attribute__((noinline)) uint64_t tick_fold(void)
{
    uint64_t ns;
    if (timekeeping_accumulate_ns(&ns) != 0)
        ns = time_ns();        /* it interrupted another writer, which completes the fold */
    return ns;
}

/* The copies by address: a reader that loads its copy's pointer keeps it in one register
 * (indexing tk.copy[], the compiler recomputed the index for each field). */
static const struct tk_base *const tk_copies[2] = { &tk.copy[0], &tk.copy[1] };

/* tk_read_fast() made for the tick: one compare with the copy's tick_cyc stands for the
 * fold's bound and the reading-behind's (either goes to tick_fold(), as before), and below
 * it the conversion is a 64-bit multiply and shift, exact there (tk_rebase). The 64-bit
 * MMIO counter's kind is tested first (the HPET; the TSC's test costs what it did). The
 * bound is tested before the sequence: a reading torn by a writer on another CPU may fold
 * where a retry would not have (the fold gives the right time either way). */
HOT_PATH uint64_t timekeeping_tick_ns(void)
{
    uint32_t seq;
    uint64_t ns;
    do {
        seq = __atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE);
        barrier();
        const struct tk_base *b = tk_copies[seq & 1];
        enum io_counter_kind kind = b->counter.kind;
        uint64_t now;
        if (__builtin_expect(kind == IO_COUNTER_MMIO64, 1))
            now = io_counter_read(&(struct io_counter){ kind, b->counter.mmio });
        else if (kind == IO_COUNTER_TSC)
            now = io_counter_read(&(struct io_counter){ kind, 0 });
        else
            return tick_fold();
        uint64_t delta = (now - b->base_cyc) & b->mask;
        if (__builtin_expect(delta > b->tick_cyc, 0))
            return tick_fold();
        if (b->shift >= 64)
            __builtin_unreachable();     /* clocks_calc_mult_shift() never makes one */
        ns = b->base_ns + ((delta * b->mult + b->base_frac) >> b->shift);
        barrier();
    } while (__builtin_expect(__atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE) != seq, 0));
    return ns;
}

uint64_t time_ns_paired(const struct clocksource *other, uint64_t *other_out)
{
    const struct tk_read_opts ask = { .ref = other, .after = other_out };
    return tk_read(&ask);
}

uint64_t time_ns_bracket(const struct clocksource *ref, uint64_t *before, uint64_t *after)
{
    const struct tk_read_opts ask = { .ref = ref, .before = before, .after = after };
    return tk_read(&ask);
}

/* The fold and its publication, inside the writer lock. */
static inline __attribute__((always_inline)) uint64_t fold_now(void)
{
    struct tk_base next = tk.copy[0];    /* stable: only a writer changes it, and that is us */
    tk_fold(&next);
    tk_publish(&next);
    tk_writer_leave();
    return next.base_ns;
}

/* On a counter whose driver is called: apart, so that the tick's path (every tick folds)
 * saves no registers for the call. */
static __attribute__((noinline)) uint64_t fold_now_by_call(void)
{
    return fold_now();
}

int timekeeping_accumulate_ns(uint64_t *now_ns)
{
    if (!tk_writer_enter())
        return -EBUSY;
    const struct clocksource *cs = tk.copy[0].cs;
    if (!cs) {
        tk_writer_leave();
        return -ENODEV;
    }
    uint64_t ns = cs->direct.kind == IO_COUNTER_CALL ? fold_now_by_call() : fold_now();
    if (now_ns)
        *now_ns = ns;
    return 0;
}

int timekeeping_accumulate(void)
{
    return timekeeping_accumulate_ns(0);
}

/* A consistent copy of the state, without a counter read. */
static void tk_state(struct tk_base *b)
{
    const struct tk_read_opts ask = { .copy = b, .no_counter = true };
    tk_read(&ask);
}

uint64_t timekeeping_max_idle_ns(void)
{
    struct tk_base b;

    tk_state(&b);
    return b.cs ? __atomic_load_n(&tk.max_idle_ns, __ATOMIC_RELAXED) : UINT64_MAX;
}

/* What inverting time_ns() needs of the current copy, read under the latch. */
struct tk_inverse {
    const struct clocksource *cs;
    struct io_counter counter;    /* its in-line read (IO_COUNTER_CALL: none, or a guard) */
    uint32_t mult, shift;
    uint64_t base_cyc, base_ns, base_frac, mask, behind_cyc;
};

static inline __attribute__((always_inline)) void tk_inverse_read(struct tk_inverse *v)
{
    for (;;) {
        uint32_t seq = __atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE);
        barrier();
        const struct tk_base *b = opaque_ptr(&tk.copy[seq & 1]);
        *v = (struct tk_inverse){ .cs = b->cs, .counter = b->counter, .mult = b->mult,
                                  .shift = b->shift, .base_cyc = b->base_cyc,
                                  .base_ns = b->base_ns, .base_frac = b->base_frac,
                                  .mask = b->mask, .behind_cyc = b->behind_cyc };
        barrier();
        if (__builtin_expect(__atomic_load_n(&tk.seq, __ATOMIC_ACQUIRE) == seq, 1))
            return;
    }
}

/* The first count at which time_ns() reaches ns. time_ns() at base_cyc + delta is
 * base_ns + floor((delta * mult + base_frac) / 2^shift), and (ns - base_ns) * 2^shift is a
 * whole multiple of 2^shift, so it reaches ns exactly when delta * mult + base_frac >=
 * (ns - base_ns) * 2^shift: the smallest such delta is one 128-by-64 division rounded up,
 * with no stepping. 0; -ETIME (ns not after the base: *cyc the base count); -ERANGE (beyond
 * what one fold can hold). */
static inline int tk_count_at(const struct tk_inverse *v, uint64_t ns, uint64_t *cyc)
{
    if (ns <= v->base_ns) {
        *cyc = v->base_cyc;
        return -ETIME;
    }
    if (v->shift >= 64 || v->mult == 0)
        __builtin_unreachable();     /* clocks_calc_mult_shift() never makes one */
    unsigned __int128 num = ((unsigned __int128)(ns - v->base_ns) << v->shift) - v->base_frac +
                            (v->mult - 1);
    uint64_t hi = (uint64_t)(num >> 64);
    if (hi >= v->mult)
        return -ERANGE;
    uint64_t delta = div_u128_u64(hi, (uint64_t)num, v->mult);
    if (delta > tk.stats.limit_cyc || delta > v->behind_cyc)
        return -ERANGE;
    *cyc = (v->base_cyc + delta) & v->mask;
    return 0;
}

int timekeeping_cycles_at(uint64_t ns, const struct clocksource *cs, uint64_t *cyc)
{
    struct tk_inverse v;

    tk_inverse_read(&v);
    if (!v.cs || v.cs != cs)
        return -ENODEV;
    return tk_count_at(&v, ns, cyc);
}

int timekeeping_target_at(uint64_t ns, struct timekeeping_target *out)
{
    out->gen = __atomic_load_n(&timekeeping_mapping_gen, __ATOMIC_ACQUIRE);
    struct tk_inverse v;
    tk_inverse_read(&v);
    if (!v.cs || v.counter.kind == IO_COUNTER_CALL || v.mask != UINT64_MAX || !v.cs->freq_hz)
        return -ENODEV;
    out->counter = v.counter;
    out->freq_hz = v.cs->freq_hz;
    return tk_count_at(&v, ns, &out->cyc);
}

int timekeeping_set_guard(struct clocksource *guard)
{
    struct tk_base b;

    if (guard && (guard->mask != UINT64_MAX || !guard->freq_hz))
        return -EINVAL;
    if (!tk_writer_enter())
        return -EBUSY;
    b = tk.copy[0];
    if (b.cs)
        tk_fold(&b);                    /* up to now under the old guard */
    tk.guard = guard;
    tk_guard_set(&b);
    __atomic_store_n(&timekeeping_mapping_gen, timekeeping_mapping_gen + 1, __ATOMIC_RELAXED);
    tk_publish(&b);
    tk_writer_leave();
    return 0;
}

const struct clocksource *timekeeping_guard(void)
{
    struct tk_base b;

    tk_state(&b);
    return b.guard;
}

void timekeeping_get_stats(struct timekeeping_stats *out)
{
    *out = tk.stats;
    out->behind_reads = __atomic_load_n(&tk.behind_reads, __ATOMIC_RELAXED);
}

/* ---- the writers that change the source or its rate ------------------------------------*/

struct clocksource *clocksource_current(void)
{
    return tk.copy[0].cs;
}

int clocksource_set_freq(struct clocksource *cs, uint64_t freq_hz)
{
    struct clocksource_rate rate;
    struct tk_base b;

    if (!cs || clocksource_rate_for(cs, freq_hz, &rate) != 0)
        return -EINVAL;
    if (!tk_writer_enter())
        return -EBUSY;
    b = tk.copy[0];
    bool guards = b.cs && b.cs != cs && b.guard == cs;
    if (b.cs == cs || guards)
        tk_fold(&b);                    /* the time so far, at the old rate */
    clocksource_rate_apply(cs, &rate);
    if (b.cs == cs || guards) {
        if (b.cs == cs)
            tk_rebase(&b, cs);
        else
            tk_guard_set(&b);           /* the guard's new rate */
        tk_publish(&b);
    }
    tk_writer_leave();
    return 0;
}

struct clocksource *clocksource_select(const char *name, char *why, size_t why_len)
{
    struct clocksource *pick = clocksource_pick(name, why, why_len);
    struct clocksource *cur = clocksource_current();

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
    struct clocksource *next = clocksource_best();
    if (!next || tk_switch(next) != 0)
        return cs;
    return next;
}

#ifdef TICKLAB_HOSTED
void timekeeping_test_reset(void)
{
    memset(&tk, 0, sizeof(tk));
    clocksource_test_reset();
}
#endif
