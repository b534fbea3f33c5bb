/* drivers/nmi_sc.h - the PC's NMI status and control register, I/O port 0x61 ("system
 * control port B" on the PC/AT; NMI_SC in Intel's ICH and PCH datasheets, the same on AMD's
 * FCH). It says why the chipset raised an NMI, when the chipset did: a PCI SERR# (bit 7) or
 * an IOCHK# from the LPC/ISA side (bit 6). Other NMIs (a BMC's, a front-panel button's, a
 * performance counter's, one sent by an IPI or by an emulator's monitor) set neither bit.
 *
 * Hazards: bits 3:0 are read-write and shared with the PIT's channel 2 gate and the speaker
 * (drivers/pit8254.c writes them once, at its start), so every write here is a
 * read-modify-write of those four bits alone; bits 7:4 are read-only status. A status bit
 * stays set, and the chipset raises no further NMI of that kind, until its enable bit is
 * written 1 (which clears and disables it) and, to take the next one, 0 again. */
#ifndef TICKLAB_DRIVERS_NMI_SC_H
#define TICKLAB_DRIVERS_NMI_SC_H
#include <stdbool.h>
#include <stdint.h>

#define NMI_SC_PORT        0x61
#define   NMI_SC_SERR_STS    (1u << 7)   /* PCI SERR# seen (read-only) */
#define   NMI_SC_IOCHK_STS   (1u << 6)   /* IOCHK# seen (read-only) */
#define   NMI_SC_IOCHK_DIS   (1u << 3)   /* 1: IOCHK# NMIs cleared and disabled */
#define   NMI_SC_SERR_DIS    (1u << 2)   /* 1: SERR# NMIs cleared and disabled */
#define   NMI_SC_RW_BITS     0x0Fu       /* the writable bits, kept on every write */

/* The register as it is now. */
uint8_t nmi_sc_read(void);
/* Clears the status of the sources set in `sts` (NMI_SC_SERR_STS, NMI_SC_IOCHK_STS) and
 * leaves them disabled: a device that keeps SERR# or IOCHK# asserted would otherwise raise an
 * NMI at every re-enable. Linux leaves SERR# disabled the same way (pci_serr_error). */
void nmi_sc_quiet(uint8_t sts);

#endif
