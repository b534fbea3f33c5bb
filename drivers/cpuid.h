/* drivers/cpuid.h - what the CPU says about itself (Intel SDM vol. 2A, CPUID; AMD APM vol. 3).
 *
 * Only the timer-relevant facts: the TSC and its invariance, RDTSCP, TSC-deadline, x2APIC,
 * ARAT (APIC timer keeps running in deep C-states), the TSC/crystal ratio (leaf 0x15) and
 * the nominal base frequency (leaf 0x16), the hypervisor leaf, and whether MSR_SMI_COUNT can
 * be read. Leaves 0x15/0x16 are often absent, zero or nonsense (virtual machines, some
 * firmware): each value is checked and rejected with a reason instead of being trusted. */
#ifndef TICKLAB_DRIVERS_CPUID_H
#define TICKLAB_DRIVERS_CPUID_H
#include <stdbool.h>
#include <stdint.h>

#define MSR_SMI_COUNT 0x34        /* Intel, Nehalem and later: SMIs since reset */

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
    uint64_t leaf15_crystal_hz;         /* 0: not enumerated */
    uint64_t leaf15_tsc_hz;             /* derived when the crystal is known */
    const char *leaf15_reason;          /* why not valid */

    /* leaf 0x16 (MHz, nominal) */
    bool leaf16_valid;
    uint32_t leaf16_base_mhz, leaf16_max_mhz, leaf16_bus_mhz;
    const char *leaf16_reason;

    bool smi_count_readable;
    uint64_t smi_count;                 /* at probe time */
};

void cpu_probe(struct cpu_info *ci);
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
