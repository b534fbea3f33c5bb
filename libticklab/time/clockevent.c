/* libticklab/time/clockevent.c - the registry of clock event devices, their selection, and
 * programming them in ns with the min/max guard and the -ETIME retry. See clockevent.h. */
#include "ticklab/clockevent.h"

#include "ticklab/clocksource.h"   /* NSEC_PER_SEC */
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"

#define CE_ANY_MODE (CE_PERIODIC | CE_ONESHOT | CE_DEADLINE)

static const char REASON_NO_FREQ[] = "no frequency (freq_hz 0)";
static const char REASON_NO_MODE[] = "offers neither periodic nor one-shot events";
static const char REASON_DRIVER[] = "not marked usable by its driver";

static struct clockevent *ce_list;

/* ---- conversions ------------------------------------------------------------------------ */

uint64_t clockevent_ns_to_cyc_up(const struct clockevent *ce, uint64_t delta_ns)
{
    uint64_t cyc;

    if (!mul_div_u64_checked(delta_ns, ce->freq_hz, NSEC_PER_SEC, &cyc))
        return UINT64_MAX;
    /* The floor is the answer only if the division was exact; otherwise it would end a
     * fraction of a cycle early, so take the next cycle. */
    if ((unsigned __int128)cyc * NSEC_PER_SEC != (unsigned __int128)delta_ns * ce->freq_hz)
        return cyc == UINT64_MAX ? UINT64_MAX : cyc + 1;
    return cyc;
}

uint64_t clockevent_cyc_to_ns(const struct clockevent *ce, uint64_t cyc)
{
    return mul_div_u64_round(cyc, NSEC_PER_SEC, ce->freq_hz);
}

/* The shortest delta the core asks for: a delta of 0 cycles means nothing to a device. */
static uint64_t shortest_cyc(const struct clockevent *ce)
{
    return ce->min_delta_cyc ? ce->min_delta_cyc : 1;
}

/* ---- registry --------------------------------------------------------------------------- */

static bool promises_kept(const struct clockevent *ce)
{
    if (!ce->name || !ce->name[0] || !ce->shutdown)
        return false;
    if ((ce->features & CE_PERIODIC) && !ce->set_periodic)
        return false;
    if ((ce->features & (CE_ONESHOT | CE_DEADLINE)) && !ce->set_next)
        return false;
    if ((ce->features & CE_ANY_MODE) &&
        (ce->max_delta_cyc == 0 || ce->min_delta_cyc > ce->max_delta_cyc))
        return false;
    return true;
}

int clockevent_register(struct clockevent *ce)
{
    struct clockevent **tail = &ce_list;

    if (!ce || !promises_kept(ce))
        return -EINVAL;
    for (; *tail; tail = &(*tail)->next)
        if (*tail == ce || k_strcmp((*tail)->name, ce->name) == 0)
            return -EBUSY;

    if (ce->freq_hz == 0 || !(ce->features & CE_ANY_MODE)) {
        ce->usable = false;
        ce->unusable_reason = ce->freq_hz == 0 ? REASON_NO_FREQ : REASON_NO_MODE;
    }
    if (!ce->usable && !ce->unusable_reason)
        ce->unusable_reason = REASON_DRIVER;
    ce->events = ce->programs = ce->clamped_short = ce->clamped_long = 0;
    ce->etime_retries = ce->etime_failures = 0;
    ce->next = NULL;
    *tail = ce;
    return 0;
}

struct clockevent *clockevent_list(void)
{
    return ce_list;
}

struct clockevent *clockevent_find(const char *name)
{
    for (struct clockevent *ce = ce_list; ce && name; ce = ce->next)
        if (k_strcmp(ce->name, name) == 0)
            return ce;
    return NULL;
}

/* ---- selection -------------------------------------------------------------------------- */

static const struct {
    unsigned bit;
    const char *name;
} feature_name[] = {
    { CE_PERIODIC, "PERIODIC" },
    { CE_ONESHOT, "ONESHOT" },
    { CE_DEADLINE, "DEADLINE" },
    { CE_STOPS_IN_C3, "STOPS_IN_C3" },
};

char *clockevent_feature_names(unsigned features, char *buf, size_t buf_len)
{
    size_t used = 0;

    if (buf_len == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(feature_name) / sizeof(feature_name[0]); i++) {
        if (!(features & feature_name[i].bit) || used >= buf_len)
            continue;
        int n = fmt_snprintf(buf + used, buf_len - used, "%s%s", used ? "|" : "",
                             feature_name[i].name);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

static bool qualifies(const struct clockevent *ce, unsigned need_features)
{
    return ce->usable && (ce->features & need_features) == need_features;
}

static struct clockevent *best_with(unsigned need_features)
{
    struct clockevent *best = NULL;

    for (struct clockevent *ce = ce_list; ce; ce = ce->next)
        if (qualifies(ce, need_features) && (!best || ce->rating > best->rating))
            best = ce;
    return best;
}

/* One line for the error record: why the named device was not taken, and what was. */
static void explain(char *why, size_t why_len, const char *name, unsigned need_features,
                    const struct clockevent *asked, const struct clockevent *got)
{
    const char *using = got ? got->name : "none usable";
    char lacks[48];

    if (!asked) {
        fmt_snprintf(why, why_len, "clockevent=%s: unknown; using %s", name, using);
    } else if (!asked->usable) {
        fmt_snprintf(why, why_len, "clockevent=%s: unusable (%s); using %s", name,
                     asked->unusable_reason ? asked->unusable_reason : "no reason given",
                     using);
    } else {
        clockevent_feature_names(need_features & ~asked->features, lacks, sizeof(lacks));
        fmt_snprintf(why, why_len, "clockevent=%s: lacks %s; using %s", name, lacks, using);
    }
}

struct clockevent *clockevent_select(const char *name, unsigned need_features, char *why,
                                     size_t why_len)
{
    struct clockevent *asked = name ? clockevent_find(name) : NULL;
    struct clockevent *pick =
        asked && qualifies(asked, need_features) ? asked : best_with(need_features);
    char needs[48];

    if (!why || why_len == 0)
        return pick;
    why[0] = '\0';
    if (name && (!asked || pick != asked)) {
        explain(why, why_len, name, need_features, asked, pick);
    } else if (!pick) {
        clockevent_feature_names(need_features, needs, sizeof(needs));
        fmt_snprintf(why, why_len, "no usable clockevent%s%s", needs[0] ? " with " : "",
                     needs);
    }
    return pick;
}

/* ---- programming ------------------------------------------------------------------------ */

/* 0 if ce offers one of the modes in `modes` and is usable. */
static int check_mode(const struct clockevent *ce, unsigned modes)
{
    if (!(ce->features & modes))
        return -ENOTSUP;
    return ce->usable ? 0 : -ENODEV;
}

static uint64_t clamp_delta(struct clockevent *ce, uint64_t cyc)
{
    if (cyc < shortest_cyc(ce)) {
        ce->clamped_short++;
        return shortest_cyc(ce);
    }
    if (cyc > ce->max_delta_cyc) {
        ce->clamped_long++;
        return ce->max_delta_cyc;
    }
    return cyc;
}

/* The moment passed while the device was being programmed. Ask for the shortest delta it
 * takes, and double it on every further -ETIME: a slow bus or an SMI that ate one attempt
 * is likely to eat a short one again, so each try leaves more room. */
static int retry_after_etime(struct clockevent *ce)
{
    uint64_t cyc = shortest_cyc(ce);

    for (int i = 0; i < CLOCKEVENT_ETIME_RETRIES; i++) {
        ce->etime_retries++;
        int err = ce->set_next(cyc);
        if (err != -ETIME)
            return err;
        cyc = cyc > ce->max_delta_cyc / 2 ? ce->max_delta_cyc : cyc * 2;
    }
    ce->etime_failures++;
    return -ETIME;
}

int clockevent_program_ns(struct clockevent *ce, uint64_t delta_ns)
{
    int err = check_mode(ce, CE_ONESHOT | CE_DEADLINE);

    if (err)
        return err;
    ce->programs++;
    err = ce->set_next(clamp_delta(ce, clockevent_ns_to_cyc_up(ce, delta_ns)));
    return err == -ETIME ? retry_after_etime(ce) : err;
}

/* The count of cs at which time_ns() reaches abs_ns: exact when time_ns() runs on cs;
 * otherwise mapped through one pair of readings of both clocks taken together, at cs's
 * stated rate (over a wait of milliseconds a rate error of ppm is nanoseconds). */
static int abs_count(const struct clocksource *cs, uint64_t abs_ns, uint64_t *cyc)
{
    int rc = timekeeping_cycles_at(abs_ns, cs, cyc);
    if (rc != -ENODEV || !cs->freq_hz || !cs->read)
        return rc;
    uint64_t c, t = time_ns_paired(cs->read, &c);
    if (abs_ns <= t)
        return -ETIME;
    uint64_t d;
    if (!mul_div_u64_checked(abs_ns - t, cs->freq_hz, NSEC_PER_SEC, &d))
        return -ERANGE;
    *cyc = (c + d + 1) & cs->mask;       /* +1: the cycle in progress, so never early */
    return 0;
}

int clockevent_program_abs_ns(struct clockevent *ce, uint64_t abs_ns, uint64_t now_ns)
{
    uint64_t wait_ns = abs_ns > now_ns ? abs_ns - now_ns : 0;
    uint64_t cyc;

    if (ce->set_abs && ce->abs_cs && !check_mode(ce, CE_ONESHOT) &&
        wait_ns < clockevent_cyc_to_ns(ce, ce->max_delta_cyc) &&
        abs_count(ce->abs_cs, abs_ns, &cyc) == 0) {
        ce->programs++;
        ce->abs_programs++;
        int err = ce->set_abs(cyc);
        if (err != -ETIME)
            return err;
        ce->etime_retries++;
        return clockevent_program_ns(ce, 0);
    }
    return clockevent_program_ns(ce, wait_ns);
}

int clockevent_set_periodic_ns(struct clockevent *ce, uint64_t period_ns,
                               uint64_t *actual_period_ns)
{
    int err = check_mode(ce, CE_PERIODIC);
    uint64_t cyc;

    if (err)
        return err;
    /* Nearest, not up: a periodic tick's error accumulates either way, and nearest keeps
     * it smallest. mul_div_u64_round saturates, which the range check then refuses. */
    cyc = mul_div_u64_round(period_ns, ce->freq_hz, NSEC_PER_SEC);
    if (cyc < shortest_cyc(ce) || cyc > ce->max_delta_cyc)
        return -ERANGE;
    ce->programs++;
    err = ce->set_periodic(cyc);
    if (err)
        return err;
    if (actual_period_ns)
        *actual_period_ns = clockevent_cyc_to_ns(ce, cyc);
    return 0;
}

void clockevent_handle_irq(struct clockevent *ce)
{
    ce->events++;
    if (ce->event)
        ce->event(ce);
}

#ifdef TICKLAB_HOSTED
void clockevent_test_reset(void)
{
    ce_list = NULL;
}
#endif
