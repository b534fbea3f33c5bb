/* lib/time/timekeeping.h - the monotonic clock: time_ns() on the selected clocksource.
 *
 * clocksource_select() picks a source, and time_ns() is then base + the cycles elapsed since
 * the last timekeeping_accumulate(), converted with the source's mult/shift.
 *
 * Epoch: time_ns() is 0 until the first successful clocksource_select() and counts from
 * there; a later switch of source continues from the value time_ns() had at the switch, so
 * it never goes backwards. (64 bits of ns last 584 years.)
 *
 * The one hard rule for callers: timekeeping_accumulate() must run at least every
 * timekeeping_max_idle_ns(). That is min(the source's wrap interval, its max_ns); a 24-bit
 * ACPI PM timer at 3.579545 MHz wraps every 4.69 s, and the 1-ns conversion bound of a GHz
 * TSC holds for a few seconds only (see clocks_calc_mult_shift). A wrap missed entirely
 * cannot be seen in the counter value; the core counts every accumulate that came within
 * 1/8 of the limit (timekeeping_stats.late), so a tick that is running late shows up as a
 * number in the report long before it loses a wrap.
 *
 * Concurrency (single CPU): time_ns() may be called from any context, interrupts included.
 * The writers (select, set_freq, demote, accumulate, set_guard) form one writer: they must
 * not run concurrently with each other. Each publishes through a two-copy latch (a sequence
 * count whose low bit says which copy is stable), so a reader that interrupts a writer reads
 * the copy the writer is not touching, and a reader interrupted by a writer sees the
 * sequence change and re-reads. A writer that finds another writer in progress (an
 * accumulate from the timer interrupt that arrived in the middle of a select) does nothing
 * and returns -EBUSY; the interrupted writer completes. For time_ns() to be monotonic even
 * for a reader that interrupts a source switch, run select/set_freq with interrupts
 * disabled.
 *
 * Several CPUs: any CPU may read; the writer lock is an atomic exchange, so writers on two
 * CPUs never interleave (one of them is refused with -EBUSY), and x86's ordering of stores
 * with stores and loads with loads keeps the latch consistent for readers elsewhere. A
 * reader whose counter is BEHIND the last fold (a 64-bit counter such as the TSC, read on a
 * CPU whose TSC lags the folding CPU's by a few cycles) gets the fold's time, not a time
 * 2^64 cycles ahead; such reads are counted (timekeeping_stats.behind_reads). */
#ifndef TICKLAB_TIME_TIMEKEEPING_H
#define TICKLAB_TIME_TIMEKEEPING_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/clocksource.h"

/* Sets a new calibrated frequency and recomputes the conversion. If cs is the current
 * source, the time so far is folded in at the old rate first (time_ns() does not jump), and
 * the sub-ns fraction carried is dropped (< 1 ns, never backwards). Clears only the
 * "no frequency" reason the core itself set. Returns 0, -EINVAL (bad frequency; nothing
 * changed), -EBUSY (another writer is running). */
int clocksource_set_freq(struct clocksource *cs, uint64_t freq_hz);

/* Makes a source the base of time_ns(): the named one if name is non-NULL and that source is
 * registered and usable, otherwise the usable one with the highest rating (the first
 * registered on a tie). If a name was given and could not be honoured, why (if why_len > 0)
 * receives one line for an error record, e.g. "clocksource=hpet: unusable (counter does not
 * count); using tsc"; otherwise why is set to "". Returns the source now current, or NULL
 * if none is usable (the current source, if any, then stays). */
struct clocksource *clocksource_select(const char *name, char *why, size_t why_len);

/* Takes cs out of use: unusable with `reason` (a static string), and if time_ns() runs on
 * it, the best other usable source takes over, time_ns() going on from where it was.
 * Returns the source time_ns() runs on afterwards: cs itself when no other is usable (time
 * must go on; the caller reports it), NULL before any select. Interrupts off. */
struct clocksource *clocksource_demote(struct clocksource *cs, const char *reason);

struct clocksource *clocksource_current(void);   /* NULL before the first select */

/* Monotonic ns since the first select (0 before). Any context; never blocks; re-reads only
 * if a writer ran meanwhile. If accumulate was late beyond the wrap, the lost wraps are lost
 * (see the top of this file); late beyond max_cyc only costs accuracy, not correctness:
 * the conversion here uses a 128-bit product. */
uint64_t time_ns(void);
/* time_ns(), with `other`'s counter read right after the clocksource's, in the same pass: a
 * pair of readings of two clocks a few instructions apart, for mapping a count of `other`
 * into time_ns() time. `other` need not be registered. */
uint64_t time_ns_paired(const struct clocksource *other, uint64_t *other_out);
/* time_ns() with `ref`'s counter (the TSC, ordered) read right before and right after the
 * clocksource's, nothing else between them: the counter was sampled between *before and
 * *after, and the time returned is the start of the count it read (one count lasts
 * 1e9 / freq_hz ns). So a stamp x of ref took place between t - (*after - x) and
 * t + count + (x - *before): what a measurement that maps ref stamps into time_ns() needs
 * to state its own resolution. When time_ns() runs on ref itself, *before == *after is the
 * counter. `ref` need not be registered. */
uint64_t time_ns_bracket(const struct clocksource *ref, uint64_t *before, uint64_t *after);

/* Folds the cycles elapsed since the last accumulate into the base. Call it from the tick
 * (or an hrtimer) at least every timekeeping_max_idle_ns(). Returns 0, -ENODEV (no source
 * selected), -EBUSY (it interrupted another writer and did nothing). */
int timekeeping_accumulate(void);
/* The same, and *now_ns (if non-NULL) receives time_ns() at the moment of the fold, which is
 * what a caller that needs both (the tick) would otherwise read again. Written on 0 only. */
int timekeeping_accumulate_ns(uint64_t *now_ns);
/* For a periodic caller (the tick): time_ns() now, folded first only when the cycles since
 * the last fold pass an eighth of the longest gap allowed (timekeeping_max_idle_ns()). A
 * caller that runs more often than that folds once every so many calls instead of every
 * call; one that runs less often folds every call, as timekeeping_accumulate() would. */
uint64_t timekeeping_tick_ns(void);

/* min(max_ns, wrap interval) of the current source: the longest gap allowed between two
 * accumulates. UINT64_MAX before a source is selected (nothing to lose yet). */
uint64_t timekeeping_max_idle_ns(void);

/* The count of cs at which time_ns() reaches ns (the first such count, so an event armed
 * for it is never early): what a device that compares against that counter (an HPET
 * comparator against the HPET main counter) is armed with to fire at an absolute time_ns().
 * Valid until the next accumulate moves the base (the count it names does not change).
 * 0; -ENODEV (time_ns() does not run on cs); -ETIME (ns is not after the last accumulate:
 * *cyc is then the base count, already past); -ERANGE (beyond what one fold can hold). */
int timekeeping_cycles_at(uint64_t ns, const struct clocksource *cs, uint64_t *cyc);

/* For arming a device that counts a delay from the moment it is written (a LAPIC timer's
 * initial count) for an absolute time_ns() moment with little between the clock read and
 * the write: what timekeeping can say before the read. time_ns()'s counter (read in line),
 * the count of it at which time_ns() reaches ns (as timekeeping_cycles_at()), the counter's
 * stated rate, and timekeeping_mapping_gen read before that count was taken (the count holds
 * while the two are equal). 0; -ENODEV (no source yet, one read through its driver or with
 * a wrap guard, or one narrower than 64 bits); -ETIME (ns not after the last fold);
 * -ERANGE. */
struct timekeeping_target {
    struct io_counter counter;
    uint64_t cyc, freq_hz;
    uint32_t gen;
};
int timekeeping_target_at(uint64_t ns, struct timekeeping_target *out);

/* Counts the changes of time_ns()'s mapping from counter to ns: a new source, a new rate of
 * the source, a wrap guard set or removed. A fold is not one (it keeps the mapping exactly:
 * base_frac). So a count from timekeeping_cycles_at() taken while this held one value still
 * maps to the same time, and no earlier, while it holds it: what lets an interrupt that
 * proves its comparator reached such a count stand for a clock read (hrtimer.c). Written
 * by the timekeeping writer only; a plain read is one load. */
extern uint32_t timekeeping_mapping_gen;

struct timekeeping_stats {
    uint64_t accumulates;    /* folds done (accumulate, and the fold before a switch) */
    uint64_t late;           /* folds whose delta exceeded 7/8 of the limit */
    uint64_t max_delta_cyc;  /* largest delta folded since the current source was selected */
    uint64_t limit_cyc;      /* the limit itself: min(mask, max_cyc) of the current source */
    uint64_t busy_skips;     /* writers that found another writer running and did nothing */
    uint64_t switches;       /* successful changes of source (the first select counts) */
    uint64_t behind_reads;   /* time_ns() calls that found a 64-bit counter behind the last
                                fold (another CPU's TSC behind this one's) and clamped */
    uint64_t wraps_recovered; /* whole wraps of a narrow source that no fold saw and the
                                 guard counted (timekeeping_set_guard) */
};
void timekeeping_get_stats(struct timekeeping_stats *out);

/* The wrap guard: a 64-bit counter of known frequency (the calibrated TSC) read beside a
 * source that wraps within an hour, so that a gap between folds longer than the source's
 * wrap (an emulator descheduled, an SMI, a section with interrupts off) does not lose whole
 * wraps. The source still gives the time; the guard's elapsed count, converted at the two
 * stated frequencies, only picks how many wraps to add: the count congruent to the
 * source's delta that is nearest to it. So the guard must be right to within half a wrap
 * over the gap (a 16-bit PIT: 27 ms; a guard 1000 ppm off keeps that for 27 s between
 * folds); beyond that a wrap may be miscounted instead of lost. Recovered wraps are counted
 * (timekeeping_stats.wraps_recovered): a nonzero count says folds came late, and by how
 * much. NULL turns it off. Returns 0, -EINVAL (guard narrower than 64 bits or frequency 0),
 * -EBUSY (another writer). A guard whose frequency later changes (clocksource_set_freq) is
 * followed. */
int timekeeping_set_guard(struct clocksource *guard);
const struct clocksource *timekeeping_guard(void);   /* the current source's guard or NULL */

#ifdef TICKLAB_HOSTED
/* Host tests only: forget every source and all time state. */
void timekeeping_test_reset(void);
#endif

#endif
