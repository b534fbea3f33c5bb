/* lib/time/stampmap.c - a stamp's place on time_ns()'s scale from pairs (stampmap.h). */
#include "ticklab/stampmap.h"

void stampmap_start(struct stampmap *m)
{
    *m = (struct stampmap){ .lo_ns = 0, .hi_ns = UINT64_MAX, .one_width_ns = UINT64_MAX,
                            .min_pair_ns = UINT64_MAX };
}

void stampmap_add(struct stampmap *m, uint64_t t, uint64_t res_ns, uint64_t a_ns,
                  uint64_t c_ns)
{
    if (a_ns > c_ns || res_ns == 0)
        return;
    /* [t - c_ns, t + res_ns - a_ns], clamped at 0 below (time_ns() is never negative) */
    uint64_t lo = t > c_ns ? t - c_ns : 0;
    uint64_t hi = t + res_ns > a_ns ? t + res_ns - a_ns : 0;
    if (hi < lo)
        hi = lo;
    m->pairs++;
    if (c_ns - a_ns < m->min_pair_ns)
        m->min_pair_ns = c_ns - a_ns;
    if (hi - lo < m->one_width_ns) {
        m->one_lo_ns = lo;
        m->one_width_ns = hi - lo;
    }
    if (m->disagree)
        return;
    uint64_t nlo = lo > m->lo_ns ? lo : m->lo_ns;
    uint64_t nhi = hi < m->hi_ns ? hi : m->hi_ns;
    if (nhi < nlo) {
        m->disagree = true;
        return;
    }
    m->lo_ns = nlo;
    m->hi_ns = nhi;
}

bool stampmap_settled(const struct stampmap *m, uint64_t slack_ns)
{
    if (m->pairs == 0)
        return false;
    return m->disagree || m->hi_ns - m->lo_ns <= m->min_pair_ns + slack_ns;
}

uint64_t stampmap_at(const struct stampmap *m, uint64_t *width_ns)
{
    if (m->pairs == 0) {
        *width_ns = 0;
        return 0;
    }
    if (m->disagree) {
        *width_ns = m->one_width_ns;
        return m->one_lo_ns + m->one_width_ns / 2;
    }
    *width_ns = m->hi_ns - m->lo_ns;
    return m->lo_ns + (m->hi_ns - m->lo_ns) / 2;
}
