/* kernel/summary.c - see summary.h. */
#include "kernel/summary.h"

#include <stdarg.h>

#include "kernel/console/fbcon.h"
#include "kernel/smp/smp.h"
#include "kernel/exp/verdict.h"
#include "kernel/report/console.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/fmt.h"
#include "ticklab/hrtimer.h"
#include "ticklab/kstring.h"
#include "ticklab/tick.h"

static unsigned cols = 80;

static void put(const char *s, size_t n)
{
    con_write(CON_SCREEN, s, n);
    con_write(CON_SCREEN, "\n", 1);
}

/* One line on the screen, cut to its width. */
static void line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void line(const char *fmt, ...)
{
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    size_t n = k_strlen(buf);
    if (n > cols - 1)
        n = cols - 1;
    con_write(CON_SCREEN, buf, n);
    con_write(CON_SCREEN, "\n", 1);
}

/* A claim's head: up to its first ':' or ',' (the choice, before the reasons). */
static size_t head_len(const char *claim)
{
    size_t n = 0;
    while (claim[n] && claim[n] != ':' && claim[n] != ',' && n < 60)
        n++;
    return n;
}

static const char *claim_of(const char *want)
{
    const char *topic[8], *text[8];
    unsigned n = verdict_claims(topic, text, 8);
    for (unsigned i = 0; i < n; i++)
        if (!k_strcmp(topic[i], want))
            return text[i];
    return 0;
}

/* The line whole, in a buffer of its own (each part is short: a device, a clock, a head of
 * at most 60 characters). */
static size_t verdict_line_whole(char *buf, size_t n);

size_t summary_verdict_line(char *out, size_t n)
{
    char whole[256];
    size_t len = verdict_line_whole(whole, sizeof(whole));
    if (!n)
        return 0;
    if (len >= n) {
        /* too wide for the screen: whole parts dropped from the end, never a figure cut */
        size_t keep = n - 1;
        while (keep > 0 && !(whole[keep] == ' ' && whole[keep + 1] == '|'))
            keep--;
        if (!keep)
            keep = n - 1;
        len = keep;
        whole[len] = 0;
    }
    k_strlcpy(out, whole, n);
    return len;
}

static size_t verdict_line_whole(char *buf, size_t n)
{
    size_t at = (size_t)fmt_snprintf(buf, n, "verdict:");
    const char *ce = claim_of("clockevent");
    if (ce) {
        /* the claim opens with the chosen device's name, or says it is too close */
        size_t w = 0;
        while (ce[w] && ce[w] != ' ')
            w++;
        int64_t p99 = verdict_wake_cb_p99(ce, w);
        char p99s[24];
        if (p99 >= 0)
            at += (size_t)fmt_snprintf(buf + at, n - at, " timer %.*s (callback p99 %s)",
                                       (int)w, ce, fmt_ns(p99s, sizeof(p99s), p99));
        else
            at += (size_t)fmt_snprintf(buf + at, n - at, " timer: %.*s", (int)head_len(ce), ce);
    }
    struct clocksource *cs = clocksource_current();
    if (at < n && cs)
        at += (size_t)fmt_snprintf(buf + at, n - at, "%s clock %s", ce ? " |" : "", cs->name);
    const char *tick = claim_of("tick_rate");
    if (at < n && tick)
        at += (size_t)fmt_snprintf(buf + at, n - at, " | %.*s", (int)head_len(tick), tick);
    if (at < n && !ce && !tick)
        at += (size_t)fmt_snprintf(buf + at, n - at, " none (no experiment ran)");
    return at < n ? at : n - 1;
}

void summary_show(bool ok, unsigned records)
{
    if (!fbcon_active())
        return;
    uint32_t c = 80, rows = 25;
    fbcon_describe(&c, &rows);
    cols = c > 20 ? c : 80;
    for (uint32_t i = 0; i < rows; i++)          /* a fresh screen: scroll everything off */
        con_write(CON_SCREEN, "\n", 1);
    line("ticklab summary: run %s, %u records (the serial port has every figure)",
         ok ? "finished ok" : "FAILED", records);
    const char *hv = clock_facts.hypervisor ? clock_facts.hypervisor : "unknown";
    line("machine: %s; RDTSC %llu cycles%s", !k_strcmp(hv, "none") ? "no hypervisor seen"
         : !k_strcmp(hv, "kvm") ? "KVM guest, figures include VM exits"
         : !k_strcmp(hv, "tcg") ? (clock_facts.virtual_time ? "QEMU -icount (likely), figures are "
                                                              "instruction counts"
                                                            : "QEMU emulation (TCG)")
                                : hv,
         (unsigned long long)clock_facts.rdtsc_cost_cyc,
         clock_facts.rdtsc_trapped ? " (trapped by the hypervisor)" : "");
    struct clocksource *cs = clocksource_current();
    char cpus[96];
    smp_coverage(cpus, sizeof(cpus));
    /* The HPET, the PM timer, the PIT and leaf 0x15 usually run from one crystal: a bound
     * against one of them is relative to that crystal, whose own error (tens of ppm) no
     * reference on this board can see. */
    const char *ref = clock_facts.tsc_method_ref ? clock_facts.tsc_method_ref : "-";
    bool shared = !k_strcmp(ref, "hpet") || !k_strcmp(ref, "acpi_pm") || !k_strcmp(ref, "pit");
    line("time_ns on %s; TSC %llu Hz (+-%llu.%03llu ppm %s %s); %s",
         cs ? cs->name : "-", (unsigned long long)clock_facts.tsc_hz,
         (unsigned long long)(clock_facts.tsc_uncertainty_ppb / 1000),
         (unsigned long long)(clock_facts.tsc_uncertainty_ppb % 1000),
         shared ? "against" : "by", ref, cpus);
    if (shared)
        line("  relative to %s's crystal, which the other references usually share", ref);
    const struct tick_info *ti = timers_tick_info();
    line("tick on %s, %llu ns per tick", ti->dev ? ti->dev->name : "-",
         (unsigned long long)ti->period_ns);
    const char *topic[8], *text[8];
    unsigned n = verdict_claims(topic, text, 8);
    if (!n)
        line("no experiments ran: no verdict");
    for (unsigned i = 0; i < n; i++) {
        /* a claim wraps at a space onto lines indented under its text; one longer than
         * the buffer ends in "..." (never a number cut short without a sign) */
        char buf[500];
        if (fmt_snprintf(buf, sizeof(buf), "%-12s %s", topic[i], text[i]) >= (int)sizeof(buf))
            k_strlcpy(buf + sizeof(buf) - 4, "...", 4);
        const char *p = buf;
        size_t len = k_strlen(buf), w = cols - 1, indent = 0;
        while (len) {
            size_t room = w - indent, take = len;
            if (len > room) {
                take = room;
                while (take > room / 2 && p[take] != ' ')
                    take--;
                if (p[take] != ' ')
                    take = room;
            }
            con_write(CON_SCREEN, "             ", indent);
            put(p, take);
            p += take;
            len -= take;
            while (len && *p == ' ')
                p++, len--;
            indent = 13;
        }
    }
}
