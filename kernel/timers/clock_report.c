/* kernel/timers/clock_report.c - see clock_report.h. */
#include "kernel/timers/clock_report.h"

#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/fmt.h"
#include "ticklab/timekeeping.h"

void format_ppb_as_ppm(char *buf, unsigned size, int64_t ppb)
{
    uint64_t a = ppb < 0 ? (uint64_t)0 - (uint64_t)ppb : (uint64_t)ppb;
    fmt_snprintf(buf, size, "%c%llu.%03llu", ppb < 0 ? '-' : '+',
                 (unsigned long long)(a / 1000), (unsigned long long)(a % 1000));
}

static unsigned bits_of(uint64_t mask)
{
    unsigned b = 0;
    while (b < 64 && (mask >> b))
        b++;
    return b;
}

void report_absent_device(const char *record_type, const char *name, const char *reason)
{
    struct rec r;
    rec_begin(&r, record_type);
    json_str(&r.j, "name", name);
    json_bool(&r.j, "present", false);
    json_bool(&r.j, "usable", false);
    json_str(&r.j, "reason", reason);
    rec_emit(&r);
    kprintf("  %-12s absent: %s\n", name, reason);
}

void clock_report_absent(const char *name, const char *reason)
{
    report_absent_device("clocksource", name, reason);
}

void clock_report_calibration(const struct cal_result *c)
{
    struct rec r;
    rec_begin(&r, "calibration");
    json_str(&r.j, "target", c->target);
    json_str(&r.j, "method", c->method);
    json_str(&r.j, "ref", c->ref);
    json_str(&r.j, "status", cal_status_name(c->status));
    if (c->status != CAL_OK) {
        json_str(&r.j, "reason", c->reason);
        json_i64(&r.j, "err", c->err);
    } else {
        json_u64(&r.j, "freq_hz", c->freq_hz);
        json_u64(&r.j, "uncertainty_ppb", c->uncertainty_ppb);
        json_bool(&r.j, "chosen", c->chosen);
        if (c->chosen)
            json_u64(&r.j, "applied_hz", c->applied_hz);
        json_i64(&r.j, "disagreement_ppb", c->disagreement_ppb);
        json_bool(&r.j, "agrees", c->agrees);
    }
    if (c->measured && c->status == CAL_OK) {
        json_u64(&r.j, "window_ns", c->window_ns);
        json_u64(&r.j, "ref_cyc", c->ref_cyc);
        json_u64(&r.j, "target_cyc", c->target_cyc);
        json_u64(&r.j, "bracket_start_cyc", c->bracket_start_cyc);
        json_u64(&r.j, "bracket_end_cyc", c->bracket_end_cyc);
        json_u64(&r.j, "retries", c->retries);
        json_u64(&r.j, "wraps_inferred", c->wraps_inferred);
    }
    rec_emit(&r);

    char unc[32], dis[32];
    if (c->status != CAL_OK) {
        kprintf("  calibrate %-5s by %-8s %s: %s\n", c->target, c->ref, cal_status_name(c->status),
                c->reason ? c->reason : "-");
        return;
    }
    format_ppb_as_ppm(unc, sizeof(unc), (int64_t)c->uncertainty_ppb);
    format_ppb_as_ppm(dis, sizeof(dis), c->disagreement_ppb);
    kprintf("  calibrate %-5s by %-8s %12llu Hz  +-%s ppm  vs chosen %s ppm%s\n", c->target,
            c->ref, (unsigned long long)c->freq_hz, unc + 1, dis, c->chosen ? "  (chosen)" : "");
    if (c->chosen && c->applied_hz != c->freq_hz)
        kprintf("  %-5s rate applied: %llu Hz, the roundest within the chosen one's +-%s ppm\n",
                c->target, (unsigned long long)c->applied_hz, unc + 1);
}

static void wrap_members(struct json *j, const struct wrap_result *w)
{
    json_obj_open(j, "wrap_check");
    json_str(j, "status", w->status);
    if (w->reason) {
        json_str(j, "reason", w->reason);
    } else {
        json_u64(j, "wraps", w->wraps);
        json_u64(j, "run_ns_by_tsc", w->run_ns);
        json_u64(j, "counter_ns", w->counter_ns);
        json_i64(j, "err_ppb", w->err_ppb);
        json_u64(j, "reads", w->reads);
        json_bool(j, "halted", w->halted);
    }
    json_obj_close(j);
}

static const struct clocksource *access_cs;
static unsigned access_bits;

void clock_report_access_bits(const struct clocksource *cs, unsigned bits)
{
    access_cs = cs;
    access_bits = bits;
}

void clock_report_source(const struct clocksource *cs, const struct cs_measure *m,
                         const struct wrap_result *w)
{
    struct rec r;
    rec_begin(&r, "clocksource");
    json_str(&r.j, "name", cs->name);
    json_bool(&r.j, "present", true);
    json_bool(&r.j, "usable", cs->usable);
    if (!cs->usable)
        json_str(&r.j, "reason", cs->unusable_reason);
    json_i64(&r.j, "rating", cs->rating);
    json_u64(&r.j, "bits", bits_of(cs->mask));
    if (cs == access_cs)
        json_u64(&r.j, "access_bits", access_bits);
    json_u64(&r.j, "freq_hz", cs->freq_hz);
    json_u64(&r.j, "nominal_hz", cs->nominal_hz);
    json_str(&r.j, "freq_basis", !cs->freq_hz ? "unknown"
                                 : cs->nominal_hz == cs->freq_hz ? "stated by hardware"
                                                                 : "calibrated");
    json_u64(&r.j, "mult", cs->mult);
    json_u64(&r.j, "shift", cs->shift);
    json_u64(&r.j, "max_ns", cs->max_ns);
    json_u64(&r.j, "wrap_ns", cs->wrap_ns);
    json_u64(&r.j, "read_cost_min_tsc_cyc", m->cost_min_cyc);
    json_u64(&r.j, "read_cost_median_tsc_cyc", m->cost_median_cyc);
    json_u64(&r.j, "read_cost_p99_tsc_cyc", m->cost_p99_cyc);
    json_u64(&r.j, "tsc_pair_overhead_cyc", m->tsc_pair_overhead_cyc);
    json_u64(&r.j, "resolution_cyc", m->resolution_cyc);
    if (cs->freq_hz && m->resolution_cyc)
        json_u64(&r.j, "resolution_ns", cs_cyc_to_ns(cs, m->resolution_cyc));
    json_u64(&r.j, "mono_reads", m->mono_reads);
    json_u64(&r.j, "backward_steps", m->backward_steps);
    json_u64(&r.j, "largest_backward_cyc", m->largest_backward_cyc);
    wrap_members(&r.j, w);
    rec_emit(&r);

    kprintf("  %-8s %2u bits %11llu Hz (%s) rating %3d  read %llu/%llu/%llu cyc  step %llu  back %llu  wraps %s\n",
            cs->name, bits_of(cs->mask), (unsigned long long)cs->freq_hz,
            cs->usable ? "usable" : "unusable", cs->rating,
            (unsigned long long)m->cost_min_cyc, (unsigned long long)m->cost_median_cyc,
            (unsigned long long)m->cost_p99_cyc, (unsigned long long)m->resolution_cyc,
            (unsigned long long)m->backward_steps, w->status);
    if (!cs->usable)
        kprintf("           unusable: %s\n", cs->unusable_reason);
    if (w->status[0] == 'l')
        rec_error("wrap_check", cs->name);
}

void clock_report_selected(const struct clocksource *cs, const char *requested, const char *why)
{
    struct rec r;
    rec_begin(&r, "clocksource_selected");
    json_str(&r.j, "name", cs ? cs->name : 0);
    json_str(&r.j, "requested", requested[0] ? requested : 0);
    if (why && why[0])
        json_str(&r.j, "why", why);
    const struct clocksource *guard = timekeeping_guard();
    json_str(&r.j, "wrap_guard", guard ? guard->name : 0);
    rec_emit(&r);
    if (requested[0] && why && why[0]) {
        struct rec e;
        rec_begin(&e, "error");
        json_str(&e.j, "what", "clocksource");
        json_str(&e.j, "requested", requested);
        json_str(&e.j, "reason", why);
        json_str(&e.j, "action", cs ? "best usable source used" : "none usable");
        rec_emit(&e);
    }
    kprintf("  time_ns() runs on %s%s%s%s%s%s\n", cs ? cs->name : "NOTHING",
            why && why[0] ? ": " : "", why && why[0] ? why : "",
            guard ? " (its wraps counted by the " : "", guard ? guard->name : "",
            guard ? ")" : "");
}
