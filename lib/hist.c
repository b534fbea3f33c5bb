/* lib/hist.c - see hist.h. */
#include "ticklab/hist.h"

#include "ticklab/muldiv.h"

unsigned hist_log2_index(uint64_t v, unsigned lo_shift, unsigned n)
{
    if (v < (1ull << lo_shift))
        return 0;
    unsigned k = fls64(v) - lo_shift;      /* fls64: 1-based index of the highest set bit */
    return k < n - 1 ? k : n - 1;
}

uint64_t hist_log2_edge(unsigned k, unsigned lo_shift)
{
    return k ? 1ull << (lo_shift + k - 1) : 0;
}
