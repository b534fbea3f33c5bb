/* drivers/cpuid.c - see cpuid.h. */
#include "ticklab/cpuid.h"

#include "ticklab/io.h"
#include "ticklab/kstring.h"

#define LEAF_BASIC        0x00
#define LEAF_FEATURES     0x01
#define   ECX_X2APIC      (1u << 21)
#define   ECX_TSC_DEADLINE (1u << 24)
#define   ECX_HYPERVISOR  (1u << 31)
#define   EDX_TSC         (1u << 4)
#define   EDX_APIC        (1u << 9)
#define   EDX_HTT         (1u << 28)   /* EBX[23:16] is the package's logical processor count */
#define LEAF_CACHE_PARAMS 0x04         /* EAX[31:26]: cores per package - 1 */
#define LEAF_TOPOLOGY     0x0B
#define LEAF_TOPOLOGY_V2  0x1F
#define   TOPO_LEVEL_SMT  1            /* ECX[15:8] of subleaf 0 */
#define   TOPO_MAX_LEVELS 8            /* SMT, core, module, tile, die, and room */
#define LEAF_THERMAL      0x06
#define   EAX_ARAT        (1u << 2)
#define LEAF_TSC_CRYSTAL  0x15
#define LEAF_FREQ         0x16
#define LEAF_HYPERVISOR   0x40000000u
#define LEAF_EXT_MAX      0x80000000u
#define LEAF_EXT_FEATURES 0x80000001u
#define   ECX_TOPOEXT     (1u << 22)   /* AMD: leaf 0x8000001E */
#define   EDX_NX          (1u << 20)
#define   EDX_RDTSCP      (1u << 27)
#define LEAF_BRAND0       0x80000002u
#define LEAF_POWER        0x80000007u
#define   EDX_INVARIANT_TSC (1u << 8)
#define LEAF_AMD_SIZES    0x80000008u  /* ECX[15:12] ApicIdSize, ECX[7:0] cores - 1 */
#define LEAF_AMD_TOPO     0x8000001Eu  /* EBX[15:8] threads per core - 1 */

/* Plausibility bounds: a crystal between 1 MHz and 1 GHz, a TSC between 100 MHz and
 * 10 GHz. Outside them the leaf is reporting nonsense, not a real clock. */
#define CRYSTAL_MIN_HZ 1000000ull
#define CRYSTAL_MAX_HZ 1000000000ull
#define TSC_MIN_HZ     100000000ull
#define TSC_MAX_HZ     10000000000ull

static void regs_to_str(char *dst, const uint32_t *regs, unsigned n)
{
    memcpy(dst, regs, n * 4);
    dst[n * 4] = 0;
}

static void probe_identity(struct cpu_info *ci)
{
    struct cpuid_regs r = cpuid(LEAF_BASIC, 0);
    uint32_t v[3] = { r.ebx, r.edx, r.ecx };
    ci->max_leaf = r.eax;
    regs_to_str(ci->vendor, v, 3);

    r = cpuid(LEAF_FEATURES, 0);
    uint32_t base_family = (r.eax >> 8) & 0xF, base_model = (r.eax >> 4) & 0xF;
    ci->stepping = r.eax & 0xF;
    ci->family = base_family == 0xF ? base_family + ((r.eax >> 20) & 0xFF) : base_family;
    ci->model = (base_family == 0x6 || base_family == 0xF)
                    ? base_model + (((r.eax >> 16) & 0xF) << 4) : base_model;
    ci->initial_apic_id = r.ebx >> 24;
    ci->tsc = r.edx & EDX_TSC;
    ci->apic = r.edx & EDX_APIC;
    ci->x2apic = r.ecx & ECX_X2APIC;
    ci->tsc_deadline = r.ecx & ECX_TSC_DEADLINE;
    ci->hypervisor = r.ecx & ECX_HYPERVISOR;
    if (ci->max_leaf >= LEAF_THERMAL)
        ci->arat = cpuid(LEAF_THERMAL, 0).eax & EAX_ARAT;
    /* AMD (and Hygon) order WRMSR to the x2APIC and TSC_DEADLINE MSRs by themselves; Intel
     * needs MFENCE;LFENCE before them (Linux: X86_FEATURE_APIC_MSRS_FENCE). */
    ci->amd_wrmsr_ordered = !k_strcmp(ci->vendor, "AuthenticAMD") ||
                            !k_strcmp(ci->vendor, "HygonGenuine");
}

static void probe_extended(struct cpu_info *ci)
{
    ci->max_ext_leaf = cpuid(LEAF_EXT_MAX, 0).eax;
    if (ci->max_ext_leaf < LEAF_EXT_FEATURES || ci->max_ext_leaf > LEAF_EXT_MAX + 0xFF)
        return;
    struct cpuid_regs r = cpuid(LEAF_EXT_FEATURES, 0);
    ci->nx = r.edx & EDX_NX;
    ci->rdtscp = r.edx & EDX_RDTSCP;
    if (ci->max_ext_leaf >= LEAF_POWER)
        ci->invariant_tsc = cpuid(LEAF_POWER, 0).edx & EDX_INVARIANT_TSC;
    if (ci->max_ext_leaf >= LEAF_BRAND0 + 2) {
        uint32_t b[12];
        for (unsigned i = 0; i < 3; i++) {
            r = cpuid(LEAF_BRAND0 + i, 0);
            b[i * 4] = r.eax; b[i * 4 + 1] = r.ebx; b[i * 4 + 2] = r.ecx; b[i * 4 + 3] = r.edx;
        }
        regs_to_str(ci->brand, b, 12);
    }
}

static void probe_hypervisor(struct cpu_info *ci)
{
    if (!ci->hypervisor)
        return;
    struct cpuid_regs r = cpuid(LEAF_HYPERVISOR, 0);
    uint32_t v[3] = { r.ebx, r.ecx, r.edx };
    regs_to_str(ci->hv_signature, v, 3);
    /* KVM may sit behind another's leaves (Hyper-V enlightenments): its own are at the
     * first 0x100 step that says so, up to 0x4000FF00 (as Linux's kvm_cpuid_base looks). */
    for (uint32_t leaf = LEAF_HYPERVISOR; leaf < LEAF_HYPERVISOR + 0x10000; leaf += 0x100) {
        r = cpuid(leaf, 0);
        char sig[13];
        uint32_t w[3] = { r.ebx, r.ecx, r.edx };
        regs_to_str(sig, w, 3);
        if (k_strncmp(sig, "KVMKVMKVM", 9) == 0) {
            ci->kvm_leaf = leaf;
            break;
        }
    }
}

/* Parts that state leaf 0x15's ratio but not the crystal: its rate by model, as Linux's
 * native_calibrate_tsc() (arch/x86/kernel/tsc.c) takes it. Intel family 6 only. */
static uint32_t crystal_of_model(const struct cpu_info *ci)
{
    static const struct { uint32_t model, hz; } known[] = {
        { 0x4E, 24000000 }, { 0x5E, 24000000 },     /* Skylake client (mobile, desktop) */
        { 0x8E, 24000000 }, { 0x9E, 24000000 },     /* Kaby Lake, Coffee Lake client */
        { 0x5F, 25000000 },                         /* Atom Goldmont-D (Denverton) */
        { 0x5C, 19200000 },                         /* Atom Goldmont (Apollo Lake) */
    };
    if (ci->family != 6 || k_strcmp(ci->vendor, "GenuineIntel") != 0)
        return 0;
    for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (known[i].model == ci->model)
            return known[i].hz;
    return 0;
}

static void probe_leaf15(struct cpu_info *ci)
{
    if (ci->max_leaf < LEAF_TSC_CRYSTAL) {
        ci->leaf15_reason = "leaf 0x15 not enumerated";
        return;
    }
    struct cpuid_regs r = cpuid(LEAF_TSC_CRYSTAL, 0);
    ci->leaf15_denominator = r.eax;
    ci->leaf15_numerator = r.ebx;
    ci->leaf15_crystal_hz = r.ecx;
    if (r.eax == 0 || r.ebx == 0) {
        ci->leaf15_reason = "TSC/crystal ratio is zero";
        return;
    }
    if (r.ecx == 0) {
        r.ecx = crystal_of_model(ci);
        ci->leaf15_crystal_hz = r.ecx;
        ci->leaf15_crystal_by_model = r.ecx != 0;
    }
    if (r.ecx == 0) {
        ci->leaf15_reason = "crystal frequency not enumerated, and not known for this model";
        return;
    }
    if (r.ecx < CRYSTAL_MIN_HZ || r.ecx > CRYSTAL_MAX_HZ) {
        ci->leaf15_reason = "crystal frequency outside 1 MHz..1 GHz";
        return;
    }
    uint64_t tsc_hz = (uint64_t)r.ecx * r.ebx / r.eax;
    if (tsc_hz < TSC_MIN_HZ || tsc_hz > TSC_MAX_HZ) {
        ci->leaf15_reason = "derived TSC frequency outside 100 MHz..10 GHz";
        return;
    }
    ci->leaf15_tsc_hz = tsc_hz;
    ci->leaf15_valid = true;
}

static void probe_leaf16(struct cpu_info *ci)
{
    if (ci->max_leaf < LEAF_FREQ) {
        ci->leaf16_reason = "leaf 0x16 not enumerated";
        return;
    }
    struct cpuid_regs r = cpuid(LEAF_FREQ, 0);
    ci->leaf16_base_mhz = r.eax & 0xFFFF;
    ci->leaf16_max_mhz = r.ebx & 0xFFFF;
    ci->leaf16_bus_mhz = r.ecx & 0xFFFF;
    if (ci->leaf16_base_mhz == 0) {
        ci->leaf16_reason = "base frequency is zero";
        return;
    }
    if (ci->leaf16_base_mhz < TSC_MIN_HZ / 1000000 || ci->leaf16_base_mhz > TSC_MAX_HZ / 1000000) {
        ci->leaf16_reason = "base frequency outside 100..10000 MHz";
        return;
    }
    ci->leaf16_valid = true;
}

/* ---- microcode ---------------------------------------------------------------------------- */

static bool vendor_is(const struct cpu_info *ci, const char *v)
{
    return k_strcmp(ci->vendor, v) == 0;
}

static bool vendor_amd(const struct cpu_info *ci)
{
    return vendor_is(ci, "AuthenticAMD") || vendor_is(ci, "HygonGenuine");
}

static void probe_microcode(struct cpu_info *ci)
{
    uint64_t v;
    bool intel = vendor_is(ci, "GenuineIntel");
    if (!intel && !vendor_amd(ci)) {
        ci->microcode_reason = "no known microcode revision MSR for this vendor";
        return;
    }
    if (rdmsr_safe(MSR_BIOS_SIGN_ID, &v) != 0) {
        ci->microcode_reason = "MSR 0x8b not readable";
        return;
    }
    if (intel) {
        /* The revision is loaded into the MSR by CPUID(1) after a write of 0 (SDM 10.11.7.1):
         * a value read without it may be stale or the write's. */
        wrmsr(MSR_BIOS_SIGN_ID, 0);
        (void)cpuid(LEAF_FEATURES, 0);
        if (rdmsr_safe(MSR_BIOS_SIGN_ID, &v) != 0) {
            ci->microcode_reason = "MSR 0x8b not readable after CPUID(1)";
            return;
        }
        v >>= 32;
    }
    ci->microcode = (uint32_t)v;
    ci->microcode_valid = true;
}

/* ---- topology ----------------------------------------------------------------------------- */

static unsigned ceil_log2(uint32_t n)
{
    unsigned s = 0;
    while (s < 32 && (1ull << s) < n)
        s++;
    return s;
}

/* Leaf 0xB or 0x1F: subleaf 0 must be the SMT level with processors in it (else the leaf is
 * not implemented, whatever the maximum leaf says); each level's EAX[4:0] is the shift to the
 * next level's ID, the last valid level's is the package's. */
static bool topo_from_leaf(const struct cpu_info *ci, uint32_t leaf, struct cpu_topology *t)
{
    if (ci->max_leaf < leaf)
        return false;
    struct cpuid_regs r = cpuid(leaf, 0);
    if ((r.ebx & 0xFFFF) == 0 || ((r.ecx >> 8) & 0xFF) != TOPO_LEVEL_SMT)
        return false;
    unsigned smt = r.eax & 0x1F, pkg = smt;
    for (uint32_t sub = 1; sub < TOPO_MAX_LEVELS; sub++) {
        r = cpuid(leaf, sub);
        if (((r.ecx >> 8) & 0xFF) == 0)
            break;
        if ((r.eax & 0x1F) < pkg)
            return false;                   /* widths that run backwards: not a topology */
        pkg = r.eax & 0x1F;
    }
    t->smt_shift = smt;
    t->pkg_shift = pkg;
    t->source = leaf == LEAF_TOPOLOGY_V2 ? "leaf 0x1f" : "leaf 0xb";
    return true;
}

/* AMD before leaf 0xB (family 0x10..0x16, Zen without it): ApicIdSize is the package's
 * width (0: derive it from the core count); threads per core from TOPOEXT's leaf. */
static bool topo_from_amd(const struct cpu_info *ci, struct cpu_topology *t)
{
    if (!vendor_amd(ci) || ci->max_ext_leaf < LEAF_AMD_SIZES ||
        ci->max_ext_leaf > LEAF_EXT_MAX + 0xFF)
        return false;
    uint32_t ecx = cpuid(LEAF_AMD_SIZES, 0).ecx;
    unsigned pkg = (ecx >> 12) & 0xF;
    if (pkg == 0)
        pkg = ceil_log2((ecx & 0xFF) + 1);
    unsigned smt = 0;
    if ((cpuid(LEAF_EXT_FEATURES, 0).ecx & ECX_TOPOEXT) && ci->max_ext_leaf >= LEAF_AMD_TOPO)
        smt = ceil_log2(((cpuid(LEAF_AMD_TOPO, 0).ebx >> 8) & 0xFF) + 1);
    if (smt > pkg)
        return false;
    t->smt_shift = smt;
    t->pkg_shift = pkg;
    t->source = "amd 0x80000008";
    return true;
}

/* The old way: leaf 1 EBX[23:16] logical processors per package (with HTT), leaf 4
 * EAX[31:26] + 1 cores per package; each rounded up to a power of two. */
static void topo_from_counts(const struct cpu_info *ci, struct cpu_topology *t)
{
    struct cpuid_regs r = cpuid(LEAF_FEATURES, 0);
    uint32_t logical = (r.edx & EDX_HTT) ? (r.ebx >> 16) & 0xFF : 1;
    if (logical == 0)
        logical = 1;
    uint32_t cores = 1;
    t->source = "leaf 1";
    uint32_t l4 = ci->max_leaf >= LEAF_CACHE_PARAMS ? cpuid(LEAF_CACHE_PARAMS, 0).eax : 0;
    if (vendor_is(ci, "GenuineIntel") && (l4 & 0x1F) != 0) {   /* a cache described */
        cores = (l4 >> 26) + 1;
        t->source = "leaf 1 and 4";
    }
    if (cores > logical)
        cores = logical;
    t->pkg_shift = ceil_log2(logical);
    t->smt_shift = ceil_log2(logical / cores);
}

static void probe_topology(struct cpu_info *ci)
{
    struct cpu_topology *t = &ci->topo;
    if (!topo_from_leaf(ci, LEAF_TOPOLOGY_V2, t) && !topo_from_leaf(ci, LEAF_TOPOLOGY, t) &&
        !topo_from_amd(ci, t))
        topo_from_counts(ci, t);
    if (t->pkg_shift > 32 || t->smt_shift > t->pkg_shift) {
        *t = (struct cpu_topology){ .reason = "topology leaves give impossible widths" };
        return;
    }
    t->valid = true;
}

uint32_t cpu_topo_package(const struct cpu_topology *t, uint32_t apic_id)
{
    if (!t->valid || t->pkg_shift >= 32)
        return 0;
    return apic_id >> t->pkg_shift;
}

uint32_t cpu_topo_core(const struct cpu_topology *t, uint32_t apic_id)
{
    if (!t->valid)
        return apic_id;
    uint64_t below_pkg = apic_id & ((1ull << t->pkg_shift) - 1);
    return (uint32_t)(below_pkg >> t->smt_shift);
}

uint32_t cpu_topo_thread(const struct cpu_topology *t, uint32_t apic_id)
{
    if (!t->valid)
        return 0;
    return apic_id & (uint32_t)((1ull << t->smt_shift) - 1);
}

void cpu_probe(struct cpu_info *ci)
{
    memset(ci, 0, sizeof(*ci));
    probe_identity(ci);
    probe_extended(ci);
    probe_hypervisor(ci);
    probe_leaf15(ci);
    probe_leaf16(ci);
    ci->smi_count_readable = rdmsr_safe(MSR_SMI_COUNT, &ci->smi_count) == 0;
    probe_microcode(ci);
    probe_topology(ci);
}

const char *cpu_hypervisor_name(const struct cpu_info *ci)
{
    static const struct {
        const char *sig, *name;
    } known[] = {
        { "KVMKVMKVM", "kvm" },   { "TCGTCGTCGTCG", "tcg" }, { "Microsoft Hv", "hyperv" },
        { "VMwareVMware", "vmware" }, { "XenVMMXenVMM", "xen" }, { "bhyve bhyve ", "bhyve" },
        { "ACRNACRNACRN", "acrn" },
    };
    if (!ci->hypervisor)
        return "none";
    for (unsigned i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (k_strncmp(ci->hv_signature, known[i].sig, k_strlen(known[i].sig)) == 0)
            return known[i].name;
    return "other";
}

bool cpu_vmm_is_qemu(const struct cpu_info *ci)
{
    if (!ci->hypervisor)
        return false;
    if (k_strcmp(ci->hv_signature, "TCGTCGTCGTCG") == 0)
        return true;
    if (!ci->kvm_leaf)
        return false;
    outw(FW_CFG_PORT_SEL, 0);                      /* FW_CFG_SIGNATURE */
    char sig[4];
    for (unsigned i = 0; i < 4; i++)
        sig[i] = (char)inb(FW_CFG_PORT_DATA);
    return sig[0] == 'Q' && sig[1] == 'E' && sig[2] == 'M' && sig[3] == 'U';
}
