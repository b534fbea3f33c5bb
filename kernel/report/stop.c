/* kernel/report/stop.c - see stop.h. */
#include "kernel/report/stop.h"

#include "kernel/report/console.h"
#include "kernel/report/klog.h"
#include "kernel/report/qrscreen.h"
#include "kernel/report/record.h"
#include "ticklab/cpuid.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"

#define QEMU_EXIT_PORT 0xF4       /* -device isa-debug-exit,iobase=0xf4,iosize=0x04 */
#define QEMU_EXIT_OK   0x10       /* QEMU exits with (v << 1) | 1 = 33 */
#define QEMU_EXIT_FAIL 0x11       /* 35 */
#define KBC_STATUS     0x64
#define KBC_RESET      0xFE

static enum stop_exit exit_mode;
static bool do_reboot;

void stop_configure(enum stop_exit qemu_exit, bool reboot)
{
    exit_mode = qemu_exit;
    do_reboot = reboot;
}

bool stop_under_qemu(void)
{
    static int known = -1;           /* the fw_cfg probe once; stop may run in a fault */
    if (known < 0) {
        struct cpu_info ci;
        cpu_probe(&ci);
        known = cpu_vmm_is_qemu(&ci);
    }
    return known;
}

static bool exits_qemu(void)
{
    return exit_mode == STOP_EXIT_ALWAYS || (exit_mode == STOP_EXIT_AUTO && stop_under_qemu());
}

bool stop_leaves(void)
{
    return exits_qemu() || do_reboot;
}

static __attribute__((noreturn)) void out(bool failed)
{
    bool qemu = exits_qemu();
    if (qemu)
        outb(QEMU_EXIT_PORT, failed ? QEMU_EXIT_FAIL : QEMU_EXIT_OK);
    if (do_reboot) {
        /* Pulse the reset line through the keyboard controller; bounded wait for its input
         * buffer. If the machine is still here afterwards, halt. */
        for (unsigned i = 0; i < 100000 && (inb(KBC_STATUS) & 2); i++)
            cpu_relax();
        outb(KBC_STATUS, KBC_RESET);
    }
    for (;;) {
        irq_disable();
        cpu_halt();
    }
}

void stop_run(bool failed, const char *reason)
{
    static bool stopping;
    klog_drain_point();           /* what is buffered goes out, interrupts on (not after a
                                     fault: the log is synchronous then) */
    irq_disable();
    klog_panic();                 /* the rest, and the last words, at once */
    if (stopping)
        out(true);
    stopping = true;
    struct rec r;
    uint32_t n = rec_sent();
    rec_begin(&r, "end");
    json_u64(&r.j, "records", n);
    json_str(&r.j, "status", failed ? "failed" : "ok");
    if (failed)
        json_str(&r.j, "reason", reason);
    rec_emit(&r);
    kprintf("\nticklab: run %s: %u records, the end record included%s%s\n",
            failed ? "FAILED" : "finished ok", n + 1, failed ? "; " : "", failed ? reason : "");
    qrscreen_show();              /* the codes never return; a text screen's note does */
    out(failed);
}
