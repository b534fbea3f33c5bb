/* kernel/timers/clocks.c - see clocks.h. */
#include "kernel/timers/clocks.h"

#include "ticklab/acpi_pm.h"
#include "ticklab/hpet.h"
#include "ticklab/io.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/pit8254.h"
#include "ticklab/tsc.h"
#include "kernel/arch/machine_events.h"
#include "kernel/arch/paging.h"
#include "kernel/config.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/calibrate.h"
#include "kernel/timers/clock_report.h"
#include "kernel/timers/idle.h"
#include "ticklab/cs_measure.h"
#include "ticklab/errno.h"
#include "ticklab/cpuid.h"
#include "ticklab/kstring.h"
#include "ticklab/muldiv.h"
#include "ticklab/stats.h"
#include "ticklab/units.h"
#include "ticklab/timekeeping.h"

/* How long a counter gets to show it moves: 2^26 TSC cycles is 6.7 ms at 10 GHz and
 * 64 ms at 1 GHz, thousands of ticks of the slowest reference (PIT, 838 ns). */
#define PROBE_CYC (1ull << 26)

struct clock_facts clock_facts;

/* The counters' drivers' own state. */
static struct tsc tsc;
static struct hpet hpet;
static struct acpi_pm pm;
static struct clocksource pit;
static struct lapic_timer_cs lapic_counter;

enum { CAL_HPET, CAL_PM, CAL_PIT, CAL_CPUID15, CAL_CPUID16, CAL_USER, CAL_N };
static struct cal_result tsc_cal[CAL_N];

static uint64_t cal_window_ns(void)
{
    switch (cfg.profile) {
    case PROFILE_FULL: return 500000000ull;
    case PROFILE_SOAK: return 2000000000ull;
    default: return 50000000ull;
    }
}

uint64_t tsc_cyc_to_ns(uint64_t cyc)
{
    return clock_facts.tsc_hz ? mul_div_u64_round(cyc, NSEC_PER_SEC, clock_facts.tsc_hz) : 0;
}

uint64_t tsc_ns_to_cyc(uint64_t ns)
{
    /* Uncalibrated: a bound as if the TSC ran at the fastest any CPU's does (10 GHz), so
     * that a wait bounded by it lasts at least what was asked, never zero. */
    return mul_div_u64(ns, clock_facts.tsc_hz ? clock_facts.tsc_hz : CAL_TSC_MAX_HZ,
                       NSEC_PER_SEC);
}

/* The HPET counts from the moment it is enabled. Under QEMU's -icount (TCG) the TSC is the
 * virtual clock in ns and one instruction is one ns, so enabling it at a TSC reading of the
 * same remainder by its period (10 ns) fixes its phase against the TSC for the whole run,
 * whatever the boot took to get here: a record printed a few instructions dearer earlier
 * (a CRC with one hex digit fewer) would otherwise move the HPET's phase, and with it
 * every HPET-counted figure of measurement windows that start on TSC grid points
 * (window_begin). Elsewhere it is just enabled (and firmware may have done it). */
static void enable_on_tsc_phase(struct hpet *h, uint32_t period_fs)
{
    uint64_t period_ns = period_fs / 1000000u;
    if (!k_strcmp(cpu_hypervisor_name(&cpu_facts), "tcg") && period_ns >= 2 &&
        period_ns < 200 && period_fs % 1000000u == 0) {
        unsigned long flags = irq_save();
        uint64_t r = rdtsc() % period_ns;
        cpu_nops((unsigned)(period_ns - r));
        hpet_enable(h);
        irq_restore(flags);
        return;
    }
    hpet_enable(h);
}

static struct clocksource *bring_up_hpet(void)
{
    const struct acpi_hpet_info *h = &acpi_facts.hpet;
    if (!h->present) {
        clock_report_absent("hpet", h->reason ? h->reason : "no HPET table");
        return 0;
    }
    void *mmio = phys_map(h->addr, HPET_MMIO_BYTES);
    struct hpet_info info;
    /* 64-bit MMIO reads of the counter only where they are known to work: QEMU's HPET takes
     * them. Elsewhere 32-bit halves (high, low, high), as Linux and FreeBSD read the HPET
     * only 32 bits at a time: some chipsets and buses split or refuse 64-bit accesses, and
     * a torn read is a time off by 2^32 clocks. hpet_access= overrides. */
    bool access32 = cfg.hpet_access ? cfg.hpet_access == 32 : !cpu_vmm_is_qemu(&cpu_facts);
    if (!mmio || hpet_init(&hpet, (uintptr_t)mmio, access32, &info)) {
        clock_report_absent("hpet", mmio ? info.reason : "cannot map the HPET block");
        return 0;
    }
    clock_report_access_bits(hpet_clocksource(&hpet), access32 ? 32 : 64);
    enable_on_tsc_phase(&hpet, info.period_fs);
    if (hpet_counting(&hpet, PROBE_CYC))
        hpet_measure_margin(&hpet, 0);     /* the -ETIME margin, before any channel */
    clock_facts.hpet_block = &hpet;
    return hpet_clocksource(&hpet);
}

static struct clocksource *bring_up_pm(void)
{
    const struct acpi_fadt_info *f = &acpi_facts.fadt;
    const char *reason = 0;
    if (!f->present || !f->pm_timer_present) {
        clock_report_absent("acpi_pm", !f->present ? "no FADT" : f->pm_timer_reason);
        return 0;
    }
    if (acpi_pm_init(&pm, f->pm_timer_port, f->pm_timer_32bit, &reason)) {
        clock_report_absent("acpi_pm", reason);
        return 0;
    }
    if (acpi_pm_counting(&pm, PROBE_CYC))
        acpi_pm_check_monotonic(&pm, 1000);
    return acpi_pm_clocksource(&pm);
}

static void register_all(void)
{
    struct clock_facts *c = &clock_facts;
    c->tsc = tsc_clocksource_init(&tsc, &cpu_facts);
    c->hpet = bring_up_hpet();
    c->acpi_pm = bring_up_pm();
    c->pit = pit_clocksource_init(&pit, PROBE_CYC);
    c->lapic = lapic_timer_clocksource_start(&lapic_counter, intr_apic());
    struct clocksource *all[] = { c->tsc, c->hpet, c->acpi_pm, c->pit, c->lapic };
    for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (all[i])
            clocksource_register(all[i]);
}

static void calibrate_one(struct clocksource *ref, struct cal_result *out, const char *name)
{
    if (!ref || !ref->usable) {
        calibrate_tsc(0, clock_facts.tsc, cal_window_ns(), out);   /* fills a SKIP */
        out->ref = name;
        out->reason = ref ? ref->unusable_reason : "reference absent";
        return;
    }
    calibrate_tsc(ref, clock_facts.tsc, cal_window_ns(), out);
}

/* Each reference's own rate, measured: the TSC counted f_i Hz against reference i at its
 * stated rate, and the chosen method says the TSC runs at f; so the reference really runs at
 * nominal x f / f_i, to within both uncertainties. Reported, not applied: time_ns() keeps
 * each counter's stated rate, since correcting one reference by another is only as good as
 * the other (and the chosen one is measured against itself: 0 by construction). */
static void report_reference_rates(int chosen)
{
    static const unsigned refs[] = { CAL_HPET, CAL_PM, CAL_PIT };
    const struct cal_result *c = &tsc_cal[chosen];
    for (unsigned k = 0; k < sizeof(refs) / sizeof(refs[0]); k++) {
        const struct cal_result *r = &tsc_cal[refs[k]];
        struct clocksource *cs = refs[k] == CAL_HPET ? clock_facts.hpet
                                 : refs[k] == CAL_PM ? clock_facts.acpi_pm : clock_facts.pit;
        if (r->status != CAL_OK || !r->freq_hz || !cs || !cs->freq_hz)
            continue;
        uint64_t measured = mul_div_u64_round(cs->freq_hz, c->freq_hz, r->freq_hz);
        int64_t off_ppb = (int64_t)mul_div_u64_round(c->freq_hz > r->freq_hz
                                                         ? c->freq_hz - r->freq_hz
                                                         : r->freq_hz - c->freq_hz,
                                                     NSEC_PER_SEC, r->freq_hz);
        if (c->freq_hz < r->freq_hz)
            off_ppb = -off_ppb;
        struct rec rr;
        rec_begin(&rr, "clock_rate");
        json_str(&rr.j, "name", cs->name);
        json_u64(&rr.j, "freq_stated_hz", cs->freq_hz);
        json_u64(&rr.j, "freq_measured_hz", measured);
        json_i64(&rr.j, "offset_ppb", off_ppb);
        json_u64(&rr.j, "uncertainty_ppb", r->uncertainty_ppb + c->uncertainty_ppb);
        json_str(&rr.j, "measured_by", "tsc");
        json_str(&rr.j, "tsc_calibrated_by", c->ref);
        json_bool(&rr.j, "self", refs[k] == (unsigned)chosen);
        json_bool(&rr.j, "applied", false);
        rec_emit(&rr);
    }
}

static void calibrate_tsc_all(void)
{
    struct clock_facts *c = &clock_facts;
    calibrate_one(c->hpet, &tsc_cal[CAL_HPET], "hpet");
    calibrate_one(c->acpi_pm, &tsc_cal[CAL_PM], "acpi_pm");
    calibrate_one(c->pit, &tsc_cal[CAL_PIT], "pit");
    const struct cpu_info *ci = &cpu_facts;
    calibrate_from_cpuid15(ci->leaf15_crystal_hz, ci->leaf15_numerator, ci->leaf15_denominator,
                           ci->leaf15_valid ? 0
                           : ci->leaf15_reason ? ci->leaf15_reason : "leaf 0x15 not valid",
                           &tsc_cal[CAL_CPUID15]);
    calibrate_from_cpuid16(ci->leaf16_base_mhz,
                           ci->leaf16_valid ? 0
                           : ci->leaf16_reason ? ci->leaf16_reason : "leaf 0x16 not valid",
                           &tsc_cal[CAL_CPUID16]);
    /* tsc_hz=: the user's rate wins; the measured ones are still reported beside it. */
    unsigned n = CAL_USER;
    if (cfg.tsc_hz)
        calibrate_from_user("tsc", cfg.tsc_hz, &tsc_cal[n++]);
    int idx = calibrate_choose(tsc_cal, n);
    if (idx >= 0) {
        c->tsc_hz = tsc_cal[idx].applied_hz;
        machine_events_set_tsc_hz(c->tsc_hz);
        c->tsc_uncertainty_ppb = tsc_cal[idx].uncertainty_ppb;
        c->tsc_method_ref = tsc_cal[idx].ref;
        if (c->tsc)
            clocksource_set_freq(c->tsc, c->tsc_hz);   /* makes it usable */
    } else if (c->tsc) {
        c->tsc->usable = false;
        c->tsc->unusable_reason = "no calibration method succeeded";
    }
    for (unsigned i = 0; i < n; i++)
        clock_report_calibration(&tsc_cal[i]);
    if (idx >= 0)
        report_reference_rates(idx);
}

static void calibrate_lapic(void)
{
    struct clock_facts *c = &clock_facts;
    struct cal_result r[2];
    if (!c->lapic)
        return;
    if (!c->tsc_hz) {
        c->lapic->usable = false;
        c->lapic->unusable_reason = "no calibrated TSC to measure it against";
        return;
    }
    struct cal_target t = { .cs = c->lapic, .max_hz = c->tsc_hz };
    calibrate_pair(&t, c->tsc, c->tsc_uncertainty_ppb, cal_window_ns(), &r[0]);
    unsigned n = 1;
    if (cfg.lapic_hz)
        calibrate_from_user("lapic", cfg.lapic_hz, &r[n++]);
    int idx = calibrate_choose(r, n);
    if (idx >= 0) {
        c->lapic_hz = r[idx].applied_hz;
        c->lapic_uncertainty_ppb = r[idx].uncertainty_ppb;
        clocksource_set_freq(c->lapic, r[idx].applied_hz);
    } else {
        c->lapic->usable = false;
        c->lapic->unusable_reason = r[0].reason;
    }
    for (unsigned i = 0; i < n; i++)
        clock_report_calibration(&r[i]);
}

/* Each source's read cost, resolution and monotonicity, kept for its record. */
#define MAX_SOURCES 8
static struct {
    struct clocksource *cs;
    struct cs_measure m;
} measured[MAX_SOURCES];
static unsigned n_measured;

static void measure_all(void)
{
    uint64_t mono = cfg.profile == PROFILE_QUICK ? 2000 : 100000;
    n_measured = 0;
    for (struct clocksource *cs = clocksource_list(); cs && n_measured < MAX_SOURCES;
         cs = cs->next) {
        measured[n_measured].cs = cs;
        cs_measure(cs, clock_facts.tsc, 1000, mono, &measured[n_measured].m);
        cs->read_cost_cyc = (uint32_t)measured[n_measured].m.cost_median_cyc; /* TSC cycles */
        n_measured++;
    }
}

static struct clocksource *selected;
static char select_why[192];

int clocks_init(void)
{
    kprintf("\nClock sources and calibration (figures in TSC cycles unless named)\n");
    register_all();
    calibrate_tsc_all();
    calibrate_lapic();
    measure_all();
    selected = clocksource_select(cfg.clocksource[0] ? cfg.clocksource : 0, select_why,
                                  sizeof(select_why));
    /* A narrow source (the 16-bit PIT wraps every 54.9 ms) loses whole wraps whenever two
     * folds are further apart than that (the emulator's thread descheduled, an SMI, a long
     * section with interrupts off): the calibrated TSC counts them (clocksource.h). */
    struct clocksource *tsc = clock_facts.tsc;
    if (tsc && tsc->usable && tsc->freq_hz) {
        unsigned long flags = irq_save();
        timekeeping_set_guard(tsc);
        irq_restore(flags);
    }
    return selected ? 0 : -ENODEV;
}

const struct cs_measure *clocks_measure_of(const struct clocksource *cs)
{
    for (unsigned i = 0; i < n_measured; i++)
        if (measured[i].cs == cs)
            return &measured[i].m;
    return 0;
}

void clocks_demote_tsc(const char *reason)
{
    struct clocksource *tsc = clock_facts.tsc;
    if (!tsc || !tsc->usable)
        return;
    struct clocksource *was = clocksource_current();
    unsigned long flags = irq_save();
    struct clocksource *now = clocksource_demote(tsc, reason);
    irq_restore(flags);
    struct rec r;
    rec_begin(&r, "clocksource_demoted");
    json_str(&r.j, "name", "tsc");
    json_str(&r.j, "reason", reason);
    json_str(&r.j, "time_ns_was_on", was ? was->name : 0);
    json_str(&r.j, "time_ns_now_on", now ? now->name : 0);
    rec_emit(&r);
    kprintf("  clocksource tsc taken out of use: %s; time_ns() on %s\n", reason,
            now ? now->name : "-");
    if (now == tsc)
        rec_error("clocksource", "the TSC is unsynchronised and no other clocksource is usable");
}

void clocks_report_selected(void)
{
    clock_report_selected(selected, cfg.clocksource, select_why);
}

/* ---- the environment ---------------------------------------------------------------------- */

/* More than this per RDTSC is no instruction but a trip to the hypervisor: a VM exit costs
 * a thousand cycles or more even on an idle host, an RDTSC itself tens. */
#define RDTSC_TRAPPED_CYC 1000u
#define RDTSC_PAIRS       256u

bool clocks_under_tcg(void)
{
    struct cpu_info ci;
    cpu_probe(&ci);
    return !k_strcmp(cpu_hypervisor_name(&ci), "tcg");
}

#define ICOUNT_TSC_HZ NSEC_PER_SEC

/* QEMU's -icount makes the TSC count exactly 1e9 a second: calibrated against the emulated
 * HPET or PM timer it comes out within a fraction of a ppm of it. */
static bool virtual_time(const char *hv)
{
    uint64_t off = clock_facts.tsc_hz > ICOUNT_TSC_HZ ? clock_facts.tsc_hz - ICOUNT_TSC_HZ
                                                      : ICOUNT_TSC_HZ - clock_facts.tsc_hz;
    return clock_facts.tsc_hz && off <= 1000 && !k_strcmp(hv, "tcg");
}

bool clocks_virtual_time(void)
{
    struct cpu_info ci;
    cpu_probe(&ci);
    return virtual_time(cpu_hypervisor_name(&ci));
}

void clocks_report_environment(void)
{
    static uint64_t d[RDTSC_PAIRS];
    struct cpu_info ci;
    cpu_probe(&ci);
    unsigned long flags = irq_save();
    for (unsigned i = 0; i < RDTSC_PAIRS; i++) {
        uint64_t a = rdtsc();
        d[i] = rdtsc() - a;
    }
    irq_restore(flags);
    struct stats st;
    stats_u64(d, RDTSC_PAIRS, &st);
    bool trapped = (uint64_t)st.median > RDTSC_TRAPPED_CYC;
    const char *hv = cpu_hypervisor_name(&ci);
    clock_facts.hypervisor = hv;
    clock_facts.rdtsc_cost_cyc = (uint64_t)st.median;
    clock_facts.rdtsc_trapped = trapped;
    clock_facts.virtual_time = virtual_time(hv);

    struct rec r;
    rec_begin(&r, "environment");
    json_str(&r.j, "hypervisor", hv);
    json_str(&r.j, "hypervisor_signature", ci.hypervisor ? ci.hv_signature : 0);
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "rdtsc_cost_cyc", (uint64_t)st.median);
    json_u64(&r.j, "rdtsc_cost_min_cyc", (uint64_t)st.min);
    json_u64(&r.j, "rdtsc_cost_ns", tsc_cyc_to_ns((uint64_t)st.median));
    json_bool(&r.j, "rdtsc_trapped", trapped);
    json_bool(&r.j, "virtual_time_likely", clock_facts.virtual_time);
    if (clock_facts.off_virtual_time)
        json_str(&r.j, "off_virtual_time", clock_facts.off_virtual_time);
    json_str(&r.j, "idle", idle_name());
    json_str(&r.j, "idle_reason", idle_reason());
    json_obj_open(&r.j, "clock_read_cost_ns");
    for (struct clocksource *cs = clocksource_list(); cs; cs = cs->next)
        if (cs->read_cost_cyc && clock_facts.tsc_hz)
            json_u64(&r.j, cs->name, tsc_cyc_to_ns(cs->read_cost_cyc));
    json_obj_close(&r.j);
    rec_emit(&r);
    kprintf("  environment %s%s: RDTSC %llu TSC cycles (%llu ns)%s\n",
            !k_strcmp(hv, "none") ? "no hypervisor" : "hypervisor ", !k_strcmp(hv, "none") ? "" : hv,
            (unsigned long long)st.median, (unsigned long long)tsc_cyc_to_ns((uint64_t)st.median),
            trapped ? ": trapped by the hypervisor, every TSC read is a VM exit" : "");
    if (clock_facts.off_virtual_time)
        kprintf("  environment the %s's events do not follow virtual time (QEMU -icount without "
                "-rtc clock=vm?): it is not used, and what counted its events at boot may "
                "differ from run to run\n", clock_facts.off_virtual_time);
    kprintf("  idle        %s: %s\n", idle_name(), idle_reason());
}
