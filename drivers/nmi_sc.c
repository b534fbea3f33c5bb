/* drivers/nmi_sc.c - see nmi_sc.h. */
#include "ticklab/nmi_sc.h"

#include "ticklab/io.h"

uint8_t nmi_sc_read(void)
{
    return inb(NMI_SC_PORT);
}

void nmi_sc_quiet(uint8_t sts)
{
    uint8_t keep = inb(NMI_SC_PORT) & NMI_SC_RW_BITS;
    if (sts & NMI_SC_SERR_STS)
        keep |= NMI_SC_SERR_DIS;
    if (sts & NMI_SC_IOCHK_STS)
        keep |= NMI_SC_IOCHK_DIS;
    outb(NMI_SC_PORT, keep);
}
