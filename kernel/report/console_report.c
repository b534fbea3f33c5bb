/* kernel/report/console_report.c - see console_report.h. */
#include "kernel/report/console_report.h"

#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/kstring.h"

static struct {
    uint64_t console_cyc, in_window_cyc, irqoff_max_cyc, serial_bytes, full_drains;
    uint64_t deferred_drains, sync_writes, max_fill, phases;
    char irqoff_max_at[80];
} run;

/* TSC cycles to ns at the calibrated rate: kernel/timers's, given by kernel/main.c (this
 * layer sits below the clocks). */
static uint64_t (*cyc_to_ns)(uint64_t cyc);

void console_report_clock(uint64_t (*tsc_cyc_to_ns)(uint64_t cyc))
{
    cyc_to_ns = tsc_cyc_to_ns;
}

static uint64_t tsc_cyc_to_ns(uint64_t cyc)
{
    return cyc_to_ns ? cyc_to_ns(cyc) : 0;
}

static bool paced(void)
{
    return console_uart()->pace_byte_cyc != 0;
}

void console_phase_report(const char *exp, const char *phase)
{
    struct klog_stats s = klog_stats_take();
    run.console_cyc += s.console_cyc;
    run.in_window_cyc += s.in_window_cyc;
    run.serial_bytes += s.serial_bytes;
    run.full_drains += s.full_drains;
    run.deferred_drains += s.deferred_drains;
    run.sync_writes += s.sync_writes;
    run.phases++;
    if (s.max_fill > run.max_fill)
        run.max_fill = s.max_fill;
    if (s.irqoff_max_cyc > run.irqoff_max_cyc) {
        run.irqoff_max_cyc = s.irqoff_max_cyc;
        size_t n = k_strlcpy(run.irqoff_max_at, exp, sizeof(run.irqoff_max_at));
        if (n + 2 < sizeof(run.irqoff_max_at)) {
            run.irqoff_max_at[n] = ':';
            k_strlcpy(run.irqoff_max_at + n + 1, phase, sizeof(run.irqoff_max_at) - n - 1);
        }
    }
    struct rec r;
    rec_begin(&r, "console_phase");
    json_str(&r.j, "exp", exp);
    json_str(&r.j, "phase", phase);
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "irqoff_max_tsc_cyc", s.irqoff_max_cyc);
    json_u64(&r.j, "irqoff_max_ns", tsc_cyc_to_ns(s.irqoff_max_cyc));
    json_u64(&r.j, "console_ns", tsc_cyc_to_ns(s.console_cyc));
    json_u64(&r.j, "in_window_ns", tsc_cyc_to_ns(s.in_window_cyc));
    json_u64(&r.j, "serial_bytes", s.serial_bytes);
    json_u64(&r.j, "log_max_bytes", s.max_fill);
    json_u64(&r.j, "full_drains", s.full_drains);
    json_u64(&r.j, "deferred_drains", s.deferred_drains);
    json_u64(&r.j, "sync_writes", s.sync_writes);
    json_bool(&r.j, "paced", paced());
    rec_emit(&r);
}

void console_measure_scroll(void)
{
    if (!fbcon_active())
        return;
    uint32_t cols, rows;
    fbcon_describe(&cols, &rows);
    uint64_t bytes;
    uint64_t cyc = fbcon_redraw_all(&bytes);
    struct rec r;
    rec_begin(&r, "screen_scroll");
    json_str(&r.j, "clock", "tsc");
    json_u64(&r.j, "cols", cols);
    json_u64(&r.j, "rows", rows);
    json_u64(&r.j, "bytes_written", bytes);
    json_u64(&r.j, "bytes_read", 0);
    json_u64(&r.j, "redraw_tsc_cyc", cyc);
    json_u64(&r.j, "redraw_ns", tsc_cyc_to_ns(cyc));
    rec_emit(&r);
    kprintf("  screen      one scroll (every cell redrawn): %llu us, %llu bytes written, "
            "none read\n", (unsigned long long)((tsc_cyc_to_ns(cyc) + 500) / 1000),
            (unsigned long long)bytes);
}

void console_report_run(void)
{
    const struct uart *u = console_uart();
    const struct fbcon_stats *fs = fbcon_stats();
    struct rec r;
    rec_begin(&r, "console_cost");
    json_str(&r.j, "clock", "tsc");
    json_bool(&r.j, "buffered", klog_buffered());
    json_bool(&r.j, "paced", paced());
    json_u64(&r.j, "serial_baud", u->baud);
    json_u64(&r.j, "serial_fifo_bytes", u->present ? u->fifo_bytes : 0);
    json_u64(&r.j, "phases", run.phases);
    json_u64(&r.j, "irqoff_max_ns", tsc_cyc_to_ns(run.irqoff_max_cyc));
    json_str(&r.j, "irqoff_max_phase", run.irqoff_max_at[0] ? run.irqoff_max_at : 0);
    json_u64(&r.j, "console_ns", tsc_cyc_to_ns(run.console_cyc));
    json_u64(&r.j, "in_window_ns", tsc_cyc_to_ns(run.in_window_cyc));
    json_u64(&r.j, "serial_bytes", run.serial_bytes);
    json_u64(&r.j, "log_bytes", KLOG_SERIAL_BYTES);
    json_u64(&r.j, "log_max_bytes", run.max_fill);
    json_u64(&r.j, "full_drains", run.full_drains);
    json_u64(&r.j, "deferred_drains", run.deferred_drains);
    json_u64(&r.j, "sync_writes", run.sync_writes);
    json_u64(&r.j, "serial_timeouts", u->tx_timeouts);
    json_u64(&r.j, "lost_bytes", klog_lost_bytes());
    json_u64(&r.j, "screen_scrolls", fs->scrolls);
    json_u64(&r.j, "screen_cells_drawn", fs->cells_drawn);
    json_u64(&r.j, "screen_bytes_written", fs->bytes_written);
    json_u64(&r.j, "screen_draw_ns", tsc_cyc_to_ns(fs->draw_cyc));
    json_u64(&r.j, "screen_row_max_ns", tsc_cyc_to_ns(fs->row_max_cyc));
    rec_emit(&r);
    kprintf("console: longest interrupts-off stretch of the output path %llu us (%s); "
            "console time inside measurement windows %llu ns%s\n",
            (unsigned long long)(tsc_cyc_to_ns(run.irqoff_max_cyc) / 1000),
            run.irqoff_max_at[0] ? run.irqoff_max_at : "-",
            (unsigned long long)tsc_cyc_to_ns(run.in_window_cyc),
            paced() ? " (UART paced)" : "");
}
