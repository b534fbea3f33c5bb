/* drivers/cpuid.h - what the CPU says about itself (Intel SDM vol. 2A, CPUID; AMD APM vol. 3).
 *
 * Only the timer-relevant facts: the TSC and its invariance, RDTSCP, TSC-deadline, x2APIC,
 * ARAT (APIC timer keeps running in deep C-states), the TSC/crystal ratio (leaf 0x15) and
 * the nominal base frequency (leaf 0x16), the hypervisor leaf, whether MSR_SMI_COUNT can
 * be read, the microcode revision, and how an APIC ID splits into package, core and thread
 * (the topology leaves). Leaves 0x15/0x16 are often absent, zero or nonsense (virtual
 * machines, some firmware): each value is checked and rejected with a reason instead of
 * being trusted.
 *
 * Topology (SDM vol. 3A 9.9 "Identifying the processor topology"; AMD APM vol. 3, CPUID
 * 0x8000001E and 0x80000008): an APIC ID is [package | core | thread] bit fields; the boot
 * CPU reads the field widths once from its own CPUID and every APIC ID of the machine (the
 * MADT's) is decoded with them. Sources, first usable wins: leaf 0x1F (Intel's V2
 * extended topology: may add module, tile and die levels, folded into "core" here), leaf
 * 0xB (extended topology), AMD's 0x80000008 ECX (ApicIdSize: the package's width) with
 * 0x8000001E EBX (threads per core, with TOPOEXT), then the old leaf 1 / leaf 4 counts
 * (maximum logical processors and cores per package, rounded up to powers of two). A leaf
 * whose first level is not SMT, or whose widths run backwards, is not used.
 *
 * Microcode: MSR 0x8B. Intel (IA32_BIOS_SIGN_ID, SDM vol. 3A 10.11.7.1): write 0, run
 * CPUID(1), read: the revision is bits 63:32. AMD (MSR_AMD64_PATCH_LEVEL): the patch level
 * is bits 31:0, read directly. The MSR is probed with rdmsr_safe() first: an emulator or
 * hypervisor that lacks it gives a reason, not a #GP; under a hypervisor the value is the
 * hypervisor's, not the silicon's. */
#ifndef TICKLAB_DRIVERS_CPUID_H
#define TICKLAB_DRIVERS_CPUID_H
#include <stdbool.h>
#include <stdint.h>

#define MSR_SMI_COUNT 0x34        /* Intel, Nehalem and later: SMIs since reset */
#define MSR_BIOS_SIGN_ID 0x8B     /* Intel: microcode revision in 63:32; AMD: patch level */

/* How an APIC ID splits: thread = id & (2^smt_shift - 1), core = the bits from smt_shift up
 * to pkg_shift (die, tile and module levels included), package = id >> pkg_shift. */
struct cpu_topology {
    bool valid;
    const char *source;         /* "leaf 0x1f", "leaf 0xb", "amd 0x80000008", "leaf 1 and 4",
                                   "leaf 1" */
    const char *reason;         /* !valid: why no source could be used */
    unsigned smt_shift;         /* APIC ID bits that name the thread within a core */
    unsigned pkg_shift;         /* APIC ID bits below the package ID (>= smt_shift, <= 32) */
};

struct cpu_info {
    char vendor[13];
    char brand[49];
    uint32_t family, model, stepping;   /* display values (extended fields folded in) */
    uint32_t max_leaf, max_ext_leaf;

    bool hypervisor;                    /* CPUID.1:ECX[31] */
    char hv_signature[13];              /* leaf 0x40000000, e.g. "TCGTCGTCGTCG" */
    uint32_t kvm_leaf;                  /* the leaf that says "KVMKVMKVM": 0x40000000, or
                                           0x40000100 and up under Hyper-V enlightenments
                                           (the first signature is then "Microsoft Hv");
                                           0: not KVM */

    bool tsc, rdtscp, invariant_tsc, tsc_deadline, x2apic, apic, arat, nx;
    bool amd_wrmsr_ordered;             /* AMD/Hygon: WRMSR to TSC_DEADLINE and the x2APIC
                                           needs no MFENCE;LFENCE before it (Intel does) */
    uint32_t initial_apic_id;           /* CPUID.1:EBX[31:24] */

    /* leaf 0x15: TSC = crystal * ebx / eax */
    bool leaf15_valid;
    uint32_t leaf15_denominator, leaf15_numerator;
    uint64_t leaf15_crystal_hz;         /* 0: not enumerated nor known by model */
    bool leaf15_crystal_by_model;       /* ECX was 0: the crystal is the model's, as Linux
                                           takes it (24 MHz Skylake/Kaby Lake client, 25 MHz
                                           Denverton, 19.2 MHz Goldmont) */
    uint64_t leaf15_tsc_hz;             /* derived when the crystal is known */
    const char *leaf15_reason;          /* why not valid */

    /* leaf 0x16 (MHz, nominal) */
    bool leaf16_valid;
    uint32_t leaf16_base_mhz, leaf16_max_mhz, leaf16_bus_mhz;
    const char *leaf16_reason;

    bool smi_count_readable;
    uint64_t smi_count;                 /* at probe time */

    bool microcode_valid;
    uint32_t microcode;                 /* revision (Intel) or patch level (AMD) */
    const char *microcode_reason;       /* why not valid */

    struct cpu_topology topo;           /* of the CPU that ran cpu_probe() */
};

void cpu_probe(struct cpu_info *ci);

/* An APIC ID's package, core (within its package) and thread (within its core) as t
 * splits it. With !t->valid every ID is package 0, core id, thread 0. */
uint32_t cpu_topo_package(const struct cpu_topology *t, uint32_t apic_id);
uint32_t cpu_topo_core(const struct cpu_topology *t, uint32_t apic_id);
uint32_t cpu_topo_thread(const struct cpu_topology *t, uint32_t apic_id);
/* The hypervisor by its CPUID signature: "none" (no hypervisor bit), "kvm", "tcg" (QEMU's
 * software emulation), "hyperv", "vmware", "xen", "bhyve", "acrn", or "other". */
const char *cpu_hypervisor_name(const struct cpu_info *ci);

/* Whether the virtual machine is QEMU's: its software emulation (TCG) is, and KVM is when
 * QEMU's firmware configuration device answers with its signature (fw_cfg, port 0x510:
 * selector 0 reads "QEMU"). A cloud's own VMM over KVM (Firecracker, crosvm, cloud
 * hypervisors) is not, and gets no write to QEMU's exit port. The fw_cfg ports are read
 * only under KVM. */
bool cpu_vmm_is_qemu(const struct cpu_info *ci);
#define FW_CFG_PORT_SEL  0x510
#define FW_CFG_PORT_DATA 0x511

#endif
