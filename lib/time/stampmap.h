/* lib/time/stampmap.h - where a stamp of a fast counter (the TSC) lies on time_ns()'s scale,
 * from pairs of readings of both clocks taken after it.
 *
 * A pair is time_ns() read between two stamps (time_ns_bracket): the count it returns, t,
 * runs for res_ns, and was sampled at some instant between the stamps a and c. So at the
 * reference stamp (taken a_ns before a and c_ns before c) time_ns() was between t - c_ns
 * and t + res_ns - a_ns: an interval res_ns plus the pair's own width wide. One pair gives
 * that; several, sampled at different phases of the count, each cut it from one side, and
 * their intersection narrows towards the pair's own width (the count's edge found between
 * them). The rate between the two clocks is taken as exact over the pairs' span (a few
 * microseconds at most: calibrated to ppm, a rate error there is far below a ns).
 *
 * Pairs that have no instant in common (a bad rate, a stamp that is not what it says) do
 * not narrow anything: the map then answers from its narrowest single pair and says so
 * (`disagree`), never from an empty interval. */
#ifndef TICKLAB_TIME_STAMPMAP_H
#define TICKLAB_TIME_STAMPMAP_H
#include <stdbool.h>
#include <stdint.h>

struct stampmap {
    uint64_t lo_ns, hi_ns;        /* time_ns() at the reference stamp is in [lo_ns, hi_ns] */
    uint64_t one_lo_ns, one_width_ns;    /* the narrowest single pair's interval */
    uint64_t min_pair_ns;         /* the narrowest pair's own width (c_ns - a_ns) */
    unsigned pairs;
    bool disagree;                /* two pairs had no instant in common */
};

void stampmap_start(struct stampmap *m);
/* One pair: count t of res_ns (> 0), read between stamps a_ns and c_ns after the reference
 * (a_ns <= c_ns; round a_ns down and c_ns up when converting). A pair whose a_ns > c_ns is
 * ignored. */
void stampmap_add(struct stampmap *m, uint64_t t, uint64_t res_ns, uint64_t a_ns,
                  uint64_t c_ns);
/* Nothing more to gain: the interval is as narrow as the narrowest pair's own width (plus
 * slack_ns), or the pairs disagreed. */
bool stampmap_settled(const struct stampmap *m, uint64_t slack_ns);
/* time_ns() at the reference stamp: the middle of the interval (of the narrowest pair's
 * when the pairs disagreed), and the interval's width in *width_ns. 0 with width 0 when no
 * pair was added. */
uint64_t stampmap_at(const struct stampmap *m, uint64_t *width_ns);

#endif
