/* kernel/report/klog.h - the in-memory log every byte of output goes through.
 *
 * A real 16550 at 115200 baud takes 86.8 us a byte and real video memory is slow, so text
 * and records are first copied into RAM (a ring per console; interrupts off only for the
 * copy) and a writer drains them later: the serial port one FIFO's worth at a time, polling
 * THRE with the caller's interrupts on, and the screen one row at a time (fbcon.h). Nothing
 * is drained while a measurement window is open (klog_window_begin/end, marked by the
 * experiment harness): the writer waits for the window's end. Order is kept per console (each
 * serial port reads the one serial ring at its own pace) and nothing is dropped: when a ring is full, the writer drains it there and then (inside the
 * window, if one is open; that time is counted as console time inside a window, the figure
 * whose goal is 0).
 *
 * Drain points: after a write made with interrupts on outside any window, klog_drain_point()
 * (the main flow's places between steps, where it holds nothing and may take interrupts),
 * each window's end, and klog_flush(). The kernel's main flow runs with interrupts off
 * (they come on in its waits), so most output waits for the next drain point; the writer
 * never holds interrupts off across a wait on the line. Before klog_start() and after
 * klog_panic() every write goes out at once, whole (the early boot and a dying kernel must
 * still be heard).
 *
 * Compiled for the host tests too: it needs only lib/port/io.h, the UART driver and fbcon. */
#ifndef TICKLAB_REPORT_KLOG_H
#define TICKLAB_REPORT_KLOG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/uart16550.h"

#define KLOG_SERIAL 1u
#define KLOG_SCREEN 2u

#define KLOG_SERIAL_MAX 8              /* serial ports written at once */
#define KLOG_SERIAL_BYTES (256u * 1024u)   /* the biggest window's output, with room */
#define KLOG_SCREEN_BYTES (16u * 1024u)

/* What the output path cost since the last klog_stats_take(), in TSC cycles. */
struct klog_stats {
    uint64_t console_cyc;      /* writing to the consoles (waits on the line included) */
    uint64_t in_window_cyc;    /* of that, while a measurement window was open */
    uint64_t irqoff_max_cyc;   /* the longest stretch the output path ran with interrupts
                                  off (a copy into the log; a drain or a synchronous write
                                  made by a caller whose interrupts were off) */
    uint64_t serial_bytes;     /* bytes given to the UART */
    uint64_t full_drains;      /* writes that found a log full and drained it first */
    uint64_t sync_writes;      /* writes that went out at once (before the log, fatal) */
    uint64_t deferred_drains;  /* drain points passed with interrupts off (left for later) */
    uint64_t max_fill;         /* the most bytes the serial log held */
};

/* The consoles: serial may be NULL or absent; the screen is fbcon when it is active. */
void klog_init(struct uart *serial);
/* One more serial port (several: the SPCR's, PCI cards', COM ports): every port gets the
 * same bytes in the same order, from what is written after this call on; a port that dies
 * is dropped alone. -1 when KLOG_SERIAL_MAX are there already. */
int klog_add_serial(struct uart *serial);
/* Port i of those added (NULL past the last). */
const struct uart *klog_serial(unsigned i);
/* Pacing (uart_set_pacing) on every port. */
void klog_pace(uint64_t tsc_hz);
/* Buffered from now on (call once interrupts can be taken). off: stay synchronous (every
 * write whole and at once, interrupts off, as before the log existed: console_log=off). */
void klog_start(bool buffered);
bool klog_buffered(void);

/* Appends the pieces as one unit to the consoles in where (KLOG_*). own_line: it must start
 * a serial line of its own (a record): a "\n" is put first when the serial stream stands in
 * the middle of a line. */
void klog_write(unsigned where, const char *const *piece, const size_t *len, unsigned n,
                bool own_line);

/* Measurement windows (they nest): no console output while one is open. The end of the
 * outermost is a drain point (klog_drain_point()): call it where interrupts may be taken. */
void klog_window_begin(void);
void klog_window_end(void);

/* Drains everything now if no window is open; with interrupts off it only counts a deferred
 * drain and returns (draining would hold them off for as long as the line takes). */
void klog_drain(void);
/* A place where the caller holds nothing and may take interrupts: unless a window is open,
 * drains everything with interrupts on (whatever the caller had), then puts them back. */
void klog_drain_point(void);
/* Drains everything now, window or not, whatever the interrupt state (the end of the run). */
void klog_flush(void);
/* Fatal: everything buffered goes out now and every later write at once. */
void klog_panic(void);

/* The counters since the last call, then zeroes them (max_fill starts again from now). */
struct klog_stats klog_stats_take(void);
/* Bytes that could not be written (the port went dead) since boot. */
uint64_t klog_lost_bytes(void);

#endif
