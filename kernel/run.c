/* kernel/run.c - see run.h. */
#include "kernel/run.h"

#include "kernel/console/fbcon.h"
#include "kernel/report/console_report.h"
#include "kernel/report/qrscreen.h"
#include "kernel/report/record.h"
#include "kernel/report/stop.h"
#include "kernel/summary.h"
#include "kernel/timers/clocks.h"

static bool failed;
static const char *fail_reason;

void run_mark_failed(const char *why)
{
    if (!failed)
        fail_reason = why;
    failed = true;
}

void run_finish(void)
{
    console_phase_report("run", "end");
    console_report_run();
    /* Records in all, the end record included, as the host tool counts them. */
    qrscreen_closing(stop_leaves());     /* the qr_store record, before the count is taken */
    summary_show(!failed, rec_sent() + 1);
    /* every QR page carries the verdict in one line, cut to the screen's width */
    char verdict[160];
    uint32_t cols = 0, rows = 0;
    fbcon_describe(&cols, &rows);
    summary_verdict_line(verdict, cols > 1 && cols < sizeof(verdict) ? cols : sizeof(verdict));
    qrscreen_caption(verdict, clock_facts.tsc_hz);
    stop_run(failed, fail_reason);
}
