/* tests/host/test_drv_cpuid.c - drivers/cpuid.c on the fake CPU: the topology widths an APIC
 * ID is split with (leaves 0x1F, 0xB, AMD's 0x80000008/0x8000001E, the old leaf 1/4 counts)
 * and the microcode revision (MSR 0x8B, Intel's write-0-CPUID(1)-read, AMD's patch level,
 * an emulator without the MSR). */
#include "ticklab/cpuid.h"
#include "fake/fake.h"
#include "test.h"

/* One level of leaf 0xB / 0x1F: shift to the next level's ID, processors at this level, type. */
static void topo_level(uint32_t leaf, uint32_t sub, uint32_t shift, uint32_t count,
                       uint32_t type)
{
    fake_cpuid_set(leaf, sub, (struct cpuid_regs){ shift, count, (type << 8) | sub, 0 });
}

static void topo_end(uint32_t leaf, uint32_t sub)
{
    fake_cpuid_set(leaf, sub, (struct cpuid_regs){ 0, 0, sub, 0 });
}

static void set_vendor(const char *v)
{
    struct cpuid_regs r = fake_cpuid_lookup(0, 0);
    memcpy(&r.ebx, v, 4);
    memcpy(&r.edx, v + 4, 4);
    memcpy(&r.ecx, v + 8, 4);
    fake_cpuid_set(0, FAKE_CPUID_ANY, r);
}

/* What QEMU 7.2 gives for -smp 32,sockets=2 (16 cores a socket, one thread): SMT shift 0,
 * core level shift 4 (checked with ticklab's own cpu record under TCG). */
TEST(cpuid_topology_leaf_b_qemu_two_sockets)
{
    fake_reset();
    topo_level(0xB, 0, 0, 1, 1);
    topo_level(0xB, 1, 4, 16, 2);
    topo_end(0xB, 2);
    struct cpu_info ci;
    cpu_probe(&ci);
    REQUIRE(ci.topo.valid);
    CHECK_EQ_STR(ci.topo.source, "leaf 0xb");
    CHECK_EQ_U64(ci.topo.smt_shift, 0);
    CHECK_EQ_U64(ci.topo.pkg_shift, 4);
    CHECK_EQ_U64(cpu_topo_package(&ci.topo, 15), 0);
    CHECK_EQ_U64(cpu_topo_package(&ci.topo, 16), 1);
    CHECK_EQ_U64(cpu_topo_core(&ci.topo, 17), 1);
    CHECK_EQ_U64(cpu_topo_thread(&ci.topo, 17), 0);
}

/* Leaf 0x1F wins over 0xB and its die level is the package's shift; SMT threads decode. */
TEST(cpuid_topology_leaf_1f_die_level_is_package_width)
{
    fake_reset();
    topo_level(0xB, 0, 1, 2, 1);
    topo_level(0xB, 1, 4, 16, 2);
    topo_end(0xB, 2);
    topo_level(0x1F, 0, 1, 2, 1);
    topo_level(0x1F, 1, 4, 16, 2);
    topo_level(0x1F, 2, 6, 64, 5);    /* die */
    topo_end(0x1F, 3);
    struct cpu_info ci;
    cpu_probe(&ci);
    REQUIRE(ci.topo.valid);
    CHECK_EQ_STR(ci.topo.source, "leaf 0x1f");
    CHECK_EQ_U64(ci.topo.smt_shift, 1);
    CHECK_EQ_U64(ci.topo.pkg_shift, 6);
    uint32_t id = (3u << 6) | (0x15u << 1) | 1;    /* package 3, core 0x15 (die 1), thread 1 */
    CHECK_EQ_U64(cpu_topo_package(&ci.topo, id), 3);
    CHECK_EQ_U64(cpu_topo_core(&ci.topo, id), 0x15);
    CHECK_EQ_U64(cpu_topo_thread(&ci.topo, id), 1);
}

/* A leaf 0xB whose subleaf 0 has no processors (not implemented, whatever the maximum leaf
 * says) or whose widths run backwards is not used: the next source is. */
TEST(cpuid_topology_broken_leaf_b_falls_back)
{
    fake_reset();
    topo_level(0xB, 0, 1, 0, 1);         /* EBX 0 */
    topo_level(0xB, 1, 4, 16, 2);
    fake_cpuid_set_bit(1, FAKE_EDX, 28, true);                      /* HTT */
    struct cpuid_regs l1 = fake_cpuid_lookup(1, 0);
    l1.ebx = (l1.ebx & ~0x00FF0000u) | (8u << 16);                  /* 8 logical */
    fake_cpuid_set(1, FAKE_CPUID_ANY, l1);
    fake_cpuid_set(4, FAKE_CPUID_ANY, (struct cpuid_regs){ (3u << 26) | 0x121, 0, 0, 0 });
    struct cpu_info ci;
    cpu_probe(&ci);
    REQUIRE(ci.topo.valid);
    CHECK_EQ_STR(ci.topo.source, "leaf 1 and 4");
    CHECK_EQ_U64(ci.topo.smt_shift, 1);      /* 8 logical / 4 cores */
    CHECK_EQ_U64(ci.topo.pkg_shift, 3);

    fake_reset();
    topo_level(0xB, 0, 2, 4, 1);
    topo_level(0xB, 1, 1, 16, 2);            /* core shift below the SMT shift */
    topo_end(0xB, 2);
    cpu_probe(&ci);
    REQUIRE(ci.topo.valid);
    CHECK_EQ_STR(ci.topo.source, "leaf 1");
    CHECK_EQ_U64(ci.topo.pkg_shift, 0);
}

/* AMD without leaf 0xB: ApicIdSize is the package's width, TOPOEXT's threads per core the
 * SMT width; ApicIdSize 0 means "use the core count". */
TEST(cpuid_topology_amd_apic_id_size)
{
    fake_reset();
    set_vendor("AuthenticAMD");
    fake_cpuid_set(0x80000008u, FAKE_CPUID_ANY, (struct cpuid_regs){ 0x3030, 0, (7u << 12) | 63, 0 });
    fake_cpuid_set_bit(0x80000001u, FAKE_ECX, 22, true);
    fake_cpuid_set(0x8000001Eu, FAKE_CPUID_ANY, (struct cpuid_regs){ 0, 1u << 8, 0, 0 });
    struct cpu_info ci;
    cpu_probe(&ci);
    REQUIRE(ci.topo.valid);
    CHECK_EQ_STR(ci.topo.source, "amd 0x80000008");
    CHECK_EQ_U64(ci.topo.smt_shift, 1);
    CHECK_EQ_U64(ci.topo.pkg_shift, 7);

    fake_cpuid_set(0x80000008u, FAKE_CPUID_ANY, (struct cpuid_regs){ 0x3030, 0, 5, 0 });
    fake_cpuid_set_bit(0x80000001u, FAKE_ECX, 22, false);
    cpu_probe(&ci);
    REQUIRE(ci.topo.valid);
    CHECK_EQ_U64(ci.topo.smt_shift, 0);
    CHECK_EQ_U64(ci.topo.pkg_shift, 3);      /* 6 cores: 3 bits */
}

/* Intel: the revision comes only from write 0, CPUID(1), read; bits 63:32. */
TEST(cpuid_microcode_intel_write_cpuid_read)
{
    fake_reset();
    fake_cpuid_set_microcode(FAKE_UCODE_INTEL, 0xb4);
    struct cpu_info ci;
    cpu_probe(&ci);
    CHECK(ci.microcode_valid);
    CHECK_EQ_U64(ci.microcode, 0xb4);
    CHECK_EQ_STR(ci.microcode_reason, NULL);
}

/* AMD: the patch level read as it is (the fake faults on a write, as a driver that wrote it
 * would be wrong). */
TEST(cpuid_microcode_amd_patch_level_read_directly)
{
    fake_reset();
    set_vendor("AuthenticAMD");
    fake_cpuid_set_microcode(FAKE_UCODE_AMD, 0x08701021);
    struct cpu_info ci;
    cpu_probe(&ci);
    CHECK(ci.microcode_valid);
    CHECK_EQ_U64(ci.microcode, 0x08701021);
    CHECK_EQ_U64(fake_stats.faults, 0);
}

/* An emulator without the MSR: a reason, no #GP; another vendor: not read at all. */
TEST(cpuid_microcode_absent_msr_is_a_reason_not_a_fault)
{
    fake_reset();
    fake_cpuid_set_microcode(FAKE_UCODE_ABSENT, 0);
    struct cpu_info ci;
    cpu_probe(&ci);
    CHECK(!ci.microcode_valid);
    CHECK_EQ_STR(ci.microcode_reason, "MSR 0x8b not readable");
    CHECK_EQ_U64(fake_stats.faults, 0);

    fake_reset();
    set_vendor("CentaurHauls");
    cpu_probe(&ci);
    CHECK(!ci.microcode_valid);
    CHECK_EQ_STR(ci.microcode_reason, "no known microcode revision MSR for this vendor");
}

/* Leaf 1 EAX for family 6 and a display model: extended model in 19:16, model in 7:4. */
static void set_family6_model(uint32_t model)
{
    struct cpuid_regs r = fake_cpuid_lookup(1, 0);
    r.eax = (model >> 4) << 16 | 6u << 8 | (model & 0xF) << 4 | 9;
    fake_cpuid_set(1, FAKE_CPUID_ANY, r);
}

static void leaf15(uint32_t den, uint32_t num, uint32_t crystal_hz)
{
    struct cpuid_regs r = fake_cpuid_lookup(0, 0);
    r.eax = 0x16;
    fake_cpuid_set(0, FAKE_CPUID_ANY, r);
    fake_cpuid_set(0x15, 0, (struct cpuid_regs){ den, num, crystal_hz, 0 });
}

/* A Kaby Lake laptop (06_8E) states the ratio, 2/216, and a crystal of 0: 24 MHz by model,
 * as Linux takes it, the TSC 2.592 GHz; the leaf is valid and says the crystal was the
 * model's. */
TEST(cpuid_leaf15_zero_crystal_skylake_kabylake_is_24mhz_by_model)
{
    static const uint32_t models[] = { 0x4E, 0x5E, 0x8E, 0x9E };
    for (unsigned i = 0; i < 4; i++) {
        fake_reset();
        set_family6_model(models[i]);
        leaf15(2, 216, 0);
        struct cpu_info ci;
        cpu_probe(&ci);
        CHECK_EQ_U64(ci.model, models[i]);
        CHECK(ci.leaf15_valid);
        CHECK(ci.leaf15_crystal_by_model);
        CHECK_EQ_U64(ci.leaf15_crystal_hz, 24000000);
        CHECK_EQ_U64(ci.leaf15_tsc_hz, 2592000000ull);
    }
}

TEST(cpuid_leaf15_zero_crystal_atom_models)
{
    struct cpu_info ci;
    fake_reset();
    set_family6_model(0x5F);                  /* Denverton: 25 MHz */
    leaf15(2, 176, 0);
    cpu_probe(&ci);
    CHECK(ci.leaf15_valid && ci.leaf15_crystal_by_model);
    CHECK_EQ_U64(ci.leaf15_tsc_hz, 2200000000ull);
    fake_reset();
    set_family6_model(0x5C);                  /* Goldmont: 19.2 MHz */
    leaf15(1, 98, 0);
    cpu_probe(&ci);
    CHECK(ci.leaf15_valid && ci.leaf15_crystal_by_model);
    CHECK_EQ_U64(ci.leaf15_tsc_hz, 1881600000ull);
}

/* A stated crystal is taken as stated; a zero crystal on a model not in the table, or on
 * another vendor, leaves the leaf invalid with the reason. */
TEST(cpuid_leaf15_zero_crystal_unknown_model_or_vendor_is_not_guessed)
{
    struct cpu_info ci;
    fake_reset();
    set_family6_model(0x8E);
    leaf15(2, 200, 25000000);
    cpu_probe(&ci);
    CHECK(ci.leaf15_valid && !ci.leaf15_crystal_by_model);
    CHECK_EQ_U64(ci.leaf15_tsc_hz, 2500000000ull);
    fake_reset();
    set_family6_model(0x55);                  /* Skylake server: crystal stated or nothing */
    leaf15(2, 200, 0);
    cpu_probe(&ci);
    CHECK(!ci.leaf15_valid && !ci.leaf15_crystal_by_model);
    CHECK_EQ_STR(ci.leaf15_reason, "crystal frequency not enumerated, and not known for this "
                                   "model");
    fake_reset();
    set_family6_model(0x8E);
    set_vendor("AuthenticAMD");
    leaf15(2, 216, 0);
    cpu_probe(&ci);
    CHECK(!ci.leaf15_valid);
}
