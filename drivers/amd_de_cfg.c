/* drivers/amd_de_cfg.c - see amd_de_cfg.h. */
#include "ticklab/amd_de_cfg.h"

#include "ticklab/io.h"
#include "ticklab/kstring.h"

static bool amd_like(const struct cpu_info *ci)
{
    return k_strcmp(ci->vendor, "AuthenticAMD") == 0 || k_strcmp(ci->vendor, "HygonGenuine") == 0;
}

static void done(struct lfence_fix *f, enum lfence_state s, bool serialising, const char *why)
{
    f->state = s;
    f->serialising = serialising;
    f->known = s != LFENCE_UNREADABLE;
    f->reason = why;
}

void lfence_make_serialising(const struct cpu_info *ci, struct lfence_fix *out)
{
    *out = (struct lfence_fix){ 0 };
    if (!amd_like(ci)) {
        done(out, LFENCE_ALWAYS, true, "not an AMD or Hygon CPU: LFENCE is dispatch-"
                                       "serialising as it is");
        return;
    }
    if (ci->family < 0x10 || ci->family == 0x11) {
        done(out, LFENCE_ALWAYS, true, "AMD family 0Fh or 11h: LFENCE is dispatch-"
                                       "serialising as it is");
        return;
    }
    out->applies = true;
    if (rdmsr_safe(MSR_AMD_DE_CFG, &out->before)) {
        done(out, LFENCE_UNREADABLE, false, "DE_CFG (MSR C001_1029) not readable (a "
                                            "hypervisor that does not offer it): whether "
                                            "LFENCE serialises is not known");
        return;
    }
    out->after = out->before;
    if (out->before & DE_CFG_LFENCE_SERIALISE) {
        done(out, LFENCE_ALREADY, true, "DE_CFG[1] was set already (by firmware, or fixed "
                                        "on family 19h and later)");
        return;
    }
    if (wrmsr_safe(MSR_AMD_DE_CFG, out->before | DE_CFG_LFENCE_SERIALISE) ||
        rdmsr_safe(MSR_AMD_DE_CFG, &out->after) || !(out->after & DE_CFG_LFENCE_SERIALISE)) {
        done(out, LFENCE_NOT_TAKEN, false, "DE_CFG[1] could not be set (the write faulted "
                                           "or did not stick): LFENCE does not serialise, "
                                           "and ordered TSC reads may run early");
        return;
    }
    done(out, LFENCE_SET, true, "DE_CFG[1] set: LFENCE is dispatch-serialising");
}
