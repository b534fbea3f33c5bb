/* tests/host/test_cpu_plan.c - kernel/smp/cpu_plan.c: crafted MADTs (through the ACPI table
 * fixtures and the real parser) down to the list of CPUs ticklab would start: a CPU listed
 * twice (type 0 and type 9, or the same type), APIC ID 0xff in a type 0 entry, the x2APIC
 * broadcast, IDs over 0xfe in xAPIC mode, disabled and online-capable entries (by MADT
 * revision); and the spread over packages and cores when more CPUs are listed than started. */
#include <stdlib.h>

#include "acpi_edit.h"
#include "kernel/smp/cpu_plan.h"
#include "test.h"

static uint8_t madt_rev;
static const void *madt_body;
static size_t madt_body_len;

static void madt_swap(struct fake_mem *fm)
{
    struct tbuf t;
    uint32_t fixed[2] = { 0xFEE00000u, ACPI_MADT_PCAT_COMPAT };
    tb_begin(&t, "APIC");
    t.b[8] = madt_rev;
    tb_put(&t, fixed, sizeof(fixed));
    tb_put(&t, madt_body, madt_body_len);
    tb_finish(&t);
    table_swap(fm, "APIC", &t);
}

/* The MADT with these entries, parsed by drivers/acpi.c from the q35 fixture. */
static struct acpi_info *parse_madt(uint8_t rev, const void *body, size_t len)
{
    madt_rev = rev, madt_body = body, madt_body_len = len;
    return parse_edited("q35-seabios", madt_swap);
}

#define EN ACPI_MADT_CPU_ENABLED
#define OC ACPI_MADT_CPU_ONLINE_CAPABLE
#define L0(uid, id, fl) { ACPI_MADT_LAPIC, 8, uid, id, fl }
#define X2(id, fl, uid) { ACPI_MADT_X2APIC, 16, 0, id, fl, uid }

/* What firmware really writes, all in one table (entry numbers in the comments). */
static struct {
    struct acpi_madt_lapic bsp, cpu1;                       /* 0, 1 */
    struct acpi_madt_x2apic cpu1_again_x2;                  /* 2: type 9 for the same CPU */
    struct acpi_madt_lapic ff, absent, hotplug, cpu1_again; /* 3: 0xff; 4; 5; 6: type 0 again */
    struct acpi_madt_x2apic big, x2_broadcast;              /* 7: id 300; 8: 0xffffffff */
    struct acpi_madt_lapic cpu4_off;                        /* 9: disabled ... */
    struct acpi_madt_x2apic cpu4_on;                        /* 10: ... then listed enabled */
} __attribute__((packed)) messy = {
    L0(0, 0, EN), L0(1, 1, EN), X2(1, EN, 1), L0(2, 0xFF, EN), L0(3, 2, 0), L0(4, 3, OC),
    L0(5, 1, EN), X2(300, EN, 7), X2(0xFFFFFFFFu, EN, 8), L0(9, 4, 0), X2(4, EN, 10),
};

static const struct cpu_topology flat = { .valid = true, .source = "test" };

static const char *drop_reason(const struct cpu_plan *p, unsigned entry)
{
    for (unsigned i = 0; i < p->n_drops; i++)
        if (p->drops[i].entry == entry)
            return p->drops[i].reason;
    return NULL;
}

static void check_ids(const struct cpu_plan *p, const uint32_t *ids, unsigned n)
{
    if (!CHECK_EQ_U64(p->n_cpus, n))
        return;
    for (unsigned i = 0; i < n; i++)
        CHECK_EQ_U64(p->cpus[i].apic_id, ids[i]);
}

/* xAPIC mode: CPUs 0 (boot), 1 and 4 once each; every other entry dropped with its reason;
 * nothing addressed to 0xff or 0xffffffff. */
TEST(cpu_plan_madt_duplicates_broadcast_and_disabled_counted_once)
{
    struct acpi_info *a = parse_madt(5, &messy, sizeof(messy));
    REQUIRE(a && a->madt.present);
    CHECK_EQ_U64(a->madt.revision, 5);
    REQUIRE(a->madt.n_cpus == 11);
    static struct cpu_plan p;
    cpu_plan_build(&a->madt, a->madt.revision, 0, false, &flat, &p);
    static const uint32_t ids[] = { 0, 1, 4 };
    check_ids(&p, ids, 3);
    CHECK(p.bsp_listed && p.cpus[0].bsp && p.cpus[0].entry == 0);
    CHECK_EQ_U64(p.cpus[1].entry, 1);
    CHECK_EQ_U64(p.cpus[2].entry, 10);
    CHECK(p.cpus[2].x2apic_entry);
    CHECK_EQ_U64(p.n_drops, 8);
    CHECK_EQ_STR(drop_reason(&p, 2), "duplicate: the same APIC ID as an earlier entry of the "
                                     "other type (type 0 and type 9)");
    CHECK_EQ_STR(drop_reason(&p, 3), "type 0 entry with APIC ID 0xff: the xAPIC broadcast, "
                                     "not a CPU");
    CHECK_EQ_STR(drop_reason(&p, 4), "disabled: not present");
    CHECK_EQ_STR(drop_reason(&p, 5), "disabled, online capable: may be brought up later, "
                                     "not started at boot");
    CHECK_EQ_STR(drop_reason(&p, 6), "duplicate: the same APIC ID as an earlier entry");
    CHECK_EQ_STR(drop_reason(&p, 7), "APIC ID over 0xfe: unreachable with the local APIC in "
                                     "xAPIC mode");
    CHECK_EQ_STR(drop_reason(&p, 8), "type 9 entry with APIC ID 0xffffffff: the x2APIC "
                                     "broadcast, not a CPU");
    CHECK_EQ_STR(drop_reason(&p, 9), "duplicate (disabled) of an enabled entry with the same "
                                     "APIC ID");
    CHECK_EQ_U64(p.duplicates, 3);
    CHECK_EQ_U64(p.broadcast_ids, 2);
    CHECK_EQ_U64(p.unreachable, 1);
    CHECK_EQ_U64(p.disabled, 1);
    CHECK_EQ_U64(p.online_capable, 1);
    for (unsigned i = 0; i < p.n_cpus; i++)
        CHECK(p.cpus[i].chosen && p.cpus[i].apic_id != 0xFF);
    free(a);
}

/* x2APIC mode reaches ID 300; a MADT older than revision 5 has no Online Capable flag (bit 1
 * was reserved), so entry 5 is just disabled. */
TEST(cpu_plan_madt_x2apic_mode_and_old_revision)
{
    struct acpi_info *a = parse_madt(4, &messy, sizeof(messy));
    REQUIRE(a && a->madt.present);
    static struct cpu_plan p;
    cpu_plan_build(&a->madt, a->madt.revision, 0, true, &flat, &p);
    static const uint32_t ids[] = { 0, 1, 300, 4 };
    check_ids(&p, ids, 4);
    CHECK_EQ_STR(drop_reason(&p, 5), "disabled: not present");
    CHECK_EQ_U64(p.online_capable, 0);
    CHECK_EQ_U64(p.disabled, 2);
    CHECK_EQ_U64(p.unreachable, 0);
    free(a);
}

/* The boot CPU is always first and counted once, wherever (or whether) the MADT lists it. */
TEST(cpu_plan_boot_cpu_first_listed_or_not)
{
    static const struct { struct acpi_madt_lapic a, b, c; } __attribute__((packed))
        bsp_last = { L0(0, 1, EN), L0(1, 2, EN), L0(2, 7, EN) };
    struct acpi_info *a = parse_madt(3, &bsp_last, sizeof(bsp_last));
    REQUIRE(a);
    static struct cpu_plan p;
    cpu_plan_build(&a->madt, a->madt.revision, 7, false, &flat, &p);
    static const uint32_t ids[] = { 7, 1, 2 };
    check_ids(&p, ids, 3);
    CHECK(p.bsp_listed);
    CHECK_EQ_U64(p.cpus[0].entry, 2);
    cpu_plan_build(&a->madt, a->madt.revision, 9, false, &flat, &p);
    static const uint32_t ids9[] = { 9, 1, 2, 7 };
    check_ids(&p, ids9, 4);
    CHECK(!p.bsp_listed);
    cpu_plan_build(NULL, 0, 3, false, &flat, &p);
    CHECK_EQ_U64(p.n_cpus, 1);
    CHECK_EQ_U64(p.cpus[0].apic_id, 3);
    free(a);
}

/* A MADT listing n CPUs by type 0 entries, IDs 0..n-1 in order. */
static struct acpi_madt_lapic many[ACPI_MAX_CPUS];
static struct acpi_info *parse_n_cpus(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        many[i] = (struct acpi_madt_lapic)L0((uint8_t)i, (uint8_t)i, EN);
    return parse_madt(5, many, n * sizeof(many[0]));
}

static unsigned chosen_in(const struct cpu_plan *p, uint32_t package, int thread)
{
    unsigned n = 0;
    for (unsigned i = 0; i < p->n_cpus; i++)
        n += p->cpus[i].chosen && p->cpus[i].package == package &&
             (thread < 0 || p->cpus[i].thread == (uint32_t)thread);
    return n;
}

/* Two packages of 16 cores with 2 threads (smt 1 bit, package from bit 5), listed package by
 * package as firmware does: 16 of 64 are 8 per package, all first threads, 8 distinct cores
 * each; 40 of 64 are every core's first thread and 4 second threads per package. */
TEST(cpu_plan_spread_over_packages_and_cores)
{
    struct acpi_info *a = parse_n_cpus(64);
    REQUIRE(a && a->madt.n_cpus == 64);
    const struct cpu_topology two = { .valid = true, .source = "test", .smt_shift = 1,
                                      .pkg_shift = 5 };
    static struct cpu_plan p;
    cpu_plan_build(&a->madt, 5, 0, false, &two, &p);
    REQUIRE(p.n_cpus == 64);
    CHECK_EQ_U64(p.packages, 2);
    CHECK_EQ_U64(p.cpus[33].package, 1);
    CHECK_EQ_U64(p.cpus[33].core, 0);
    CHECK_EQ_U64(p.cpus[33].thread, 1);
    cpu_plan_choose(&p, 16, "limit");
    CHECK_EQ_U64(p.n_chosen, 16);
    CHECK_EQ_U64(chosen_in(&p, 0, 0), 8);
    CHECK_EQ_U64(chosen_in(&p, 1, 0), 8);
    bool core_used[2][16] = { { false } };
    for (unsigned i = 0; i < p.n_cpus; i++) {
        if (!p.cpus[i].chosen) {
            CHECK_EQ_STR(p.cpus[i].reason, "limit");
            continue;
        }
        CHECK(!core_used[p.cpus[i].package][p.cpus[i].core]);
        core_used[p.cpus[i].package][p.cpus[i].core] = true;
    }
    CHECK(p.cpus[0].chosen && p.cpus[0].bsp);
    cpu_plan_choose(&p, 40, "limit");
    CHECK_EQ_U64(p.n_chosen, 40);
    CHECK_EQ_U64(chosen_in(&p, 0, 0), 16);
    CHECK_EQ_U64(chosen_in(&p, 1, 0), 16);
    CHECK_EQ_U64(chosen_in(&p, 0, 1), 4);
    CHECK_EQ_U64(chosen_in(&p, 1, 1), 4);
    cpu_plan_choose(&p, 1, "limit");
    CHECK_EQ_U64(p.n_chosen, 1);
    CHECK(p.cpus[0].chosen);
    free(a);
}

/* QEMU's -smp 32,sockets=2,cores=16 (no SMT, package from bit 4) with cpus=8: 4 per
 * package; with the boot CPU in package 1 (listed last) it is still chosen. */
TEST(cpu_plan_spread_qemu_two_sockets)
{
    struct acpi_info *a = parse_n_cpus(32);
    REQUIRE(a && a->madt.n_cpus == 32);
    const struct cpu_topology qemu = { .valid = true, .source = "leaf 0xb", .smt_shift = 0,
                                       .pkg_shift = 4 };
    static struct cpu_plan p;
    cpu_plan_build(&a->madt, 5, 0, false, &qemu, &p);
    cpu_plan_choose(&p, 8, "cpus=");
    CHECK_EQ_U64(chosen_in(&p, 0, -1), 4);
    CHECK_EQ_U64(chosen_in(&p, 1, -1), 4);
    cpu_plan_build(&a->madt, 5, 31, false, &qemu, &p);
    CHECK_EQ_U64(p.cpus[0].apic_id, 31);
    cpu_plan_choose(&p, 3, "cpus=");
    CHECK(p.cpus[0].chosen);
    CHECK_EQ_U64(chosen_in(&p, 0, -1), 1);
    CHECK_EQ_U64(chosen_in(&p, 1, -1), 2);
    free(a);
}
