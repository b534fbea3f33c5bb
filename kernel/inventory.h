/* kernel/inventory.h - what this machine has, as records and a human table. */
#ifndef TICKLAB_INVENTORY_H
#define TICKLAB_INVENTORY_H
#include "kernel/boot/bootinfo.h"

void inventory_boot(const struct boot_info *boot);

#endif
