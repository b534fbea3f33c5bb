/* tests/host/fake/vclock.c - see vclock.h. Events live in a small array scanned linearly:
 * a machine has a dozen timers at most, and a scan is simpler to trust than a heap. */
#include "vclock.h"

#include "fake.h"

__extension__ typedef unsigned __int128 u128;

static uint64_t now_ns;
static uint64_t next_seq;
#define MAX_FIRES_AT_ONE_TIME 1000000

static bool firing;   /* inside an event callback: time must not move */
static uint64_t same_time_fires;   /* a model bug guard: events that never let time move */
static struct vclock_event *events[VCLOCK_MAX_EVENTS];
static int nevents;

static uint64_t sat64(u128 v)
{
    return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

uint64_t vrate_ticks(struct vrate r, uint64_t dt_ns)
{
    return sat64((u128)dt_ns * r.num / r.den);
}

uint64_t vrate_ns_for(struct vrate r, uint64_t ticks)
{
    u128 ns = ((u128)ticks * r.den + r.num - 1) / r.num;

    return ns >= UINT64_MAX ? VCLOCK_NEVER : (uint64_t)ns;
}

void vclock_reset(void)
{
    now_ns = 0;
    next_seq = 0;
    firing = false;
    same_time_fires = 0;
    nevents = 0;
}

uint64_t vclock_now_ns(void)
{
    return now_ns;
}

void vclock_event_init(struct vclock_event *ev, const char *name, void (*fire)(void *ctx),
                       void *ctx)
{
    *ev = (struct vclock_event){ .name = name, .fire = fire, .ctx = ctx };
    for (int i = 0; i < nevents; i++)
        if (events[i] == ev)
            return;
    if (nevents == VCLOCK_MAX_EVENTS) {
        fake_fault("vclock: more than %d events (raise VCLOCK_MAX_EVENTS)", VCLOCK_MAX_EVENTS);
        return;
    }
    events[nevents++] = ev;
}

void vclock_event_arm(struct vclock_event *ev, uint64_t due_ns)
{
    if (due_ns == VCLOCK_NEVER) {
        ev->armed = false;
        return;
    }
    ev->due_ns = due_ns < now_ns ? now_ns : due_ns;
    ev->seq = next_seq++;
    ev->armed = true;
}

void vclock_event_cancel(struct vclock_event *ev)
{
    ev->armed = false;
}

static struct vclock_event *earliest(void)
{
    struct vclock_event *best = NULL;

    for (int i = 0; i < nevents; i++) {
        struct vclock_event *ev = events[i];
        if (!ev->armed)
            continue;
        if (!best || ev->due_ns < best->due_ns ||
            (ev->due_ns == best->due_ns && ev->seq < best->seq))
            best = ev;
    }
    return best;
}

uint64_t vclock_next_due_ns(void)
{
    struct vclock_event *ev = earliest();

    return ev ? ev->due_ns : VCLOCK_NEVER;
}

void vclock_advance_to_ns(uint64_t t_ns)
{
    struct vclock_event *ev;

    if (firing) {
        fake_fault("vclock: time advanced from inside an event callback");
        return;
    }
    while ((ev = earliest()) && ev->due_ns <= t_ns) {
        if (ev->due_ns > now_ns) {
            now_ns = ev->due_ns;
            same_time_fires = 0;
        } else if (++same_time_fires > MAX_FIRES_AT_ONE_TIME) {
            fake_fault("vclock: event \"%s\" re-armed itself at t=%" PRIu64 " ns forever",
                       ev->name, now_ns);
            ev->armed = false;
            continue;
        }
        ev->armed = false;
        firing = true;
        ev->fire(ev->ctx);
        firing = false;
    }
    if (t_ns > now_ns)
        now_ns = t_ns;
}

void vclock_advance_ns(uint64_t ns)
{
    uint64_t t = now_ns + ns;

    vclock_advance_to_ns(t < now_ns ? VCLOCK_NEVER - 1 : t);
}
