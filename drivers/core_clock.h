/* drivers/core_clock.h - the core's own clock over a measurement window, and the SMIs in it.
 *
 * Follows the Intel SDM, vol. 3B: 14.2 (IA32_MPERF 0xE7 counts at a fixed rate, the TSC's
 * on parts with an invariant TSC, while the core is in C0; IA32_APERF 0xE8 counts the
 * core's actual clocks then: APERF/MPERF is the busy clock as a share of the base, as
 * turbostat's Bzy_MHz), 14.1 (IA32_PERF_CTL 0x199 bits 15:0, the P-state asked for),
 * 14.4 (HWP: CPUID.6:EAX[7], enabled by IA32_PM_ENABLE 0x770 bit 0, the request in
 * IA32_HWP_REQUEST 0x774: min 7:0, max 15:8, desired 23:16, EPP 31:24), 14.3.2.2
 * (IA32_MISC_ENABLE 0x1A0 bit 38: turbo disengaged), and MSR_SMI_COUNT 0x34 (Nehalem and
 * later: SMIs since reset).
 *
 * Quirks: every MSR is read through rdmsr_safe(): an emulator (QEMU's TCG) or a hypervisor
 * that hides an MSR makes the read fault, and that is a reason, never a crash. AMD has
 * APERF/MPERF (CPUID.6:ECX[0]) but no MSR 0x34, PERF_CTL or MISC_ENABLE of Intel's layout:
 * only the clock is read there. The counters are per core and this reads the calling CPU's.
 * APERF and MPERF stop outside C0 (in HLT), so the ratio is the clock while busy; the C0
 * share (dMPERF / dTSC) says how much of the window that was. */
#ifndef TICKLAB_DRIVERS_CORE_CLOCK_H
#define TICKLAB_DRIVERS_CORE_CLOCK_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/cpuid.h"

#define MSR_IA32_MPERF       0xE7
#define MSR_IA32_APERF       0xE8
#define MSR_PLATFORM_INFO    0xCE        /* Intel: max non-turbo ratio in 15:8 */
#define MSR_IA32_PERF_CTL    0x199
#define MSR_IA32_MISC_ENABLE 0x1A0
#define   MISC_TURBO_DISABLE   (1ull << 38)
#define MSR_IA32_PM_ENABLE   0x770
#define MSR_IA32_HWP_CAPS    0x771       /* highest 7:0, guaranteed 15:8, efficient, lowest */
#define MSR_IA32_HWP_REQUEST 0x774

/* What this CPU lets be read, probed once (core_clock_probe). A reason is a sentence for the
 * records when the thing cannot be known. */
struct core_clock {
    bool aperf_mperf;             /* both counters read without a fault */
    const char *clock_reason;     /* !aperf_mperf: why */
    bool smi;                     /* MSR_SMI_COUNT reads */
    const char *smi_reason;
    bool perf_ctl;                /* IA32_PERF_CTL reads */
    bool hwp;                     /* HWP present and enabled (the request is HWP_REQUEST) */
    bool turbo_known;             /* IA32_MISC_ENABLE reads and turbo is offered (CPUID.6:
                                     EAX[1], or the disable bit set: offered, disengaged) */
    bool mperf_at_tsc_rate;       /* invariant TSC: MPERF counts at the TSC's rate */
};

/* The counters and the requested state at one moment (a window's start or end). */
struct core_clock_sample {
    uint64_t tsc, aperf, mperf, smi_count;
    uint64_t perf_ctl;            /* 0 when !perf_ctl */
    uint64_t hwp_request;         /* 0 when !hwp */
    bool turbo_on;                /* when turbo_known */
};

/* A window from two samples. */
struct core_clock_window {
    bool clock_known;             /* false: clock_reason */
    uint64_t effective_hz;        /* the busy clock: tsc_hz * dAPERF / dMPERF (0 when the
                                     core never left HLT in the window: dMPERF 0) */
    uint32_t c0_ppm;              /* dMPERF / dTSC in millionths: the share of the window in C0 */
    bool smi_known;
    uint64_t smis;                /* SMIs in the window */
};

/* Probes with rdmsr_safe (no #GP escapes). ci: the CPUID facts (drivers/cpuid.h). */
void core_clock_probe(struct core_clock *cc, const struct cpu_info *ci);
/* Reads what cc says is readable; the rest is left 0. */
void core_clock_sample(const struct core_clock *cc, struct core_clock_sample *s);
/* The window from a to b. tsc_hz: the TSC's calibrated rate (0: the clock unknown). A
 * counter that went backwards (a CPU change, a reset by firmware) makes the clock unknown. */
void core_clock_between(const struct core_clock *cc, const struct core_clock_sample *a,
                        const struct core_clock_sample *b, uint64_t tsc_hz,
                        struct core_clock_window *w);
/* The P-state asked for in a sample: PERF_CTL's ratio (bits 15:8 on Intel, times 100 MHz),
 * or HWP's min/max/desired performance levels. Returns false when none is known. */
bool core_clock_request(const struct core_clock *cc, const struct core_clock_sample *s,
                        uint32_t *ratio_or_min, uint32_t *hwp_max, uint32_t *hwp_desired);

/* Pins the core to its base (non-turbo) clock where the CPU allows, so that runs on one PC
 * compare: with HWP enabled, HWP_REQUEST min = max = desired = the guaranteed level
 * (HWP_CAPS 15:8), its EPP kept; else PERF_CTL's target ratio (15:8) = the maximum non-turbo
 * ratio (MSR_PLATFORM_INFO 15:8); and turbo disengaged (MISC_ENABLE bit 38) where turbo is
 * offered. Every access through rdmsr_safe/wrmsr_safe. Returns 0, or -ENOTSUP with *why
 * (no request register, a register that faults, a base ratio of 0). The new request takes
 * effect within the CPU's own time (microseconds); the windows' effective_hz shows it. */
int core_clock_pin_base(const struct core_clock *cc, const char **why);

#endif
