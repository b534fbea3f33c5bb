/* kernel/config.c - the command-line options and their defaults. */
#include "kernel/config.h"

#include "ticklab/uart16550.h"

#include "ticklab/cmdline.h"
#include "ticklab/kstring.h"

struct config cfg;

static const char *const profiles[] = { "quick", "full", "soak", NULL };
static const char *const tristates[] = { "auto", "1", "0", NULL };
static const char *const onoff[] = { "on", "off", NULL };
static const char *const tickmodes[] = { "periodic", "oneshot", NULL };
static const char *const idles[] = { "halt", "poll", "auto", NULL };   /* enum idle_mode */
static const char *const tristates3[] = { "auto", "on", "off", NULL };
static const char *const hpet_accesses[] = { "auto", "32", "64", NULL };
static const char *const dumps[] = { "none", "acpi", NULL };
static const char *const stuck_lines[] = { "none", "edu", NULL };
static const char *const watchdog_modes[] = { "auto", "leave", NULL };
static const char *const watchdog_arms[] = { "none", "tco", NULL };
static const char *const fb_overrides[] = { "none", "ivshmem", NULL };
static const char *const crashes[] = { "none", "ud", "pf", "div0", "overflow", "null", NULL };

static bool parse_num(const char *s, const char *end, uint64_t base, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (s == end)
        return false;
    for (; s < end; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return false;
        if (v > (max - d) / base)
            return false;
        v = v * base + d;
    }
    *out = v;
    return true;
}

/* console=auto | spcr | com1..com4 | ttyS0..ttyS3 | 0xPORT | none, optionally ",BAUD".
 * A COM port's baud must divide 115200 (its 1.8432 MHz clock); auto and spcr take any
 * 50..4000000 here, and each port then refuses a rate its own clock cannot make. */
static bool parse_console(const char *v, enum console_mode *mode, uint16_t *port,
                          uint32_t *baud, bool *baud_given)
{
    static const uint16_t com[] = { 0x3F8, 0x2F8, 0x3E8, 0x2E8 };
    const char *comma = v;
    while (*comma && *comma != ',')
        comma++;
    size_t n = (size_t)(comma - v);
    uint64_t p = 0, b = 115200;
    enum console_mode m = CONSOLE_PORT;

    if (n == 4 && k_strncmp(v, "none", 4) == 0)
        m = CONSOLE_NONE;
    else if (n == 4 && k_strncmp(v, "auto", 4) == 0)
        m = CONSOLE_AUTO;
    else if (n == 4 && k_strncmp(v, "spcr", 4) == 0)
        m = CONSOLE_SPCR;
    else if (n == 4 && k_strncmp(v, "com", 3) == 0 && v[3] >= '1' && v[3] <= '4')
        p = com[v[3] - '1'];
    else if (n == 5 && k_strncmp(v, "ttyS", 4) == 0 && v[4] >= '0' && v[4] <= '3')
        p = com[v[4] - '0'];
    else if (n > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        if (!parse_num(v + 2, comma, 16, 0xFFF8, &p) || p == 0)
            return false;
    } else
        return false;
    bool any_baud = m == CONSOLE_AUTO || m == CONSOLE_SPCR;
    if (*comma && (!parse_num(comma + 1, comma + k_strlen(comma), 10, any_baud ? 4000000 : 115200,
                               &b) ||
                   b < (any_baud ? 50 : 1) || (!any_baud && 115200 % b != 0)))
        return false;
    *mode = m;
    *port = (uint16_t)p;
    *baud = (uint32_t)b;
    *baud_given = *comma != 0;
    return true;
}

static bool opts_seen(const struct cmdline_opt *opts, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (k_strcmp(opts[i].key, key) == 0)
            return opts[i].seen;
    return false;
}

int config_parse(const char *line, bool cut, const struct config_experiments *exps,
                 void (*on_error)(void *, const char *, size_t, const char *, const char *))
{
    static char console_word[32];
    unsigned profile = PROFILE_QUICK, qemu_exit = TRI_AUTO, crash = CRASH_NONE, dump = 0;
    unsigned qr = TRI_AUTO;
    unsigned wrapcheck = TRI_AUTO, tickmode = 0, nohz = 0, hpet_access = 0;
    unsigned idle = IDLE_AUTO, console_log = 0, stuck_line = 0, watchdog = 0, watchdog_arm = 0;
    unsigned fb_override = 0;
    uint64_t uart_pace = 0;
    bool reboot = false;

    cfg = (struct config){ .hz = TICK_DEFAULT_HZ, .console_mode = CONSOLE_AUTO,
                           .console_port = 0x3F8, .console_baud = 115200 };
    struct cmdline_opt opts[] = {
        { .key = "hz", .type = CMDLINE_UINT, .dest = &cfg.hz, .min = 1, .max = 1000000,
          .accepted = "1..1000000 ticks per second (100..10000 always; others if a device "
                      "can make them)" },
        { .key = "profile", .type = CMDLINE_ENUM, .dest = &profile, .choices = profiles,
          .accepted = "quick, full or soak" },
        { .key = "exp", .type = CMDLINE_LIST, .dest = &cfg.exp_mask,
          .choices = exps->names, .accepted = exps->accepted },
        { .key = "console", .type = CMDLINE_STR, .dest = console_word,
          .max = sizeof(console_word),
          .accepted = "auto, spcr, com1..com4, ttyS0..ttyS3, 0xPORT or none, optionally "
                      ",BAUD (a divisor of 115200 for a COM port; for auto and spcr a rate "
                      "1.8432 MHz or uart_clock= makes within 2 %)" },
        { .key = "qemu_exit", .type = CMDLINE_ENUM, .dest = &qemu_exit, .choices = tristates,
          .accepted = "auto, 1 or 0" },
        { .key = "reboot", .type = CMDLINE_BOOL, .dest = &reboot, .accepted = "0 or 1" },
        { .key = "crash", .type = CMDLINE_ENUM, .dest = &crash, .choices = crashes,
          .accepted = "none, ud, pf, div0, overflow or null" },
        { .key = "dump", .type = CMDLINE_ENUM, .dest = &dump, .choices = dumps,
          .accepted = "none or acpi" },
        /* Device names: whatever the machine registers, checked once it has (an `error`
         * record then lists the names it has). */
        { .key = "clocksource", .type = CMDLINE_STR, .dest = cfg.clocksource,
          .max = sizeof(cfg.clocksource), .accepted = "a clocksource's name (tsc, hpet, "
                                                      "acpi_pm, pit, lapic, ...)" },
        { .key = "clockevent", .type = CMDLINE_STR, .dest = cfg.clockevent,
          .max = sizeof(cfg.clockevent), .accepted = "a clock event device's name (pit, "
                                                     "lapic, tsc_deadline, hpet, rtc, ...)" },
        { .key = "tickcheck_ms", .type = CMDLINE_UINT, .dest = &cfg.tickcheck_ms, .min = 0,
          .max = 600000, .accepted = "0..600000 (ms)" },
        { .key = "tickmode", .type = CMDLINE_ENUM, .dest = &tickmode, .choices = tickmodes,
          .accepted = "periodic or oneshot" },
        { .key = "cecheck", .type = CMDLINE_UINT, .dest = &cfg.cecheck, .min = 0,
          .max = 1000, .accepted = "0..1000 (events per device and mode)" },
        { .key = "hrtcheck", .type = CMDLINE_UINT, .dest = &cfg.hrtcheck, .min = 0,
          .max = 1000, .accepted = "0..1000 (hrtimers)" },
        { .key = "idle", .type = CMDLINE_ENUM, .dest = &idle, .choices = idles,
          .accepted = "halt, poll or auto" },
        { .key = "nohz", .type = CMDLINE_ENUM, .dest = &nohz, .choices = onoff,
          .accepted = "on or off" },
        { .key = "idlecheck_ms", .type = CMDLINE_UINT, .dest = &cfg.idlecheck_ms, .min = 0,
          .max = 600000, .accepted = "0..600000 (ms)" },
        { .key = "cpus", .type = CMDLINE_UINT, .dest = &cfg.cpus, .min = 1, .max = 256,
          .accepted = "1..256 (CPUs to start, the boot CPU included; default all)" },
        { .key = "smp_abandon", .type = CMDLINE_UINT, .dest = &cfg.smp_abandon, .min = 0,
          .max = 63, .accepted = "0..63 (test aid: the CPU with that index is given up on "
                                 "before its STARTUP IPI; 0: none)" },
        { .key = "smp_slow_ap", .type = CMDLINE_UINT, .dest = &cfg.smp_slow_ap, .min = 0,
          .max = 63, .accepted = "0..63 (test aid: the CPU with that index waits after taking "
                                 "its start parameters until the boot CPU gives up on it; 0: "
                                 "none)" },
        { .key = "mask_irq", .type = CMDLINE_STR, .dest = cfg.mask_irq,
          .max = sizeof(cfg.mask_irq), .accepted = "none or a clock event device's name (test "
                                                   "aid: its interrupt line is masked before "
                                                   "the experiments)" },
        { .key = "stray_irq", .type = CMDLINE_UINT, .dest = &cfg.stray_irq, .min = 0,
          .max = 255, .accepted = "0, or 32..255 (test aid: that vector is sent to the boot "
                                  "CPU once, before the experiments, with no handler for "
                                  "it; 0: none)" },
        { .key = "stuck_line", .type = CMDLINE_ENUM, .dest = &stuck_line,
          .choices = stuck_lines, .accepted = "none or edu (test aid: QEMU's edu device "
                                              "holds its interrupt line asserted from before "
                                              "the experiments on)" },
        { .key = "watchdog", .type = CMDLINE_ENUM, .dest = &watchdog,
          .choices = watchdog_modes, .accepted = "auto or leave (auto: every watchdog found "
                                                 "running is stopped, or fed; leave: named "
                                                 "only)" },
        { .key = "watchdog_arm", .type = CMDLINE_ENUM, .dest = &watchdog_arm,
          .choices = watchdog_arms, .accepted = "none or tco (test aid: the TCO watchdog is "
                                                "started first with a 1.2 s timeout, as "
                                                "firmware may leave it)" },
        { .key = "fb_override", .type = CMDLINE_ENUM, .dest = &fb_override,
          .choices = fb_overrides, .accepted = "none or ivshmem (test aid: the screen is "
                                               "QEMU's ivshmem-plain BAR 2, 1024x768x32)" },
        { .key = "tsc_hz", .type = CMDLINE_UINT, .dest = &cfg.tsc_hz, .min = 1000000,
          .max = 10000000000ull, .accepted = "1000000..10000000000 (Hz: the TSC's rate, "
                                             "taken instead of the calibrations')" },
        { .key = "lapic_hz", .type = CMDLINE_UINT, .dest = &cfg.lapic_hz, .min = 1000,
          .max = 10000000000ull, .accepted = "1000..10000000000 (Hz: the LAPIC timer's "
                                             "rate, taken instead of its calibration)" },
        { .key = "wrapcheck", .type = CMDLINE_ENUM, .dest = &wrapcheck, .choices = tristates3,
          .accepted = "auto, on or off" },
        { .key = "console_log", .type = CMDLINE_ENUM, .dest = &console_log, .choices = onoff,
          .accepted = "on or off (off: every line written at once, interrupts off)" },
        /* A number, not on/off: both values then take the parser the same instructions,
         * so a paced and an unpaced boot stay alike to the ns under -icount until the
         * pacing starts (tests/qemu/cases_console.py compares their figures). */
        { .key = "uart_pace", .type = CMDLINE_UINT, .dest = &uart_pace, .min = 0, .max = 1,
          .accepted = "0 or 1 (1: the UART driver holds each byte as long as a real line at "
                      "the console's baud rate)" },
        { .key = "uart_clock", .type = CMDLINE_UINT, .dest = &cfg.uart_clock_hz,
          .min = 1000000, .max = 250000000, .accepted = "1000000..250000000 (Hz: the input "
                                                        "clock of PCI cards' UARTs; default "
                                                        "1843200)" },
        { .key = "qr", .type = CMDLINE_ENUM, .dest = &qr, .choices = tristates3,
          .accepted = "auto, on or off (the records as QR codes on the last screen)" },
        { .key = "qr_part_ms", .type = CMDLINE_UINT, .dest = &cfg.qr_part_ms, .min = 200,
          .max = 60000, .accepted = "200..60000 (ms each QR code stays on the screen)" },
        { .key = "hpet_access", .type = CMDLINE_ENUM, .dest = &hpet_access,
          .choices = hpet_accesses, .accepted = "auto, 32 or 64 (bits per HPET register "
                                                 "access; auto: 64 under QEMU, else 32)" },
    };
    size_t n_own = sizeof(opts) / sizeof(opts[0]);
    /* The experiments' words after the kernel's own, in one table for the parser. */
    struct cmdline_opt all[sizeof(opts) / sizeof(opts[0]) + CONFIG_MAX_EXP_OPTIONS];
    size_t n_opts = 0;
    for (size_t i = 0; i < n_own; i++)
        all[n_opts++] = opts[i];
    for (size_t i = 0; i < exps->n_options && i < CONFIG_MAX_EXP_OPTIONS; i++)
        all[n_opts++] = exps->options[i];

    cfg.exp_mask = ~0ull;    /* default: every experiment */
    console_word[0] = 0;
    int errors = cmdline_parse_cut(line, cut, all, n_opts, on_error, NULL);
    cfg.profile = (enum profile)profile;
    cfg.qemu_exit = (enum tristate)qemu_exit;
    cfg.crash = (enum crash_kind)crash;
    cfg.stuck_line_edu = stuck_line == 1;
    cfg.watchdog_leave = watchdog == 1;
    cfg.watchdog_arm_tco = watchdog_arm == 1;
    cfg.fb_override_ivshmem = fb_override == 1;
    cfg.reboot = reboot;
    cfg.dump_acpi = dump == 1;
    cfg.wrapcheck = (enum tristate)wrapcheck;
    cfg.qr = (enum tristate)qr;
    if (!opts_seen(all, n_opts, "qr_part_ms"))
        cfg.qr_part_ms = 3000;
    cfg.hpet_access = hpet_access == 1 ? 32 : hpet_access == 2 ? 64 : 0;
    cfg.tick_oneshot = tickmode == 1;
    cfg.idle = (enum idle_mode)idle;
    cfg.nohz = nohz == 0;
    cfg.console_log = console_log == 0;
    cfg.uart_pace = uart_pace != 0;
    if (!opts_seen(all, n_opts, "idlecheck_ms"))
        cfg.idlecheck_ms = cfg.profile == PROFILE_QUICK ? 0 : 2000;

    if (!opts_seen(all, n_opts, "cecheck"))
        cfg.cecheck = cfg.profile == PROFILE_QUICK ? 0 : 1000;
    if (!opts_seen(all, n_opts, "hrtcheck"))
        cfg.hrtcheck = cfg.profile == PROFILE_QUICK ? 0 : 1000;
    if (!opts_seen(all, n_opts, "tickcheck_ms"))
        cfg.tickcheck_ms = cfg.profile == PROFILE_QUICK ? 0 : 3000;

    cfg.exp_given = all[2].seen;
    if (!k_strcmp(cfg.mask_irq, "none"))
        cfg.mask_irq[0] = 0;
    /* A rate no clock here can make (neither a COM port's 1.8432 MHz nor uart_clock=) would
     * leave every port silent: refused like a malformed word, and the default kept. */
    struct config before = cfg;
    bool console_ok = !console_word[0] ||
        parse_console(console_word, &cfg.console_mode, &cfg.console_port, &cfg.console_baud,
                      &cfg.console_baud_given);
    if (console_ok && cfg.console_baud_given && !uart_divisor(UART_CLOCK_HZ, cfg.console_baud) &&
        !(cfg.uart_clock_hz && uart_divisor((uint32_t)cfg.uart_clock_hz, cfg.console_baud))) {
        cfg.console_mode = before.console_mode, cfg.console_port = before.console_port;
        cfg.console_baud = before.console_baud, cfg.console_baud_given = false;
        console_ok = false;
    }
    if (!console_ok) {
        char word[48] = "console=";
        k_strlcpy(word + 8, console_word, sizeof(word) - 8);
        on_error(NULL, word, k_strlen(word), "not a console", all[3].accepted);
        errors++;
    }
    return errors;
}

const char *profile_name(enum profile p)
{
    return profiles[p];
}
