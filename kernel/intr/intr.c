/* kernel/intr/intr.c - see intr.h. */
#include "kernel/intr/intr.h"

#include "ticklab/hotpath.h"
#include "ticklab/io.h"
#include "ticklab/ioapic.h"
#include "ticklab/pic8259.h"
#include "kernel/arch/machine_events.h"
#include "kernel/arch/paging.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "ticklab/errno.h"
#include "ticklab/fmt.h"

/* How long the self IPI may take to arrive: 2^27 TSC cycles is 13 ms at 10 GHz and far more
 * than any real delivery (a few hundred cycles). */
#define SELFTEST_TIMEOUT_CYC (1ull << 27)

static struct {
    enum intr_path mode;
    struct lapic apic;               /* how every CPU reaches its local APIC */
    struct lapic_info lapic;
    struct ioapic ioapics[TOPO_MAX_IOAPICS];
    unsigned pins[TOPO_MAX_IOAPICS];
    unsigned n_ioapics;
    const struct intr_topology *topo;
    struct intr_stats stats;
    bool lapic_up;
    const char *firmware_mode;  /* the local APIC as handed over: xapic, x2apic, disabled */
    const char *mode_reason;    /* why the mode in use (lapic_choose_x2apic) */
    bool dmar_opt_out;          /* the DMAR's X2APIC_OPT_OUT flag */
    uint8_t next_gsi_vector;
    uint64_t pin_used[TOPO_MAX_IOAPICS][4];    /* a bit per routed pin (240 at most) */
    volatile uint32_t selftest_hits;
    int learned_gsi[16];             /* an ISA IRQ's GSI proved by a test (irq_check), +1;
                                        0: the MADT's route holds */
    uint32_t unhandled_gsi[256];     /* GSI + 1 of an IOAPIC entry found unmasked at a vector
                                        nobody handles (then masked); 0: none */
    unsigned firmware_unmasked;      /* IOAPIC entries left unmasked, masked before anything
                                        else (intr_mask_ioapics) */
} st;

static void on_lapic_spurious(unsigned vector, void *ctx)
{
    (void)vector, (void)ctx;
    st.stats.lapic_spurious++;      /* no EOI for the spurious vector (SDM 11.9) */
}

static void on_lapic_error(unsigned vector, void *ctx)
{
    (void)vector, (void)ctx;
    st.stats.lapic_errors++;
    st.stats.last_esr = lapic_error_status(&st.apic);
    lapic_eoi(&st.apic);
}

static void on_pic_irq7_15(unsigned vector, void *ctx)
{
    unsigned irq = vector - VEC_PIC_BASE;
    (void)ctx;
    if (pic_is_spurious(irq)) {
        if (irq == 15) {
            st.stats.pic_spurious15++;
            pic_eoi(7);      /* the master did see the cascade line: acknowledge it there */
        } else {
            st.stats.pic_spurious7++;
        }
        return;
    }
    st.stats.pic_unexpected++;
    pic_eoi(irq);
}

/* An IOAPIC entry delivering `vector` with no handler: masked (nobody routed it; a level
 * line would re-fire at every EOI). Cold: it scans every entry of every IOAPIC. */
static void mask_unhandled_entries(unsigned vector)
{
    for (unsigned i = 0; i < st.n_ioapics; i++)
        for (unsigned pin = 0; pin < st.ioapics[i].pins; pin++) {
            uint64_t e = ioapic_read_entry(&st.ioapics[i], pin);
            if ((e & 0xFF) != vector || (e & IOAPIC_ENTRY_MASKED))
                continue;
            ioapic_mask(&st.ioapics[i], pin);
            st.unhandled_gsi[vector] = st.ioapics[i].gsi_base + pin + 1;
        }
}

/* irq_unhandled's acknowledgement (trap.c): the interrupt is ended where it is in service.
 * An 8259 IRQ (the 8259s deliver, or a masked one got through) at the 8259s, when their ISR
 * says it is theirs; anything the local APIC delivered (an IOAPIC entry, a message, an IPI,
 * a request left from before the run) by an EOI when its ISR bit is set; the spurious vector
 * and ExtINT deliveries set none and need none (SDM 11.8.5, 11.9). Linux acknowledges a
 * vector without a handler the same way ("No irq handler for vector"). */
static void ack_unhandled(unsigned vector)
{
    if (vector >= VEC_PIC_BASE && vector < VEC_PIC_BASE + 16 &&
        !pic_is_spurious(vector - VEC_PIC_BASE)) {
        pic_eoi(vector - VEC_PIC_BASE);
        return;
    }
    if (!st.lapic_up || !lapic_in_service(&st.apic, (uint8_t)vector))
        return;
    lapic_eoi(&st.apic);
    mask_unhandled_entries(vector);
}

static void on_selftest(unsigned vector, void *ctx)
{
    (void)vector, (void)ctx;
    st.selftest_hits++;
    lapic_eoi(&st.apic);
}

static void *map_mmio(uint64_t phys, uint64_t len)
{
    return phys_map(phys, len);
}

static void report_lapic(const struct intr_topology *topo)
{
    struct rec r;
    rec_begin(&r, "lapic");
    json_str(&r.j, "mode", st.lapic.x2apic ? "x2apic" : "xapic");
    json_u64(&r.j, "id", st.lapic.id);
    json_hex(&r.j, "version", st.lapic.version);
    json_u64(&r.j, "max_lvt", st.lapic.max_lvt);
    json_hex(&r.j, "base", st.lapic.base_phys);
    json_str(&r.j, "firmware_mode", st.firmware_mode);
    json_str(&r.j, "mode_reason", st.mode_reason);
    json_bool(&r.j, "dmar_x2apic_opt_out", st.dmar_opt_out);
    if (topo->valid)
        json_bool(&r.j, "base_matches_madt", topo->lapic_addr == st.lapic.base_phys);
    json_hex(&r.j, "firmware_svr", st.lapic.firmware_svr);
    json_obj_open(&r.j, "firmware_lvt");
    for (unsigned i = 0; i < LAPIC_LVTS; i++)
        if (st.lapic.lvt_present[i])
            json_hex(&r.j, lapic_lvt_names[i], st.lapic.firmware_lvt[i]);
    json_obj_close(&r.j);
    json_u64(&r.j, "stale_in_service", st.lapic.stale_in_service);
    json_bool(&r.j, "stale_drained", st.lapic.stale_drained);
    json_u64(&r.j, "stale_requested", st.lapic.stale_requested);
    rec_emit(&r);
    if (st.lapic.stale_in_service || st.lapic.stale_requested || !st.lapic.stale_drained)
        kprintf("  lapic       %u interrupt(s) left in service ended by EOI%s, %u request(s) "
                "left waiting\n", st.lapic.stale_in_service,
                st.lapic.stale_drained ? "" : " (NOT all: the bound ran out)",
                st.lapic.stale_requested);
    kprintf("  lapic       %s, id %u, version %#x, %u LVT entries, base %#llx (%s)\n",
            st.lapic.x2apic ? "x2APIC" : "xAPIC", st.lapic.id, st.lapic.version,
            st.lapic.max_lvt, (unsigned long long)st.lapic.base_phys, st.mode_reason);
}

static void probe_ioapics(const struct intr_topology *topo)
{
    for (unsigned i = 0; i < topo->n_ioapics; i++) {
        const struct topo_ioapic *t = &topo->ioapics[i];
        struct ioapic *io = &st.ioapics[st.n_ioapics];
        void *mmio = map_mmio(t->addr, 0x20);
        int rc = mmio ? ioapic_init(io, (uintptr_t)mmio, t->gsi_base) : -ENOMEM;

        struct rec r;
        rec_begin(&r, "ioapic");
        json_u64(&r.j, "madt_id", t->id);
        json_hex(&r.j, "addr", t->addr);
        json_u64(&r.j, "gsi_base", t->gsi_base);
        json_bool(&r.j, "usable", rc == 0);
        if (rc == 0) {
            json_u64(&r.j, "id", io->id);
            json_hex(&r.j, "version", io->version);
            json_u64(&r.j, "pins", io->pins);
            st.pins[st.n_ioapics++] = io->pins;
            kprintf("  ioapic      id %u at %#llx, GSI %u..%u, version %#x\n", io->id,
                    (unsigned long long)t->addr, t->gsi_base, t->gsi_base + io->pins - 1,
                    io->version);
        } else {
            json_str(&r.j, "reason", rc == -ENOMEM ? "cannot map" : "no IOAPIC answers");
            kprintf("  ioapic      at %#llx: not usable\n", (unsigned long long)t->addr);
        }
        rec_emit(&r);
    }
}

static bool selftest(void)
{
    irq_set_handler(VEC_SELFTEST, on_selftest, NULL);
    unsigned long flags = irq_save();
    lapic_self_ipi(&st.apic, VEC_SELFTEST);
    irq_enable();
    uint64_t t0 = rdtsc();
    while (!st.selftest_hits && rdtsc() - t0 < SELFTEST_TIMEOUT_CYC)
        cpu_relax();
    irq_disable();
    irq_restore(flags);
    irq_clear_handler(VEC_SELFTEST);
    return st.selftest_hits == 1;
}

static void report_interrupts(bool selftest_ok)
{
    struct rec r;
    rec_begin(&r, "interrupts");
    json_str(&r.j, "mode", st.mode == INTR_IOAPIC ? "ioapic" : "pic");
    json_u64(&r.j, "ioapics", st.n_ioapics);
    json_bool(&r.j, "self_ipi_delivered", selftest_ok);
    json_obj_open(&r.j, "isa_routes");
    for (unsigned irq = 0; irq < 16; irq++) {
        struct isa_route ir;
        if (!topo_isa_route(st.topo, irq, &ir) || !ir.overridden)
            continue;
        char key[8];
        fmt_snprintf(key, sizeof(key), "irq%u", irq);
        json_obj_open(&r.j, key);
        json_u64(&r.j, "gsi", ir.gsi);
        json_str(&r.j, "trigger", ir.trigger == TRIGGER_LEVEL ? "level" : "edge");
        json_str(&r.j, "polarity", ir.polarity == POLARITY_LOW ? "low" : "high");
        json_obj_close(&r.j);
        kprintf("  override    ISA IRQ %u -> GSI %u, %s, active %s\n", irq, ir.gsi,
                ir.trigger == TRIGGER_LEVEL ? "level" : "edge",
                ir.polarity == POLARITY_LOW ? "low" : "high");
    }
    json_obj_close(&r.j);
    rec_emit(&r);
    kprintf("  interrupts  through the %s; self IPI %s\n",
            st.mode == INTR_IOAPIC ? "IOAPIC" : "8259 PIC (no usable IOAPIC)",
            selftest_ok ? "delivered" : "NOT delivered");
}

int intr_init(const struct intr_topology *topo, const struct cpu_info *cpu,
              bool dmar_x2apic_opt_out)
{
    st.topo = topo;
    st.next_gsi_vector = VEC_GSI_BASE;
    pic_remap_and_mask();
    irq_set_handler(VEC_PIC_BASE + 7, on_pic_irq7_15, NULL);
    irq_set_handler(VEC_PIC_BASE + 15, on_pic_irq7_15, NULL);
    irq_set_handler(VEC_SPURIOUS, on_lapic_spurious, NULL);
    irq_set_handler(VEC_LAPIC_ERROR, on_lapic_error, NULL);
    irq_set_unhandled_ack(ack_unhandled);

    if (!cpu->apic) {
        rec_error("lapic", "CPUID says there is no local APIC");
        return -ENODEV;
    }
    uint64_t handed = rdmsr(MSR_APIC_BASE), base = handed & APIC_BASE_ADDR;
    st.firmware_mode = !(handed & APIC_BASE_ENABLE) ? "disabled"
                       : handed & APIC_BASE_X2APIC ? "x2apic" : "xapic";
    st.dmar_opt_out = dmar_x2apic_opt_out;
    bool x2 = lapic_choose_x2apic(cpu->x2apic, handed & APIC_BASE_X2APIC, dmar_x2apic_opt_out,
                                  &st.mode_reason);
    void *mmio = map_mmio(base, 0x1000);
    int rc = lapic_init(&st.apic, (uintptr_t)mmio, x2, VEC_SPURIOUS, VEC_LAPIC_ERROR, &st.lapic);
    if (rc) {
        rec_error("lapic", "the local APIC did not come up enabled");
        return rc;
    }
    bool nmi_pin = false;
    for (unsigned i = 0; i < topo->n_nmis; i++)
        if (topo->nmis[i].all_cpus) {
            lapic_set_nmi(&st.apic, topo->nmis[i].lint, topo->nmis[i].inti_flags);
            nmi_pin = true;
        }
    /* No MADT entry: LINT1 is the NMI input on every PC since the first APICs (MP spec
     * 3.6.2), and Linux sets it so on the boot CPU whatever the MADT says. lapic_init()
     * masked it with the rest. */
    if (!nmi_pin)
        lapic_set_nmi(&st.apic, 1, 0);
    st.lapic_up = true;
    report_lapic(topo);
    probe_ioapics(topo);
    st.mode = st.n_ioapics ? INTR_IOAPIC : INTR_PIC;
    if (st.mode == INTR_PIC)
        lapic_virtual_wire(&st.apic);   /* the 8259s reach this CPU through LINT0 */
    report_interrupts(selftest());
    return 0;
}

unsigned intr_mask_ioapics(const struct intr_topology *topo)
{
    unsigned unmasked = 0;
    for (unsigned i = 0; i < topo->n_ioapics; i++) {
        struct ioapic io;
        void *mmio = map_mmio(topo->ioapics[i].addr, 0x20);
        if (!mmio || ioapic_probe(&io, (uintptr_t)mmio, topo->ioapics[i].gsi_base))
            continue;
        for (unsigned pin = 0; pin < io.pins; pin++)
            if (!(ioapic_read_entry(&io, pin) & IOAPIC_ENTRY_MASKED)) {
                ioapic_mask(&io, pin);
                unmasked++;
            }
    }
    st.firmware_unmasked += unmasked;
    return unmasked;
}

static int route_ioapic(uint32_t gsi, uint8_t vector, enum irq_trigger trig,
                        enum irq_polarity pol, uint32_t dest, struct intr_route *out)
{
    if (!st.topo)
        return -ENODEV;
    int idx = topo_ioapic_for_gsi(st.topo, st.pins, gsi);
    if (idx < 0)
        return -ENODEV;
    struct ioapic *io = &st.ioapics[idx];
    unsigned pin = gsi - io->gsi_base;
    /* One owner per pin: a second route would overwrite the first's entry and silence it
     * (QEMU's pc: the HPET's comparators can only drive GSI 2, the PIT's IRQ0). */
    if (st.pin_used[idx][pin / 64] & (1ull << (pin % 64)))
        return -EBUSY;
    /* xAPIC destinations are 8 bits; a larger x2APIC id would need interrupt remapping. */
    if (dest > 0xFF)
        return -ENOTSUP;
    int rc = ioapic_route(io, pin, vector, (uint8_t)dest, trig, pol);
    if (rc)
        return rc;
    *out = (struct intr_route){ .path = INTR_IOAPIC, .vector = vector, .gsi = gsi,
                                .ioapic = idx, .pin = pin, .trigger = trig, .polarity = pol };
    st.pin_used[idx][pin / 64] |= 1ull << (pin % 64);
    return 0;
}

int intr_route_isa(unsigned irq, uint8_t vector, irq_handler_fn fn, void *ctx,
                   struct intr_route *out)
{
    struct isa_route ir;
    if (!st.topo || !topo_isa_route(st.topo, irq, &ir))
        return -EINVAL;
    if (st.learned_gsi[irq])
        ir.gsi = (uint32_t)(st.learned_gsi[irq] - 1);
    int rc;
    if (st.mode == INTR_IOAPIC) {
        rc = route_ioapic(ir.gsi, vector, ir.trigger, ir.polarity, st.lapic.id, out);
    } else {
        vector = (uint8_t)(VEC_PIC_BASE + irq);
        *out = (struct intr_route){ .path = INTR_PIC, .vector = vector, .pin = irq };
        rc = 0;
    }
    if (rc)
        return rc;
    rc = irq_set_handler(out->vector, fn, ctx);
    if (rc && out->path == INTR_IOAPIC)
        st.pin_used[out->ioapic][out->pin / 64] &= ~(1ull << (out->pin % 64));
    return rc;
}

/* The next device vector, or -EBUSY: handed out once, never recycled (a released route's
 * vector may still have an interrupt on its way). */
static int take_vector(void)
{
    if (st.next_gsi_vector > VEC_GSI_LAST)
        return -EBUSY;
    return st.next_gsi_vector++;
}

int intr_route_gsi_to(uint32_t gsi, enum irq_trigger trigger, enum irq_polarity polarity,
                      uint32_t dest_apic_id, irq_handler_fn fn, void *ctx,
                      struct intr_route *out)
{
    if (st.mode != INTR_IOAPIC)
        return -ENODEV;
    if (st.next_gsi_vector > VEC_GSI_LAST)
        return -EBUSY;
    int rc = route_ioapic(gsi, st.next_gsi_vector, trigger, polarity, dest_apic_id, out);
    if (rc)
        return rc;
    rc = irq_set_handler(out->vector, fn, ctx);
    if (rc) {
        st.pin_used[out->ioapic][out->pin / 64] &= ~(1ull << (out->pin % 64));
        return rc;
    }
    take_vector();
    return 0;
}

#define MSI_ADDR_BASE     0xFEE00000u   /* SDM 11.11.1: bits 31:20 = 0xFEE */
#define MSI_ADDR_DEST_SHIFT 12          /* destination APIC ID, physical mode (DM = 0) */

int intr_route_msi(uint32_t dest_apic_id, irq_handler_fn fn, void *ctx,
                   struct intr_route *out)
{
    if (!st.lapic_up)
        return -ENODEV;
    /* 8 bits of destination in the address; more needs interrupt remapping. */
    if (dest_apic_id > 0xFF)
        return -ENOTSUP;
    if (st.next_gsi_vector > VEC_GSI_LAST)
        return -EBUSY;
    uint8_t vector = st.next_gsi_vector;
    int rc = irq_set_handler(vector, fn, ctx);
    if (rc)
        return rc;
    take_vector();
    /* data: the vector, fixed delivery (10:8 = 0), edge (bit 15 = 0) */
    *out = (struct intr_route){ .path = INTR_MSI, .vector = vector,
                                .msi_addr = MSI_ADDR_BASE | dest_apic_id << MSI_ADDR_DEST_SHIFT,
                                .msi_data = vector };
    return 0;
}

void intr_unmask(const struct intr_route *r)
{
    if (r->path == INTR_IOAPIC)
        ioapic_unmask(&st.ioapics[r->ioapic], r->pin);
    else if (r->path == INTR_PIC)
        pic_unmask(r->pin);
}

void intr_mask(const struct intr_route *r)
{
    if (r->path == INTR_IOAPIC)
        ioapic_mask(&st.ioapics[r->ioapic], r->pin);
    else if (r->path == INTR_PIC)
        pic_mask(r->pin);
}

/* The acknowledgement itself: the 8259's for its pins, else the local APIC's (in line: one
 * register write). */
static inline __attribute__((always_inline)) void eoi(const struct intr_route *r)
{
    if (r->path == INTR_PIC)
        pic_eoi(r->pin);
    else
        lapic_eoi(&st.apic);
}

/* While irq_probe.split: the same, between two stamps. Apart, so that the usual path keeps
 * no frame for the stamps. */
static __attribute__((noinline)) void eoi_stamped(const struct intr_route *r)
{
    irq_probe.eoi_begin_tsc = rdtsc_ordered();
    eoi(r);
    irq_probe.eoi_end_tsc = rdtsc_ordered();
}

HOT_PATH void intr_eoi(const struct intr_route *r)
{
    if (__builtin_expect(irq_probe.split, 0))
        eoi_stamped(r);
    else
        eoi(r);
}

uint64_t intr_lapic_phys(void)
{
    return st.lapic.base_phys;
}

bool intr_lapic_x2apic(void)
{
    return st.lapic.x2apic;
}

const struct lapic *intr_apic(void)
{
    return &st.apic;
}

/* The LAPIC timer's interrupts: the local APIC's EOI in line, no route to look at. */
HOT_PATH void intr_eoi_local(void)
{
    static const struct intr_route local = { .path = INTR_NONE };
    if (__builtin_expect(irq_probe.split, 0))
        eoi_stamped(&local);
    else
        lapic_eoi(&st.apic);
}

bool intr_isa_overridden(unsigned irq)
{
    struct isa_route ir;
    return st.topo && topo_isa_route(st.topo, irq, &ir) && ir.overridden;
}

void intr_learn_isa_gsi(unsigned irq, uint32_t gsi)
{
    if (irq < 16)
        st.learned_gsi[irq] = (int)gsi + 1;
}

uint32_t intr_lapic_id(void)
{
    return st.lapic.id;
}

void intr_release(struct intr_route *r)
{
    intr_mask(r);
    if (r->path == INTR_IOAPIC)
        st.pin_used[r->ioapic][r->pin / 64] &= ~(1ull << (r->pin % 64));
    irq_clear_handler(r->vector);
    r->path = INTR_NONE;
}

const struct intr_stats *intr_stats(void)
{
    return &st.stats;
}

/* What may have sent `vector`, from what the run knows of the machine. */
static void unexpected_source(unsigned v, char *buf, size_t len)
{
    if (st.unhandled_gsi[v]) {
        fmt_snprintf(buf, len, "an IOAPIC entry nobody routed (GSI %u), masked",
                     st.unhandled_gsi[v] - 1);
        return;
    }
    for (unsigned i = 0; i < LAPIC_LVTS; i++)
        if (st.lapic.lvt_present[i] && (st.lapic.firmware_lvt[i] & 0xFF) == v &&
            ((st.lapic.firmware_lvt[i] >> 8) & 7) == 0) {
            fmt_snprintf(buf, len, "the local APIC's %s LVT entry as the firmware left it "
                         "(masked since)", lapic_lvt_names[i]);
            return;
        }
    if ((st.lapic.stale_irr[v / 32] >> (v % 32)) & 1) {
        fmt_snprintf(buf, len, "a request left waiting in the local APIC from before the run");
        return;
    }
    if (v >= VEC_PIC_BASE && v < VEC_PIC_BASE + 16) {
        fmt_snprintf(buf, len, "8259 IRQ %u", v - VEC_PIC_BASE);
        return;
    }
    fmt_snprintf(buf, len, "no entry names it: an IPI, a message (MSI), or an interrupt "
                 "raised after its handler was removed");
}

void intr_report_stats(void)
{
    struct rec r;
    rec_begin(&r, "irq_stats");
    json_obj_open(&r.j, "vectors");
    for (unsigned v = 0; v < 256; v++) {
        uint64_t n = irq_count(v);
        if (!n)
            continue;
        char key[8];
        fmt_snprintf(key, sizeof(key), "0x%02x", v);
        json_u64(&r.j, key, n);
    }
    json_obj_close(&r.j);
    json_u64(&r.j, "lapic_spurious", st.stats.lapic_spurious);
    json_u64(&r.j, "lapic_errors", st.stats.lapic_errors);
    json_hex(&r.j, "last_esr", st.stats.last_esr);
    json_u64(&r.j, "pic_spurious7", st.stats.pic_spurious7);
    json_u64(&r.j, "pic_spurious15", st.stats.pic_spurious15);
    json_u64(&r.j, "pic_unexpected", st.stats.pic_unexpected);
    rec_emit(&r);
    machine_events_report();
    for (unsigned v = 32; v < 256; v++) {
        if (!irq_unexpected(v))
            continue;
        char src[160];
        unexpected_source(v, src, sizeof(src));
        rec_begin(&r, "error");
        json_str(&r.j, "what", "unexpected_interrupt");
        json_u64(&r.j, "vector", v);
        json_u64(&r.j, "count", irq_unexpected(v));
        json_str(&r.j, "source", src);
        json_bool(&r.j, "acknowledged", true);
        if (st.unhandled_gsi[v])
            json_u64(&r.j, "masked_gsi", st.unhandled_gsi[v] - 1);
        rec_emit(&r);
        kprintf("  unexpected  vector %#x: %llu interrupt(s), no handler (%s): acknowledged, "
                "counted\n", v, (unsigned long long)irq_unexpected(v), src);
    }
}
