/* tests/host/fake/vclock.h - the one virtual clock every device model runs on.
 *
 * Time is a uint64_t count of nanoseconds since fake_reset() (power on): 2^64 ns is 584 years,
 * so nothing in a test can overflow it. Nothing here reads the wall clock; a run is a pure
 * function of what the code under test does.
 *
 * Devices do not tick. Each model keeps the time its counter was last set and computes the
 * value at "now" from its rate (struct vrate, exact 128-bit arithmetic, so 1000 PIT periods
 * add up to exactly what the datasheet says). Things that must happen at a moment (a
 * comparator match, a count reaching zero) are events: a model arms a struct vclock_event
 * for the nanosecond it is due, and vclock_advance_ns() steps through the due events in time
 * order (ties in arming order) before it reaches its target. An event callback may raise
 * interrupt lines and re-arm events, but never advances time itself.
 *
 * Who advances time: every primitive in lib/port/io.h costs some virtual time (fake.h,
 * fake_cost), cpu_halt() jumps to the next event, and a test calls fake_run_for_ns(). */
#ifndef TICKLAB_TESTS_HOST_FAKE_VCLOCK_H
#define TICKLAB_TESTS_HOST_FAKE_VCLOCK_H
#include <stdbool.h>
#include <stdint.h>

#define VCLOCK_NEVER UINT64_MAX   /* "no event pending" / a moment that never comes */
#define VCLOCK_MAX_EVENTS 64

/* A rate of num/den ticks per nanosecond: a clock of F Hz is { F, 1e9 }; a period of P fs
 * is { 1e6, P }. Both must be non-zero. */
struct vrate {
    uint64_t num, den;
};

/* floor(dt_ns * num / den): ticks completed dt_ns after a tick boundary (saturates). */
uint64_t vrate_ticks(struct vrate r, uint64_t dt_ns);
/* ceil(ticks * den / num): the first dt_ns at which vrate_ticks(r, dt_ns) >= ticks;
 * VCLOCK_NEVER if that is beyond 2^64 ns. */
uint64_t vrate_ns_for(struct vrate r, uint64_t ticks);
static inline struct vrate vrate_hz(uint64_t hz) { return (struct vrate){ hz, 1000000000u }; }
/* t + dt, or VCLOCK_NEVER when dt is VCLOCK_NEVER or the sum would overflow. */
static inline uint64_t vclock_add_sat(uint64_t t, uint64_t dt)
{
    return dt == VCLOCK_NEVER || t + dt < t ? VCLOCK_NEVER : t + dt;
}

struct vclock_event {
    const char *name;              /* for fault messages */
    void (*fire)(void *ctx);       /* called at due_ns with vclock_now_ns() == due_ns */
    void *ctx;
    uint64_t due_ns;
    uint64_t seq;                  /* arming order: breaks ties deterministically */
    bool armed;
};

void vclock_reset(void);           /* time 0, no events (fake_reset() calls it) */
uint64_t vclock_now_ns(void);

/* Adds ev to the clock's list (at most VCLOCK_MAX_EVENTS, all static storage); disarmed. */
void vclock_event_init(struct vclock_event *ev, const char *name, void (*fire)(void *ctx),
                       void *ctx);
/* A due time in the past means "now": it fires at the next step of the clock, which the
 * fake primitives take right after every access (so a past deadline fires at once). */
void vclock_event_arm(struct vclock_event *ev, uint64_t due_ns);
void vclock_event_cancel(struct vclock_event *ev);
/* Earliest armed due time (clamped to now), or VCLOCK_NEVER. */
uint64_t vclock_next_due_ns(void);

/* Moves time forward by ns, firing every event due up to and including the new time. */
void vclock_advance_ns(uint64_t ns);
/* The same to an absolute time; a target in the past only fires what is due now. */
void vclock_advance_to_ns(uint64_t t_ns);

#endif
