/* kernel/timers/ce_devices.h - every interrupting timer the machine has, as a struct
 * clockevent: PIT channel 0, the LAPIC timer (one-shot/periodic, and TSC-deadline where the
 * CPU offers it), HPET comparator 0, the CMOS RTC. Each adapter owns its interrupt route and
 * acknowledges its device before calling ce->event. Absent or unusable devices are reported
 * as `clockevent` records with the reason (kernel/checks/ce_measure.c measures the rest). */
#ifndef TICKLAB_TIME_CE_DEVICES_H
#define TICKLAB_TIME_CE_DEVICES_H

#include "ticklab/clockevent.h"

/* Registers every device found; needs the interrupt layer and calibrated clocks. */
void ce_devices_init(void);
/* Test aid (mask_irq=): masks the interrupt line of "pit", "hpet" or "rtc" at the
 * interrupt controller; the device keeps counting, its interrupts never arrive. 0 or
 * -ENODEV (no such device, or it has no line). */
int ce_devices_mask_irq(const char *name);
/* HPET comparator `comparator` (1..7; 0 is the boot CPU's "hpet") as a one-shot clock event
 * device whose interrupt goes to the CPU with apic_id, through a free IOAPIC input 16..23.
 * Not registered: it belongs to that CPU's hrtimer base. NULL with *why when the HPET lacks
 * that comparator or a route. Boot CPU, after ce_devices_init() and the measurements. */
struct clockevent *ce_devices_hpet_for_cpu(unsigned comparator, uint32_t apic_id,
                                           const char **why);

#endif
