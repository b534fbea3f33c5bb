/* kernel/run.h - how a run ends: the `end` record, then exit QEMU or halt. */
#ifndef TICKLAB_RUN_H
#define TICKLAB_RUN_H
#include <stdbool.h>

/* Marks the run failed (it goes on; the end record will say "failed"). */
void run_mark_failed(const char *why);
bool run_failed(void);
/* Sends `end` and stops: writes isa-debug-exit under QEMU (0x10 ok -> exit 33, 0x11 failed
 * -> exit 35), else halts (or reboots when reboot=1). Never returns. */
__attribute__((noreturn)) void run_finish(void);
/* True when the hypervisor CPUID leaf says QEMU (TCG or KVM). */
bool running_under_qemu(void);

#endif
