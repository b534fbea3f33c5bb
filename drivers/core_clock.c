/* drivers/core_clock.c - see core_clock.h. */
#include "ticklab/core_clock.h"

#include "ticklab/io.h"
#include "ticklab/port.h"
#include "ticklab/muldiv.h"
#include "ticklab/kstring.h"
#include "ticklab/errno.h"

#define LEAF6_EAX_TURBO       (1u << 1)
#define LEAF6_EAX_HWP         (1u << 7)
#define LEAF6_ECX_APERF_MPERF (1u << 0)

static bool is_intel(const struct cpu_info *ci)
{
    return k_strcmp(ci->vendor, "GenuineIntel") == 0;
}

static bool reads(uint32_t msr)
{
    uint64_t v;
    return rdmsr_safe(msr, &v) == 0;
}

static void probe_clock(struct core_clock *cc, const struct cpu_info *ci,
                        struct cpuid_regs leaf6)
{
    if (ci->max_leaf < 6 || !(leaf6.ecx & LEAF6_ECX_APERF_MPERF))
        cc->clock_reason = "CPUID.6:ECX[0] clear: no APERF/MPERF on this CPU (or hidden by "
                           "a hypervisor)";
    else if (!reads(MSR_IA32_MPERF) || !reads(MSR_IA32_APERF))
        cc->clock_reason = "reading IA32_MPERF/APERF faults (an emulator or a hypervisor "
                           "that does not pass them through)";
    else
        cc->aperf_mperf = true;
    if (cc->aperf_mperf && !ci->invariant_tsc) {
        /* MPERF's rate is then only known to be fixed, not to be the TSC's */
        cc->aperf_mperf = false;
        cc->clock_reason = "no invariant TSC: MPERF's rate is not known to be the TSC's";
    }
    cc->mperf_at_tsc_rate = cc->aperf_mperf;
}

static void probe_smi(struct core_clock *cc, const struct cpu_info *ci)
{
    if (!is_intel(ci))
        cc->smi_reason = "not an Intel CPU: no SMI counter (MSR 0x34)";
    else if (!reads(MSR_SMI_COUNT))
        cc->smi_reason = "reading MSR_SMI_COUNT (0x34) faults (a CPU before Nehalem, an "
                         "emulator or a hypervisor)";
    else
        cc->smi = true;
}

static void probe_request(struct core_clock *cc, const struct cpu_info *ci,
                          struct cpuid_regs leaf6)
{
    uint64_t v;
    if (!is_intel(ci))
        return;
    cc->perf_ctl = reads(MSR_IA32_PERF_CTL);
    cc->hwp = ci->max_leaf >= 6 && (leaf6.eax & LEAF6_EAX_HWP) &&
              rdmsr_safe(MSR_IA32_PM_ENABLE, &v) == 0 && (v & 1) && reads(MSR_IA32_HWP_REQUEST);
    if (rdmsr_safe(MSR_IA32_MISC_ENABLE, &v) == 0)
        cc->turbo_known = (ci->max_leaf >= 6 && (leaf6.eax & LEAF6_EAX_TURBO)) ||
                          (v & MISC_TURBO_DISABLE);
}

void core_clock_probe(struct core_clock *cc, const struct cpu_info *ci)
{
    *cc = (struct core_clock){ 0 };
    struct cpuid_regs leaf6 = ci->max_leaf >= 6 ? cpuid(6, 0) : (struct cpuid_regs){ 0 };
    probe_clock(cc, ci, leaf6);
    probe_smi(cc, ci);
    probe_request(cc, ci, leaf6);
}

void core_clock_sample(const struct core_clock *cc, struct core_clock_sample *s)
{
    uint64_t v = 0;
    *s = (struct core_clock_sample){ 0 };
    if (cc->perf_ctl)
        rdmsr_safe(MSR_IA32_PERF_CTL, &s->perf_ctl);
    if (cc->hwp)
        rdmsr_safe(MSR_IA32_HWP_REQUEST, &s->hwp_request);
    if (cc->turbo_known && rdmsr_safe(MSR_IA32_MISC_ENABLE, &v) == 0)
        s->turbo_on = !(v & MISC_TURBO_DISABLE);
    if (cc->smi)
        rdmsr_safe(MSR_SMI_COUNT, &s->smi_count);
    /* the three counters last and together, so that the window is theirs */
    if (cc->aperf_mperf) {
        rdmsr_safe(MSR_IA32_MPERF, &s->mperf);
        rdmsr_safe(MSR_IA32_APERF, &s->aperf);
    }
    s->tsc = rdtsc();
}

void core_clock_between(const struct core_clock *cc, const struct core_clock_sample *a,
                        const struct core_clock_sample *b, uint64_t tsc_hz,
                        struct core_clock_window *w)
{
    *w = (struct core_clock_window){ 0 };
    if (cc->smi && b->smi_count >= a->smi_count) {
        w->smi_known = true;
        w->smis = b->smi_count - a->smi_count;
    }
    if (!cc->aperf_mperf || !tsc_hz || b->mperf < a->mperf || b->aperf < a->aperf ||
        b->tsc <= a->tsc)
        return;
    uint64_t dm = b->mperf - a->mperf, da = b->aperf - a->aperf, dt = b->tsc - a->tsc;
    w->clock_known = true;
    w->effective_hz = dm ? mul_div_u64(tsc_hz, da, dm) : 0;
    w->c0_ppm = (uint32_t)mul_div_u64(dm < dt ? dm : dt, 1000000, dt);
}

bool core_clock_request(const struct core_clock *cc, const struct core_clock_sample *s,
                        uint32_t *ratio_or_min, uint32_t *hwp_max, uint32_t *hwp_desired)
{
    *ratio_or_min = *hwp_max = *hwp_desired = 0;
    if (cc->hwp) {
        *ratio_or_min = (uint32_t)(s->hwp_request & 0xFF);
        *hwp_max = (uint32_t)(s->hwp_request >> 8 & 0xFF);
        *hwp_desired = (uint32_t)(s->hwp_request >> 16 & 0xFF);
        return true;
    }
    if (cc->perf_ctl) {
        *ratio_or_min = (uint32_t)(s->perf_ctl >> 8 & 0xFF);
        return true;
    }
    return false;
}

static int pin_hwp(const char **why)
{
    uint64_t caps, req;
    if (rdmsr_safe(MSR_IA32_HWP_CAPS, &caps) || rdmsr_safe(MSR_IA32_HWP_REQUEST, &req)) {
        *why = "reading IA32_HWP_CAPABILITIES or IA32_HWP_REQUEST faults";
        return -ENOTSUP;
    }
    uint64_t g = caps >> 8 & 0xFF;
    if (!g) {
        *why = "HWP states a guaranteed performance level of 0";
        return -ENOTSUP;
    }
    /* min 7:0, max 15:8, desired 23:16 = guaranteed; EPP 31:24 and the window kept; no
     * package control (bit 42) */
    req = (req & ~0xFFFFFFull & ~(1ull << 42)) | g | g << 8 | g << 16;
    if (wrmsr_safe(MSR_IA32_HWP_REQUEST, req)) {
        *why = "writing IA32_HWP_REQUEST faults";
        return -ENOTSUP;
    }
    return 0;
}

static int pin_perf_ctl(const char **why)
{
    uint64_t info, ctl;
    if (rdmsr_safe(MSR_PLATFORM_INFO, &info) || rdmsr_safe(MSR_IA32_PERF_CTL, &ctl)) {
        *why = "reading MSR_PLATFORM_INFO (the base ratio) or IA32_PERF_CTL faults";
        return -ENOTSUP;
    }
    uint64_t ratio = info >> 8 & 0xFF;
    if (!ratio) {
        *why = "MSR_PLATFORM_INFO states a base ratio of 0";
        return -ENOTSUP;
    }
    if (wrmsr_safe(MSR_IA32_PERF_CTL, (ctl & ~0xFFFFull) | ratio << 8)) {
        *why = "writing IA32_PERF_CTL faults";
        return -ENOTSUP;
    }
    return 0;
}

int core_clock_pin_base(const struct core_clock *cc, const char **why)
{
    *why = 0;
    if (!cc->hwp && !cc->perf_ctl) {
        *why = "neither HWP nor IA32_PERF_CTL can be read: the request cannot be set (an "
               "emulator, a hypervisor, or not an Intel CPU)";
        return -ENOTSUP;
    }
    int rc = cc->hwp ? pin_hwp(why) : pin_perf_ctl(why);
    if (rc)
        return rc;
    uint64_t misc;
    if (cc->turbo_known && (rdmsr_safe(MSR_IA32_MISC_ENABLE, &misc) ||
                            wrmsr_safe(MSR_IA32_MISC_ENABLE, misc | MISC_TURBO_DISABLE))) {
        *why = "the request is set, but turbo could not be disengaged (IA32_MISC_ENABLE "
               "faults)";
        return -ENOTSUP;
    }
    return 0;
}
