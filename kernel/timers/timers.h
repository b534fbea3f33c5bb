/* kernel/timers/timers.h - the ticklab kernel's timers, in one place: which device ticks and
 * the wheel on that tick; the hrtimer bases (the boot CPU's main base on the best one-shot
 * device the tick leaves free, and on each other CPU a base on its own LAPIC timer and one
 * on its own HPET comparator where it has one); each CPU looking after its own bases (lost
 * events rescued on the CPU they belong to). Experiments and checks reach the wheel and the
 * bases here. */
#ifndef TICKLAB_TIMERS_TIMERS_H
#define TICKLAB_TIMERS_TIMERS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/hrtimer.h"
#include "ticklab/tick.h"
#include "ticklab/wheel.h"

#define TIMERS_SLOTS      1000u   /* the main base's queue */
#define TIMERS_CPU_SLOTS  64u     /* each other CPU's bases */

/* The boot CPU's clock event device a command-line word names (clockevent=, mask_irq=), or
 * NULL: none named (""), or none by that name registered, which gets an `error` record
 * listing the names that are (what: the key, for the record). */
struct clockevent *timers_device_named(const char *name, const char *what);

/* The boot tick: hz on the named device (NULL or "": the best), periodic unless oneshot.
 * Falls back to the best device, then to HZ=1000, each with an `error` record naming what
 * was asked and why it could not be; reports the `tick` record; starts the wheel on it.
 * Returns 0, or a negative errno when no device can tick at all (then there is no tick). */
int timers_tick_start(uint64_t *hz, const char *device, bool oneshot);
/* ---- the boot CPU's tick and the wheel on it (boot_tick.c holds them) ---- */

/* How a wheel timer's jiffy is chosen: exactly `ticks` ahead (ticklab's cascading wheel
 * runs it there), or rounded up as Linux's wheel (4.8 and later) rounds it: to the
 * granularity of the level whose range holds the delta (wheel_linux_expiry). */
enum wheel_rounding { WHEEL_EXACT, WHEEL_LINUX };
/* Adds a wheel timer `ticks` jiffies from now, with jiffies brought up to date first
 * (tick_sync): a timer added while the tick's interrupt is late would otherwise count from
 * a stale jiffies and run early when the catch-up comes. Its jiffy is then between
 * ticks - 1 and ticks periods away in real time (WHEEL_EXACT). Returns the expiry jiffy.
 * Any context. */
uint64_t timers_wheel_add(struct wheel_timer *t, uint64_t ticks, enum wheel_rounding how);
bool timers_wheel_del(struct wheel_timer *t);            /* wheel_del() on the tick's wheel */
bool timers_wheel_next(uint64_t *expires);               /* wheel_next_expiry() */
bool timers_wheel_pending(void);                         /* any timer on it */

/* The tick as it runs now (device, rate, counts): never NULL, zero before it started. */
const struct tick_info *timers_tick_info(void);
bool timers_tick_running(void);
/* jiffies as the tick left them (in a wheel callback: the jiffy it runs on), or brought up
 * to date first (tick_sync, any context); a jiffy's time on the tick's grid (time_ns). */
uint64_t timers_jiffies(void);
uint64_t timers_jiffies_sync(void);
uint64_t timers_jiffy_ns(uint64_t j);
/* The tick's period as measured (tick_measured_period_ps), 0 before it is known. */
uint64_t timers_tick_period_ps(void);
/* Tickless idle by hand: stop until until_ns, restart, and whether it is stopped. */
void timers_tick_nohz_stop(uint64_t until_ns);
void timers_tick_nohz_restart(void);
bool timers_tick_nohz_stopped(void);

/* Stops the tick; (re)starts it at period_ns on device (tick_start_ns's choice when that
 * one cannot), a new wheel on its jiffies: 0 or tick_start_ns's error (why filled). The
 * wheel must be empty. */
void timers_tick_stop(void);
int timers_tick_restart(uint64_t period_ns, struct clockevent *device, bool oneshot, char *why,
                        size_t why_len);
/* At the end of the run: the tick stopped and its statistics reported. */
void timers_tick_finish(void);
/* A measurement window's start on a known phase: the tick stopped, the TSC waited for up
 * to its next multiple of grid_ns, the tick started again there (kernel/timers/window.h). */
void timers_align_to_grid(uint64_t grid_ns);

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
