/* lib/time/hrtimer.c - the hrtimer core: queue, device programming, expiry, hang and
 * storm handling. See hrtimer.h. */
#include "ticklab/hrtimer.h"

#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/hotpath.h"

#include "ticklab/errno.h"

_Static_assert(offsetof(struct hrtimer, node) == 0, "hrtimer must start with its node");

const struct hrtimer_clock hrtimer_clock_time_ns = { "time_ns", time_ns, true };

static struct hrtimer *to_timer(struct tq_node *n)
{
    return (struct hrtimer *)(void *)n;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void ce_event(struct clockevent *ce);

int hrtimer_base_init(struct hrtimer_base *base, struct clockevent *dev,
                      const struct hrtimer_clock *clock, uint32_t capacity)
{
    if (!base || !dev || !clock || !clock->now_ns || capacity == 0)
        return -EINVAL;
    int rc = clockevent_claim(dev, ce_event, base);
    if (rc)
        return rc;
    *base = (struct hrtimer_base){ .dev = dev, .clock = clock, .now_ns = clock->now_ns,
                                   .storm_limit = HRTIMER_STORM_LIMIT };
    tq_init(&base->q, capacity);
    clockevent_shutdown(dev);
    return 0;
}

int hrtimer_base_reclaim(struct hrtimer_base *base, uint32_t capacity)
{
    struct hrtimer_base old = *base;
    int rc = hrtimer_base_init(base, old.dev, old.clock, capacity);
    if (rc)
        return rc;
    base->storm_limit = old.storm_limit;
    base->stats = old.stats;
    return 0;
}

void hrtimer_base_release(struct hrtimer_base *base)
{
    if (base->dev && base->dev->owner == base)
        clockevent_release(base->dev);
    base->armed = false;
}

/* Arms the device for `expires` (an absolute time; past means "as soon as it can"). */
static int program(struct hrtimer_base *b, uint64_t expires, uint64_t now)
{
    int err;

    b->stats.reprograms++;
    /* On time_ns() the device can be armed for the absolute moment (CE_ABS devices) and the
     * others get the delay from a fresh read; on any other clock only the delay is known. */
    if (b->clock->is_time_ns)
        err = clockevent_program_abs_ns(b->dev, expires, now);
    else
        err = clockevent_program_ns(b->dev, expires > now ? expires - now : 0);
    b->armed = err == 0;
    b->armed_ns = expires;
    b->armed_at_ns = now;
    if (err)
        b->stats.program_errors++;
    return err;
}

static void shutdown(struct hrtimer_base *b)
{
    clockevent_shutdown(b->dev);
    b->stats.shutdowns++;
    b->armed = false;
}

/* After a start or cancel outside the interrupt: follow the earliest deadline. */
static void update_device(struct hrtimer_base *b)
{
    struct tq_node *head;

    if (b->in_interrupt || b->hang_pending)
        return;
    head = tq_first(&b->q);
    if (!head) {
        if (b->armed)
            shutdown(b);
        return;
    }
    if (b->armed && tq_deadline_ns(head) == b->armed_ns)
        return;
    if (program(b, tq_deadline_ns(head), b->now_ns()) == -ETIME)
        hrtimer_interrupt(b);   /* nothing armed, no interrupt will come: run it by hand */
}

int hrtimer_start(struct hrtimer_base *base, struct hrtimer *t, uint64_t expires_ns,
                  enum hrtimer_mode mode)
{
    int r;

    if (!base || !t || !t->fn)
        return -EINVAL;
    if (mode == HRTIMER_MODE_REL)
        expires_ns = add_sat(base->now_ns(), expires_ns);
    else if (mode != HRTIMER_MODE_ABS)
        return -EINVAL;
    r = tq_requeue(&base->q, &t->node, expires_ns);
    if (r < 0)
        return r;
    t->expires_ns = expires_ns;
    if (r == 1)
        update_device(base);
    return 0;
}

bool hrtimer_cancel(struct hrtimer_base *base, struct hrtimer *t)
{
    if (!base || !t || !tq_queued(&t->node))
        return false;
    if (tq_remove(&base->q, &t->node) == 1)
        update_device(base);
    return true;
}

uint64_t hrtimer_forward(struct hrtimer *t, uint64_t now_ns, uint64_t interval_ns)
{
    uint64_t n;
    unsigned __int128 e;

    if (interval_ns == 0 || now_ns < t->expires_ns || tq_queued(&t->node))
        return 0;
    n = (now_ns - t->expires_ns) / interval_ns;
    n = n == UINT64_MAX ? n : n + 1;
    e = (unsigned __int128)t->expires_ns + (unsigned __int128)n * interval_ns;
    t->expires_ns = e > UINT64_MAX ? UINT64_MAX : (uint64_t)e;
    return n;
}

/* Runs t, which was just dequeued: its callback, then its restart if it asks for one. */
static inline __attribute__((always_inline)) void run_one(struct hrtimer_base *b,
                                                          struct hrtimer *t)
{
    b->running = t;
    enum hrtimer_restart rs = t->fn(t);
    b->running = NULL;
    b->stats.expired++;
    if (rs == HRTIMER_RESTART && !tq_queued(&t->node) &&
        tq_insert(&b->q, &t->node, t->expires_ns) < 0)
        b->stats.restart_errors++;
}

/* Runs every timer due at `now`, at most *budget of them. false if the budget ran out. */
static bool run_due(struct hrtimer_base *b, uint64_t now, uint32_t *budget)
{
    struct tq_node *n;

    while ((n = tq_first(&b->q)) && tq_deadline_ns(n) <= now) {
        if (*budget == 0)
            return false;
        (*budget)--;
        tq_pop_head(&b->q, n);
        run_one(b, to_timer(n));
    }
    return true;
}

/* An interrupt that found nothing due. If it came before the moment the device was armed
 * for, the device says why: an interrupt left from an earlier programming (stale), or the
 * device fired early (a defect). Off the hot path. */
static __attribute__((noinline)) void note_spurious(struct hrtimer_base *b,
                                                    const struct tq_node *first, bool was_armed,
                                                    uint64_t now)
{
    b->stats.spurious++;
    if (!first || !was_armed || b->armed_ns <= now)
        return;
    b->entry_early = true;
    uint64_t early = clockevent_early_by(b->dev, b->armed_ns, b->armed_at_ns, b->now_ns);
    if (!early) {
        b->stats.stale++;
        return;
    }
    b->stats.early_fires++;
    if (early > b->stats.early_max_ns)
        b->stats.early_max_ns = early;
}

/* Hang: the work outran the clock. Like Linux, back off for as long as this interrupt took
 * (capped) so the rest of the system gets to run. `since`: the interrupt's entry, or on a
 * proven interrupt (which reads no clock at entry) the moment it proved, at most the
 * wake-up latency before the entry. */
static __attribute__((noinline)) void back_off(struct hrtimer_base *b, uint64_t since)
{
    uint64_t now = b->now_ns();
    uint64_t hang = now > since ? now - since : 0;
    b->stats.hangs++;
    if (hang > b->stats.max_hang_ns)
        b->stats.max_hang_ns = hang;
    uint64_t pause = hang < HRTIMER_HANG_MAX_DELAY_NS ? hang : HRTIMER_HANG_MAX_DELAY_NS;
    if (program(b, add_sat(now, pause), now) == 0)
        b->hang_pending = true;
}

/* Runs what is due at `now` and arms the device for the new head, until the head is ahead
 * of the clock once the device is armed; bounded by the storm limit and HRTIMER_MAX_TRIES.
 * A hang is measured from `since` (back_off). */
static __attribute__((noinline)) void expire(struct hrtimer_base *b, uint64_t now,
                                             uint64_t since, uint32_t budget)
{

    for (int tries = 0;; tries++) {
        if (!run_due(b, now, &budget)) {
            /* Storm: let the rest run one min delta from now. */
            b->stats.storm_detected++;
            program(b, now, now);
            return;
        }
        struct tq_node *head = tq_first(&b->q);
        if (!head)
            return;    /* the device fired and holds nothing: it stays in one-shot mode, so
                          the next start arms it with one write (no state change) */
        uint64_t expires = tq_deadline_ns(head);
        int err = program(b, expires, now);
        now = b->now_ns();
        if (err == 0 && expires > now)
            return;
        if (err != 0 && err != -ETIME)
            return;            /* a device error: counted, nothing more to try */
        if (tries + 1 >= HRTIMER_MAX_TRIES) {
            back_off(b, since);
            return;
        }
        b->stats.retries++;
    }
}

/* Everything after the head's callback (or after an interrupt that found nothing due): the
 * device counted as fired, the count, the rest that is due and the device's next
 * programming (expire: apart, so that the way to the first callback keeps only the
 * registers it needs across its calls; with an empty queue it has nothing to do). */
static inline __attribute__((always_inline)) void interrupt_tail(struct hrtimer_base *b,
                                                                 uint64_t entry,
                                                                 uint32_t budget,
                                                                 bool proven)
{
    b->armed = false;          /* a one-shot device that fired is no longer armed */
    b->hang_pending = false;
    b->stats.interrupts++;
    /* A proven interrupt read no clock at entry (`entry` is the moment it proved): the
     * clock is read now, and only when timers are left to run or to arm for. */
    b->stats.proven += proven;
    if (!tq_empty(&b->q))
        expire(b, proven ? b->now_ns() : entry, entry, budget);
    b->in_interrupt = false;
    b->entry_early = false;
}

/* The storm budget left for the rest of an interrupt once its head has run: the head is
 * always let through (a storm is many expiries in one interrupt, never the first; a limit
 * of 0 counts as 1), so nothing is tested before its callback. */
static inline uint32_t budget_after_head(const struct hrtimer_base *b)
{
    return b->storm_limit > 1 ? b->storm_limit - 1 : 0;
}

/* The head's callback comes first: one clock read and the dequeue stand between the
 * interrupt and it; the counts, the spurious-interrupt diagnosis and the device's next
 * programming all come after (interrupt_tail), or only when nothing is due
 * (note_spurious). `armed` and `hang_pending` are cleared in interrupt_tail, after the
 * callback: they are read only by update_device(), which returns at once while
 * in_interrupt, by note_spurious() (given `armed` as it was) and by the release, so a
 * callback sees the same behaviour as when they were cleared here. */
static inline __attribute__((always_inline)) void interrupt(struct hrtimer_base *b,
                                                            uint64_t reached)
{
    if (b->in_interrupt)
        return;
    b->in_interrupt = true;    /* entry_early is false here: every tail clears it */
    struct tq_node *first = tq_first(&b->q);
    /* Proven (ce_event): the head is due by the moment the device proved, so it runs with
     * no clock read before it; the storm budget and the rest as below. reached 0 (nothing
     * proved) lets through only a deadline of 0, which is due whenever it is looked at. */
    if (first && tq_deadline_ns(first) <= reached) {
        tq_pop_head(&b->q, first);
        run_one(b, to_timer(first));
        interrupt_tail(b, reached, budget_after_head(b), true);
        return;
    }
    uint64_t entry = b->now_ns();
    if (__builtin_expect(first && tq_deadline_ns(first) <= entry, 1)) {
        tq_pop_head(&b->q, first);
        run_one(b, to_timer(first));
        interrupt_tail(b, entry, budget_after_head(b), false);
        return;
    }
    if (!first || tq_deadline_ns(first) > entry)
        note_spurious(b, first, b->armed, entry);
    interrupt_tail(b, entry, b->storm_limit, false);
}

void hrtimer_interrupt(struct hrtimer_base *b)
{
    interrupt(b, 0);
}

/* The device's event: its owner is the base (hrtimer_base_init claimed it). The interrupt
 * in line, not a jump to hrtimer_interrupt(): on every event's path.
 *
 * A device whose interrupt proves its counter reached the count it was armed for passes
 * that arming's moment as reached_ns (clockevent.h: only for a count of time_ns()'s own
 * counter, which program() asks for only when the base's clock is time_ns()). If
 * time_ns()'s mapping has not changed since that count was taken, time_ns() now reads that
 * moment or later: the head is then known due without reading the clock (on the HPET, time_ns()'s
 * counter under QEMU and where the TSC is not trusted, the read is an uncached access
 * of a microsecond on a PC). */
static HOT_PATH void ce_event(struct clockevent *ce)
{
    uint64_t reached = ce->abs_exact_gen == timekeeping_mapping_gen ? ce->reached_ns : 0;
    interrupt(ce->owner, reached);
}

bool hrtimer_rescue(struct hrtimer_base *b, uint64_t grace_ns)
{
    struct tq_node *head = tq_first(&b->q);
    if (!head || b->in_interrupt)
        return false;
    uint64_t now = b->now_ns();
    if (add_sat(tq_deadline_ns(head), grace_ns) > now)
        return false;
    b->stats.rescued++;
    clockevent_shutdown(b->dev);   /* an event still on its way would find nothing due */
    hrtimer_interrupt(b);
    return true;
}
