/* drivers/amd_fch_wdt.h - the watchdog timer of AMD's integrated fusion controller hub (the
 * "embedded FCH" of family 17h and later: the SMBus function 1022:790b at revision 0x51 or
 * later), as Linux's sp5100_tco driver reaches it (AMD publications 51192 and 52740 describe
 * the older SB800 and Bolton parts; the PPRs of family 17h its later form).
 *
 * The power-management registers are read through the index/data pair at ports 0xCD6/0xCD7:
 * DECODEEN (0x00) bit 7 turns on the watchdog's MMIO decoding (and, on family 17h, the timer
 * itself), DECODEEN3 (0x03) bits 3:2 disable the watchdog, ISACONTROL (0x04) bit 1 maps the
 * ACPI MMIO block (the watchdog then also at 0xFED80B00). The watchdog's control register (+0)
 * has the run/stop bit (0), fired (1), the action (2: 1 = power off, 0 = reset), disabled (3)
 * and trigger (7: write 1 to reload); its count is at +4.
 *
 * Hazards: recent parts may turn the 0xCD6/0xCD7 pair off (reads all ones, writes dropped):
 * the watchdog is then reported as not reachable, never guessed at. Nothing is mapped
 * unless the PM registers say it is decoded. */
#ifndef TICKLAB_DRIVERS_AMD_FCH_WDT_H
#define TICKLAB_DRIVERS_AMD_FCH_WDT_H
#include <stdbool.h>
#include <stdint.h>

#define FCH_PM_INDEX          0xCD6
#define FCH_PM_DATA           0xCD7
#define FCH_PM_DECODEEN       0x00
#define   FCH_DECODEEN_WDT      (1u << 7)
#define FCH_PM_DECODEEN3      0x03
#define   FCH_WDT_DISABLE_BITS  0x0Cu
#define FCH_PM_ISACONTROL     0x04
#define   FCH_ISACONTROL_MMIOEN (1u << 1)
#define FCH_WDT_ADDR          0xFEB00000ull
#define FCH_WDT_ALT_ADDR      0xFED80B00ull
#define FCH_WDT_BYTES         8
#define FCH_WDT_CONTROL       0x00
#define   FCH_WDT_RUN           (1u << 0)
#define   FCH_WDT_FIRED         (1u << 1)
#define   FCH_WDT_POWER_OFF     (1u << 2)
#define   FCH_WDT_DISABLED      (1u << 3)
#define   FCH_WDT_TRIGGER       (1u << 7)
#define FCH_WDT_COUNT         0x04
#define FCH_SMBUS_VENDOR      0x1022
#define FCH_SMBUS_DEVICE      0x790B
#define FCH_SMBUS_MIN_REV     0x51

struct fch_wdt_where {
    bool pm_reachable;          /* the PM index pair answered */
    bool decoded;               /* DECODEEN bit 7 */
    bool disabled_in_pm;        /* DECODEEN3 bits 3:2 */
    uint64_t addr;              /* where the control register is, 0: nowhere decoded */
};

/* Where the watchdog is (PM registers only, nothing mapped). */
void fch_wdt_locate(struct fch_wdt_where *out);
/* The control register at the mapped regs. */
uint32_t fch_wdt_control(uintptr_t regs);
/* Run/stop cleared and read back: 0, or -EIO when it still runs. */
int fch_wdt_stop(uintptr_t regs);
/* Trigger: reloads the count. */
void fch_wdt_reload(uintptr_t regs);

#endif
