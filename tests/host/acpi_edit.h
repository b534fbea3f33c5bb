/* tests/host/acpi_edit.h - helpers shared by the ACPI host tests: find parsed facts, build
 * and swap tables in a fixture's fake memory, parse an edited fixture, and check the facts
 * QEMU's firmware is known to give (../shared/notes/qemu-facts.md). */
#ifndef TICKLAB_TESTS_HOST_ACPI_EDIT_H
#define TICKLAB_TESTS_HOST_ACPI_EDIT_H
#include <stddef.h>
#include <stdint.h>

#include "acpi_fixture.h"

#define NEW_TABLE_PHYS 0x20000000u   /* above every fixture region: a free spot */

/* A table under construction: header, then bytes appended. */
struct tbuf {
    uint8_t b[4096];
    size_t len;
};

const struct acpi_table *find_table(const struct acpi_info *a, const char *sig);
const struct acpi_override *find_override(const struct acpi_madt *m, unsigned irq);
void put32(uint8_t *p, uint32_t v);
uint32_t get32(const uint8_t *p);
void tb_begin(struct tbuf *t, const char *sig);
void tb_put(struct tbuf *t, const void *bytes, size_t n);
void tb_finish(struct tbuf *t);
void region_replace(struct fake_region *r, const void *bytes, size_t len);
void rsdt_set_entries(struct fake_mem *fm, const uint32_t *addrs, unsigned n);
void table_swap(struct fake_mem *fm, const char *sig, const struct tbuf *t);
/* Adds t at NEW_TABLE_PHYS and appends it to the RSDT (checksum fixed); false if no room. */
bool table_add(struct fake_mem *fm, const struct tbuf *t);
struct acpi_info *parse_edited(const char *fixture, void (*edit)(struct fake_mem *));
void check_qemu_madt(const struct acpi_madt *m);
void check_qemu_hpet(const struct acpi_hpet_info *h);
void check_qemu_pm_timer(const struct acpi_fadt_info *f);
void check_all_tables_ok(const struct acpi_info *a);

#endif
