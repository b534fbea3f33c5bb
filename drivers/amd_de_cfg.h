/* drivers/amd_de_cfg.h - AMD's decode configuration MSR, DE_CFG (C001_1029), bit 1: LFENCE
 * dispatch-serialising ("Software Techniques for Managing Speculation on AMD Processors",
 * AMD, 2018; the BKDGs/PPRs of families 10h-17h).
 *
 * rdtsc_ordered() (drivers/io.h) puts LFENCE before RDTSC so that the read cannot execute
 * before the instructions ahead of it: every calibration bracket and every split of an
 * interrupt's entry and EOI leans on it. Intel's LFENCE always waits so (SDM vol. 2,
 * LFENCE). AMD's does on families 0Fh and 11h, and on 19h and later the bit is set and
 * fixed; on 10h, 12h, 14h, 15h, 16h and 17h (and Hygon's 18h) only when firmware or the OS
 * sets DE_CFG[1], which Linux (init_amd) and Xen do at boot on every CPU. Under a hypervisor
 * the MSR may be absent (a #GP: QEMU's TCG) or its writes ignored, so the bit is read back.
 * Per CPU: each one sets its own. */
#ifndef TICKLAB_DRIVERS_AMD_DE_CFG_H
#define TICKLAB_DRIVERS_AMD_DE_CFG_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/cpuid.h"

#define MSR_AMD_DE_CFG              0xC0011029u
#define   DE_CFG_LFENCE_SERIALISE   (1ull << 1)

enum lfence_state {
    LFENCE_ALWAYS,          /* not a part that needs the bit (Intel, AMD 0Fh/11h) */
    LFENCE_ALREADY,         /* the bit was set (firmware, or fixed on 19h and later) */
    LFENCE_SET,             /* set here, and it reads back set */
    LFENCE_UNREADABLE,      /* the MSR is not there: serialisation unknown */
    LFENCE_NOT_TAKEN,       /* the write failed or did not stick: not serialising */
};

struct lfence_fix {
    enum lfence_state state;
    bool applies;           /* an AMD/Hygon family that has the bit */
    bool serialising;       /* LFENCE waits for every instruction before it (known) */
    bool known;             /* ... and that is known (false: LFENCE_UNREADABLE) */
    uint64_t before, after; /* DE_CFG, where it was read */
    const char *reason;     /* the state in a sentence */
};

/* Sets DE_CFG[1] where this CPU needs it (vendor and family from ci) and says what came of
 * it. Runs on the CPU it is for. */
void lfence_make_serialising(const struct cpu_info *ci, struct lfence_fix *out);

#endif
