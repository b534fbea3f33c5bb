/* kernel/discover/smm_handoff.h - the jobs firmware does in SMM for an OS that has not taken
 * them, taken: ACPI mode switched on through SMI_CMD (drivers/acpi_mode.h), every USB host
 * controller's legacy support handed over (drivers/usb_handoff.h). Until then a PC may enter
 * SMM for each ACPI event and for each USB frame-list rollover or trapped i8042 access: time
 * no measurement can see but every measurement pays.
 *
 * One `acpi_mode` record, one `usb_handoff` record per USB host controller, each with the
 * SMI count (MSR 0x34) before and after its action, or why it is not known
 * (docs/report-format.md). Runs once the TSC is calibrated: every wait is bounded by it. */
#ifndef TICKLAB_DISCOVER_SMM_HANDOFF_H
#define TICKLAB_DISCOVER_SMM_HANDOFF_H
#include <stdbool.h>

#include <stdint.h>

/* acpi_keep: acpi_mode=keep; usb_off: usb_handoff=keep (each still recorded). tsc_hz: the
 * calibrated TSC rate that bounds every wait (0: none yet, the waits are then bounded as if
 * the TSC ran at 10 GHz, so they last at least what was asked). */
void smm_handoff_run(bool acpi_keep, bool usb_off, uint64_t tsc_hz);

#endif
