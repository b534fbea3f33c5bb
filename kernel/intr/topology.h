/* kernel/intr/topology.h - the interrupt wiring of the machine as the firmware describes it
 * (MADT), in the shape the routing code needs, and the pure rules for reading it. */
#ifndef TICKLAB_INTR_TOPOLOGY_H
#define TICKLAB_INTR_TOPOLOGY_H
#include <stdbool.h>
#include <stdint.h>

#include "ticklab/ioapic.h"

#define TOPO_MAX_IOAPICS   16
#define TOPO_MAX_OVERRIDES 32
#define TOPO_MAX_NMIS      8

/* MPS INTI flags, as in MADT interrupt source overrides and NMI entries */
#define INTI_POLARITY_MASK 0x3
#define   INTI_POLARITY_BUS  0x0      /* conforms to the bus: ISA is active high */
#define   INTI_POLARITY_HIGH 0x1
#define   INTI_POLARITY_LOW  0x3
#define INTI_TRIGGER_MASK  0xC
#define   INTI_TRIGGER_BUS   0x0      /* conforms to the bus: ISA is edge */
#define   INTI_TRIGGER_EDGE  0x4
#define   INTI_TRIGGER_LEVEL 0xC

struct topo_ioapic {
    uint8_t id;
    uint64_t addr;
    uint32_t gsi_base;
};

struct topo_override {
    uint8_t isa_irq;
    uint32_t gsi;
    uint16_t inti_flags;
};

struct topo_nmi {
    uint8_t lint;             /* LAPIC LINT0/1 */
    uint16_t inti_flags;
    bool all_cpus;            /* processor UID 0xFF */
};

struct intr_topology {
    bool valid;               /* a MADT was found and passed its checks */
    uint64_t lapic_addr;
    bool pcat_compat;         /* 8259s present (must be masked when the IOAPIC is used) */
    unsigned n_ioapics, n_overrides, n_nmis;
    struct topo_ioapic ioapics[TOPO_MAX_IOAPICS];
    struct topo_override overrides[TOPO_MAX_OVERRIDES];
    struct topo_nmi nmis[TOPO_MAX_NMIS];
};

struct isa_route {
    uint32_t gsi;
    enum irq_trigger trigger;
    enum irq_polarity polarity;
    bool overridden;          /* an override entry named this IRQ */
};

/* ISA IRQ (0..15) -> GSI, trigger and polarity, honouring the overrides: without one the IRQ
 * is identity-mapped, edge, active high (ISA rules). Returns false for irq > 15. */
bool topo_isa_route(const struct intr_topology *t, unsigned irq, struct isa_route *out);
/* The IOAPIC whose GSI range holds gsi (pins: its entry count, known after probing), or -1. */
int topo_ioapic_for_gsi(const struct intr_topology *t, const unsigned *pins, uint32_t gsi);
/* The IRQ whose override maps to gsi; used to name a GSI in reports. -1: none. */
int topo_isa_for_gsi(const struct intr_topology *t, uint32_t gsi);

#endif
