/* drivers/mca.c - see mca.h. */
#include "ticklab/mca.h"

#include "ticklab/io.h"

#define CPUID1_EDX_MCE (1u << 7)
#define CPUID1_EDX_MCA (1u << 14)

void mca_probe(uint32_t cpuid1_edx, bool intel, uint32_t family, uint32_t model,
               struct mca_info *out)
{
    *out = (struct mca_info){ 0 };
    if ((cpuid1_edx & (CPUID1_EDX_MCE | CPUID1_EDX_MCA)) != (CPUID1_EDX_MCE | CPUID1_EDX_MCA)) {
        out->reason = "CPUID says no machine-check architecture (MCE and MCA)";
        return;
    }
    if (rdmsr_safe(MSR_MCG_CAP, &out->mcg_cap)) {
        out->reason = "MCG_CAP not readable";
        return;
    }
    out->banks = MCG_CAP_COUNT(out->mcg_cap);
    if (out->banks > MCA_MAX_BANKS)
        out->banks = MCA_MAX_BANKS;
    out->skip_bank0_ctl = intel && family == 6 && model < 0x1A;
    out->present = true;
}

void mca_enable(const struct mca_info *m)
{
    if (!m->present)
        return;
    if (m->mcg_cap & MCG_CAP_CTL_P)
        wrmsr(MSR_MCG_CTL, ~0ull);
    for (unsigned i = 0; i < m->banks; i++)
        if (i || !m->skip_bank0_ctl)
            wrmsr(MSR_MC_CTL(i), ~0ull);
}

bool mca_bank_read(unsigned i, struct mca_bank *out)
{
    *out = (struct mca_bank){ .status = rdmsr(MSR_MC_STATUS(i)) };
    if (!(out->status & MCI_STATUS_VAL))
        return false;
    if (out->status & MCI_STATUS_ADDRV)
        out->addr = rdmsr(MSR_MC_ADDR(i));
    if (out->status & MCI_STATUS_MISCV)
        out->misc = rdmsr(MSR_MC_MISC(i));
    return true;
}

void mca_bank_clear(unsigned i)
{
    wrmsr(MSR_MC_STATUS(i), 0);
}

uint64_t mca_status(void)
{
    return rdmsr(MSR_MCG_STATUS);
}

void mca_status_clear(void)
{
    wrmsr(MSR_MCG_STATUS, 0);
}
