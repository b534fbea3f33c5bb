/* lib/time/wheel.c - the cascading timer wheel. See wheel.h for the contracts and
 * docs/wheel.md for the design.
 *
 * The invariants everything below rests on (c = clk, unit(L) = 64^L):
 *  - level 0, slot s: timers with expires in [c, c + 63] and expires % 64 == s, so a slot
 *    holds exactly one jiffy's timers;
 *  - level L >= 1, slot s: timers whose cascade moment is the first multiple m of unit(L)
 *    with m >= c and (m / unit(L)) % 64 == s, and expires in [m, m + unit(L)) (clamped
 *    timers: expires beyond that, still > m).
 * Placing by delta = expires - c (level_of) establishes them; processing jiffy c cascades
 * every level whose unit divides c, which re-places those timers below by their exact
 * expiry, before level 0's slot for c runs. */
#include "ticklab/wheel.h"

#include <stddef.h>

#define LEVEL_SHIFT(lvl) ((unsigned)(lvl) * WHEEL_SLOT_BITS)
#define SLOT_MASK        (WHEEL_SLOTS - 1u)
#define NO_EVENT         UINT64_MAX

_Static_assert(WHEEL_SLOTS == 64, "one uint64_t bitmap per level");
_Static_assert(WHEEL_SLOT_BITS * WHEEL_LEVELS < 64,
               "64^levels must divide 2^64 for the slot index to survive the wrap");

/* Wrap-safe: a is before b when b - a, read as signed, is positive. */
static inline bool jiffies_before(uint64_t a, uint64_t b)
{
    return (int64_t)(a - b) < 0;
}

/* ---- intrusive circular lists ----------------------------------------------------------- */

static void list_init(struct wheel_link *head)
{
    head->next = head->prev = head;
}

static bool list_empty(const struct wheel_link *head)
{
    return head->next == head;
}

static void list_add_tail(struct wheel_link *head, struct wheel_link *n)
{
    n->prev = head->prev;
    n->next = head;
    head->prev->next = n;
    head->prev = n;
}

static void list_unlink(struct wheel_link *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n->prev = NULL;
}

/* Moves every node of from (left empty) onto the empty list to, in order. */
static void list_move_all(struct wheel_link *from, struct wheel_link *to)
{
    list_init(to);
    if (list_empty(from))
        return;
    to->next = from->next;
    to->prev = from->prev;
    to->next->prev = to;
    to->prev->next = to;
    list_init(from);
}

static struct wheel_timer *timer_of(struct wheel_link *l)
{
    return (struct wheel_timer *)((char *)l - offsetof(struct wheel_timer, link));
}

/* The expiry of a listed timer as a delta from clk: signed, so expired ones come first. */
static int64_t delta_of(const struct wheel *w, const struct wheel_link *l)
{
    const char *t = (const char *)l - offsetof(struct wheel_timer, link);
    return (int64_t)(((const struct wheel_timer *)t)->expires - w->clk);
}

/* ---- placing and removing ---------------------------------------------------------------- */

/* The lowest level whose span (64^(L+1)) holds delta; the top level for anything beyond. */
static unsigned level_of(uint64_t delta)
{
    if (delta < WHEEL_SLOTS)
        return 0;
    unsigned msb = 63u - (unsigned)__builtin_clzll(delta);   /* an instruction, no libgcc */
    unsigned lvl = msb / WHEEL_SLOT_BITS;
    return lvl < WHEEL_LEVELS ? lvl : WHEEL_LEVELS - 1u;
}

static void enqueue(struct wheel *w, struct wheel_timer *t)
{
    uint64_t delta = t->expires - w->clk;

    w->next_known = false;

    if ((int64_t)delta < 0) {
        t->state = WHEEL_T_LISTED;
        list_add_tail(&w->expired, &t->link);
        return;
    }
    unsigned lvl = level_of(delta);
    /* A clamped timer is filed as the farthest one the wheel holds. Any top-level slot
     * would be correct (each cascades within 2^36 jiffies, before the expiry, and the
     * cascade re-places the timer by its real one); the last moves it least often. */
    uint64_t at = delta < WHEEL_RANGE_JIFFIES ? t->expires : w->clk + WHEEL_RANGE_JIFFIES - 1;
    unsigned slot = (unsigned)(at >> LEVEL_SHIFT(lvl)) & SLOT_MASK;

    t->state = WHEEL_T_SLOT;
    t->level = (uint8_t)lvl;
    t->slot = (uint8_t)slot;
    list_add_tail(&w->slots[lvl][slot], &t->link);
    w->busy[lvl] |= 1ull << slot;
}

static void dequeue(struct wheel *w, struct wheel_timer *t)
{
    list_unlink(&t->link);
    if (t->state == WHEEL_T_SLOT && list_empty(&w->slots[t->level][t->slot]))
        w->busy[t->level] &= ~(1ull << t->slot);
    t->state = WHEEL_T_IDLE;
}

/* Empties one slot onto out, each timer marked LISTED so that a wheel_del from a callback
 * unlinks it without touching the slot (which may by then hold new timers). */
static void take_slot(struct wheel *w, unsigned lvl, unsigned slot, struct wheel_link *out)
{
    list_move_all(&w->slots[lvl][slot], out);
    w->busy[lvl] &= ~(1ull << slot);
    for (struct wheel_link *l = out->next; l != out; l = l->next)
        timer_of(l)->state = WHEEL_T_LISTED;
}

/* wheel_advance_quiet()'s window, from the wheel as it is now: a now in it would find
 * nothing to run and no slot event, as advance() would. From clk on: until next_at (at most
 * 2^62 ahead), or for 2^63 jiffies with no timer pending (a now beyond goes the whole way,
 * which is always right); none while advancing or with expired timers waiting. */
static void quiet_set(struct wheel *w)
{
    uint64_t span = 0;

    if (!w->advancing && list_empty(&w->expired)) {
        if (w->pending == 0)
            span = 1ull << 63;
        else if (w->next_known && !jiffies_before(w->next_at, w->clk))
            span = w->next_at - w->clk;
    }
    w->quiet_from = w->clk;
    w->quiet_span = span;
}

#ifdef TICKLAB_HOSTED
/* The host tests hold every quiet call to wheel_advance()'s own conditions. */
uint64_t wheel_test_quiet_calls;

void wheel_quiet_check(const struct wheel *w, uint64_t now)
{
    wheel_test_quiet_calls++;
    if (w->advancing || !list_empty(&w->expired) ||
        !(w->pending == 0 || (w->next_known && jiffies_before(now, w->next_at))))
        __builtin_trap();
}
#endif

/* ---- the public add / mod / del ---------------------------------------------------------- */

void wheel_init(struct wheel *w, uint64_t now_jiffies)
{
    w->clk = now_jiffies;
    for (unsigned lvl = 0; lvl < WHEEL_LEVELS; lvl++) {
        w->busy[lvl] = 0;
        for (unsigned s = 0; s < WHEEL_SLOTS; s++)
            list_init(&w->slots[lvl][s]);
    }
    list_init(&w->expired);
    w->pending = 0;
    w->advancing = false;
    w->next_known = false;
    w->stats = (struct wheel_stats){ 0 };
    quiet_set(w);
}

void wheel_timer_init(struct wheel_timer *t, wheel_fn fn, void *ctx)
{
    *t = (struct wheel_timer){ .fn = fn, .ctx = ctx, .state = WHEEL_T_IDLE };
}

bool wheel_mod(struct wheel *w, struct wheel_timer *t, uint64_t expires)
{
    bool was_pending = wheel_timer_pending(t);

    if (was_pending)
        dequeue(w, t);
    else
        w->pending++;
    t->expires = expires;
    enqueue(w, t);
    quiet_set(w);
    return was_pending;
}

void wheel_add(struct wheel *w, struct wheel_timer *t, uint64_t expires)
{
    wheel_mod(w, t, expires);
}

bool wheel_del(struct wheel *w, struct wheel_timer *t)
{
    if (!wheel_timer_pending(t))
        return false;
    dequeue(w, t);
    w->pending--;
    quiet_set(w);
    return true;
}

size_t wheel_pending(const struct wheel *w)
{
    return w->pending;
}

/* ---- advancing --------------------------------------------------------------------------- */

/* Calls every timer on list, which is local to the caller: a callback's wheel_add lands in
 * the wheel or on w->expired, never here, so the loop ends; its wheel_del of a timer still
 * on list just unlinks it. */
static void run_list(struct wheel *w, struct wheel_link *list)
{
    while (!list_empty(list)) {
        struct wheel_timer *t = timer_of(list->next);

        dequeue(w, t);
        w->pending--;
        w->stats.fired++;
        t->fn(t, t->ctx);       /* t may be re-added, or reused, from here on */
    }
}

/* Re-places the timers of one level-lvl slot, now due within unit(lvl) jiffies, below. */
static uint64_t cascade(struct wheel *w, unsigned lvl)
{
    unsigned slot = (unsigned)(w->clk >> LEVEL_SHIFT(lvl)) & SLOT_MASK;
    struct wheel_link list;
    uint64_t moved = 0;

    take_slot(w, lvl, slot, &list);
    while (!list_empty(&list)) {
        struct wheel_timer *t = timer_of(list.next);

        list_unlink(&t->link);
        enqueue(w, t);
        moved++;
    }
    return moved;
}

/* Processes jiffy clk: the cascades due at it (every level whose unit divides clk, lowest
 * first as in Linux; none of them refills a slot another just emptied), then the timers due
 * on it, with clk already past it so that a re-add "for now" waits for the next advance. */
static void process_jiffy(struct wheel *w)
{
    uint64_t moved = 0;
    struct wheel_link due;

    for (unsigned lvl = 1; lvl < WHEEL_LEVELS; lvl++) {
        if (w->clk & ((1ull << LEVEL_SHIFT(lvl)) - 1))
            break;
        moved += cascade(w, lvl);
    }
    w->stats.moved += moved;
    if (moved > w->stats.max_moved_per_jiffy)
        w->stats.max_moved_per_jiffy = moved;
    take_slot(w, 0, (unsigned)w->clk & SLOT_MASK, &due);
    w->clk++;
    run_list(w, &due);
}

static uint64_t rotate_right(uint64_t bits, unsigned n)
{
    return n ? (bits >> n) | (bits << (64u - n)) : bits;
}

/* First slot moment of level lvl at or after clk: the cascade moment m (a multiple of
 * unit(lvl); for level 0 every jiffy is one) and the index of its slot. */
static uint64_t first_moment(const struct wheel *w, unsigned lvl, unsigned *index)
{
    uint64_t unit_mask = (1ull << LEVEL_SHIFT(lvl)) - 1;
    uint64_t to_moment = (0 - w->clk) & unit_mask;

    *index = (unsigned)((w->clk + to_moment) >> LEVEL_SHIFT(lvl)) & SLOT_MASK;
    return to_moment;
}

/* Jiffies from clk until level lvl next needs processing (a level-0 slot to run, or a
 * slot to cascade), NO_EVENT if the level is empty. */
static uint64_t level_next_event(const struct wheel *w, unsigned lvl)
{
    if (!w->busy[lvl])
        return NO_EVENT;
    unsigned index;
    uint64_t to_moment = first_moment(w, lvl, &index);
    uint64_t ahead = rotate_right(w->busy[lvl], index);
    unsigned k = (unsigned)__builtin_ctzll(ahead);

    return to_moment + ((uint64_t)k << LEVEL_SHIFT(lvl));
}

static uint64_t next_event(const struct wheel *w)
{
    uint64_t best = NO_EVENT;

    for (unsigned lvl = 0; lvl < WHEEL_LEVELS; lvl++) {
        uint64_t d = level_next_event(w, lvl);
        if (d < best)
            best = d;
    }
    return best;
}

static __attribute__((noinline)) unsigned advance(struct wheel *w, uint64_t now)
{
    if (w->advancing)
        return 0;
    w->advancing = true;

    uint64_t fired_before = w->stats.fired;
    struct wheel_link due;

    list_move_all(&w->expired, &due);
    run_list(w, &due);
    /* Between events nothing is due and every cascade would move an empty slot, so clk
     * jumps straight to the next event; the last jump lands just past now. With no timer
     * at all there is no event to look for (the tick's usual case: one compare per tick). */
    if (w->pending == 0 && !jiffies_before(now, w->clk))
        w->clk = now + 1;
    while (!jiffies_before(now, w->clk)) {
        if (!w->next_known) {
            /* an event 2^62 jiffies away or none: a jiffy then is processed for nothing */
            uint64_t d = next_event(w);
            w->next_at = w->clk + (d < (1ull << 62) ? d : 1ull << 62);
            w->next_known = true;
        }
        if (jiffies_before(now, w->next_at)) {
            w->clk = now + 1;
            break;
        }
        w->clk = w->next_at;
        w->next_known = false;
        process_jiffy(w);
    }
    w->advancing = false;
    quiet_set(w);
    return (unsigned)(w->stats.fired - fired_before);
}

/* The usual call in a few instructions: nothing on the expired list and no slot event up to
 * now (none pending, or the next one known to lie ahead), so clk just moves past now, as the
 * loop in advance() would move it (wheel_advance_quiet, in wheel.h). */
unsigned wheel_advance(struct wheel *w, uint64_t now)
{
    if (wheel_advance_quiet(w, now))
        return 0;
    return advance(w, now);
}

/* ---- the earliest expiry ---------------------------------------------------------------- */

/* Lowers *best (a delta from clk) to the earliest expiry at level lvl. Slots are visited in
 * the order they come due; a slot's moment bounds all its timers from below, so the walk
 * stops at the first moment not before *best: after one non-empty slot, except when a
 * clamped timer sits in a top-level slot ahead of a later slot holding an earlier timer. */
static void level_earliest(const struct wheel *w, unsigned lvl, uint64_t *best)
{
    unsigned index;
    uint64_t to_moment = first_moment(w, lvl, &index);
    uint64_t ahead = rotate_right(w->busy[lvl], index);

    while (ahead) {
        unsigned k = (unsigned)__builtin_ctzll(ahead);
        if (to_moment + ((uint64_t)k << LEVEL_SHIFT(lvl)) >= *best)
            return;
        const struct wheel_link *head = &w->slots[lvl][(index + k) & SLOT_MASK];
        for (const struct wheel_link *l = head->next; l != head; l = l->next) {
            uint64_t d = (uint64_t)delta_of(w, l);     /* slot timers are never behind */
            if (d < *best)
                *best = d;
        }
        ahead &= ahead - 1;
    }
}

/* Expired timers are all behind clk, so earlier than anything in the slots. */
static bool expired_earliest(const struct wheel *w, uint64_t *expires)
{
    const struct wheel_link *head = &w->expired;
    int64_t best = 0;

    if (list_empty(head))
        return false;
    for (const struct wheel_link *l = head->next; l != head; l = l->next) {
        int64_t d = delta_of(w, l);
        if (d < best)
            best = d;
    }
    *expires = w->clk + (uint64_t)best;
    return true;
}

uint64_t wheel_linux_expiry(uint64_t clk, uint64_t expires)
{
    uint64_t delta = expires - clk;
    unsigned lvl = 0;
    while (lvl < 8 && delta >= (63ull << (3 * lvl)))
        lvl++;                           /* level lvl holds deltas below 63 << 3 lvl */
    unsigned shift = 3 * lvl;
    return ((expires >> shift) + 1) << shift;
}

bool wheel_next_expiry(const struct wheel *w, uint64_t *expires)
{
    uint64_t best = NO_EVENT;

    if (expired_earliest(w, expires))
        return true;
    for (unsigned lvl = 0; lvl < WHEEL_LEVELS; lvl++)
        level_earliest(w, lvl, &best);
    if (best == NO_EVENT)
        return false;
    *expires = w->clk + best;
    return true;
}
