/* kernel/discover/topology_acpi.h - the MADT facts as the interrupt layer's topology. */
#ifndef TICKLAB_DISCOVER_TOPOLOGY_ACPI_H
#define TICKLAB_DISCOVER_TOPOLOGY_ACPI_H
#include "ticklab/acpi.h"
#include "kernel/intr/topology.h"

/* Fills t from a's MADT (t->valid = false when there is none). Only ISA (bus 0) overrides
 * are kept; entries beyond the topology's caps are dropped and counted in *dropped. */
void topology_from_acpi(const struct acpi_info *a, struct intr_topology *t, unsigned *dropped);

#endif
