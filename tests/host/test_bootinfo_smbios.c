/* tests/host/test_bootinfo_smbios.c - where the SMBIOS entry point comes from in the
 * loader's block: Multiboot2 tag 13 (ticklab.efi writes one per entry point the
 * configuration table lists, handoff_put_smbios) and the EFI system table's address (tags 11
 * and 12), through boot/efi/handoff.c and back through kernel/boot/bootinfo.c. */
#include <stdlib.h>

#include "boot/efi/handoff.h"
#include "kernel/boot/bootinfo.h"
#include "smbios_build.h"
#include "test.h"

/* The block b holds, parsed from an allocation of exactly its size. */
static void parse_block(struct handoff *b, uint32_t magic, struct boot_info *bi)
{
    uint32_t total = handoff_finish(b);
    CHECK(!b->overflow && total > 0);
    uint8_t *blk = malloc(total);
    memcpy(blk, b->buf, total);
    bootinfo_parse(magic, blk, total, NULL, bi);
    free(blk);
}

TEST(bootinfo_smbios_tags_and_systab_reach_the_kernel)
{
    uint8_t buf[1024], eps3[0x18], eps2[0x1F];
    sm_eps3(eps3, 3, 6, 0x7FFE0000, 0x1234);
    sm_eps2(eps2, 2, 8, 0xF0A00, 0x200, 9);
    struct handoff b;
    handoff_begin(&b, buf, sizeof(buf));
    CHECK(handoff_put_smbios(&b, eps3));
    CHECK(handoff_put_smbios(&b, eps2));
    uint64_t st = 0x7F5E0018;
    CHECK(handoff_tag(&b, MB2_TAG_EFI64, &st, sizeof(st)));
    struct boot_info bi;
    parse_block(&b, EFI_BOOT_MAGIC, &bi);
    CHECK_EQ_STR(bi.problem, NULL);
    REQUIRE(bi.n_smbios == 2);
    CHECK_EQ_U64(bi.smbios[0].len, 0x18);
    CHECK_EQ_MEM(bi.smbios[0].bytes, eps3, 0x18);
    CHECK_EQ_U64(bi.smbios[1].len, 0x1F);
    CHECK_EQ_MEM(bi.smbios[1].bytes, eps2, 0x1F);
    CHECK_EQ_U64(bi.efi_systab, st);
}

TEST(bootinfo_smbios_tag_carries_the_version_first)
{
    uint8_t buf[256], eps3[0x18];
    sm_eps3(eps3, 3, 7, 0x1000, 0x10);
    struct handoff b;
    handoff_begin(&b, buf, sizeof(buf));
    CHECK(handoff_put_smbios(&b, eps3));
    /* tag 13: type, size, then major, minor, six reserved bytes, the entry point */
    CHECK_EQ_U64(buf[8], MB2_TAG_SMBIOS);
    CHECK_EQ_U64(buf[12], 8 + 8 + 0x18);
    CHECK_EQ_U64(buf[16], 3);
    CHECK_EQ_U64(buf[17], 7);
    CHECK_EQ_MEM(buf + 24, "_SM3_", 5);
}

TEST(bootinfo_smbios_only_entry_points_become_tags)
{
    uint8_t buf[256], junk[0x20] = "RSD PTR not an smbios thing", eps3[0x18];
    sm_eps3(eps3, 3, 0, 0x1000, 0x10);
    eps3[6] = 0x40;                                   /* longer than any entry point */
    struct handoff b;
    handoff_begin(&b, buf, sizeof(buf));
    CHECK(!handoff_put_smbios(&b, junk));
    CHECK(!handoff_put_smbios(&b, eps3));
    CHECK(!handoff_put_smbios(&b, NULL));
    struct boot_info bi;
    parse_block(&b, EFI_BOOT_MAGIC, &bi);
    CHECK_EQ_U64(bi.n_smbios, 0);
}

/* GRUB's tag 13 as the Multiboot2 specification lays it out; a third entry point, an empty
 * one and an over-long one are bounded, and tag 11 carries a 32-bit system table. */
TEST(bootinfo_smbios_tags_bounded)
{
    uint8_t buf[1024], body[8 + 40];
    struct handoff b;
    handoff_begin(&b, buf, sizeof(buf));
    memset(body, 0xAB, sizeof(body));
    CHECK(handoff_tag(&b, MB2_TAG_SMBIOS, body, 8));              /* no entry point: ignored */
    CHECK(handoff_tag(&b, MB2_TAG_SMBIOS, body, sizeof(body)));   /* cut at 32 bytes */
    CHECK(handoff_tag(&b, MB2_TAG_SMBIOS, body, 8 + 24));
    CHECK(handoff_tag(&b, MB2_TAG_SMBIOS, body, 8 + 24));         /* a third: no room */
    uint32_t st32 = 0x7F5E0000;
    CHECK(handoff_tag(&b, 11, &st32, sizeof(st32)));
    struct boot_info bi;
    parse_block(&b, MB2_BOOT_MAGIC, &bi);
    CHECK_EQ_STR(bi.problem, NULL);
    CHECK_EQ_U64(bi.n_smbios, 2);
    CHECK_EQ_U64(bi.smbios[0].len, BOOT_SMBIOS_EPS_BYTES);
    CHECK_EQ_U64(bi.smbios[1].len, 24);
    CHECK_EQ_U64(bi.efi_systab, st32);
    CHECK(bi.uefi);
}
