/* drivers/tco.h - Intel's TCO watchdog timer (ICH6-ICH10 and the 5-9 series PCHs: I/O at the
 * ACPI base + 0x60; 100-series PCHs and later: I/O at the SMBus function's TCOBASE), as the
 * datasheets' "TCO I/O Registers" describe it (ICH9 datasheet 13.9; the later PCHs keep the
 * offsets used here).
 *
 * Firmware may leave it running (a server's "OS watchdog" option, some desktops' recovery
 * features): it counts TCO_TMR ticks of about 0.6 s down, raises an NMI or SMI at the first
 * timeout and resets the PC at the second unless NO_REBOOT is set (ICH/PCH 5-9 series: the
 * GCS register of the root complex block, RCBA + 0x3410 bit 5; later parts keep it in the
 * PMC, which this file does not reach). tco_stop() sets TCO_TMR_HLT and reads it back, as
 * Linux's iTCO_wdt does; where the halt does not take (a locked part), the caller feeds it
 * with tco_reload() after tco_set_ticks(TCO_TICKS_MAX), the longest it allows (10 bits of
 * 0.6 s ticks: 613 s, twice over before a reset).
 *
 * Hazards: the registers are 16 bits wide and written whole (8-bit writes to TCO1_CNT are
 * not defined on every part); TCO1_CNT's other bits (TCO_LOCK, NMI2SMI_EN, NMI_NOW) are kept
 * as found. An absent block reads all ones. */
#ifndef TICKLAB_DRIVERS_TCO_H
#define TICKLAB_DRIVERS_TCO_H
#include <stdbool.h>
#include <stdint.h>

#define TCO_RLD        0x00     /* any write reloads the timer from TCO_TMR */
#define TCO1_STS       0x04
#define   TCO1_STS_TIMEOUT    (1u << 3)    /* the first timeout came (write 1 to clear) */
#define TCO2_STS       0x06
#define   TCO2_STS_SECOND_TO  (1u << 1)    /* the second timeout came: a reset followed */
#define   TCO2_STS_BOOT       (1u << 2)    /* ... and the boot after it did not clear it */
#define TCO1_CNT       0x08
#define   TCO1_CNT_TMR_HLT    (1u << 11)   /* 1: the timer is halted */
#define   TCO1_CNT_LOCK       (1u << 12)   /* TCO_EN locked (SMI side; the halt is not) */
#define TCO_TMR        0x12
#define   TCO_TMR_MASK        0x3FFu       /* ticks of about 0.6 s (ICH6 and later) */
#define TCO_TICKS_MAX  TCO_TMR_MASK
#define TCO_TICK_MS    600u
#define TCO_IO_BYTES   0x20

/* The chipset's NO_REBOOT bit, where it is in the GCS register (ICH6-ICH10, 5-9 series). */
#define ICH_GCS_OFFSET        0x3410   /* from RCBA */
#define   ICH_GCS_NO_REBOOT   (1u << 5)

struct tco {
    uint16_t base;              /* I/O base of the TCO block */
    bool present;
    bool running;               /* TCO_TMR_HLT clear when probed */
    uint16_t ticks;             /* TCO_TMR when probed */
    uint16_t sts1, sts2;        /* the status registers when probed */
};

/* Reads the block at I/O base: -ENODEV when it reads all ones or a timer value of zero. */
int tco_probe(struct tco *t, uint16_t base);
/* TCO_TMR_HLT set and read back: 0, or -EIO when the timer still runs. */
int tco_stop(struct tco *t);
/* Clears the halt: the timer runs from TCO_TMR (the test aid that imitates firmware). */
void tco_start(struct tco *t);
void tco_set_ticks(struct tco *t, uint16_t ticks);
void tco_reload(struct tco *t);
/* Clears the timeout status bits (write 1 to clear), so that the next boot does not read
 * this one's as a watchdog reset. */
void tco_clear_status(struct tco *t);
/* NO_REBOOT in the GCS register at gcs (a mapped RCBA + ICH_GCS_OFFSET): set (on) or clear,
 * read back: 0, or -EIO when it does not take (a strap or a lock holds it). */
int ich_gcs_no_reboot(uintptr_t gcs, bool on);

#endif
