/* drivers/mca.h - the machine-check architecture (Intel SDM vol. 3B ch. 16, "Machine-Check
 * Architecture"; AMD APM vol. 2 ch. 9): the global registers and the error-reporting banks.
 *
 * A machine check is the CPU's report of a hardware error (a cache, a bus, memory). A
 * corrected one is only logged in a bank (and may be signalled by CMCI, or found by
 * polling); an uncorrected one raises #MC (vector 18) when CR4.MCE is set, and shuts the CPU
 * down when it is not. Each bank i has four MSRs at 0x400 + 4i: CTL (which errors it
 * signals), STATUS, ADDR, MISC.
 *
 * Quirks handled: MCG_CTL exists only when MCG_CAP.MCG_CTL_P says so (a #GP otherwise); Intel
 * P6 family parts before Nehalem (family 6, model < 0x1A) must not have bank 0's CTL written
 * (the BIOS owns it, and Linux skips it: mce_intel_feature_init's quirk); a bank's STATUS is
 * cleared by writing 0 (writing anything else #GPs on some parts). Banks are per CPU (or per
 * core/package: a shared bank shows the same error on every CPU that shares it). The bank
 * count is capped at MCA_MAX_BANKS (real parts have up to 32; MCG_CAP allows 255). */
#ifndef TICKLAB_DRIVERS_MCA_H
#define TICKLAB_DRIVERS_MCA_H
#include <stdbool.h>
#include <stdint.h>

#define MSR_MCG_CAP          0x179
#define   MCG_CAP_COUNT(c)     ((unsigned)((c) & 0xFF))
#define   MCG_CAP_CTL_P        (1ull << 8)    /* MCG_CTL present */
#define   MCG_CAP_CMCI_P       (1ull << 10)   /* corrected errors can interrupt (CMCI) */
#define   MCG_CAP_SER_P        (1ull << 24)   /* software error recovery */
#define MSR_MCG_STATUS       0x17A
#define   MCG_STATUS_RIPV      (1ull << 0)    /* the interrupted program can be restarted */
#define   MCG_STATUS_EIPV      (1ull << 1)    /* RIP points at the instruction in error */
#define   MCG_STATUS_MCIP      (1ull << 2)    /* a #MC is in progress: a second one shuts down */
#define MSR_MCG_CTL          0x17B
#define MSR_MC_CTL(i)        (0x400u + 4u * (i))
#define MSR_MC_STATUS(i)     (0x401u + 4u * (i))
#define   MCI_STATUS_VAL       (1ull << 63)   /* the bank holds an error */
#define   MCI_STATUS_OVER      (1ull << 62)   /* and another came before it was cleared */
#define   MCI_STATUS_UC        (1ull << 61)   /* not corrected */
#define   MCI_STATUS_EN        (1ull << 60)   /* signalled (CTL enabled it) */
#define   MCI_STATUS_MISCV     (1ull << 59)
#define   MCI_STATUS_ADDRV     (1ull << 58)
#define   MCI_STATUS_PCC       (1ull << 57)   /* the processor's context is corrupt */
#define MSR_MC_ADDR(i)       (0x402u + 4u * (i))
#define MSR_MC_MISC(i)       (0x403u + 4u * (i))

#define MCA_MAX_BANKS 32

struct mca_info {
    bool present;               /* CPUID.1:EDX MCE (bit 7) and MCA (bit 14), MCG_CAP readable */
    const char *reason;         /* why not */
    uint64_t mcg_cap;
    unsigned banks;             /* MCG_CAP's count, capped at MCA_MAX_BANKS */
    bool skip_bank0_ctl;        /* Intel family 6 before model 0x1A */
};

struct mca_bank {
    uint64_t status, addr, misc;   /* addr and misc only when ADDRV / MISCV say so, else 0 */
};

/* What the CPU offers, from CPUID leaf 1's EDX (cpuid1_edx), the vendor and family/model
 * (cpuid.h's display values) and MCG_CAP. */
void mca_probe(uint32_t cpuid1_edx, bool intel, uint32_t family, uint32_t model,
               struct mca_info *out);
/* Every bank's CTL all ones (but a bank 0 the quirk says to leave) and MCG_CTL all ones
 * where it exists: every error the banks can signal raises #MC, as Linux sets them. The
 * caller sets CR4.MCE. */
void mca_enable(const struct mca_info *m);
/* Bank i's registers: false when it holds nothing (VAL clear). */
bool mca_bank_read(unsigned i, struct mca_bank *out);
void mca_bank_clear(unsigned i);
uint64_t mca_status(void);
/* MCG_STATUS cleared (MCIP off): the #MC handler's last act before it returns. */
void mca_status_clear(void);
/* Whether an error in STATUS was corrected (VAL set, UC and PCC clear). */
static inline bool mca_corrected(uint64_t status)
{
    return (status & MCI_STATUS_VAL) && !(status & (MCI_STATUS_UC | MCI_STATUS_PCC));
}

#endif
