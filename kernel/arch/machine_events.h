/* kernel/arch/machine_events.h - what the machine does to a run that nobody asked for: NMIs,
 * interrupts at vectors with no handler, corrected machine-check errors, a line that kept
 * firing without its device. None ends the run; each is counted on the CPU it came to, by
 * the handler that took it (no record is written from there), and charged to the
 * measurement window it fell in.
 *
 * A window (kernel/exp/harness.c opens and closes them) takes a snapshot when it opens, and
 * when it closes one `window_events` record names the window and the records made in it, if
 * anything came. The run's totals go in one `machine_events` record at the end
 * (docs/report-format.md). Nothing of this is on the interrupt paths of the timers: each
 * counter is bumped by its own, rare handler. */
#ifndef TICKLAB_ARCH_MACHINE_EVENTS_H
#define TICKLAB_ARCH_MACHINE_EVENTS_H
#include <stdbool.h>
#include <stdint.h>

struct json;

/* CPU_MAX (kernel/arch/cpu.h, which cannot be included here: the CPU tables' module reaches
 * this one through the trap dispatch; kernel/smp/smp.c asserts the two agree). */
#define MACHINE_EVENTS_CPUS 64

/* One CPU's counts (or a sum, or a difference of two snapshots). */
struct window_counts {
    uint64_t nmi;               /* NMIs taken (kernel/arch/nmi.c) */
    uint64_t nmi_cyc;           /* TSC cycles spent in the NMI handler, entry to exit */
    uint64_t nmi_serr;          /* ... of which NMI_SC said PCI SERR# */
    uint64_t nmi_iochk;         /* ... of which NMI_SC said IOCHK# */
    uint64_t unexpected;        /* interrupts at a vector with no handler (acknowledged) */
    uint64_t mce_corrected;     /* corrected machine-check errors found in the banks */
    uint64_t mce_uncorrected_logged;  /* uncorrected ones logged but not signalled (UCNA) */
    uint64_t storms;            /* lines masked for firing without their device */
};

/* Per CPU, indexed by cpu_index() (0 before the per-CPU blocks exist). Written only by the
 * handlers on their own CPU. */
extern struct window_counts machine_events[MACHINE_EVENTS_CPUS];
/* Bumped by every handler above after its count: a window compares it, not the counts. */
extern volatile uint64_t machine_events_seq;

/* The running CPU's index, safe from an NMI or a machine check at any moment: 0 while the
 * GS base is not set yet (early boot, or an application processor's first instructions). */
unsigned machine_events_cpu(void);
/* The count of one kind, for the handlers: bumps it on this CPU and the sequence number. */
void machine_events_note(uint64_t *counter_of_this_cpu);

/* The TSC's calibrated rate: NMI time is given in ns from then on (TSC cycles before). */
void machine_events_set_tsc_hz(uint64_t tsc_hz);

/* Called as a window opens and closes and at the end of the run, before the counts are read,
 * in thread context with interrupts off: what finds events no interrupt reports
 * (kernel/arch/mce.c polls the banks) or finishes what an interrupt could only begin
 * (kernel/timers/ce_devices.c moves a comparator off a line that stormed). At most
 * MACHINE_EVENTS_POLLS. */
#define MACHINE_EVENTS_POLLS 4
void machine_events_add_poll(void (*poll)(void));

/* The sum over every CPU. */
void window_counts_snapshot(struct window_counts *out);
/* now - then, field by field. */
struct window_counts window_counts_since(const struct window_counts *then);
bool window_counts_any(const struct window_counts *c);

/* Window bookkeeping (kernel/exp/harness.c): window_counts_open() as a window opens (before
 * anything of it is timed), window_counts_close() as it closes. When anything came
 * meanwhile, the close sends one `window_events` record: the window (exp and phase), the
 * counts, and which records were made inside it (first_record, records: their places in
 * the stream, boot = 0), so that every figure measured in that window is marked by it.
 * Nothing is added to the records themselves: a check made at each of them would cost
 * instructions inside the window, and under virtual time (QEMU -icount) every instruction
 * moves the figures that follow. Windows nest; the outermost counts. */
void window_counts_open(void);
void window_counts_close(const char *exp, const char *phase);

/* The `machine_events` record: the run's totals, and per CPU where any CPU but the first had
 * some. Thread context, at the end of the run. */
void machine_events_report(void);

#endif
