/* kernel/report/stop.h - the bottom of every run's end: the `end` record (counting the
 * records sent), then out: QEMU's isa-debug-exit port (0x10 ok -> exit 33, 0x11 failed ->
 * exit 35), or a reboot when asked, or HLT forever. It knows nothing of summaries or
 * verdicts, so anything may call it: the normal end (kernel/run.c, after the summary) and a
 * fault handler alike. */
#ifndef TICKLAB_REPORT_STOP_H
#define TICKLAB_REPORT_STOP_H
#include <stdbool.h>

enum stop_exit { STOP_EXIT_AUTO, STOP_EXIT_ALWAYS, STOP_EXIT_NEVER };

/* From the command line: whether to write the QEMU exit port (auto: when the hypervisor
 * CPUID leaf says QEMU, TCG or KVM) and whether to reboot instead of halting. */
void stop_configure(enum stop_exit qemu_exit, bool reboot);
/* True when the hypervisor CPUID leaf says QEMU (TCG or KVM). */
bool stop_under_qemu(void);
/* True when stop_run() will leave: exit QEMU (its exit port) or reboot, not halt. */
bool stop_leaves(void);
/* Sends `end` (status ok, or failed with reason), shows the QR codes of the records when
 * qrscreen_closing() decided so (kernel/report/qrscreen.h; they cycle until the PC is
 * switched off), and stops. Never returns. A second call
 * (a fault while ending) sends nothing more and stops at once. */
__attribute__((noreturn)) void stop_run(bool failed, const char *reason);

#endif
