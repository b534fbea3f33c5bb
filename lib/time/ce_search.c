/* lib/time/ce_search.c - see ce_search.h. */
#include "ticklab/ce_search.h"

#include "ticklab/errno.h"

static bool reliable(struct clockevent *ce, const struct ce_search_ops *ops, uint64_t delta_cyc,
                     uint32_t *etime)
{
    uint64_t bound = CE_SEARCH_BOUND_NS + 4 * clockevent_cyc_to_ns(ce, delta_cyc);
    for (unsigned i = 0; i < CE_SEARCH_TRIALS; i++) {
        uint64_t before = ops->events(ops->ctx);
        int rc = clockevent_program_cyc(ce, delta_cyc);
        if (rc == -ETIME)
            (*etime)++;
        if (rc || !ops->wait(ops->ctx, before, bound)) {
            clockevent_shutdown(ce);
            return false;
        }
    }
    return true;
}

uint64_t ce_search_min_delta(struct clockevent *ce, const struct ce_search_ops *ops,
                             uint32_t *etime)
{
    uint64_t lo = 0, hi = 1;
    while (hi < ce->max_delta_cyc && !reliable(ce, ops, hi, etime)) {
        lo = hi;
        hi = hi > ce->max_delta_cyc / 2 ? ce->max_delta_cyc : hi * 2;
    }
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (reliable(ce, ops, mid, etime))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}
