/* tests/host/test_dmar.c - the DMAR's x2APIC opt-out: a crafted DMAR added to the
 * q35 fixture and parsed by drivers/acpi.c, and the mode lapic_choose_x2apic() picks from
 * CPUID, the mode the firmware handed over in, and that flag. */
#include <stdlib.h>

#include "acpi_edit.h"
#include "ticklab/lapic.h"
#include "test.h"

static uint8_t dmar_flags;
static size_t dmar_body_len = 12;

/* A DMAR (width 39 bits, dmar_flags) at a free address, appended to the RSDT's entries. */
static void add_dmar(struct fake_mem *fm)
{
    struct tbuf t;
    uint8_t body[12] = { 38, dmar_flags };
    tb_begin(&t, "DMAR");
    tb_put(&t, body, dmar_body_len);
    tb_finish(&t);
    REQUIRE(table_add(fm, &t));
}

TEST(dmar_x2apic_opt_out_flag_parsed)
{
    dmar_flags = ACPI_DMAR_INTR_REMAP | ACPI_DMAR_X2APIC_OPT_OUT, dmar_body_len = 12;
    struct acpi_info *a = parse_edited("q35-seabios", add_dmar);
    REQUIRE(a);
    CHECK(a->dmar.present);
    CHECK_EQ_STR(a->dmar.reason, NULL);
    CHECK_EQ_U64(a->dmar.host_addr_width, 38);
    CHECK_EQ_U64(a->dmar.flags, 3);
    CHECK(a->dmar.intr_remap);
    CHECK(a->dmar.x2apic_opt_out);
    check_qemu_madt(&a->madt);              /* the rest as before */
    free(a);
    dmar_flags = ACPI_DMAR_INTR_REMAP;
    a = parse_edited("q35-seabios", add_dmar);
    REQUIRE(a);
    CHECK(a->dmar.present && a->dmar.intr_remap && !a->dmar.x2apic_opt_out);
    free(a);
}

/* No DMAR (QEMU without an IOMMU), and one too short to hold the flags. */
TEST(dmar_absent_or_short)
{
    struct acpi_info *a = parse_edited("q35-seabios", NULL);
    REQUIRE(a);
    CHECK(!a->dmar.present);
    CHECK_EQ_STR(a->dmar.reason, "no table");
    free(a);
    dmar_flags = ACPI_DMAR_X2APIC_OPT_OUT, dmar_body_len = 1;     /* the width only */
    a = parse_edited("q35-seabios", add_dmar);
    REQUIRE(a);
    CHECK(!a->dmar.present);
    CHECK(!a->dmar.x2apic_opt_out);
    CHECK_EQ_STR(a->dmar.reason, "shorter than DMAR fields");
    free(a);
    dmar_body_len = 12;
}

/* The opt-out keeps an xAPIC handover in xAPIC mode, and cannot undo an x2APIC one. */
TEST(dmar_x2apic_opt_out_decides_the_lapic_mode)
{
    const char *why = NULL;
    CHECK(lapic_choose_x2apic(true, false, false, &why));
    CHECK_EQ_STR(why, "CPUID offers x2APIC");
    CHECK(!lapic_choose_x2apic(true, false, true, &why));
    CHECK_EQ_STR(why, "the DMAR table's X2APIC_OPT_OUT flag: the firmware asks for xAPIC mode");
    CHECK(lapic_choose_x2apic(true, true, true, &why));
    CHECK_EQ_STR(why, "the firmware handed over in x2APIC mode: the DMAR's x2APIC opt-out "
                      "cannot be honoured (leaving x2APIC mode needs the APIC disabled)");
    CHECK(lapic_choose_x2apic(true, true, false, &why));
    CHECK_EQ_STR(why, "the firmware handed over in x2APIC mode");
    CHECK(!lapic_choose_x2apic(false, false, false, &why));
    CHECK_EQ_STR(why, "CPUID offers no x2APIC");
    CHECK(!lapic_choose_x2apic(false, false, true, &why));
}
