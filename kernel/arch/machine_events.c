/* kernel/arch/machine_events.c - see machine_events.h. */
#include "kernel/arch/machine_events.h"

#include "ticklab/io.h"
#include "kernel/arch/percpu.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/muldiv.h"

#define MSR_GS_BASE 0xC0000101u

struct window_counts machine_events[MACHINE_EVENTS_CPUS];
volatile uint64_t machine_events_seq;

static struct window_counts open_snap;
static unsigned open_depth;
static uint64_t open_seq;          /* machine_events_seq as the window opened */
static uint32_t open_first_record; /* rec_sent() then: the window's first record's place */

unsigned machine_events_cpu(void)
{
    /* The GS base is the per-CPU block's address once it is set (kernel/smp/smp.c); before
     * that it is 0, and %gs:8 would read page 0, which is unmapped. */
    if (rdmsr(MSR_GS_BASE) == 0)
        return 0;
    unsigned i = cpu_index();
    return i < MACHINE_EVENTS_CPUS ? i : 0;
}

void machine_events_note(uint64_t *counter)
{
    (*counter)++;
    machine_events_seq++;
}

#define EACH_FIELD(X) X(nmi) X(nmi_cyc) X(nmi_serr) X(nmi_iochk) X(unexpected) \
                      X(mce_corrected) X(mce_uncorrected_logged) X(storms)

void window_counts_snapshot(struct window_counts *out)
{
    *out = (struct window_counts){ 0 };
    for (unsigned c = 0; c < MACHINE_EVENTS_CPUS; c++) {
        const volatile struct window_counts *m = &machine_events[c];
#define ADD(f) out->f += m->f;
        EACH_FIELD(ADD)
#undef ADD
    }
}

struct window_counts window_counts_since(const struct window_counts *then)
{
    struct window_counts now;
    window_counts_snapshot(&now);
#define SUB(f) now.f -= then->f;
    EACH_FIELD(SUB)
#undef SUB
    return now;
}

bool window_counts_any(const struct window_counts *c)
{
    return c->nmi || c->unexpected || c->mce_corrected || c->mce_uncorrected_logged || c->storms;
}

/* The members of a window_events object (or of the machine_events record): only what
 * happened, so that a quiet window adds nothing. */
static void put_counts(struct json *j, const struct window_counts *c, uint64_t tsc_hz)
{
    if (c->nmi) {
        json_u64(j, "nmi", c->nmi);
        if (tsc_hz)
            json_u64(j, "nmi_ns", mul_div_u64(c->nmi_cyc, 1000000000ull, tsc_hz));
        else
            json_u64(j, "nmi_tsc_cyc", c->nmi_cyc);
    }
    if (c->nmi_serr)
        json_u64(j, "nmi_serr", c->nmi_serr);
    if (c->nmi_iochk)
        json_u64(j, "nmi_iochk", c->nmi_iochk);
    if (c->unexpected)
        json_u64(j, "unexpected_irqs", c->unexpected);
    if (c->mce_corrected)
        json_u64(j, "mce_corrected", c->mce_corrected);
    if (c->mce_uncorrected_logged)
        json_u64(j, "mce_uncorrected_logged", c->mce_uncorrected_logged);
    if (c->storms)
        json_u64(j, "storms", c->storms);
}

static uint64_t tsc_rate;
static void (*polls[MACHINE_EVENTS_POLLS])(void);

void machine_events_add_poll(void (*fn)(void))
{
    for (unsigned i = 0; i < MACHINE_EVENTS_POLLS; i++)
        if (!polls[i] || polls[i] == fn) {
            polls[i] = fn;
            return;
        }
}

static void poll(void)
{
    unsigned long flags = irq_save();
    for (unsigned i = 0; i < MACHINE_EVENTS_POLLS && polls[i]; i++)
        polls[i]();
    irq_restore(flags);
}

void machine_events_set_tsc_hz(uint64_t hz)
{
    tsc_rate = hz;
}

void window_counts_open(void)
{
    if (open_depth++)
        return;
    poll();
    open_seq = machine_events_seq;
    open_first_record = rec_sent();
    window_counts_snapshot(&open_snap);
}

void window_counts_close(const char *exp, const char *phase)
{
    if (!open_depth || --open_depth)
        return;
    poll();
    if (machine_events_seq == open_seq)
        return;
    struct window_counts d = window_counts_since(&open_snap);
    if (!window_counts_any(&d))
        return;
    struct rec r;
    rec_begin(&r, "window_events");
    json_str(&r.j, "exp", exp ? exp : "boot");
    json_str(&r.j, "phase", phase);
    json_u64(&r.j, "first_record", open_first_record);
    json_u64(&r.j, "records", rec_sent() - open_first_record);
    put_counts(&r.j, &d, tsc_rate);
    rec_emit(&r);
    kprintf("  [%s] in this window: %llu NMI(s), %llu unexpected interrupt(s), %llu corrected "
            "machine check(s), %llu line(s) masked\n", exp ? exp : "boot",
            (unsigned long long)d.nmi, (unsigned long long)d.unexpected,
            (unsigned long long)d.mce_corrected, (unsigned long long)d.storms);
}

void machine_events_report(void)
{
    struct window_counts all;
    poll();
    window_counts_snapshot(&all);
    struct rec r;
    rec_begin(&r, "machine_events");
    json_u64(&r.j, "nmi", all.nmi);
    if (tsc_rate)
        json_u64(&r.j, "nmi_ns", mul_div_u64(all.nmi_cyc, 1000000000ull, tsc_rate));
    json_u64(&r.j, "nmi_serr", all.nmi_serr);
    json_u64(&r.j, "nmi_iochk", all.nmi_iochk);
    json_u64(&r.j, "nmi_unknown", all.nmi - all.nmi_serr - all.nmi_iochk);
    json_u64(&r.j, "unexpected_irqs", all.unexpected);
    json_u64(&r.j, "mce_corrected", all.mce_corrected);
    json_u64(&r.j, "mce_uncorrected_logged", all.mce_uncorrected_logged);
    json_u64(&r.j, "storms", all.storms);
    bool others = false;
    for (unsigned c = 1; c < MACHINE_EVENTS_CPUS; c++)
        others |= window_counts_any(&machine_events[c]);
    if (others) {
        json_arr_open(&r.j, "per_cpu");
        for (unsigned c = 0; c < MACHINE_EVENTS_CPUS; c++) {
            if (!window_counts_any(&machine_events[c]))
                continue;
            json_obj_open(&r.j, NULL);
            json_u64(&r.j, "cpu", c);
            put_counts(&r.j, &machine_events[c], tsc_rate);
            json_obj_close(&r.j);
        }
        json_arr_close(&r.j);
    }
    rec_emit(&r);
    if (window_counts_any(&all))
        kprintf("  machine     %llu NMI(s) (%llu SERR, %llu IOCHK), %llu unexpected "
                "interrupt(s), %llu corrected machine check(s), %llu line(s) masked: the run "
                "went on\n", (unsigned long long)all.nmi, (unsigned long long)all.nmi_serr,
                (unsigned long long)all.nmi_iochk, (unsigned long long)all.unexpected,
                (unsigned long long)all.mce_corrected, (unsigned long long)all.storms);
}
