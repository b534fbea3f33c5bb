/* kernel/inventory.c - memory, consoles and paging as found at boot. */
#include "kernel/inventory.h"

#include "kernel/arch/mce.h"
#include "kernel/arch/paging.h"
#include "kernel/config.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/cpu_report.h"
#include "kernel/discover/serial_ports.h"
#include "kernel/discover/smbios_report.h"
#include "kernel/discover/watchdogs.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"

static const char *fb_kind_name(enum fb_kind k)
{
    return k == FB_EGA_TEXT ? "ega_text" : k == FB_RGB ? "rgb" : "none";
}

static void memory_record(const struct boot_info *boot)
{
    struct rec r;
    rec_begin(&r, "memory");
    json_u64(&r.j, "usable_bytes", boot->mem_usable_bytes);
    json_u64(&r.j, "map_entries", boot->mmap_entries);
    rec_emit(&r);
    kprintf("  memory      %llu MiB usable in %u map entries\n",
            (unsigned long long)(boot->mem_usable_bytes >> 20), boot->mmap_entries);
}

static void console_record(const struct boot_info *boot)
{
    const struct uart *u = console_uart();
    uint32_t cols, rows;
    fbcon_describe(&cols, &rows);

    struct rec r;
    rec_begin(&r, "console");
    /* The first port output goes to (serial_port records list them all). */
    json_hex(&r.j, "serial_port", u->present ? u->regs.addr : 0);
    json_u64(&r.j, "serial_baud", u->present ? u->baud : cfg.console_baud);
    json_str(&r.j, "serial_access", u->regs.space == UART_SPACE_MMIO ? "mmio" : "io");
    json_bool(&r.j, "serial_present", u->present);
    json_u64(&r.j, "serial_fifo_bytes", u->present ? u->fifo_bytes : 0);
    json_str(&r.j, "screen", fb_kind_name(boot->fb.kind));
    json_bool(&r.j, "screen_active", fbcon_active());
    json_u64(&r.j, "screen_cols", cols);
    json_u64(&r.j, "screen_rows", rows);
    if (boot->fb.kind != FB_NONE) {
        json_hex(&r.j, "fb_phys", boot->fb.phys);
        json_str(&r.j, "fb_mapping", paging_wc() ? "write-combining (PAT)"
                                                 : "as the MTRRs say (no PAT)");
    }
    if (boot->fb.kind == FB_RGB) {
        json_u64(&r.j, "fb_width", boot->fb.width);
        json_u64(&r.j, "fb_height", boot->fb.height);
        json_u64(&r.j, "fb_bpp", boot->fb.bpp);
    }
    rec_emit(&r);
    kprintf("  screen      %s, %ux%u text cells%s\n", fb_kind_name(boot->fb.kind), cols, rows,
            fbcon_active() ? "" : " (not usable)");
}

static void paging_record(void)
{
    struct rec r;
    rec_begin(&r, "paging");
    json_bool(&r.j, "nx", paging_nx_enabled());
    json_bool(&r.j, "wp", true);
    json_bool(&r.j, "guard_pages", true);
    json_hex(&r.j, "kernel_phys", paging_kernel_phys());
    json_hex(&r.j, "kernel_link", paging_kernel_link());
    json_u64(&r.j, "kernel_bytes", paging_kernel_bytes());
    json_bool(&r.j, "relocated", paging_kernel_phys() != paging_kernel_link());
    rec_emit(&r);
    if (paging_kernel_phys() != paging_kernel_link())
        kprintf("  kernel      loaded at %#llx (linked at %#llx): its addresses mapped there\n",
                (unsigned long long)paging_kernel_phys(),
                (unsigned long long)paging_kernel_link());
    kprintf("  paging      W^X, NX %s, guard page below every stack\n",
            paging_nx_enabled() ? "on" : "not supported by this CPU");
}

void inventory_boot(const struct boot_info *boot)
{
    kprintf("\nInventory\n");
    memory_record(boot);
    console_record(boot);
    serial_ports_report();
    paging_record();
    cpu_inventory();
    cpu_lfence_fix(true);
    mce_init(&cpu_facts, true);
    acpi_inventory(boot, &acpi_facts);
    smbios_inventory(boot);
    watchdogs_init(cfg.watchdog_arm_tco, cfg.watchdog_leave);
}
