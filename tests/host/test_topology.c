/* tests/host/test_topology.c - ISA IRQ routing from MADT overrides (kernel/intr/topology.c). */
#include "kernel/intr/topology.h"
#include "test.h"

/* What QEMU's q35 and pc MADTs say (../shared/notes/qemu-facts.md): IRQ0 -> GSI 2, and
 * IRQ 5, 9, 10, 11 level-triggered, active high. */
static struct intr_topology qemu_like(void)
{
    struct intr_topology t = { .valid = true, .lapic_addr = 0xFEE00000, .n_ioapics = 1,
                               .ioapics = { { .id = 0, .addr = 0xFEC00000, .gsi_base = 0 } } };
    t.overrides[t.n_overrides++] = (struct topo_override){ 0, 2, 0 };
    uint8_t level[] = { 5, 9, 10, 11 };
    for (unsigned i = 0; i < 4; i++)
        t.overrides[t.n_overrides++] = (struct topo_override){
            level[i], level[i], INTI_POLARITY_HIGH | INTI_TRIGGER_LEVEL };
    return t;
}

TEST(topology_irq0_goes_to_gsi2_edge_high)
{
    struct intr_topology t = qemu_like();
    struct isa_route r;
    REQUIRE(topo_isa_route(&t, 0, &r));
    CHECK_EQ_U64(r.gsi, 2);
    CHECK(r.overridden);
    CHECK(r.trigger == TRIGGER_EDGE);     /* flags 0 = conforms to ISA: edge, high */
    CHECK(r.polarity == POLARITY_HIGH);
}

TEST(topology_level_override_keeps_gsi)
{
    struct intr_topology t = qemu_like();
    struct isa_route r;
    REQUIRE(topo_isa_route(&t, 9, &r));
    CHECK_EQ_U64(r.gsi, 9);
    CHECK(r.trigger == TRIGGER_LEVEL);
    CHECK(r.polarity == POLARITY_HIGH);
}

TEST(topology_no_override_is_identity_edge_high)
{
    struct intr_topology t = qemu_like();
    struct isa_route r;
    REQUIRE(topo_isa_route(&t, 8, &r));
    CHECK_EQ_U64(r.gsi, 8);
    CHECK(!r.overridden);
    CHECK(r.trigger == TRIGGER_EDGE);
}

TEST(topology_active_low_polarity)
{
    struct intr_topology t = { .n_overrides = 1 };
    t.overrides[0] = (struct topo_override){ 4, 20, INTI_POLARITY_LOW | INTI_TRIGGER_LEVEL };
    struct isa_route r;
    REQUIRE(topo_isa_route(&t, 4, &r));
    CHECK_EQ_U64(r.gsi, 20);
    CHECK(r.polarity == POLARITY_LOW);
    CHECK(r.trigger == TRIGGER_LEVEL);
}

TEST(topology_rejects_irq_above_15)
{
    struct intr_topology t = qemu_like();
    struct isa_route r;
    CHECK(!topo_isa_route(&t, 16, &r));
}

TEST(topology_gsi_to_ioapic_by_range)
{
    struct intr_topology t = { .n_ioapics = 2 };
    t.ioapics[0] = (struct topo_ioapic){ 0, 0xFEC00000, 0 };
    t.ioapics[1] = (struct topo_ioapic){ 1, 0xFEC01000, 24 };
    unsigned pins[2] = { 24, 32 };
    CHECK_EQ_I64(topo_ioapic_for_gsi(&t, pins, 0), 0);
    CHECK_EQ_I64(topo_ioapic_for_gsi(&t, pins, 23), 0);
    CHECK_EQ_I64(topo_ioapic_for_gsi(&t, pins, 24), 1);
    CHECK_EQ_I64(topo_ioapic_for_gsi(&t, pins, 55), 1);
    CHECK_EQ_I64(topo_ioapic_for_gsi(&t, pins, 56), -1);
}

TEST(topology_names_gsi_by_override)
{
    struct intr_topology t = qemu_like();
    CHECK_EQ_I64(topo_isa_for_gsi(&t, 2), 0);
    CHECK_EQ_I64(topo_isa_for_gsi(&t, 3), -1);
}
