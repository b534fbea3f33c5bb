/* kernel/timers/window.h - measurement windows: the one way a measurement starts and ends,
 * for the boot's checks and the experiments' phases alike.
 *
 * While a window is open nothing is written to a console (kernel/report/klog.h): records and
 * text wait in RAM and are written when it closes. Before one opens, the log is drained (a
 * drain takes what the line takes: a paced UART, 86.8 us a byte), and the window starts from
 * a known phase: on the next multiple of window_grid_ns of the TSC, with the tick restarted
 * there (timers_align_to_grid), so that no figure depends on how long the output before it
 * took. What the machine sent meanwhile (NMIs, stray interrupts, machine checks: kernel/arch/
 * machine_events.h) is charged to the window: a `window_events` record names it when it
 * closes. */
#ifndef TICKLAB_TIMERS_WINDOW_H
#define TICKLAB_TIMERS_WINDOW_H
#include <stdint.h>

/* The grid a window's start is put on: 1/16 s, a whole number of ns, of HPET clocks (10 ns
 * under QEMU), of the RTC's 32768 Hz clocks (2048) and of the 5000 and 800 ns deadline
 * grids the jitter experiment rounds to by default. The PIT's and the PM timer's clocks
 * are not whole in it (1/2 s and 1/5 s would be): a window whose code reads them (the
 * boot's device measurements) can start on another phase of theirs (docs/experiments.md,
 * "Output and measurement windows"). The wait costs 31 ms a window on average. 0: no
 * alignment, no tick restart. */
#define WINDOW_GRID_NS 62500000ull
extern uint64_t window_grid_ns;

void window_begin(void);
/* exp, phase: what the window measured, for its `window_events` record (NULL: the boot's). */
void window_end(const char *exp, const char *phase);
/* step() inside a window of its own (one of the boot's). */
void window_run(void (*step)(void));

#endif
