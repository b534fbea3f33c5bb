/* lib/time/wheel.h - the timer wheel: low-resolution timers on the 64-bit jiffies count
 * that the periodic tick advances. docs/wheel.md is the long form.
 *
 * Shape: a hierarchical wheel of WHEEL_LEVELS levels of WHEEL_SLOTS (64) slots, each level
 * 64x coarser than the one below (the classic Linux "tvec" layout, before 4.8). A timer due
 * `delta` jiffies after the wheel's clock goes to the lowest level whose span holds delta;
 * add, mod and del are O(1) (a list insert or unlink, one bit in a per-level bitmap).
 *
 * Cascading, and why. When the clock reaches the start of a level-L slot (every 64^L
 * jiffies), that slot is emptied and its timers re-placed by their exact expiry into the
 * finer levels below. Every timer therefore runs on the jiffy it asked for: 0 jiffies of
 * lateness at every level. The non-cascading wheel of Linux 4.8+ never moves a timer but
 * rounds its expiry up to its level's granularity (up to 12.5% late), which is the right
 * trade for network timeouts that are almost always cancelled. Here it is not: ticklab
 * requires a 1 s timer at HZ=250 (250 jiffies ahead, level 1 with 64 slots) to fire at most
 * 1 jiffy late, and hz= goes up to 10000, where 1 s is 10000 jiffies; a non-cascading level
 * 0 would need >= 10000 slots to promise that. The price of cascading, stated plainly: a
 * timer at level L is moved L times before it runs, and a cascade moves a whole slot inside
 * one tick (a burst; wheel_stats.max_moved_per_jiffy records the largest).
 *
 *   level  slot width (jiffies)  holds delta (jiffies)  moves (at most)  lateness (jiffies)
 *   0      1                     0 .. 63                0                0
 *   1      64                    64 .. 4095             1                0
 *   2      4096                  4096 .. 2^18-1         2                0
 *   3      2^18                  2^18 .. 2^24-1         3                0
 *   4      2^24                  2^24 .. 2^30-1         4                0
 *   5      2^30                  2^30 .. 2^36-1         5                0
 *   5 (clamped)  2^30            2^36 .. 2^63-1         1 per ~2^36, +5  0
 *
 * "Lateness" is wheel lateness: a timer runs while the wheel processes jiffy `expires`,
 * inside the first wheel_advance(now) with now >= expires. What a tick that comes late or
 * not at all adds (now itself behind real time) is the tick's, not the wheel's.
 *
 * Beyond the range (delta >= 2^36 jiffies: 2.2 years at HZ=1000, 79 days at HZ=10000) the
 * timer is clamped: placed in the level-5 slot that cascades last, and re-placed by its real
 * expiry when that slot cascades, so it still runs exactly on time, never early.
 *
 * Time is wrap-safe everywhere: jiffies are compared by signed difference only
 * ((int64_t)(a - b) < 0), and 64^6 divides 2^64, so slot indices run on smoothly through the
 * 64-bit wrap. An expiry is read relative to the wheel's clock: up to 2^63 - 1 jiffies ahead
 * is the future, anything else is the past.
 *
 * Past expiries: a timer whose expiry is already behind the clock when it is added (at or
 * before the jiffy being processed, from inside a callback) goes onto the expired list and
 * runs at the start of the next wheel_advance() call, whatever its now. That is what makes a
 * callback that re-arms itself "for now" safe: it runs once per advance, never in a loop.
 *
 * Concurrency: none inside. One CPU; the caller serialises: wheel_add/mod/del from outside
 * the tick interrupt need interrupts off around them. Callbacks run from wheel_advance()
 * and may call wheel_add/mod/del on any timer, themselves included; a nested
 * wheel_advance() from a callback does nothing and returns 0. */
#ifndef TICKLAB_KERNEL_TIME_WHEEL_H
#define TICKLAB_KERNEL_TIME_WHEEL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WHEEL_SLOT_BITS 6
#define WHEEL_SLOTS     (1u << WHEEL_SLOT_BITS)
#define WHEEL_LEVELS    6
/* Deltas below this are placed exactly; beyond it the timer is clamped (see above). */
#define WHEEL_RANGE_JIFFIES (1ull << (WHEEL_SLOT_BITS * WHEEL_LEVELS))
/* The guaranteed wheel lateness for a timer at any level, clamped ones included. */
#define WHEEL_MAX_LATE_JIFFIES 0u

struct wheel_link {
    struct wheel_link *next, *prev;
};

/* Where a timer is; a zero-filled timer is WHEEL_T_IDLE, so static timers need no init. */
enum wheel_timer_state {
    WHEEL_T_IDLE = 0,   /* not pending */
    WHEEL_T_LISTED,     /* on the expired list or being run: due, not yet called */
    WHEEL_T_SLOT,       /* in slots[level][slot] */
};

struct wheel_timer;
typedef void (*wheel_fn)(struct wheel_timer *t, void *ctx);

/* Intrusive: the owner embeds it and keeps it alive while pending. fn and ctx are the
 * owner's to set (wheel_timer_init, or directly while not pending); the rest is the wheel's. */
struct wheel_timer {
    uint64_t expires;          /* the jiffy it runs on (absolute, wraps like jiffies) */
    wheel_fn fn;               /* called once per expiry, with the timer no longer pending */
    void *ctx;                 /* passed to fn */
    struct wheel_link link;    /* in a slot list, the expired list or the run list */
    uint8_t state;             /* enum wheel_timer_state */
    uint8_t level, slot;       /* valid in WHEEL_T_SLOT */
};

struct wheel_stats {
    uint64_t fired;                /* callbacks called */
    uint64_t moved;                /* timers re-placed by cascades (the cost of exactness) */
    uint64_t max_moved_per_jiffy;  /* the largest cascade burst in one jiffy */
};

struct wheel {
    uint64_t clk;       /* the next jiffy to process; all before it are done. Read-only
                           outside wheel.c; during a callback it is the processed jiffy + 1 */
    uint64_t busy[WHEEL_LEVELS];                       /* bit s: slots[l][s] is non-empty */
    struct wheel_link slots[WHEEL_LEVELS][WHEEL_SLOTS];
    struct wheel_link expired;   /* added behind clk: run at the next wheel_advance() */
    size_t pending;              /* timers in any state but WHEEL_T_IDLE */
    bool advancing;              /* inside wheel_advance(): stops nesting */
    bool next_known;             /* next_at holds: no timer was filed since it was found */
    uint64_t next_at;            /* the jiffy of the next slot event (a level-0 slot with
                                    timers, or a cascade of a non-empty slot), found once
                                    and kept until a timer is filed or a jiffy processed,
                                    so that a tick with nothing due costs one compare; a
                                    removal leaves it early, which only costs a jiffy
                                    processed for nothing */
    /* The tick's usual call in a few instructions (wheel_advance_quiet): every now in
     * [quiet_from, quiet_from + quiet_span) (unsigned distance) needs nothing but clk moved
     * past it: not advancing, nothing on the expired list, and no timer pending or no slot
     * event before next_at. quiet_span 0: every call goes the whole way. Set again by every
     * change of the wheel that could end that (a timer filed or removed, an advance). */
    uint64_t quiet_from, quiet_span;
    struct wheel_stats stats;
};

/* Empties the wheel; now_jiffies is the first jiffy the next wheel_advance() processes, so
 * a timer added for now_jiffies runs on wheel_advance(w, now_jiffies). */
void wheel_init(struct wheel *w, uint64_t now_jiffies);

/* Not pending, with this callback. Needed only for timers that are not zero-filled. */
void wheel_timer_init(struct wheel_timer *t, wheel_fn fn, void *ctx);

/* Queues t to run on jiffy `expires` (t->fn must be set). A pending t is moved, as by
 * wheel_mod. An expiry behind the clock (the past, or now from inside a callback) runs at
 * the next wheel_advance(). O(1). */
void wheel_add(struct wheel *w, struct wheel_timer *t, uint64_t expires);

/* wheel_add that says whether t was pending before. O(1). */
bool wheel_mod(struct wheel *w, struct wheel_timer *t, uint64_t expires);

/* Cancels t; true if it was pending (then its callback will not run). Safe on idle timers
 * and from callbacks, on any timer, even one due in the same jiffy. O(1). */
bool wheel_del(struct wheel *w, struct wheel_timer *t);

static inline bool wheel_timer_pending(const struct wheel_timer *t)
{
    return t->state != WHEEL_T_IDLE;
}

/* Runs every timer whose expiry is <= now: the expired list first, then jiffy by jiffy
 * from clk to now, each timer on its own jiffy, so several jiffies at once (lost ticks, a
 * tickless sleep) catch up in order, and a timer re-armed relative to its own expiry runs
 * once for each period passed. Empty stretches are skipped using the bitmaps, so a jump of
 * n jiffies costs O(levels) per non-empty slot or cascade met, not O(n). now must not go
 * back (jiffies never do); a now behind clk runs only the expired list. Returns the number
 * of callbacks called. */
unsigned wheel_advance(struct wheel *w, uint64_t now);

#ifdef TICKLAB_HOSTED
void wheel_quiet_check(const struct wheel *w, uint64_t now);   /* host builds: traps */
extern uint64_t wheel_test_quiet_calls;     /* host builds: calls that took the quiet way */
#endif

/* wheel_advance() when nothing is due up to now, in line (the tick calls it before
 * wheel_advance()): true when it did all there was to do (clk moved past now; none ran),
 * false when wheel_advance() must run. */
static inline bool wheel_advance_quiet(struct wheel *w, uint64_t now)
{
    if (now - w->quiet_from >= w->quiet_span)
        return false;
#ifdef TICKLAB_HOSTED
    wheel_quiet_check(w, now);
#endif
    if ((int64_t)(now - w->clk) >= 0)
        w->clk = now + 1;
    return true;
}

/* The exact earliest expiry of all pending timers into *expires, or false if none is
 * pending (every 64-bit value is a valid jiffy, so there is no spare "none" value). It is
 * never later than the true earliest, which tickless idle needs in order not to oversleep;
 * it is in fact equal, a value in the past when expired timers wait. Cost: O(levels *
 * slots) bitmap work plus a walk of the lists of the first non-empty slot of each level
 * (and of any later level-5 slot that may hold something earlier, because of clamping)
 * and of the expired list. */
bool wheel_next_expiry(const struct wheel *w, uint64_t *expires);

/* Timers pending (added, not yet run or deleted), O(1). */
size_t wheel_pending(const struct wheel *w);

/* The jiffy Linux's timer wheel (kernel/time/timer.c since 4.8: levels of 64 slots, each
 * level 8 times coarser) runs a timer for `expires` on when it is added at wheel clock
 * `clk`: the level is the one whose range holds expires - clk (level n from 63 << 3(n-1)
 * ticks), and the timer runs on the first multiple of that level's granularity (8^n ticks)
 * after expires, so never early and up to a granularity late. This wheel runs timers on
 * their exact jiffy; adding a timer at wheel_linux_expiry() reproduces Linux's rounding
 * (timers_wheel_add's WHEEL_LINUX, kernel/timers). Levels beyond 8 are treated as level 8. */
uint64_t wheel_linux_expiry(uint64_t clk, uint64_t expires);

#endif
