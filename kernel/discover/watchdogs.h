/* kernel/discover/watchdogs.h - watchdog timers the firmware may have left running, named in
 * the inventory and kept from resetting the run.
 *
 * Found: Intel's TCO (drivers/tco.h: through the LPC bridge's ACPI base on ICH6 to the 9
 * series, through the SMBus function's TCOBASE from the 100 series on), the watchdog of AMD's
 * embedded FCH (drivers/amd_fch_wdt.h), the 6300ESB's on PCI (QEMU's i6300esb). Named only:
 * the ACPI tables that describe a watchdog for an OS that drives one (WDAT, WDRT) and a BMC
 * (SPMI: its IPMI watchdog needs an IPMI driver, which ticklab has not). One `watchdog`
 * record per timer found, then a `watchdogs` record.
 *
 * What is done (watchdog=auto, the default): a running timer is stopped, and the stop read
 * back; one that will not stop has its longest timeout set and is fed at every measurement
 * window's open and close (a machine-events poll, outside the windows), which comes far more
 * often than a TCO's 613 s. watchdog=leave names them and touches nothing. */
#ifndef TICKLAB_DISCOVER_WATCHDOGS_H
#define TICKLAB_DISCOVER_WATCHDOGS_H
#include <stdbool.h>

/* arm_tco: the test aid (watchdog_arm=tco): the TCO is first started with a short timeout
 * and NO_REBOOT cleared, as firmware that leaves it running would. leave: watchdog=leave. */
void watchdogs_init(bool arm_tco, bool leave);

#endif
