/* kernel/main.c - the order of a run: tables, paging, the loader's information, the command
 * line, consoles, the `boot` record, the inventory, the experiments, the `end` record. */
#include <stddef.h>
#include <stdint.h>

#include "ticklab/io.h"
#include "ticklab/pic8259.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/paging.h"
#include "kernel/smp/smp.h"
#include "kernel/boot/bootinfo.h"
#include "kernel/config.h"
#include "kernel/debug.h"
#include "kernel/exp/experiment.h"
#include "kernel/exp/harness.h"
#include "kernel/report/klog.h"
#include "kernel/intr/intr.h"
#include "kernel/inventory.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/smm_handoff.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/discover/hpet_boot.h"
#include "kernel/discover/irq_check.h"
#include "kernel/discover/serial_ports.h"
#include "kernel/discover/topology_acpi.h"
#include "kernel/report/console.h"
#include "kernel/report/console_report.h"
#include "kernel/report/qrscreen.h"
#include "kernel/report/record.h"
#include "kernel/report/stop.h"
#include "kernel/run.h"
#include "kernel/timers/timers.h"
#include "kernel/timers/window.h"
#include "kernel/checks/ce_check.h"
#include "kernel/timers/ce_devices.h"
#include "kernel/checks/ce_measure.h"
#include "kernel/timers/clocks.h"
#include "kernel/timers/idle.h"
#include "kernel/checks/hrt_check.h"
#include "kernel/checks/percpu_check.h"
#include "ticklab/tick.h"
#include "kernel/timers/tick_report.h"
#include "kernel/checks/tick_check.h"
#include "kernel/checks/tsc_warp.h"
#include "kernel/checks/wrapcheck.h"
#include "ticklab/cpuid.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"

#ifndef TICKLAB_VERSION
#define TICKLAB_VERSION "unknown"
#endif
#ifndef TICKLAB_GIT
#define TICKLAB_GIT "unknown"
#endif

static struct boot_info boot;

/* Command-line errors are found before the console exists (console= is one of the words),
 * so they are kept here and sent after the boot record. */
#define MAX_DEFERRED 16
static struct {
    char word[64];
    const char *reason, *accepted;
} deferred[MAX_DEFERRED];
static unsigned n_deferred, n_dropped;

static void defer_error(void *ctx, const char *word, size_t len, const char *reason,
                        const char *accepted)
{
    (void)ctx;
    if (n_deferred == MAX_DEFERRED) {
        n_dropped++;
        return;
    }
    size_t n = len < sizeof(deferred[0].word) - 1 ? len : sizeof(deferred[0].word) - 1;
    memcpy(deferred[n_deferred].word, word, n);
    deferred[n_deferred].word[n] = 0;
    deferred[n_deferred].reason = reason;
    deferred[n_deferred].accepted = accepted;
    n_deferred++;
}

static void send_deferred_errors(void)
{
    for (unsigned i = 0; i < n_deferred; i++) {
        struct rec r;
        rec_begin(&r, "error");
        json_str(&r.j, "what", "cmdline");
        json_str(&r.j, "word", deferred[i].word);
        json_str(&r.j, "reason", deferred[i].reason);
        json_str(&r.j, "accepted", deferred[i].accepted);
        json_str(&r.j, "action", "default used");
        rec_emit(&r);
        kprintf("command line: '%s': %s (accepted: %s); default used\n", deferred[i].word,
                deferred[i].reason, deferred[i].accepted ? deferred[i].accepted : "-");
    }
    if (n_dropped) {
        struct rec r;
        rec_begin(&r, "error");
        json_str(&r.j, "what", "cmdline");
        json_str(&r.j, "reason", "more bad words than reported");
        json_u64(&r.j, "not_reported", n_dropped);
        rec_emit(&r);
    }
}

static void *to_virt(uint64_t phys)
{
    return phys_to_virt(phys);
}

/* The ACPI tables are read first (silently): the SPCR and MCFG say where serial ports are. */
static void consoles_init(void)
{
    acpi_tables_parse(&boot, &acpi_facts);
    unsigned serial = serial_ports_init();
    debug_fb_override(&boot.fb, cfg.fb_override_ivshmem);
    console_screen_init(&boot.fb, phys_map_wc);
    kprintf("ticklab %s (%s): PC timer measurement kit\n", TICKLAB_VERSION, TICKLAB_GIT);
    if (cfg.console_mode != CONSOLE_NONE && serial == 0)
        kprintf("no serial port answers: output goes to the screen only\n");
}

#define CMDLINE_PIECE 1024   /* escaped bytes of the command line in one record */

/* The cmdline_part records that follow a boot record carrying the line's first `first`
 * bytes. */
static unsigned cmdline_parts(size_t first, size_t len)
{
    unsigned parts = 0;
    for (size_t at = first; at < len; parts++)
        at += json_escaped_prefix(boot.cmdline + at, len - at, CMDLINE_PIECE);
    return parts;
}

static void send_boot_record(void)
{
    struct rec r;
    rec_begin(&r, "boot");
    json_str(&r.j, "version", TICKLAB_VERSION);
    json_str(&r.j, "git", TICKLAB_GIT);
    json_str(&r.j, "boot", boot_path_name(boot.path));
    json_str(&r.j, "firmware", boot.uefi ? "uefi" : "bios");
    json_str(&r.j, "loader", boot.loader);
    /* The command line is untrusted text of up to CMDLINE_MAX_LINE bytes, and escaping can
     * make a byte six: the boot record carries at most CMDLINE_PIECE escaped bytes of it,
     * and cmdline_part records the rest, so the boot record always fits REC_MAX. */
    size_t line_len = k_strlen(boot.cmdline);
    size_t first = json_escaped_prefix(boot.cmdline, line_len, CMDLINE_PIECE);
    json_strn(&r.j, "cmdline", boot.cmdline, first);
    json_u64(&r.j, "cmdline_bytes", line_len);
    if (first < line_len)
        json_u64(&r.j, "cmdline_parts", cmdline_parts(first, line_len));
    if (boot.image[0])
        json_str(&r.j, "image", boot.image);
    json_bool(&r.j, "cmdline_truncated", boot.cmdline_truncated);
    json_bool(&r.j, "qemu", stop_under_qemu());
    struct cpu_info ci;
    cpu_probe(&ci);
    json_str(&r.j, "hypervisor", cpu_hypervisor_name(&ci));
    json_str(&r.j, "hypervisor_signature", ci.hypervisor ? ci.hv_signature : 0);
    json_str(&r.j, "profile", profile_name(cfg.profile));
    json_u64(&r.j, "hz", cfg.hz);
    if (boot.efi.present) {
        char rev[16];
        fmt_snprintf(rev, sizeof(rev), "%u.%u", boot.efi.uefi_revision >> 16,
                     boot.efi.uefi_revision & 0xFFFF);
        json_str(&r.j, "firmware_vendor", boot.efi.vendor);
        json_hex(&r.j, "firmware_revision", boot.efi.revision);
        json_str(&r.j, "uefi_revision", rev);
        json_str(&r.j, "load_options", efi_load_options_name(boot.efi.options));
        json_bool(&r.j, "cmdline_file", boot.efi.cmdline_from_file);
    }
    if (boot.efi.sb_present) {   /* the firmware's variables, read by ticklab.efi */
        const enum efi_sb_var v[2] = { boot.efi.secure_boot, boot.efi.setup_mode };
        const char *key[2] = { "secure_boot", "setup_mode" };
        for (int i = 0; i < 2; i++) {
            if (v[i] == EFI_SB_VAR_ON || v[i] == EFI_SB_VAR_OFF)
                json_bool(&r.j, key[i], v[i] == EFI_SB_VAR_ON);
            else
                json_null(&r.j, key[i]);
        }
        json_str(&r.j, "shim", efi_shim_name(boot.efi.shim));
    }
    if (boot.problem)
        json_str(&r.j, "bootinfo_problem", boot.problem);
    rec_emit(&r);
    for (size_t at = first; at < line_len;) {
        size_t n = json_escaped_prefix(boot.cmdline + at, line_len - at, CMDLINE_PIECE);
        rec_begin(&r, "cmdline_part");
        json_u64(&r.j, "offset", at);
        json_strn(&r.j, "text", boot.cmdline + at, n);
        rec_emit(&r);
        at += n;
    }
}

/* A machine ticklab cannot run on: one error record naming why, then the end of the run
 * (the end record, the summary screen, QEMU's exit). Never returns. */
static __attribute__((noreturn)) void stop_early(const char *what, const char *why)
{
    rec_error(what, why);
    kprintf("cannot run here: %s\n", why);
    run_mark_failed(why);
    run_finish();
}

/* ---- the boot steps, in the order kmain runs them ------------------------------------- */

static uint32_t mb_magic, mb_info_phys;

static void cpu_setup(void)
{
    cpu_tables_init();
    paging_init();
    smp_boot_cpu_init();
    pic_remap_and_mask();
}

static void read_loader_and_cmdline(void)
{
    bootinfo_reserve(paging_kernel_phys(), paging_kernel_bytes());
    bootinfo_parse(mb_magic, phys_to_virt(mb_info_phys), MB2_INFO_MAX, to_virt, &boot);
    struct config_experiments exps = { experiment_names(), experiment_names_text(), 0, 0 };
    exps.options = experiment_options(&exps.n_options);
    config_parse(boot.cmdline, boot.cmdline_truncated, &exps, defer_error);
    stop_configure(cfg.qemu_exit == TRI_ON    ? STOP_EXIT_ALWAYS
                   : cfg.qemu_exit == TRI_OFF ? STOP_EXIT_NEVER
                                              : STOP_EXIT_AUTO,
                   cfg.reboot);
}

static void start_output(void)
{
    consoles_init();
    /* The last screen's record store, before the first record (kernel/report/recstore.h). */
    qrscreen_setup(boot.high_ram_len ? phys_to_virt(boot.high_ram_base) : 0,
                   (size_t)boot.high_ram_len, "no free RAM above 16 MiB in the memory map",
                   (enum qr_mode)cfg.qr, (uint32_t)cfg.qr_part_ms);
    send_boot_record();
    send_deferred_errors();
    if (boot.problem)
        rec_error("bootinfo", boot.problem);
    if (boot.path == BOOT_UNKNOWN)
        run_mark_failed("not started by a Multiboot loader or ticklab.efi");
}

static void take_inventory(void)
{
    inventory_boot(&boot);
    hpet_boot_check();   /* what firmware left in the HPET, recorded and quieted before
                            intr_init's self IPI turns interrupts on */
}

static void start_interrupts(void)
{
    static struct intr_topology topo;
    unsigned dropped;
    topology_from_acpi(&acpi_facts, &topo, &dropped);
    if (dropped)
        rec_error("madt", "more MADT entries than the interrupt layer keeps; extra ignored");
    if (!cpu_facts.tsc)
        stop_early("tsc", "CPUID says this CPU has no TSC: every bound and every cost ticklab "
                          "measures is in TSC cycles");
    if (intr_init(&topo, &cpu_facts, acpi_facts.dmar.present && acpi_facts.dmar.x2apic_opt_out))
        stop_early("lapic", "no usable local APIC: every timer interrupt ticklab takes comes "
                            "through it");
}

static void calibrate_clocks(void)
{
    /* Interrupts can be taken: from here on output goes through the log (the calibration's
     * lines wait in RAM until it is done), still unpaced: pacing needs the TSC's rate. */
    console_start(cfg.console_log, 0);
    if (clocks_init())
        stop_early("clocksource", "no clock could be read or calibrated: time_ns() has "
                                  "nothing to run on, so nothing can be measured");
    console_report_clock(tsc_cyc_to_ns);
    console_phase_report("boot", "inventory and calibration");
    /* The TSC is calibrated: the UART is paced from here on when asked. */
    console_start(cfg.console_log, cfg.uart_pace ? clock_facts.tsc_hz : 0);
    console_measure_scroll();
}

static void check_interrupt_routes(void)
{
    /* After the calibration, so that each wait is bounded in time (200 ms), not in a count
     * of cycles made for a 10 GHz TSC (4.3 s each under QEMU -icount, where a PIT on a pin
     * the MADT does not name took minutes). The verdict waits for the devices' own fire
     * checks. */
    irq_check_run(clock_facts.tsc_hz ? tsc_ns_to_cyc(IRQ_CHECK_TIMEOUT_NS) : 0);
    klog_drain_point();
}

static void take_smm_jobs(void)
{
    /* After the calibration: every wait on firmware is bounded by the TSC. */
    smm_handoff_run(cfg.acpi_mode_keep, cfg.usb_handoff_off, clock_facts.tsc_hz);
    klog_drain_point();
}

static void check_clock_events(void)
{
    ce_check_all(cfg.cecheck);
}

static void bring_up_clock_events(void)
{
    /* Before any wait. idle=auto (the default): under virtual time no CPU halts, so a run
     * under QEMU -icount repeats byte for byte without being told (idle.h); the CPUs beyond
     * the first are not started yet, so one is assumed and corrected when they are. */
    const char *idle_why;
    bool vt = clocks_virtual_time();
    clock_facts.virtual_time = vt;     /* from the first window on (its start is padded) */
    idle_configure(idle_resolve(cfg.idle, vt, 1, &idle_why), clocks_under_tcg());
    idle_set_reason(idle_why);
    ce_devices_init();
    window_core_clock_probe();
    window_run(ce_measure_all);
    if (!irq_proof_ok())
        run_mark_failed("timer interrupts are not delivered: no external device's interrupt "
                        "(PIT, RTC, HPET) arrived");
    wrapcheck_report_all();
    clocks_report_environment();
    window_run(check_clock_events);
    klog_drain_point();
}

/* With more than one CPU the waits halt: measured under QEMU -icount, with two vCPUs
 * spinning, an interrupt for the one not running waits for the other's time slice (a
 * per-CPU timer came 1 ms late and the check's bound ran out). Asked for: an error; chosen
 * by auto: said so. */
static void idle_policy_for(unsigned online)
{
    if (!idle_polls() || online < 2)
        return;
    const char *idle_why;
    if (cfg.idle == IDLE_POLL)
        rec_error("idle", "idle=poll needs one CPU (cpus=1): with more, a CPU's interrupt "
                          "can wait for another's spin; every wait halts instead");
    enum idle_mode m = idle_resolve(cfg.idle, clock_facts.virtual_time, online, &idle_why);
    idle_configure(cfg.idle == IDLE_POLL ? IDLE_HALT : m, clocks_under_tcg());
    idle_set_reason(cfg.idle == IDLE_POLL ? 0 : idle_why);
    if (cfg.idle != IDLE_POLL)
        kprintf("  idle        %s\n", idle_why);
}

static void start_timers_and_cpus(void)
{
    if (timers_tick_start(&cfg.hz, cfg.clockevent, cfg.tick_oneshot))
        run_mark_failed("no tick");
    timers_base_init();
    timers_smp_hooks();
    smp_test_abandon((unsigned)cfg.smp_abandon, (unsigned)cfg.smp_slow_ap);
    unsigned online = smp_start(cfg.cpus ? (unsigned)cfg.cpus : CPU_MAX,
                                bootinfo_low_ram_covers(&boot, SMP_START_PAGE, 0x1000),
                                clock_facts.tsc_hz);
    idle_policy_for(online);
    klog_drain_point();
}

static void check_tick(void)
{
    tick_check_run(cfg.tickcheck_ms);
}

static void check_hrtimers(void)
{
    hrt_check_run(cfg.hrtcheck);
}

static void check_idle(void)
{
    idle_check_run(cfg.idlecheck_ms, cfg.nohz);
}

static void run_checks(void)
{
    if (!tsc_warp_check())
        kprintf("  tsc         not one clock on every CPU: demoted\n");
    if (!percpu_check_run())
        run_mark_failed("an application processor's own timers did not all fire on it");
    window_run(check_tick);
    window_run(check_hrtimers);
    window_run(check_idle);
    debug_crash(cfg.crash);
    debug_stray_irq((unsigned)cfg.stray_irq);
    debug_stuck_line(cfg.stuck_line_edu);
    klog_drain_point();
    console_phase_report("boot", "devices and checks");
}

static void run_experiments(void)
{
    const struct exp_plan plan = { .mask = cfg.exp_mask, .tick_oneshot = cfg.tick_oneshot,
                                   .mask_irq = cfg.mask_irq,
                                   .clocksource_asked = cfg.clocksource };
    const struct exp_env env = { .profile = cfg.profile, .base = timers_base(),
                                 .clocks = &clock_facts };
    unsigned ran = experiments_run(&plan, &env);
    if (cfg.exp_mask && !clock_facts.tsc_hz)
        run_mark_failed(EXPERIMENTS_NEED_TSC);    /* asked for, and none could run */
    kprintf("%u experiment(s) ran\n", ran);
    if (exp_defects())
        run_mark_failed("an experiment found a defect of the kit (its error record says why)");
}

static void finish(void)
{
    timers_tick_finish();
    intr_report_stats();
    run_finish();
}

/* The run: each step in turn. A step that finds the machine unusable ends the run itself
 * (stop_early); the last one never returns. */
static void (*const boot_steps[])(void) = {
    cpu_setup,                  /* descriptor tables, paging, this CPU, the 8259s masked */
    read_loader_and_cmdline,    /* Multiboot or ticklab.efi's hand-over; the words */
    start_output,               /* serial ports, the screen, the boot record */
    take_inventory,             /* CPUID, ACPI, the HPET as firmware left it */
    start_interrupts,           /* LAPIC, IOAPICs, routes */
    calibrate_clocks,           /* every clocksource; the TSC against each reference */
    check_interrupt_routes,     /* a real interrupt from each external device */
    take_smm_jobs,              /* ACPI mode, USB controllers taken from firmware's SMM */
    bring_up_clock_events,      /* the devices, their shortest deltas and costs */
    start_timers_and_cpus,      /* the tick, the wheel, the hrtimer bases, the other CPUs */
    run_checks,                 /* TSC warps, each CPU's timers, the tick, hrtimers, idle */
    run_experiments,            /* the experiments and the verdict */
    finish,                     /* the end record, the last screens, QEMU's exit */
};

void kmain(uint32_t magic, uint32_t info_phys)
{
    mb_magic = magic;
    mb_info_phys = info_phys;
    for (size_t i = 0; i < sizeof(boot_steps) / sizeof(boot_steps[0]); i++)
        boot_steps[i]();
}
