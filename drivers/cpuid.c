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
#define LEAF_THERMAL      0x06
#define   EAX_ARAT        (1u << 2)
#define LEAF_TSC_CRYSTAL  0x15
#define LEAF_FREQ         0x16
#define LEAF_HYPERVISOR   0x40000000u
#define LEAF_EXT_MAX      0x80000000u
#define LEAF_EXT_FEATURES 0x80000001u
#define   EDX_NX          (1u << 20)
#define   EDX_RDTSCP      (1u << 27)
#define LEAF_BRAND0       0x80000002u
#define LEAF_POWER        0x80000007u
#define   EDX_INVARIANT_TSC (1u << 8)

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
        ci->leaf15_reason = "crystal frequency not enumerated";
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

void cpu_probe(struct cpu_info *ci)
{
    memset(ci, 0, sizeof(*ci));
    probe_identity(ci);
    probe_extended(ci);
    probe_hypervisor(ci);
    probe_leaf15(ci);
    probe_leaf16(ci);
    ci->smi_count_readable = rdmsr_safe(MSR_SMI_COUNT, &ci->smi_count) == 0;
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
