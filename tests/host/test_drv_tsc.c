/* tests/host/test_drv_tsc.c - drivers/tsc.c on the fake CPU: RDTSC reads, the ordered read,
 * and the clocksource's rating from CPUID as cpu_probe() decodes it (SDM vol. 3B 18.17; CPUID
 * 0x80000007:EDX[8]). */
#include <string.h>

#include "ticklab/tsc.h"
#include "ticklab/cpuid.h"
#include "fake/fake.h"
#include "test.h"
#include "ticklab/timekeeping.h"

/* The drivers' state, as the kernel keeps it. */
static struct tsc the_tsc;

#define TSC_HZ 2100000000ull   /* the fake's default */

/* The facts as cpu_probe() finds them on the fake CPU now, then the TSC clocksource filled
 * from them (tsc_clocksource_init runs no CPUID itself). */
static struct clocksource *tsc_from_cpuid(void)
{
    static struct cpu_info ci;
    cpu_probe(&ci);
    return tsc_clocksource_init(&the_tsc, &ci);
}

/* SDM: the TSC increments at a constant rate (invariant TSC). Each RDTSC costs 20 ns in the
 * fake, so back-to-back reads are 42 cycles apart at 2.1 GHz: the reads see the clock. */
TEST(drv_tsc_read_counts_at_the_tsc_rate)
{
    fake_reset();
    fake_tsc_set_value(1000000);
    uint64_t a = tsc_read(), b = tsc_read();
    CHECK_EQ_U64(a, 1000000 + 42);
    CHECK_EQ_U64(b - a, 42);
}

/* SDM (RDTSC): LFENCE;RDTSC is the ordered form; it is one RDTSC (no CPUID, which would be
 * a VM exit under a hypervisor) and successive ordered reads never go backwards. */
TEST(drv_tsc_ordered_read_is_one_rdtsc_and_monotonic)
{
    fake_reset();
    uint64_t calls = fake_stats.rdtsc_calls, cpuids = fake_stats.cpuid_calls;
    uint64_t last = tsc_read_ordered();
    for (int i = 0; i < 100; i++) {
        uint64_t now = tsc_read_ordered();
        CHECK(now > last);
        last = now;
    }
    CHECK_EQ_U64(fake_stats.rdtsc_calls - calls, 101);
    CHECK_EQ_U64(fake_stats.cpuid_calls, cpuids);
    fake_run_for_ns(1000000);                       /* 1 ms: 2.1 M cycles */
    CHECK_EQ_U64(tsc_read_ordered() - last, 2100000 + 42);
}

/* The TSC is 64 bits: mask all ones, so a delta across 2^64 is still right. */
TEST(drv_tsc_delta_across_2_pow_64)
{
    fake_reset();
    struct clocksource *cs = tsc_from_cpuid();
    fake_tsc_set_value(UINT64_MAX - 50);
    uint64_t a = cs_read(cs);
    fake_run_for_ns(100);
    uint64_t b = cs_read(cs);
    CHECK(b < a);
    CHECK_EQ_U64(cs_delta(cs, b, a), 210 + 42);
}

/* CPUID 0x80000007:EDX[8] set (the fake's default): rating 300, usable, no frequency yet. */
TEST(drv_tsc_clocksource_invariant_rating_300)
{
    fake_reset();
    struct clocksource *cs = tsc_from_cpuid();
    CHECK_EQ_STR(cs->name, "tsc");
    CHECK_EQ_U64(cs->mask, UINT64_MAX);
    CHECK_EQ_I64(cs->rating, TSC_RATING_INVARIANT);
    CHECK_EQ_I64(cs->rating, 300);
    CHECK(cs->usable);
    CHECK_EQ_U64(cs->freq_hz, 0);
    CHECK(the_tsc.invariant);
}

/* Invariance bit clear, with or without a hypervisor: rating 100 (below the HPET and the PM
 * timer). A hypervisor that does set the bit is believed. */
TEST(drv_tsc_clocksource_not_invariant_rating_100)
{
    fake_reset();
    fake_cpuid_set_bit(0x80000007u, FAKE_EDX, FAKE_CPUID80000007_EDX_INVTSC, false);
    CHECK_EQ_I64(tsc_from_cpuid()->rating, 100);
    CHECK(!the_tsc.invariant);
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_HYPERVISOR, true);
    CHECK_EQ_I64(tsc_from_cpuid()->rating, TSC_RATING_NOT_INVARIANT);
    fake_cpuid_set_bit(0x80000007u, FAKE_EDX, FAKE_CPUID80000007_EDX_INVTSC, true);
    CHECK_EQ_I64(tsc_from_cpuid()->rating, TSC_RATING_INVARIANT);
}

/* CPUID: leaf 0x80000007 exists only up to the extended maximum (0x80000000:EAX); a stale
 * entry beyond it is not an invariance claim. */
TEST(drv_tsc_invariance_leaf_beyond_extended_maximum_ignored)
{
    fake_reset();
    fake_cpuid_set(0x80000000u, FAKE_CPUID_ANY, (struct cpuid_regs){ 0x80000004u, 0, 0, 0 });
    CHECK_EQ_I64(tsc_from_cpuid()->rating, TSC_RATING_NOT_INVARIANT);
}

/* CPUID.1:EDX[4] clear: no TSC. Listed, never selected, with the reason. */
TEST(drv_tsc_absent_is_unusable_with_reason)
{
    fake_reset();
    fake_cpuid_set_bit(1, FAKE_EDX, FAKE_CPUID1_EDX_TSC, false);
    struct clocksource *cs = tsc_from_cpuid();
    CHECK(!cs->usable);
    CHECK_EQ_STR(cs->unusable_reason, "CPUID: no TSC");
    fake_cpuid_set_bit(1, FAKE_EDX, FAKE_CPUID1_EDX_TSC, true);
    cs = tsc_from_cpuid();
    CHECK(cs->usable);
    CHECK_EQ_STR(cs->unusable_reason, NULL);
}

/* With the time core: unusable until calibration gives a rate, then selected, and time_ns()
 * follows the TSC (1 ms of virtual time is 1 ms). */
TEST(drv_tsc_clocksource_with_core_after_calibration)
{
    fake_reset();
    timekeeping_test_reset();
    struct clocksource *cs = tsc_from_cpuid();
    REQUIRE(clocksource_register(cs) == 0);
    CHECK(!cs->usable);
    CHECK(clocksource_select("tsc", NULL, 0) == NULL);
    REQUIRE(clocksource_set_freq(cs, TSC_HZ) == 0);
    CHECK(cs->usable);
    REQUIRE(clocksource_select("tsc", NULL, 0) == cs);
    uint64_t t0 = time_ns();
    fake_run_for_ns(1000000);
    uint64_t dt = time_ns() - t0;
    CHECK(dt >= 1000000 && dt <= 1000000 + 100);
    timekeeping_test_reset();
}

/* tsc_clocksource_init(&the_tsc, ) takes the facts from the caller's cpu_probe(): it runs no CPUID. */
TEST(drv_tsc_clocksource_init_runs_no_cpuid)
{
    struct cpu_info ci;
    fake_reset();
    cpu_probe(&ci);
    uint64_t cpuids = fake_stats.cpuid_calls;
    struct clocksource *cs = tsc_clocksource_init(&the_tsc, &ci);
    CHECK_EQ_U64(fake_stats.cpuid_calls, cpuids);
    CHECK(cs->usable);
    ci.invariant_tsc = false;                       /* the caller's facts, not the CPU's */
    CHECK_EQ_I64(tsc_clocksource_init(&the_tsc, &ci)->rating, TSC_RATING_NOT_INVARIANT);
    ci.tsc = false;
    CHECK(!tsc_clocksource_init(&the_tsc, &ci)->usable);
    CHECK_EQ_U64(fake_stats.cpuid_calls, cpuids);
}

/* The clocksource reads ordered (LFENCE; RDTSC: one ordered read, no CPUID). */
TEST(drv_tsc_clocksource_reads_ordered)
{
    fake_reset();
    struct clocksource *cs = tsc_from_cpuid();
    uint64_t ordered = fake_stats.rdtsc_ordered_calls, cpuids = fake_stats.cpuid_calls;
    (void)cs_read(cs);
    CHECK_EQ_U64(fake_stats.rdtsc_ordered_calls - ordered, 1);
    CHECK_EQ_U64(fake_stats.cpuid_calls, cpuids);
    /* A copy goes to the core, so the driver's source stays uncalibrated for other tests. */
    static struct clocksource copy;
    copy = *cs;
    timekeeping_test_reset();
    REQUIRE(clocksource_register(&copy) == 0);
    REQUIRE(clocksource_set_freq(&copy, TSC_HZ) == 0);
    REQUIRE(clocksource_select("tsc", NULL, 0) == &copy);
    ordered = fake_stats.rdtsc_ordered_calls;
    (void)time_ns();
    CHECK_EQ_U64(fake_stats.rdtsc_ordered_calls - ordered, 1);   /* in line, still ordered */
    timekeeping_test_reset();
}

/* The in-line TSC path of time_ns() clamps too: another CPU's TSC a few hundred cycles
 * behind the fold reads the fold's time (counted), never 2^64 cycles ahead. */
TEST(drv_tsc_time_ns_in_line_read_clamps_behind_the_fold)
{
    struct timekeeping_stats st;
    fake_reset();
    static struct clocksource copy;
    copy = *tsc_from_cpuid();
    timekeeping_test_reset();
    REQUIRE(clocksource_register(&copy) == 0);
    REQUIRE(clocksource_set_freq(&copy, TSC_HZ) == 0);
    REQUIRE(clocksource_select("tsc", NULL, 0) == &copy);
    fake_run_for_ns(1000000);
    REQUIRE(timekeeping_accumulate() == 0);
    uint64_t fold_ns = time_ns();                   /* one read: 20 ns past the fold */
    CHECK(fold_ns >= 1000000 && fold_ns < 1000000 + 100);
    fake_tsc_set_value(fake_tsc_read() - 1000);     /* this "CPU" lags by 1000 cycles */
    uint64_t t = time_ns();
    CHECK(t <= fold_ns);
    CHECK(t + 1000 >= fold_ns);
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(st.behind_reads, 1);
    timekeeping_test_reset();
}

/* ---- which VMM: QEMU gets the exit port, a cloud's own VMM over KVM does not ----------- */

static uint64_t fw_cfg_sel = 0xffff, fw_cfg_pos;
static uint64_t fw_cfg_read(void *ctx, uint64_t offset, unsigned size)
{
    (void)ctx, (void)size;
    if (offset != 1 || fw_cfg_sel != 0)
        return 0;
    return (uint64_t)(uint8_t)"QEMU"[fw_cfg_pos++ & 3];
}
static void fw_cfg_write(void *ctx, uint64_t offset, unsigned size, uint64_t value)
{
    (void)ctx, (void)size;
    if (offset == 0) {
        fw_cfg_sel = value;
        fw_cfg_pos = 0;
    }
}
static const struct fake_io_ops fw_cfg_ops = { fw_cfg_read, fw_cfg_write };

static void set_signature(uint32_t leaf, const char sig[12])
{
    uint32_t w[3];
    memcpy(w, sig, 12);
    fake_cpuid_set(leaf, FAKE_CPUID_ANY, (struct cpuid_regs){ leaf + 1, w[0], w[1], w[2] });
}

static bool vmm_qemu(void)
{
    struct cpu_info ci;
    cpu_probe(&ci);
    return cpu_vmm_is_qemu(&ci);
}

TEST(drv_cpuid_qemu_told_from_other_vmms)
{
    fake_reset();
    CHECK(!vmm_qemu());                                      /* bare metal */
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_HYPERVISOR, true);
    set_signature(0x40000000u, "TCGTCGTCGTCG");
    CHECK(vmm_qemu());                                       /* TCG is QEMU's */
    set_signature(0x40000000u, "KVMKVMKVM\0\0\0");
    CHECK(!vmm_qemu());                                      /* KVM, no fw_cfg: a cloud VMM */
    fake_port_register(FW_CFG_PORT_SEL, 2, &fw_cfg_ops, NULL);
    CHECK(vmm_qemu());                                       /* KVM under QEMU */
    set_signature(0x40000000u, "Microsoft Hv");              /* Hyper-V enlightenments */
    CHECK(!vmm_qemu());
    set_signature(0x40000100u, "KVMKVMKVM\0\0\0");
    struct cpu_info ci;
    cpu_probe(&ci);
    CHECK_EQ_U64(ci.kvm_leaf, 0x40000100u);
    CHECK_EQ_STR(cpu_hypervisor_name(&ci), "hyperv");
    CHECK(vmm_qemu());                                       /* ... over QEMU/KVM */
    set_signature(0x40000000u, "VMwareVMware");
    fake_cpuid_remove(0x40000100u, FAKE_CPUID_ANY);
    fw_cfg_sel = 0xffff;
    CHECK(!vmm_qemu());
    CHECK_EQ_U64(fw_cfg_sel, 0xffff);                        /* fw_cfg not even touched */
    fake_port_unregister(FW_CFG_PORT_SEL);
}
