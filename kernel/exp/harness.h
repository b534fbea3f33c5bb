/* kernel/exp/harness.h - what every experiment needs around its measurement: the tick at
 * another rate or on another device and back, bounded waits in HLT, a budget, phases and
 * progress lines, a seeded pseudo-random generator, and the start of a `result` record.
 *
 * Every wait is bounded by the TSC (a clock no experiment programs), and so is every
 * experiment as a whole: its budget (struct experiment) is counted from exp_begin(); when
 * it runs out, an `error` record names the experiment, the phase and what it was waiting
 * for, every further wait returns false at once, and the experiment winds up with what it
 * has (its loops ask exp_budget_left()). The next experiment runs; the run ends.
 *
 * Nothing is printed while a measurement is in flight: every phase (from exp_begin() or
 * exp_phase() to the next exp_phase() or exp_end()) is a measurement window of the console
 * log (kernel/report/klog.h): records and text made inside it wait in RAM and are written at
 * its end, between phases, where progress lines are printed too. Each phase is a measurement
 * window (kernel/timers/window.h): it starts from a known phase of the TSC, the tick, the
 * HPET and the RTC, so that figures depend as little as they can on how long the output
 * before it took (a paced UART, uart_pace=1). */
#ifndef TICKLAB_EXP_HARNESS_H
#define TICKLAB_EXP_HARNESS_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"

#include "kernel/config.h"
#include "kernel/report/record.h"

struct clockevent;

/* An hrtimer this far overdue is run by hand (its interrupt is taken for lost). 100 ms:
 * beyond the worst wake-up seen here under nested KVM (about 130 ms is rare; 30 ms
 * common), so that a late interrupt is counted as late, not replaced by a rescue. */
#define EXP_RESCUE_GRACE_NS 100000000ull

/* The run's profile (exp_size) and whether the tick re-arms a one-shot every period
 * (tickmode=oneshot: kept when an experiment changes the tick's rate). Before exp_begin. */
void exp_harness_init(enum profile profile, bool tick_oneshot);

/* Called by experiments_run around each experiment: the `exp_start` / `exp_end` records,
 * the budget (budget_ns of TSC time from now), the experiment's place in the plan (k of
 * n, for the progress lines), and putting the tick back as it was at boot. */
void exp_begin(const char *name, const char *summary, uint64_t budget_ns, unsigned k,
               unsigned n);
void exp_end(void);
const char *exp_current(void);

/* A phase of the current experiment begins (a device, a row, a tick size; printf-style,
 * at most 63 characters): the name error records and progress lines give, and one progress
 * line "  [name k/n] phase, S.s s in, budget B s". Between measurements only. */
void exp_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether the budget still holds (false once it ran out: wind up). */
bool exp_budget_left(void);

/* Restarts the tick with period_ns on device (NULL: the device it runs on now), or, when that
 * one cannot make the period, on the best that can (tick_start_ns's choice), periodic
 * unless the boot asked for tickmode=oneshot. The kernel wheel is restarted on the new
 * jiffies; it must be empty (experiments remove their wheel timers). false with an `error`
 * record when no tick could be started; the boot tick is restored by exp_end() in every
 * case. */
bool exp_tick_set(uint64_t period_ns, struct clockevent *device);
/* Stops the tick (tickless measurements, or to use its device). */
void exp_tick_off(void);
/* The tick as the boot started it (device, rate, mode). */
void exp_tick_restore(void);

/* Waits in HLT with interrupts on until *done becomes true or bound_ns of TSC time pass.
 * busy is the clock event device being waited for (the backup wake-up uses
 * another). Interrupts must be off on entry; they are off on return. false on timeout, after
 * an `error` record naming what: the caller reports what it has and goes on. */
bool exp_wait(volatile bool *done, uint64_t bound_ns, const struct clockevent *busy,
              const char *what);
/* The same without the `error` record and without the rescue of lost hrtimer events: for
 * callers that count a lost event themselves and go on. */
bool exp_wait_quiet(volatile bool *done, uint64_t bound_ns, const struct clockevent *busy);
/* When set, the waits poll with interrupts on instead of halting (a busy CPU: no wake-up
 * from HLT in the latency). */
extern bool exp_poll_waits;

/* Waits in HLT until time_ns() reaches end_ns (any interrupt wakes it; the backup device
 * at least every HALT_BACKUP_NS), bounded by twice the span plus 1 s of TSC time. false,
 * with an `error` record, when the bound ended it. Interrupts off on entry and return. */
bool exp_sleep_until(uint64_t end_ns, const struct clockevent *busy, const char *what);

/* A defect of the kit found by an experiment (a timer that fired early): an `error` record
 * naming it, and the run ends failed (exp_defects(), read by kernel/main.c). */
void exp_defect(const char *what, const char *device);
unsigned exp_defects(void);

/* A 64-bit LCG with a fixed seed per experiment: runs are repeatable. Returns 31 bits. */
uint32_t exp_rand(uint64_t *state);
/* Uniform in [lo, hi]; lo when hi < lo. */
uint64_t exp_rand_range(uint64_t *state, uint64_t lo, uint64_t hi);

/* rec_begin(r, "result") with "exp" set to the current experiment. */
void exp_result_begin(struct rec *r);
/* A `result` row that was not measured: "status":"skip" and the reason; the caller adds
 * the keys that name the row (e.g. "device") and emits it. Measured rows carry no status. */
void exp_skip_begin(struct rec *r, const char *reason);
/* A `result` row that was measured but whose figure cannot be true: "status":"invalid" and
 * what happened instead; the caller adds the keys that name the row and the raw counts that
 * show it, never the impossible figure. */
void exp_invalid_begin(struct rec *r, const char *reason);

/* Picks the size by profile: quick, full or soak. */
uint64_t exp_size(uint64_t quick, uint64_t full, uint64_t soak);

#endif
