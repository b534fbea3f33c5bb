/* kernel/timers/ce_devices.h - the kernel's clock event devices. The devices themselves are
 * the library's (the PIT's, each CPU's LAPIC timer and TSC-deadline, the HPET comparators,
 * the RTC's periodic interrupt); what lives here is the kernel's part: routing each one's
 * interrupt through kernel/intr, its handler (EOI, then the driver's irq function), the
 * line it masks and unmasks, and registering it with the clockevent core. Absent or
 * unusable hardware gets one `clockevent` record saying why. */
#ifndef TICKLAB_TIMERS_CE_DEVICES_H
#define TICKLAB_TIMERS_CE_DEVICES_H
#include <stddef.h>

#include "ticklab/clockevent.h"
#include "ticklab/json.h"

/* Boot CPU, after clocks_init(): the PIT, the boot CPU's LAPIC timer and TSC-deadline,
 * HPET comparator 0 and the RTC, registered in that order. */
void ce_devices_init(void);
/* On application processor `cpu`, from its start (smp_set_hooks): its LAPIC timer and
 * TSC-deadline, and HPET comparator `cpu` routed to it while the HPET has that many. */
void ce_devices_cpu_init(unsigned cpu);

/* That CPU's own devices, or NULL with *why (may be NULL) saying why not: its "lapic"; and
 * its HPET comparator (comparator 0 for the boot CPU, `cpu` for the others). */
struct clockevent *ce_devices_lapic(unsigned cpu);
/* The PIT's channel 0, or NULL when it was not registered (an experiment that reproduces a
 * setup on the PIT asks for it by what it is, not by its name). */
struct clockevent *ce_devices_pit(void);
/* That CPU's TSC-deadline timer when it is usable, or NULL. */
struct clockevent *ce_devices_deadline(unsigned cpu);
struct clockevent *ce_devices_hpet_of(unsigned cpu, const char **why);

/* The route of a device's interrupt, as `clockevent` record members (docs/report-format.md):
 * for an HPET comparator `comparator`, `route` (`fsb`, `ioapic`, `legacy`), `vector`, and
 * `msi_address`/`msi_data` or `gsi`/`trigger`/`polarity` or `isa_irq`, `foreign_irqs` and
 * `stale_cleared` on a level-triggered input, and the block's -ETIME margin
 * (`etime_margin_cyc`, ...). Nothing for other devices. */
void ce_devices_describe(struct json *j, const struct clockevent *ce);
/* "fsb", "ioapic", "legacy" for an HPET comparator's device, NULL for others. */
const char *ce_devices_route_name(const struct clockevent *ce);
/* The same in words for a claim ("FSB message, vector 0x41", "IOAPIC GSI 20, level",
 * "legacy replacement, IRQ0"); "" for other devices. Returns buf. */
char *ce_devices_route_text(const struct clockevent *ce, char *buf, size_t len);

/* The test aid behind mask_irq=NAME: masks the device's interrupt line at its controller
 * for good (its driver's unmask no longer reaches it), so that its events stop coming.
 * -ENODEV for no device, or one without a line of its own (a LAPIC timer). */
int ce_devices_mask_irq(struct clockevent *ce);

#endif
