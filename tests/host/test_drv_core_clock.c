/* tests/host/test_drv_core_clock.c - drivers/core_clock.c on the fake CPU: the core's clock
 * from APERF/MPERF, the P-state or HWP request, turbo and the SMI count, and each "not
 * available" with its reason (TCG: the MSRs fault; CPUID without the bits; AMD). */
#include "fake/fake.h"
#include "ticklab/core_clock.h"
#include "ticklab/cpuid.h"
#include "ticklab/errno.h"
#include "test.h"

static struct cpu_info ci;
static struct core_clock cc;

static void intel_with_everything(void)
{
    fake_reset();
    /* leaf 6: turbo (EAX[1]), ARAT, HWP (EAX[7]); ECX[0] APERF/MPERF */
    fake_cpuid_set(6, 0, (struct cpuid_regs){ (1u << 1) | (1u << 2) | (1u << 7), 0, 1, 0 });
    fake_msr_set_plain(MSR_IA32_MPERF, 1000000);
    fake_msr_set_plain(MSR_IA32_APERF, 3000000);
    fake_msr_set_plain(MSR_SMI_COUNT, 7);
    fake_msr_set_plain(MSR_IA32_PERF_CTL, 0x1C00);           /* ratio 28 */
    fake_msr_set_plain(MSR_IA32_MISC_ENABLE, 0);             /* turbo engaged */
    fake_msr_set_plain(MSR_IA32_PM_ENABLE, 1);               /* HWP on */
    fake_msr_set_plain(MSR_IA32_HWP_REQUEST, 0x80241C08ull); /* EPP 0x80, des 0x24, max 0x1C,
                                                                min 8 */
    cpu_probe(&ci);
    core_clock_probe(&cc, &ci);
}

/* QEMU's TCG: CPUID has no APERF/MPERF bit and every one of these MSRs faults. */
TEST(core_clock_tcg_says_why_not)
{
    fake_reset();
    cpu_probe(&ci);
    core_clock_probe(&cc, &ci);
    CHECK(!cc.aperf_mperf && cc.clock_reason != NULL);
    CHECK(!cc.smi && cc.smi_reason != NULL);
    CHECK(!cc.hwp && !cc.perf_ctl && !cc.turbo_known);
    struct core_clock_sample a, b;
    struct core_clock_window w;
    core_clock_sample(&cc, &a);
    fake_run_for_ns(1000000);
    core_clock_sample(&cc, &b);
    core_clock_between(&cc, &a, &b, fake_tsc_hz(), &w);
    CHECK(!w.clock_known && !w.smi_known);
}

/* The CPUID bit set but the MSR hidden (a hypervisor): a reason, not a #GP. */
TEST(core_clock_cpuid_says_yes_but_the_msr_faults)
{
    fake_reset();
    fake_cpuid_set(6, 0, (struct cpuid_regs){ 0, 0, 1, 0 });
    cpu_probe(&ci);
    core_clock_probe(&cc, &ci);
    CHECK(!cc.aperf_mperf);
    CHECK(cc.clock_reason && strstr(cc.clock_reason, "faults"));
}

/* Busy at 3x the base for 40 % of a 1 ms window: 3 * TSC rate, 400000 ppm in C0; 2 SMIs;
 * the request and turbo as the MSRs say. */
TEST(core_clock_window_from_aperf_mperf_hwp_and_smis)
{
    intel_with_everything();
    REQUIRE(cc.aperf_mperf && cc.smi && cc.hwp && cc.perf_ctl && cc.turbo_known);
    struct core_clock_sample a, b;
    struct core_clock_window w;
    core_clock_sample(&cc, &a);
    CHECK(a.turbo_on);
    uint32_t min, max, des;
    CHECK(core_clock_request(&cc, &a, &min, &max, &des));
    CHECK_EQ_U64(min, 8);
    CHECK_EQ_U64(max, 0x1C);
    CHECK_EQ_U64(des, 0x24);
    fake_run_for_ns(1000000);
    uint64_t dt = rdtsc() - a.tsc;
    uint64_t dm = dt * 4 / 10;
    fake_msr_set_plain(MSR_IA32_MPERF, a.mperf + dm);
    fake_msr_set_plain(MSR_IA32_APERF, a.aperf + 3 * dm);
    fake_msr_set_plain(MSR_SMI_COUNT, 9);
    core_clock_sample(&cc, &b);
    core_clock_between(&cc, &a, &b, fake_tsc_hz(), &w);
    REQUIRE(w.clock_known);
    CHECK_EQ_U64(w.effective_hz, 3 * fake_tsc_hz());
    CHECK(w.c0_ppm >= 399000 && w.c0_ppm <= 400000);
    CHECK(w.smi_known);
    CHECK_EQ_U64(w.smis, 2);
}

/* Without HWP the request is PERF_CTL's ratio; turbo disengaged by MISC_ENABLE bit 38. */
TEST(core_clock_perf_ctl_and_turbo_off)
{
    intel_with_everything();
    fake_msr_set_plain(MSR_IA32_PM_ENABLE, 0);
    fake_msr_set_plain(MSR_IA32_MISC_ENABLE, MISC_TURBO_DISABLE);
    core_clock_probe(&cc, &ci);
    CHECK(!cc.hwp && cc.perf_ctl && cc.turbo_known);
    struct core_clock_sample s;
    core_clock_sample(&cc, &s);
    CHECK(!s.turbo_on);
    uint32_t ratio, max, des;
    CHECK(core_clock_request(&cc, &s, &ratio, &max, &des));
    CHECK_EQ_U64(ratio, 28);
}

/* A counter that went backwards (reset by firmware, another CPU's) is no figure. */
TEST(core_clock_counter_backwards_is_unknown)
{
    intel_with_everything();
    struct core_clock_sample a, b;
    struct core_clock_window w;
    core_clock_sample(&cc, &a);
    fake_run_for_ns(1000000);
    fake_msr_set_plain(MSR_IA32_MPERF, 10);
    core_clock_sample(&cc, &b);
    core_clock_between(&cc, &a, &b, fake_tsc_hz(), &w);
    CHECK(!w.clock_known);
    CHECK(w.smi_known);
}

/* AMD: APERF/MPERF, but no SMI counter at 0x34: said so even if the MSR read. */
TEST(core_clock_amd_has_no_smi_counter)
{
    intel_with_everything();
    fake_cpuid_set(0, 0, (struct cpuid_regs){ 0xD, 0x68747541, 0x444d4163, 0x69746e65 });
    cpu_probe(&ci);
    core_clock_probe(&cc, &ci);
    CHECK(cc.aperf_mperf);
    CHECK(!cc.smi && cc.smi_reason && strstr(cc.smi_reason, "Intel"));
    CHECK(!cc.hwp && !cc.perf_ctl);
}

/* core_clock=base with HWP: min = max = desired = the guaranteed level (HWP_CAPS 15:8),
 * EPP kept, turbo disengaged. */
TEST(core_clock_pin_base_hwp_guaranteed_and_turbo_off)
{
    intel_with_everything();
    fake_msr_set_plain(MSR_IA32_HWP_CAPS, 0x01081C27ull);     /* highest 0x27, guaranteed 0x1C */
    const char *why;
    REQUIRE(core_clock_pin_base(&cc, &why) == 0);
    CHECK(why == NULL);
    uint64_t req = 0, misc = 0;
    REQUIRE(rdmsr_safe(MSR_IA32_HWP_REQUEST, &req) == 0);
    CHECK_EQ_U64(req, 0x801C1C1Cull);
    REQUIRE(rdmsr_safe(MSR_IA32_MISC_ENABLE, &misc) == 0);
    CHECK(misc & MISC_TURBO_DISABLE);
}

/* Without HWP: PERF_CTL's target = the maximum non-turbo ratio of MSR_PLATFORM_INFO. */
TEST(core_clock_pin_base_perf_ctl_platform_ratio)
{
    intel_with_everything();
    fake_msr_set_plain(MSR_IA32_PM_ENABLE, 0);
    fake_msr_set_plain(MSR_PLATFORM_INFO, 0x1700ull);          /* base ratio 23: 2.3 GHz */
    core_clock_probe(&cc, &ci);
    const char *why;
    REQUIRE(core_clock_pin_base(&cc, &why) == 0);
    uint64_t ctl = 0;
    REQUIRE(rdmsr_safe(MSR_IA32_PERF_CTL, &ctl) == 0);
    CHECK_EQ_U64(ctl, 0x1700);
}

/* Nothing to set (TCG's default model), or a base ratio the CPU does not state: why not. */
TEST(core_clock_pin_base_says_why_not)
{
    fake_reset();
    cpu_probe(&ci);
    core_clock_probe(&cc, &ci);
    const char *why;
    CHECK_EQ_I64(core_clock_pin_base(&cc, &why), -ENOTSUP);
    CHECK(why && strstr(why, "neither HWP nor"));
    intel_with_everything();
    fake_msr_set_plain(MSR_IA32_PM_ENABLE, 0);
    core_clock_probe(&cc, &ci);
    CHECK_EQ_I64(core_clock_pin_base(&cc, &why), -ENOTSUP);   /* no MSR_PLATFORM_INFO */
    CHECK(why && strstr(why, "MSR_PLATFORM_INFO"));
    uint64_t ctl = 0;
    REQUIRE(rdmsr_safe(MSR_IA32_PERF_CTL, &ctl) == 0);
    CHECK_EQ_U64(ctl, 0x1C00);                                 /* untouched */
}
