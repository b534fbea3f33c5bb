/* kernel/config.h - the run's settings, from the command line (docs/command-line.md). */
#ifndef TICKLAB_CONFIG_H
#define TICKLAB_CONFIG_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum profile { PROFILE_QUICK, PROFILE_FULL, PROFILE_SOAK };

/* The tick rate without hz= (and when hz= cannot be made). */
#define TICK_DEFAULT_HZ 1000
#define TICK_DEFAULT_HZ_TEXT "1000"
enum crash_kind { CRASH_NONE, CRASH_UD, CRASH_PF, CRASH_DIV0, CRASH_OVERFLOW, CRASH_NULL };
enum tristate { TRI_AUTO, TRI_ON, TRI_OFF };
/* How a CPU waits for an interrupt (kernel/timers/idle.h). */
enum idle_mode { IDLE_HALT, IDLE_POLL, IDLE_AUTO };   /* auto: poll under virtual time */
/* Where output goes (console=): every serial port that answers (SPCR's, PCI cards', COM1-4),
 * the SPCR's alone, one given port, or none (the screen only). */
enum console_mode { CONSOLE_AUTO, CONSOLE_SPCR, CONSOLE_PORT, CONSOLE_NONE };

struct config {
    uint64_t hz;                /* periodic tick rate */
    enum profile profile;
    uint64_t exp_mask;          /* bit i: experiment i of the registry; 0 = none */
    bool exp_given;
    enum console_mode console_mode;
    uint16_t console_port;      /* CONSOLE_PORT: the I/O port */
    uint32_t console_baud;      /* COM ports and PCI cards (the SPCR's port keeps its own
                                   unless console= gave a baud) */
    bool console_baud_given;
    uint64_t uart_clock_hz;     /* uart_clock=: PCI cards' UART input clock (0: 1.8432 MHz) */
    bool console_log;           /* console_log=on: output through the in-memory log, drained
                                   between measurement windows (off: written at once) */
    bool uart_pace;             /* uart_pace=on: the UART driver holds each byte for its
                                   time on a real line at console_baud (emulation aid) */
    enum tristate qemu_exit;    /* auto: only under QEMU (hypervisor signature) */
    bool reboot;                /* on real hardware, reboot at the end instead of halting */
    enum crash_kind crash;      /* debugging aid: fault on purpose after the inventory */
    bool dump_acpi;             /* dump=acpi: every ACPI table as hex records (fixtures) */
    char clocksource[16];       /* clocksource=: "" chooses by rating */
    char clockevent[16];        /* clockevent=: the tick's device; "" chooses by rating */
    bool tick_oneshot;          /* tickmode=oneshot: re-arm a one-shot every tick */
    uint64_t tickcheck_ms;      /* run the tick this long and check it (0: skip) */
    uint64_t cecheck;
    uint64_t hrtcheck;
    enum idle_mode idle;        /* idle=: HLT, or a poll with interrupts on */
    bool nohz;                  /* nohz=on: the tick stops while idle */
    uint64_t idlecheck_ms;      /* idle this long and count the tick interrupts (0: skip) */
    uint64_t cpus;              /* CPUs to run on, the boot CPU included (0: all the MADT
                                   lists, up to CPU_MAX) */
    uint64_t smp_abandon;       /* smp_abandon=: test aid: CPU index given up on before its
                                   STARTUP IPI, to show a late answer is halted (0: none) */
    uint64_t smp_slow_ap;       /* smp_slow_ap=: test aid: CPU index that stalls after
                                   taking its start parameters until given up on (0: none) */
    uint64_t stray_irq;         /* stray_irq=: test aid: a vector sent to the boot CPU once
                                   before the experiments, with no handler (0: none) */
    bool watchdog_leave;        /* watchdog=leave: watchdogs named, not stopped or fed */
    bool watchdog_arm_tco;      /* watchdog_arm=tco: test aid: the TCO started first */
    bool fb_override_ivshmem;   /* fb_override=ivshmem: test aid: the screen is QEMU's
                                   ivshmem-plain BAR 2 */
    bool stuck_line_edu;        /* stuck_line=edu: test aid: QEMU's edu device holds its
                                   INTx asserted from before the experiments on */
    char mask_irq[16];          /* mask_irq=: test aid: this clock event device's interrupt
                                   line is masked before the experiments ("": none) */
    uint64_t tsc_hz;            /* tsc_hz=: the TSC's rate as the user states it, taken
                                   instead of the calibrations' (0: calibrate) */
    uint64_t lapic_hz;          /* lapic_hz=: likewise for the LAPIC timer */
    enum tristate wrapcheck;    /* runs across two wraps of each narrow counter; auto: in
                                   the full and soak profiles only */
    enum tristate qr;           /* qr=: the records as QR codes on the last screen; auto: when
                                   the screen is graphical and the run does not end by
                                   exiting QEMU or rebooting */
    uint64_t qr_part_ms;        /* qr_part_ms=: how long each code stays on the screen */
    unsigned hpet_access;       /* hpet_access=: 0 auto (64-bit reads under QEMU, whose HPET
                                   takes them; 32-bit halves on any other machine), 32, 64 */
};

extern struct config cfg;

/* What config_parse needs of the experiments, from their registry (kernel/exp/experiment.h),
 * so that config knows nothing of them: the names exp= may give (NULL-terminated, in the
 * bit order of cfg.exp_mask), their one-line list for the error record, and their own
 * words (each writes a variable of its experiment's; at most CONFIG_MAX_EXP_OPTIONS). */
#define CONFIG_MAX_EXP_OPTIONS 16
struct cmdline_opt;
struct config_experiments {
    const char *const *names;
    const char *accepted;
    struct cmdline_opt *options;
    size_t n_options;
};

/* Parses line into cfg, reporting each bad word as an `error` record (via the callback
 * installed by the caller, see kernel/main.c). Returns the number of bad words. The console=
 * word is applied after parsing by the caller. cut: the line was cut before it came here (its
 * last word is refused, cmdline_parse_cut). */
int config_parse(const char *line, bool cut, const struct config_experiments *exps,
                 void (*on_error)(void *, const char *, size_t, const char *, const char *));
const char *profile_name(enum profile p);

#endif
