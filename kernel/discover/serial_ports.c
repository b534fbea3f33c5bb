/* kernel/discover/serial_ports.c - see serial_ports.h. */
#include "kernel/discover/serial_ports.h"

#include "kernel/arch/paging.h"
#include "kernel/config.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"
#include "ticklab/pci.h"

#define PAGE_BYTES 4096u
#define ECAM_BUS_BYTES (1ull << 20)

enum port_source { SRC_SPCR, SRC_PCI, SRC_PROBE, SRC_CMDLINE };
static const char *const source_names[] = { "spcr", "pci", "probe", "cmdline" };
static const uint16_t com_ports[] = { 0x3F8, 0x2F8, 0x3E8, 0x2E8 };

struct serial_port {
    struct uart u;
    enum port_source source;
    char name[16];              /* "spcr", "pci 00:03.0", "com2", "0x2f8" */
    const char *problem;        /* why it takes no output (NULL: it answered) */
    bool console;               /* output goes there */
    bool pci;                   /* a PCI function (found by the walk or named by the SPCR) */
    uint8_t bus, dev, fn, bar;
    uint16_t vendor, device;
    bool decode_enabled;        /* the walk turned on its BAR's decoding */
};

static const char no_answer[] = "no answer (scratch register and loopback probe failed)";
static const char no_divisor[] = "no divisor makes the baud rate from this clock within 2 %";

static struct serial_port ports[SERIAL_PORTS_MAX];
static unsigned n_ports, n_consoles;
static struct pci_scan pci;
static const char *pci_method = "none";
static const char *console_note;  /* why console=spcr fell back to every port */

static struct serial_port *add(enum port_source src)
{
    if (n_ports == SERIAL_PORTS_MAX)
        return NULL;
    struct serial_port *p = &ports[n_ports++];
    *p = (struct serial_port){ .source = src };
    return p;
}

static struct serial_port *find(enum uart_space space, uint64_t addr)
{
    for (unsigned i = 0; i < n_ports; i++)
        if (ports[i].u.regs.space == space && ports[i].u.regs.addr == addr)
            return &ports[i];
    return NULL;
}

/* regs.mapped for an MMIO UART (uncached), or false when it cannot be reached. */
static bool map_regs(struct uart_regs *r)
{
    if (r->space != UART_SPACE_MMIO)
        return true;
    uint64_t page = r->addr & ~(uint64_t)(PAGE_BYTES - 1);
    uint8_t *v = phys_map_uncached(page, PAGE_BYTES * 2);
    r->mapped = v ? (uintptr_t)(v + (r->addr - page)) : 0;
    return v != NULL;
}

static void probe(struct serial_port *p, struct uart_regs r, uint32_t clock_hz, uint32_t baud)
{
    if (!map_regs(&r)) {
        p->u.regs = r;
        p->problem = "address beyond what the kernel can map";
        return;
    }
    int rc = uart_init_regs(&p->u, &r, clock_hz, baud);
    if (rc == -EINVAL)
        p->problem = no_divisor;
    else if (rc)
        p->problem = no_answer;
}

static void spcr_port(void)
{
    const struct acpi_spcr_info *s = &acpi_facts.spcr;
    if (!s->present)
        return;
    struct serial_port *p = add(SRC_SPCR);
    fmt_snprintf(p->name, sizeof(p->name), "spcr");
    struct uart_regs r = { .space = s->space == 1 ? UART_SPACE_IO : UART_SPACE_MMIO,
                           .addr = s->addr, .stride = s->stride, .access_bytes = s->access_bytes };
    p->pci = s->pci_device != 0xFFFF;
    if (p->pci) {
        p->bus = s->pci_bus, p->dev = s->pci_dev, p->fn = s->pci_fn;
        p->vendor = s->pci_vendor, p->device = s->pci_device;
    }
    uint32_t clock = s->clock_hz ? s->clock_hz
                     : p->pci && cfg.uart_clock_hz ? (uint32_t)cfg.uart_clock_hz : 0;
    probe(p, r, clock, cfg.console_baud_given ? cfg.console_baud : s->baud);
}

static void pci_config(struct pci_cfg *c)
{
    const struct acpi_mcfg_info *m = &acpi_facts.mcfg;
    *c = (struct pci_cfg){ .method = PCI_CFG_PORTS };
    pci_method = "ports";
    for (unsigned i = 0; i < m->n; i++) {
        const struct acpi_mcfg_entry *e = &m->e[i];
        if (e->segment != 0 || e->base == 0 || e->end_bus < e->start_bus)
            continue;
        uint64_t at = e->base + (uint64_t)e->start_bus * ECAM_BUS_BYTES;
        void *v = phys_map_uncached(at, (uint64_t)(e->end_bus - e->start_bus + 1) * ECAM_BUS_BYTES);
        if (!v)
            break;
        *c = (struct pci_cfg){ .method = PCI_CFG_ECAM, .ecam = (uintptr_t)v, .ecam_phys = at,
                               .start_bus = e->start_bus, .end_bus = e->end_bus };
        pci_method = "ecam";
        return;
    }
}

static void pci_ports(void)
{
    struct pci_cfg c;
    pci_config(&c);
    pci_find_serial(&c, &pci);
    for (unsigned i = 0; i < pci.n; i++) {
        const struct pci_serial *s = &pci.s[i];
        enum uart_space space = s->io ? UART_SPACE_IO : UART_SPACE_MMIO;
        struct serial_port *p = s->usable ? find(space, s->addr) : NULL;
        if (!p && !(p = add(SRC_PCI)))
            return;
        if (p->source == SRC_PCI)
            fmt_snprintf(p->name, sizeof(p->name), "pci %02x:%02x.%x", s->bus, s->dev, s->fn);
        p->pci = true;
        p->bus = s->bus, p->dev = s->dev, p->fn = s->fn, p->bar = s->bar;
        p->vendor = s->vendor, p->device = s->device;
        p->decode_enabled = s->decode_enabled;
        if (p->source != SRC_PCI)
            continue;                 /* the SPCR's port, already probed */
        if (!s->usable) {
            p->u.regs.space = space;
            p->problem = s->reason;
            continue;
        }
        struct uart_regs r = { .space = space, .addr = s->addr, .stride = 1, .access_bytes = 1 };
        probe(p, r, (uint32_t)cfg.uart_clock_hz, cfg.console_baud);
    }
}

/* COMn at its fixed port: listed unless nothing answers there (always when console= names
 * it); one that answers but cannot make the baud rate is listed with that problem. */
static void io_port(uint16_t port, enum port_source src, bool keep_silent_one)
{
    if (find(UART_SPACE_IO, port))
        return;
    struct serial_port *p = add(src);
    if (!p)
        return;
    unsigned com = 0;
    for (unsigned i = 0; i < 4; i++)
        if (com_ports[i] == port)
            com = i + 1;
    if (com)
        fmt_snprintf(p->name, sizeof(p->name), "com%u", com);
    else
        fmt_snprintf(p->name, sizeof(p->name), "%#x", port);
    const struct uart_regs r = { .space = UART_SPACE_IO, .addr = port, .stride = 1,
                                 .access_bytes = 1 };
    probe(p, r, 0, cfg.console_baud);
    if (p->problem == no_divisor && uart_init_regs(&p->u, &r, 0, 0) != 0)
        p->problem = no_answer;       /* asked whether anything is there, divisor untouched */
    if (p->problem == no_answer && !keep_silent_one)
        n_ports--;                    /* nothing there: not a port found */
}

static void choose(void)
{
    bool spcr_ok = n_ports && ports[0].source == SRC_SPCR && !ports[0].problem;
    if (cfg.console_mode == CONSOLE_SPCR && !spcr_ok)
        console_note = acpi_facts.spcr.present ? "console=spcr: the SPCR's port does not "
                                                 "answer; every port found is used"
                                               : "console=spcr: no usable SPCR; every port "
                                                 "found is used";
    for (unsigned i = 0; i < n_ports; i++) {
        struct serial_port *p = &ports[i];
        if (p->problem)
            continue;
        if (cfg.console_mode == CONSOLE_PORT)
            p->console = p->u.regs.space == UART_SPACE_IO && p->u.regs.addr == cfg.console_port;
        else if (cfg.console_mode == CONSOLE_SPCR && spcr_ok)
            p->console = i == 0;
        else
            p->console = true;
        if (p->console && klog_add_serial(&p->u) == 0)
            n_consoles++;
        else
            p->console = false;
    }
}

unsigned serial_ports_init(void)
{
    klog_init(NULL);
    if (cfg.console_mode == CONSOLE_NONE)
        return 0;
    spcr_port();
    pci_ports();
    if (cfg.console_mode == CONSOLE_PORT)
        io_port(cfg.console_port, SRC_CMDLINE, true);
    else
        for (unsigned i = 0; i < 4; i++)
            io_port(com_ports[i], SRC_PROBE, false);
    choose();
    return n_consoles;
}

/* ---- the report --------------------------------------------------------------------------- */

static const char *console_mode_name(enum console_mode m)
{
    return m == CONSOLE_AUTO ? "auto" : m == CONSOLE_SPCR ? "spcr"
           : m == CONSOLE_PORT ? "port" : "none";
}

/* The SPCR as found: used, absent, or why it was refused (an `error` record: the firmware's
 * table is wrong or describes a UART ticklab cannot drive). */
static const char *spcr_state(void)
{
    const struct acpi_spcr_info *s = &acpi_facts.spcr;
    if (s->present)
        return "usable";
    if (!s->decoded && !s->table_reason && s->reason && !k_strcmp(s->reason, "no table"))
        return "absent";
    return "refused";
}

static void spcr_problem(void)
{
    const struct acpi_spcr_info *s = &acpi_facts.spcr;
    static char why[160];
    if (k_strcmp(spcr_state(), "refused") != 0)
        return;
    if (s->table_reason)
        fmt_snprintf(why, sizeof(why), "SPCR table rejected (%s): COM ports probed instead",
                     s->table_reason);
    else if (s->decoded && s->reason && !k_strcmp(s->reason, "interface type not 16550-compatible"))
        fmt_snprintf(why, sizeof(why), "SPCR interface type %#x is not a 16550 (unsupported): "
                                       "COM ports probed instead", s->interface_type);
    else
        fmt_snprintf(why, sizeof(why), "SPCR not usable (%s): COM ports probed instead",
                     s->reason);
    rec_error("spcr", why);
}

static void summary_record(void)
{
    const struct acpi_spcr_info *s = &acpi_facts.spcr;
    struct rec r;
    rec_begin(&r, "serial_ports");
    json_str(&r.j, "console_mode", console_mode_name(cfg.console_mode));
    json_u64(&r.j, "found", n_ports);
    json_u64(&r.j, "consoles", n_consoles);
    json_str(&r.j, "spcr", spcr_state());
    json_str(&r.j, "spcr_reason", s->present ? NULL : s->reason);
    json_str(&r.j, "spcr_table_reason", s->table_reason);
    if (s->decoded) {
        json_u64(&r.j, "spcr_revision", s->revision);
        json_hex(&r.j, "spcr_interface_type", s->interface_type);
        json_u64(&r.j, "spcr_baud", s->baud);
        json_u64(&r.j, "spcr_irq_type", s->irq_type);
        json_u64(&r.j, "spcr_irq", s->irq);
        json_u64(&r.j, "spcr_gsi", s->gsi);
        json_str(&r.j, "spcr_note", s->note);
    }
    json_str(&r.j, "pci_method", pci_method);
    json_u64(&r.j, "pci_functions", pci.functions);
    json_u64(&r.j, "pci_serial", pci.n + pci.dropped);
    json_str(&r.j, "note", console_note);
    rec_emit(&r);
}

static void port_record(unsigned i, const struct serial_port *p)
{
    const struct uart *u = &p->u;
    bool io = u->regs.space == UART_SPACE_IO;
    struct rec r;
    rec_begin(&r, "serial_port");
    json_u64(&r.j, "index", i);
    json_str(&r.j, "source", source_names[p->source]);
    json_str(&r.j, "name", p->name);
    json_str(&r.j, "access", io ? "io" : "mmio");
    json_hex(&r.j, "address", u->regs.addr);
    json_u64(&r.j, "stride", u->regs.stride);
    json_u64(&r.j, "access_bytes", u->regs.access_bytes);
    json_u64(&r.j, "clock_hz", u->clock_hz);
    json_u64(&r.j, "baud", u->baud);
    json_bool(&r.j, "answered", u->present);
    json_u64(&r.j, "fifo_bytes", u->present ? u->fifo_bytes : 0);
    json_bool(&r.j, "console", p->console);
    json_str(&r.j, "problem", p->problem);
    if (p->pci) {
        char bdf[12];
        fmt_snprintf(bdf, sizeof(bdf), "%02x:%02x.%x", p->bus, p->dev, p->fn);
        json_str(&r.j, "pci", bdf);
        json_hex(&r.j, "pci_vendor", p->vendor);
        json_hex(&r.j, "pci_device", p->device);
        json_bool(&r.j, "pci_decode_enabled", p->decode_enabled);
    }
    rec_emit(&r);
    kprintf("  serial      %-12s %s %#llx, %u.%04u MHz, %u baud: %s%s%s\n", p->name,
            io ? "io" : "mmio", (unsigned long long)u->regs.addr, u->clock_hz / 1000000,
            u->clock_hz % 1000000 / 100, u->baud, p->problem ? p->problem : "answers",
            p->console ? " (output goes here)" : "",
            p->decode_enabled ? "; its PCI decoding was off: turned on" : "");
}

void serial_ports_report(void)
{
    spcr_problem();
    summary_record();
    for (unsigned i = 0; i < n_ports; i++)
        port_record(i, &ports[i]);
    if (!n_consoles)
        kprintf("  serial      no serial output (%s)\n",
                cfg.console_mode == CONSOLE_NONE ? "console=none" : "no port answers");
    if (console_note)
        kprintf("  serial      %s\n", console_note);
}
