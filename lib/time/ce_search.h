/* lib/time/ce_search.h - the smallest one-shot delta a clock event device reliably fires
 * at, found on the running hardware (pure logic: the caller says how to wait for an event).
 *
 * "Reliably" means every one of CE_SEARCH_TRIALS programmings at that delta is accepted and
 * fires within the wait bound. The search doubles from 1 cycle to the first reliable delta,
 * then bisects below it. Devices that compare for equality (the HPET) refuse short deltas
 * with -ETIME, or miss them silently; both make a delta unreliable. */
#ifndef TICKLAB_TIME_CE_SEARCH_H
#define TICKLAB_TIME_CE_SEARCH_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/clockevent.h"

#define CE_SEARCH_TRIALS   8
#define CE_SEARCH_BOUND_NS 2000000ull      /* each wait: 2 ms + 4x the delta */

struct ce_search_ops {
    /* Events seen so far (the device's event handler counts them). */
    uint64_t (*events)(void *ctx);
    /* Waits until events() moves past `before` or bound_ns passes (by another clock);
     * returns whether it moved. */
    bool (*wait)(void *ctx, uint64_t before, uint64_t bound_ns);
    void *ctx;
};

/* Returns the smallest reliable delta in device cycles (max_delta_cyc when none is), and
 * counts -ETIME refusals met on the way in *etime. */
uint64_t ce_search_min_delta(struct clockevent *ce, const struct ce_search_ops *ops,
                             uint32_t *etime);

#endif
