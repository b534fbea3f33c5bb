/* kernel/discover/hpet_boot.c - see hpet_boot.h. */
#include "kernel/discover/hpet_boot.h"

#include "kernel/arch/paging.h"
#include "kernel/discover/acpi_report.h"
#include "kernel/discover/topology_acpi.h"
#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"

/* How long an enabled counter gets to show it moves: 2^26 TSC cycles, 6.7 ms at 10 GHz and
 * 64 ms at 1 GHz, thousands of ticks of the slowest HPET (10 MHz); the TSC need not be
 * calibrated for a bound. */
#define PROBE_CYC (1ull << 26)
/* FSB messages listed in the record, at most (PCH HPETs have 8 comparators): the record
 * stays under its size limit whatever the block claims. */
#define MAX_FSB_LISTED 8

static struct hpet_boot_state found;
static unsigned ioapic_unmasked;    /* IOAPIC entries masked first */

static void fsb_list(struct json *j, const struct hpet_boot_state *s)
{
    unsigned listed = 0, more = 0;
    json_arr_open(j, "fsb");
    for (unsigned n = 0; n < s->comparators; n++) {
        if (!(s->fsb_enabled & (1u << n)))
            continue;
        if (listed == MAX_FSB_LISTED) {
            more++;
            continue;
        }
        json_obj_open(j, 0);
        json_u64(j, "comparator", n);
        json_hex(j, "address", s->fsb_addr[n]);
        json_hex(j, "data", s->fsb_data[n]);
        json_obj_close(j);
        listed++;
    }
    json_arr_close(j);
    if (more)
        json_u64(j, "fsb_more", more);
}

static void record(uint64_t addr, const struct hpet_boot_state *s)
{
    struct rec r;
    rec_begin(&r, "hpet_boot_state");
    json_bool(&r.j, "present", s->reason == 0);
    json_str(&r.j, "reason", s->reason);
    json_hex(&r.j, "address", addr);
    if (!s->reason) {
        json_u64(&r.j, "comparators", s->comparators);
        json_bool(&r.j, "counter_enabled", s->counter_enabled);
        json_bool(&r.j, "counter_counting", s->counter_counting);
        json_bool(&r.j, "legacy_replacement", s->legacy_replacement);
        json_hex(&r.j, "int_enabled", s->int_enabled);
        json_hex(&r.j, "fsb_enabled", s->fsb_enabled);
        json_hex(&r.j, "periodic", s->periodic);
        json_hex(&r.j, "level", s->level);
        json_hex(&r.j, "status", s->status);
        json_arr_open(&r.j, "routes");
        for (unsigned n = 0; n < s->comparators; n++)
            json_elem_u64(&r.j, s->route[n]);
        json_arr_close(&r.j);
        fsb_list(&r.j, s);
        json_u64(&r.j, "left_armed", s->left_armed);
        json_bool(&r.j, "quieted", s->quieted);
        json_u64(&r.j, "ioapic_entries_masked_first", ioapic_unmasked);
    }
    rec_emit(&r);
}

static unsigned bits_set(uint32_t v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

static void say(const struct hpet_boot_state *s)
{
    if (s->reason) {
        kprintf("  hpet boot   not read: %s\n", s->reason);
        return;
    }
    kprintf("  hpet boot   counter %s; legacy replacement %s; %u comparator(s) armed "
            "(%u by FSB): quieted\n",
            !s->counter_enabled ? "stopped" : s->counter_counting ? "running" : "enabled, still",
            s->legacy_replacement ? "ON" : "off", s->left_armed,
            bits_set(s->fsb_enabled));
}

void hpet_boot_check(void)
{
    const struct acpi_hpet_info *t = &acpi_facts.hpet;
    if (!t->present)
        return;     /* the hpet_table record says why; there is nothing to quiet */
    /* Every IOAPIC entry masked first: clearing LEG_RT_CNF can raise a spurious interrupt
     * on some chipsets (Intel PCH datasheets, the HPET's "Interrupt Mapping"), and an entry
     * the firmware left unmasked would deliver it to a vector nobody handles yet. */
    static struct intr_topology topo;
    unsigned dropped;
    topology_from_acpi(&acpi_facts, &topo, &dropped);
    ioapic_unmasked = intr_mask_ioapics(&topo);
    void *mmio = phys_map(t->addr, HPET_MMIO_BYTES);
    if (!mmio) {
        found = (struct hpet_boot_state){ .reason = "cannot map the HPET block" };
    } else {
        /* 32-bit accesses: nothing is known of the platform yet, and every HPET takes them */
        hpet_boot_quiet((uintptr_t)mmio, true, PROBE_CYC, &found);
    }
    record(t->addr, &found);
    say(&found);
}
