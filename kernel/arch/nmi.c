/* kernel/arch/nmi.c - see nmi.h. */
#include "kernel/arch/nmi.h"

#include "ticklab/io.h"
#include "ticklab/nmi_sc.h"
#include "kernel/arch/machine_events.h"

void nmi_handle(struct trap_frame *tf)
{
    (void)tf;
    uint64_t t0 = rdtsc();
    unsigned cpu = machine_events_cpu();
    struct window_counts *c = &machine_events[cpu];
    if (cpu == 0) {
        /* The chipset's reason, if it is the chipset's: SERR# and IOCHK# stay latched (and
         * raise no further NMI) until cleared, so a device holding one is quieted here. */
        uint8_t sc = nmi_sc_read();
        uint8_t sts = sc & (NMI_SC_SERR_STS | NMI_SC_IOCHK_STS);
        if (sc != 0xFF && sts) {        /* 0xFF: no register there (an empty bus) */
            c->nmi_serr += (sts & NMI_SC_SERR_STS) != 0;
            c->nmi_iochk += (sts & NMI_SC_IOCHK_STS) != 0;
            nmi_sc_quiet(sts);
        }
    }
    c->nmi++;
    c->nmi_cyc += rdtsc() - t0;
    machine_events_seq++;
}
