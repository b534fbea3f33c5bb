/* kernel/timers/window.c - see window.h. */
#include "kernel/timers/window.h"

#include "kernel/arch/machine_events.h"
#include "kernel/report/klog.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/timers.h"

uint64_t window_grid_ns = WINDOW_GRID_NS;

void window_begin(void)
{
    window_counts_open();
    klog_drain_point();
    if (window_grid_ns && clock_facts.tsc_hz)
        timers_align_to_grid(window_grid_ns);
    klog_window_begin();
}

void window_end(const char *exp, const char *phase)
{
    klog_window_end();
    window_counts_close(exp, phase);
}

void window_run(void (*step)(void))
{
    window_begin();
    step();
    window_end(0, 0);
}
