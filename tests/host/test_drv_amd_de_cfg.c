/* tests/host/test_drv_amd_de_cfg.c - drivers/amd_de_cfg.c: LFENCE made dispatch-serialising
 * on the AMD families that need DE_CFG[1] (10h, 12h-17h), left alone where it already is
 * (Intel, AMD 0Fh/11h, the bit set), and the two ways a hypervisor can refuse (no MSR: a
 * #GP; writes ignored: the bit reads back clear), each said in the result. */
#include "ticklab/amd_de_cfg.h"
#include "fake/fake.h"
#include "test.h"

static struct cpu_info cpu(const char *vendor, uint32_t family)
{
    struct cpu_info c = { .family = family };
    memcpy(c.vendor, vendor, strlen(vendor) + 1);
    return c;
}

static int ignore_write(void *ctx, uint32_t msr, uint64_t v)
{
    (void)ctx, (void)msr, (void)v;
    return 0;
}

static int read_zero(void *ctx, uint32_t msr, uint64_t *v)
{
    (void)ctx, (void)msr;
    *v = 0;
    return 0;
}

TEST(lfence_amd_family_17h_bit_set_and_read_back)
{
    fake_reset();
    fake_msr_set_plain(MSR_AMD_DE_CFG, 0x400);
    struct cpu_info c = cpu("AuthenticAMD", 0x17);
    struct lfence_fix f;
    lfence_make_serialising(&c, &f);
    CHECK_EQ_U64(f.state, LFENCE_SET);
    CHECK(f.applies && f.known && f.serialising);
    CHECK_EQ_U64(f.before, 0x400);
    CHECK_EQ_U64(f.after, 0x402);          /* the other bits kept */
    uint64_t v;
    REQUIRE(rdmsr_safe(MSR_AMD_DE_CFG, &v) == 0);
    CHECK_EQ_U64(v, 0x402);
}

TEST(lfence_intel_and_amd_0fh_11h_left_alone)
{
    static const struct { const char *vendor; uint32_t family; } none[] = {
        { "GenuineIntel", 6 }, { "AuthenticAMD", 0x0F }, { "AuthenticAMD", 0x11 } };
    for (unsigned i = 0; i < 3; i++) {
        fake_reset();
        struct cpu_info c = cpu(none[i].vendor, none[i].family);
        struct lfence_fix f;
        lfence_make_serialising(&c, &f);
        CHECK_EQ_U64(f.state, LFENCE_ALWAYS);
        CHECK(!f.applies && f.serialising);
        CHECK_EQ_U64(fake_stats.msr_reads + fake_stats.msr_writes, 0);
    }
}

TEST(lfence_already_set_is_not_written)
{
    fake_reset();
    fake_msr_set_plain(MSR_AMD_DE_CFG, DE_CFG_LFENCE_SERIALISE);
    struct cpu_info c = cpu("HygonGenuine", 0x18);
    struct lfence_fix f;
    lfence_make_serialising(&c, &f);
    CHECK_EQ_U64(f.state, LFENCE_ALREADY);
    CHECK(f.serialising);
    CHECK_EQ_U64(fake_stats.msr_writes, 0);
}

/* QEMU's TCG under -cpu EPYC: the MSR reads 0 and writes vanish. */
TEST(lfence_write_ignored_by_a_hypervisor_is_not_serialising)
{
    fake_reset();
    static const struct fake_msr_ops ops = { read_zero, ignore_write };
    REQUIRE(fake_msr_register(MSR_AMD_DE_CFG, 1, &ops, NULL) == 0);
    struct cpu_info c = cpu("AuthenticAMD", 0x15);
    struct lfence_fix f;
    lfence_make_serialising(&c, &f);
    CHECK_EQ_U64(f.state, LFENCE_NOT_TAKEN);
    CHECK(f.known && !f.serialising);
}

TEST(lfence_msr_absent_is_unknown_not_a_fault)
{
    fake_reset();
    struct cpu_info c = cpu("AuthenticAMD", 0x10);
    struct lfence_fix f;
    lfence_make_serialising(&c, &f);
    CHECK_EQ_U64(f.state, LFENCE_UNREADABLE);
    CHECK(!f.known);
    CHECK_EQ_U64(fake_stats.faults, 0);
}
