/* kernel/timers/timers.h - the ticklab kernel's timers, in one place: which device ticks and
 * the wheel on that tick; the hrtimer bases (the boot CPU's main base on the best one-shot
 * device the tick leaves free, and on each other CPU a base on its own LAPIC timer and one
 * on its own HPET comparator where it has one); each CPU looking after its own bases (lost
 * events rescued on the CPU they belong to). Experiments and checks reach the wheel and the
 * bases here. */
#ifndef TICKLAB_TIMERS_TIMERS_H
#define TICKLAB_TIMERS_TIMERS_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/hrtimer.h"
#include "ticklab/tick.h"
#include "ticklab/wheel.h"

#define TIMERS_SLOTS      1000u   /* the main base's queue */
#define TIMERS_CPU_SLOTS  64u     /* each other CPU's bases */

extern struct wheel kernel_wheel;
/* The boot CPU's tick, the one the wheel runs on (its jiffies: kernel_tick.jiffies). */
extern struct tick kernel_tick;

/* The boot CPU's clock event device a command-line word names (clockevent=, mask_irq=), or
 * NULL: none named (""), or none by that name registered, which gets an `error` record
 * listing the names that are (what: the key, for the record). */
struct clockevent *timers_device_named(const char *name, const char *what);

/* The boot tick: hz on the named device (NULL or "": the best), periodic unless oneshot.
 * Falls back to the best device, then to HZ=1000, each with an `error` record naming what
 * was asked and why it could not be; reports the `tick` record; starts the wheel on it.
 * Returns 0, or a negative errno when no device can tick at all (then there is no tick). */
int timers_tick_start(uint64_t *hz, const char *device, bool oneshot);
/* Adds a wheel timer `ticks` jiffies from now, with jiffies brought up to date first
 * (tick_sync): a timer added while the tick's interrupt is late would otherwise count from
 * a stale jiffies and run early when the catch-up comes. Its jiffy is then between
 * ticks - 1 and ticks periods away in real time. Returns the expiry jiffy. Any context. */
uint64_t timers_wheel_add(struct wheel_timer *t, uint64_t ticks);
/* A new wheel on the running tick's jiffies (after the tick changed rate or device). */
void timers_wheel_restart(void);

/* The main hrtimer base on the boot CPU, on the best one-shot device that shares no
 * hardware with the tick's; reports `hrtimer_base`. After the tick started. */
void timers_base_init(void);
/* The main base (boot CPU), or NULL when no device was left for it. */
struct hrtimer_base *timers_base(void);
/* The main base gives its device back for a while (an experiment drives it directly) and
 * takes it again, afresh: no timer may be queued on it in between. */
void timers_base_lend(void);
void timers_base_return(void);

/* The SMP hooks: each application processor registers its own devices and sets up its
 * bases on them; its `cpu_start` record says what it got. Call before smp_start(). */
void timers_smp_hooks(void);
/* This CPU's base on its own LAPIC timer, and on its own HPET comparator; NULL on the boot
 * CPU (it has the main base) or when the CPU has none (*why says why, if non-NULL). */
struct hrtimer_base *timers_lapic_base(const char **why);
struct hrtimer_base *timers_hpet_base(const char **why);

/* This CPU's own bases, each rescued (hrtimer_rescue) when its earliest timer is more than
 * grace_ns overdue; returns how many were. Interrupts off, on the CPU whose bases they are. */
unsigned timers_rescue(uint64_t grace_ns);
/* A base set up for a while (an experiment's own, on a device it borrowed), looked after by
 * timers_rescue() on this CPU until unwatched. -ENOSPC beyond TIMERS_WATCH_MAX per CPU. */
#define TIMERS_WATCH_MAX 4
int timers_watch(struct hrtimer_base *b);
void timers_unwatch(struct hrtimer_base *b);

#endif
