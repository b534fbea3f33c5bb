/* kernel/intr/topology.c - see topology.h. Pure logic, host-tested. */
#include "kernel/intr/topology.h"

static enum irq_polarity polarity_of(uint16_t flags)
{
    return (flags & INTI_POLARITY_MASK) == INTI_POLARITY_LOW ? POLARITY_LOW : POLARITY_HIGH;
}

static enum irq_trigger trigger_of(uint16_t flags)
{
    return (flags & INTI_TRIGGER_MASK) == INTI_TRIGGER_LEVEL ? TRIGGER_LEVEL : TRIGGER_EDGE;
}

bool topo_isa_route(const struct intr_topology *t, unsigned irq, struct isa_route *out)
{
    if (irq > 15)
        return false;
    *out = (struct isa_route){ .gsi = irq, .trigger = TRIGGER_EDGE, .polarity = POLARITY_HIGH };
    for (unsigned i = 0; i < t->n_overrides; i++) {
        const struct topo_override *o = &t->overrides[i];
        if (o->isa_irq != irq)
            continue;
        out->gsi = o->gsi;
        out->trigger = trigger_of(o->inti_flags);
        out->polarity = polarity_of(o->inti_flags);
        out->overridden = true;
        break;
    }
    return true;
}

int topo_ioapic_for_gsi(const struct intr_topology *t, const unsigned *pins, uint32_t gsi)
{
    for (unsigned i = 0; i < t->n_ioapics; i++) {
        uint32_t base = t->ioapics[i].gsi_base;
        if (gsi >= base && gsi - base < pins[i])
            return (int)i;
    }
    return -1;
}

int topo_isa_for_gsi(const struct intr_topology *t, uint32_t gsi)
{
    for (unsigned i = 0; i < t->n_overrides; i++)
        if (t->overrides[i].gsi == gsi)
            return t->overrides[i].isa_irq;
    return -1;
}
