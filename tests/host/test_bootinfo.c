/* tests/host/test_bootinfo.c - Multiboot1/2 information blocks, whole and malformed
 * (kernel/boot/bootinfo.c). Blocks are built in heap buffers of exactly their size, so
 * ASan catches any read past what the loader handed over. */
#include <stdlib.h>

#include "kernel/boot/bootinfo.h"
#include "test.h"

struct mb2 {
    uint8_t *buf;
    size_t len, cap;
};

static void put(struct mb2 *m, const void *p, size_t n)
{
    if (n == 0)
        return;
    memcpy(m->buf + m->len, p, n);
    m->len += n;
}

static void tag(struct mb2 *m, uint32_t type, const void *body, uint32_t body_len)
{
    uint32_t hdr[2] = { type, 8 + body_len };
    put(m, hdr, 8);
    put(m, body, body_len);
    while (m->len % 8)
        m->buf[m->len++] = 0;
}

static struct mb2 mb2_new(void)
{
    struct mb2 m = { .buf = calloc(1, 4096), .len = 8, .cap = 4096 };
    return m;
}

/* Finishes with an end tag and moves the block into an exact-size allocation. */
static uint8_t *mb2_finish(struct mb2 *m, size_t *len)
{
    tag(m, 0, NULL, 0);
    uint32_t total = (uint32_t)m->len;
    memcpy(m->buf, &total, 4);
    uint8_t *exact = malloc(m->len);
    memcpy(exact, m->buf, m->len);
    free(m->buf);
    *len = total;
    return exact;
}

static void *no_virt(uint64_t phys)
{
    (void)phys;
    return NULL;
}

TEST(bootinfo_mb2_cmdline_loader_fb_rsdp)
{
    struct mb2 m = mb2_new();
    tag(&m, 1, "hz=250 exp=none", 16);
    tag(&m, 2, "GRUB 2.06", 10);
    uint8_t fb[22 + 2 + 6] = { 0 };
    uint64_t addr = 0xFD000000;
    uint32_t pitch = 4096, w = 1024, h = 768;
    memcpy(fb, &addr, 8); memcpy(fb + 8, &pitch, 4); memcpy(fb + 12, &w, 4);
    memcpy(fb + 16, &h, 4);
    fb[20] = 32; fb[21] = 1;
    fb[24] = 16; fb[25] = 8; fb[26] = 8; fb[27] = 8; fb[28] = 0; fb[29] = 8;
    tag(&m, 8, fb, sizeof(fb));
    uint8_t rsdp[20] = "RSD PTR ";
    tag(&m, 14, rsdp, sizeof(rsdp));
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);

    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(bi.path == BOOT_MULTIBOOT2);
    CHECK_EQ_STR(bi.cmdline, "hz=250 exp=none");
    CHECK_EQ_STR(bi.loader, "GRUB 2.06");
    CHECK(bi.fb.kind == FB_RGB);
    CHECK_EQ_U64(bi.fb.width, 1024);
    CHECK_EQ_U64(bi.fb.red_pos, 16);
    CHECK_EQ_U64(bi.rsdp_len, 20);
    CHECK(!bi.uefi);
    CHECK(bi.problem == NULL);
    free(blk);
}

TEST(bootinfo_mb2_efi_tag_means_uefi)
{
    struct mb2 m = mb2_new();
    uint64_t systab = 0x7F000000;
    tag(&m, 12, &systab, 8);
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);
    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(bi.uefi);
    free(blk);
}

TEST(bootinfo_mb2_tag_past_end_is_reported)
{
    struct mb2 m = mb2_new();
    tag(&m, 1, "hz=250", 7);
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);
    uint32_t huge = 4000;
    memcpy(blk + 8 + 4, &huge, 4);          /* the cmdline tag claims 4000 bytes */
    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(bi.problem != NULL);
    CHECK_EQ_STR(bi.cmdline, "");
    free(blk);
}

TEST(bootinfo_mb2_total_size_beyond_avail)
{
    struct mb2 m = mb2_new();
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);
    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, len - 1, no_virt, &bi);
    CHECK(bi.problem != NULL);
    free(blk);
}

TEST(bootinfo_mb2_cmdline_without_nul_stays_inside_tag)
{
    struct mb2 m = mb2_new();
    tag(&m, 1, "hz=250xx", 8);               /* no terminating NUL inside the tag */
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);
    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK_EQ_STR(bi.cmdline, "hz=250xx");
    free(blk);
}

TEST(bootinfo_mb2_zero_size_tag_stops)
{
    struct mb2 m = mb2_new();
    tag(&m, 1, "a=b", 4);
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);
    memset(blk + 8 + 4, 0, 4);               /* tag size 0 would loop forever if trusted */
    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(bi.problem != NULL);
    free(blk);
}

TEST(bootinfo_unknown_magic)
{
    uint8_t blk[16] = { 0 };
    struct boot_info bi;
    bootinfo_parse(0x12345678, blk, sizeof(blk), no_virt, &bi);
    CHECK(bi.path == BOOT_UNKNOWN);
    CHECK(bi.problem != NULL);
}

/* Multiboot1: the loader's strings live elsewhere; to_virt maps "physical" 0x1000 to the
 * line the running test set. */
static const char *mb1_cmdline;
static uint8_t *mb1_mmap;
static void *mb1_virt(uint64_t phys)
{
    return phys == 0x1000 ? (void *)mb1_cmdline : phys == 0x2000 ? (void *)mb1_mmap : NULL;
}

/* A Multiboot1 block of exactly its fixed size with only the command line (flag bit 2),
 * parsed. */
static void parse_mb1_cmdline(const char *line, struct boot_info *bi)
{
    mb1_cmdline = line;
    uint8_t *blk = calloc(1, 116);
    uint32_t flags = 1u << 2, cmd = 0x1000;
    memcpy(blk, &flags, 4);
    memcpy(blk + 16, &cmd, 4);
    bootinfo_parse(MB1_BOOT_MAGIC, blk, 116, mb1_virt, bi);
    free(blk);
}

TEST(bootinfo_mb1_strips_image_path_and_defaults_to_text_mode)
{
    struct boot_info bi;
    parse_mb1_cmdline("/boot/ticklab.elf hz=300 exp=none", &bi);
    CHECK(bi.path == BOOT_MULTIBOOT1);
    CHECK_EQ_STR(bi.cmdline, "hz=300 exp=none");
    CHECK_EQ_STR(bi.image, "/boot/ticklab.elf");
    CHECK(bi.fb.kind == FB_EGA_TEXT);
}

/* The Multiboot1 memory map as QEMU and SeaBIOS give it: the available ranges counted, and
 * those below 1 MiB kept, so the other CPUs' start page can be checked against them. */
TEST(bootinfo_mb1_memory_map_low_ram)
{
    static const struct { uint64_t base, len; uint32_t type; } e[] = {
        { 0x0, 0x9FC00, 1 }, { 0x9FC00, 0x400, 2 }, { 0xF0000, 0x10000, 2 },
        { 0x100000, 0x1FEE0000, 1 },
    };
    uint8_t map[4 * 24];
    for (unsigned i = 0; i < 4; i++) {
        uint32_t size = 20;
        memcpy(map + i * 24, &size, 4);
        memcpy(map + i * 24 + 4, &e[i].base, 8);
        memcpy(map + i * 24 + 12, &e[i].len, 8);
        memcpy(map + i * 24 + 20, &e[i].type, 4);
    }
    mb1_mmap = map;
    uint8_t *blk = calloc(1, 116);
    uint32_t flags = 1u << 6, len = sizeof(map), addr = 0x2000;
    memcpy(blk, &flags, 4);
    memcpy(blk + 44, &len, 4);
    memcpy(blk + 48, &addr, 4);
    struct boot_info bi;
    bootinfo_parse(MB1_BOOT_MAGIC, blk, 116, mb1_virt, &bi);
    free(blk);
    CHECK(bi.problem == NULL);
    CHECK_EQ_U64(bi.mmap_entries, 4);
    CHECK_EQ_U64(bi.mem_usable_bytes, 0x9FC00ull + 0x1FEE0000ull);
    CHECK_EQ_U64(bi.n_low_ram, 1);
    CHECK(bootinfo_low_ram_covers(&bi, 0x7000, 0x1000));
    CHECK(!bootinfo_low_ram_covers(&bi, 0x9F000, 0x1000));      /* ends in the EBDA */
    CHECK(!bootinfo_low_ram_covers(&bi, 0xF0000, 0x1000));
}

TEST(bootinfo_mb1_keeps_first_word_with_equals)
{
    struct boot_info bi;
    parse_mb1_cmdline("hz=300 exp=none", &bi);
    CHECK_EQ_STR(bi.cmdline, "hz=300 exp=none");
    CHECK_EQ_STR(bi.image, "");
}

/* ---- the EFI application's block (boot/efi/handoff.c builds it, bootinfo.c parses it) ---- */

#include "boot/efi/handoff.h"

/* EFI memory types used below (UEFI 2.10 table 7-5) */
enum { EFI_LDR_CODE = 1, EFI_BS_DATA = 4, EFI_RT_DATA = 6, EFI_CONV = 7, EFI_ACPI_RECL = 9,
       EFI_ACPI_NVS = 10, EFI_MMIO = 11 };

/* desc_size 48: newer firmware's descriptors are longer than the struct; step by desc_size */
#define DESC 48
static void efi_desc(uint8_t *map, unsigned i, uint32_t type, uint64_t phys, uint64_t pages)
{
    struct efi_mem_desc d = { .type = type, .phys_start = phys, .pages = pages };
    memset(map + i * DESC, 0xA5, DESC);
    memcpy(map + i * DESC, &d, sizeof(d));
}

/* Moves a finished block into an allocation of exactly its size (ASan sees any overread). */
static uint8_t *exact_copy(const struct handoff *b, uint32_t total)
{
    CHECK_EQ_U64(total, b->len);
    uint8_t *p = malloc(total);
    memcpy(p, b->buf, total);
    return p;
}

TEST(bootinfo_efi_block_round_trip)
{
    uint8_t *buf = malloc(8192);
    struct handoff b;
    handoff_begin(&b, buf, 8192);
    const char line[] = "fs0:\\ticklab.efi hz=250 exp=none";
    CHECK(handoff_tag(&b, MB2_TAG_CMDLINE, line, sizeof(line)));
    CHECK(handoff_tag(&b, MB2_TAG_LOADER, "ticklab.efi 0.1.0", 18));
    CHECK(handoff_put_firmware(&b, 0x10000, (2u << 16) | 70, EFI_OPTIONS_TEXT, false, "EDK II"));
    struct fb_layout fb = { .phys = 0xC0000000, .pitch = 5120, .width = 1280, .height = 800,
                            .bpp = 32, .red_pos = 16, .red_size = 8, .green_pos = 8,
                            .green_size = 8, .blue_pos = 0, .blue_size = 8 };
    CHECK(handoff_put_fb(&b, &fb));
    uint8_t rsdp[36] = "RSD PTR ";
    rsdp[15] = 2;
    CHECK(handoff_tag(&b, MB2_TAG_ACPI_NEW, rsdp, sizeof(rsdp)));

    uint8_t map[6 * DESC];
    efi_desc(map, 0, EFI_CONV, 0x0, 0xA0);             /* 640 KiB */
    efi_desc(map, 1, EFI_LDR_CODE, 0x100000, 0x89);    /* merges into the next two */
    efi_desc(map, 2, EFI_CONV, 0x189000, 0x77);
    efi_desc(map, 3, EFI_BS_DATA, 0x200000, 0x100);
    efi_desc(map, 4, EFI_ACPI_RECL, 0x300000, 0x10);
    efi_desc(map, 5, EFI_MMIO, 0xFEC00000, 1);
    CHECK_EQ_I64(handoff_put_efi_mmap(&b, map, sizeof(map), DESC), 4);
    uint32_t total = handoff_finish(&b);
    CHECK(!b.overflow);
    uint8_t *blk = exact_copy(&b, total);

    struct boot_info bi;
    bootinfo_parse(EFI_BOOT_MAGIC, blk, total, no_virt, &bi);
    CHECK(bi.path == BOOT_EFI);
    CHECK(bi.uefi);
    CHECK(bi.problem == NULL);
    CHECK_EQ_STR(bi.cmdline, "hz=250 exp=none");
    CHECK_EQ_STR(bi.image, "fs0:\\ticklab.efi");
    CHECK_EQ_STR(bi.loader, "ticklab.efi 0.1.0");
    CHECK(bi.efi.present);
    CHECK_EQ_STR(bi.efi.vendor, "EDK II");
    CHECK_EQ_U64(bi.efi.revision, 0x10000);
    CHECK_EQ_U64(bi.efi.uefi_revision, (2u << 16) | 70);
    CHECK(bi.efi.options == EFI_OPTIONS_TEXT);
    CHECK(!bi.efi.cmdline_from_file);
    CHECK(bi.fb.kind == FB_RGB);
    CHECK_EQ_U64(bi.fb.phys, 0xC0000000);
    CHECK_EQ_U64(bi.fb.pitch, 5120);
    CHECK_EQ_U64(bi.fb.red_pos, 16);
    CHECK_EQ_U64(bi.rsdp_len, 36);
    CHECK_EQ_U64(bi.mmap_entries, 4);
    CHECK_EQ_U64(bi.mem_usable_bytes, (0xA0 + 0x89 + 0x77 + 0x100) * 4096ull);
    /* the other CPUs' start page (0x7000) lies in the first 640 KiB; the VGA hole does not */
    CHECK(bootinfo_low_ram_covers(&bi, 0x7000, 0x1000));
    CHECK(bootinfo_low_ram_covers(&bi, 0x9F000, 0x1000));
    CHECK(!bootinfo_low_ram_covers(&bi, 0x9F800, 0x1000));
    CHECK(!bootinfo_low_ram_covers(&bi, 0xA0000, 0x1000));
    free(blk);
    free(buf);
}

static void parse_efi_cmdline(const char *line, struct boot_info *bi)
{
    uint8_t buf[512];
    struct handoff b;
    handoff_begin(&b, buf, sizeof(buf));
    handoff_tag(&b, MB2_TAG_CMDLINE, line, strlen(line) + 1);
    uint32_t total = handoff_finish(&b);
    uint8_t *blk = exact_copy(&b, total);
    bootinfo_parse(EFI_BOOT_MAGIC, blk, total, no_virt, bi);
    free(blk);
}

/* The shell's program word goes to `image`; a boot entry's own first word stays, so that a
 * bad one is still reported by the command-line parser. */
TEST(bootinfo_efi_program_word_only_when_it_looks_like_one)
{
    struct boot_info bi;
    parse_efi_cmdline("BOOTX64.EFI hz=1", &bi);
    CHECK_EQ_STR(bi.image, "BOOTX64.EFI");
    CHECK_EQ_STR(bi.cmdline, "hz=1");
    parse_efi_cmdline("\\x hz=1", &bi);
    CHECK_EQ_STR(bi.image, "\\x");
    parse_efi_cmdline("hz hz=1", &bi);
    CHECK_EQ_STR(bi.image, "");
    CHECK_EQ_STR(bi.cmdline, "hz hz=1");
    parse_efi_cmdline("a\\b=1 hz=1", &bi);             /* has '=': a word, not a program */
    CHECK_EQ_STR(bi.cmdline, "a\\b=1 hz=1");
    CHECK(!bi.efi.present);                             /* no firmware tag in these blocks */
}

TEST(bootinfo_efi_firmware_tag_only_on_the_efi_path)
{
    uint8_t buf[256];
    struct handoff b;
    handoff_begin(&b, buf, sizeof(buf));
    handoff_put_firmware(&b, 1, 2, EFI_OPTIONS_NONE, true, "X");
    uint32_t total = handoff_finish(&b);
    uint8_t *blk = exact_copy(&b, total);
    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, total, no_virt, &bi);
    CHECK(!bi.efi.present);
    bootinfo_parse(EFI_BOOT_MAGIC, blk, total, no_virt, &bi);
    CHECK(bi.efi.present);
    CHECK(bi.efi.cmdline_from_file);
    CHECK_EQ_STR(bi.efi.vendor, "X");
    free(blk);
}

TEST(bootinfo_efi_firmware_tag_malformed)
{
    /* shorter than its fixed fields: reported, nothing taken */
    struct mb2 m = mb2_new();
    tag(&m, EFI_TAG_FIRMWARE, "\1\0\0\0", 4);
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);
    struct boot_info bi;
    bootinfo_parse(EFI_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(!bi.efi.present);
    CHECK(bi.problem != NULL);
    free(blk);

    /* a vendor with no NUL inside the tag, and an unknown options kind */
    uint8_t body[EFI_FW_FIXED_LEN + 5];
    memset(body, 0, sizeof(body));
    body[EFI_FW_OFF_OPTIONS] = 9;
    memcpy(body + EFI_FW_OFF_VENDOR, "ABCDE", 5);
    m = mb2_new();
    tag(&m, EFI_TAG_FIRMWARE, body, sizeof(body));
    blk = mb2_finish(&m, &len);
    bootinfo_parse(EFI_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(bi.efi.present);
    CHECK_EQ_STR(bi.efi.vendor, "ABCDE");
    CHECK(bi.efi.options == EFI_OPTIONS_NONE);
    CHECK(bi.problem != NULL);
    free(blk);
}

/* The Secure Boot tag: round trip, only on the EFI path, absent means no keys in the record. */
TEST(bootinfo_efi_secure_boot_tag)
{
    uint8_t buf[256];
    struct handoff b;
    handoff_begin(&b, buf, sizeof(buf));
    CHECK(handoff_put_secure_boot(&b, EFI_SB_VAR_ON, EFI_SB_VAR_OFF, EFI_SHIM_VERIFYING));
    uint32_t total = handoff_finish(&b);
    uint8_t *blk = exact_copy(&b, total);
    struct boot_info bi;
    bootinfo_parse(MB2_BOOT_MAGIC, blk, total, no_virt, &bi);
    CHECK(!bi.efi.sb_present);                          /* GRUB's path: not ours to trust */
    bootinfo_parse(EFI_BOOT_MAGIC, blk, total, no_virt, &bi);
    CHECK(bi.problem == NULL);
    CHECK(bi.efi.sb_present);
    CHECK(bi.efi.secure_boot == EFI_SB_VAR_ON);
    CHECK(bi.efi.setup_mode == EFI_SB_VAR_OFF);
    CHECK(bi.efi.shim == EFI_SHIM_VERIFYING);
    free(blk);

    parse_efi_cmdline("hz=1", &bi);                     /* an older block without the tag */
    CHECK(!bi.efi.sb_present);
}

TEST(bootinfo_efi_secure_boot_tag_malformed)
{
    /* short: reported, nothing taken */
    struct mb2 m = mb2_new();
    tag(&m, EFI_TAG_SECURE_BOOT, "\2\0\0\0\1\0\0\0", 8);
    size_t len;
    uint8_t *blk = mb2_finish(&m, &len);
    struct boot_info bi;
    bootinfo_parse(EFI_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(!bi.efi.sb_present);
    CHECK(bi.problem != NULL);
    free(blk);

    /* a value out of range: reported, the whole tag ignored (no half-true claim) */
    uint8_t body[EFI_SB_LEN] = { 0 };
    body[EFI_SB_OFF_SECURE_BOOT] = EFI_SB_VAR_ON;
    body[EFI_SB_OFF_SHIM] = 7;
    m = mb2_new();
    tag(&m, EFI_TAG_SECURE_BOOT, body, sizeof(body));
    blk = mb2_finish(&m, &len);
    bootinfo_parse(EFI_BOOT_MAGIC, blk, len, no_virt, &bi);
    CHECK(!bi.efi.sb_present);
    CHECK(bi.problem != NULL);
    free(blk);
}

TEST(efi_secure_boot_variable_classified)
{
    const uint8_t one = 1, zero = 0, two = 2, pair[2] = { 1, 0 };
    CHECK(classify_sb_var(false, NULL, 0) == EFI_SB_VAR_ABSENT);
    CHECK(classify_sb_var(true, &one, 1) == EFI_SB_VAR_ON);
    CHECK(classify_sb_var(true, &zero, 1) == EFI_SB_VAR_OFF);
    CHECK(classify_sb_var(true, &two, 1) == EFI_SB_VAR_BAD);
    CHECK(classify_sb_var(true, pair, 2) == EFI_SB_VAR_BAD);   /* not one byte */
    CHECK(classify_sb_var(true, NULL, 0) == EFI_SB_VAR_BAD);   /* GetVariable failed */
}

TEST(efi_load_options_classified)
{
    static const uint16_t shell[] = u"fs0:\\ticklab.efi hz=250";
    CHECK(classify_load_options(shell, sizeof(shell)) == EFI_OPTIONS_TEXT);
    CHECK(classify_load_options(NULL, 0) == EFI_OPTIONS_NONE);
    CHECK(classify_load_options(shell, 0) == EFI_OPTIONS_NONE);
    CHECK(classify_load_options(u"", 2) == EFI_OPTIONS_NONE);
    CHECK(classify_load_options(shell, 7) == EFI_OPTIONS_NOT_TEXT);        /* odd size */
    /* EDK2's auto-created boot entries carry this GUID as their optional data */
    static const uint8_t guid[16] = { 0x4e, 0xac, 0x08, 0x81, 0x11, 0x9f, 0x59, 0x4d,
                                      0x85, 0x0e, 0xe2, 0x1a, 0x52, 0x2c, 0x59, 0xb2 };
    CHECK(classify_load_options(guid, sizeof(guid)) == EFI_OPTIONS_NOT_TEXT);
    CHECK(classify_load_options(u"hz=1\x01", 10) == EFI_OPTIONS_NOT_TEXT); /* control char */
    CHECK(classify_load_options(u"profile=\u00e9t\u00e9", 22) == EFI_OPTIONS_TEXT);
    /* any alignment: the options are a byte buffer the firmware owns */
    uint8_t odd[2 * 8 + 1];
    memcpy(odd + 1, u"hz=250\t", 16);
    CHECK(classify_load_options(odd + 1, 16) == EFI_OPTIONS_TEXT);
}

TEST(efi_ucs2_to_utf8)
{
    char out[16];
    CHECK_EQ_U64(ucs2_to_utf8(out, sizeof(out), u"hz=250", 6), 6);
    CHECK_EQ_STR(out, "hz=250");
    ucs2_to_utf8(out, sizeof(out), u"a\u00e9", 8);               /* stops at the NUL unit */
    CHECK_EQ_STR(out, "a\xc3\xa9");
    static const uint16_t pair[] = { 0xD83D, 0xDE00, 0 };        /* U+1F600 */
    ucs2_to_utf8(out, sizeof(out), pair, 3);
    CHECK_EQ_STR(out, "\xf0\x9f\x98\x80");
    static const uint16_t lone[] = { 'x', 0xDC00, 'y', 0xD800 };  /* lone surrogates */
    ucs2_to_utf8(out, sizeof(out), lone, 4);
    CHECK_EQ_STR(out, "x\xef\xbf\xbdy\xef\xbf\xbd");
    /* the output fills up: no sequence is cut, the NUL always fits */
    CHECK_EQ_U64(ucs2_to_utf8(out, 4, u"ab\u00e9", 3), 2);
    CHECK_EQ_STR(out, "ab");
    CHECK_EQ_U64(ucs2_to_utf8(out, 1, u"ab", 2), 0);
    CHECK_EQ_STR(out, "");
}

TEST(efi_block_overflow_keeps_it_well_formed)
{
    uint8_t *buf = malloc(64);
    struct handoff b;
    handoff_begin(&b, buf, 64);
    CHECK(handoff_tag(&b, MB2_TAG_CMDLINE, "a=1", 4));         /* 8 + 16 + end 8: fits */
    char big[40] = { 0 };
    CHECK(!handoff_tag(&b, MB2_TAG_LOADER, big, sizeof(big)));  /* would leave no end tag */
    CHECK(b.overflow);
    CHECK(!handoff_tag(&b, MB2_TAG_LOADER, "x", 2));           /* nothing after an overflow */
    uint32_t total = handoff_finish(&b);
    CHECK_EQ_U64(total, 32);
    struct boot_info bi;
    bootinfo_parse(EFI_BOOT_MAGIC, buf, total, no_virt, &bi);
    CHECK(bi.problem == NULL);
    CHECK_EQ_STR(bi.cmdline, "a=1");
    free(buf);
}

TEST(efi_memory_map_conversion)
{
    CHECK_EQ_U64(mb2_memory_type(EFI_CONV), 1);
    CHECK_EQ_U64(mb2_memory_type(EFI_BS_DATA), 1);
    CHECK_EQ_U64(mb2_memory_type(EFI_RT_DATA), 2);
    CHECK_EQ_U64(mb2_memory_type(EFI_ACPI_RECL), 3);
    CHECK_EQ_U64(mb2_memory_type(EFI_ACPI_NVS), 4);
    CHECK_EQ_U64(mb2_memory_type(8), 5);
    CHECK_EQ_U64(mb2_memory_type(0x80000000u), 2);          /* OEM types: reserved */

    uint8_t buf[512];
    struct handoff b;
    uint8_t map[3 * DESC];
    efi_desc(map, 0, EFI_CONV, 0x1000, 0);                  /* empty: skipped */
    efi_desc(map, 1, EFI_CONV, 0xFFFFFFFFFFFFF000ull, 2);   /* wraps: skipped */
    efi_desc(map, 2, EFI_CONV, 0x2000, 1);
    handoff_begin(&b, buf, sizeof(buf));
    CHECK_EQ_I64(handoff_put_efi_mmap(&b, map, sizeof(map), 24), -1);    /* desc_size too small */
    CHECK_EQ_I64(handoff_put_efi_mmap(&b, map, sizeof(map), DESC), 1);
    handoff_begin(&b, buf, 40);                                  /* no room for the worst case */
    CHECK_EQ_I64(handoff_put_efi_mmap(&b, map, sizeof(map), DESC), -1);
    CHECK(b.overflow);
}

TEST(efi_gop_mask_to_field)
{
    uint8_t pos = 0, size = 0;
    CHECK(mask_to_field(0x00FF0000, &pos, &size));
    CHECK_EQ_U64(pos, 16);
    CHECK_EQ_U64(size, 8);
    CHECK(mask_to_field(0x0000001F, &pos, &size));
    CHECK_EQ_U64(pos, 0);
    CHECK_EQ_U64(size, 5);
    CHECK(!mask_to_field(0, &pos, &size));
    CHECK(!mask_to_field(0x0F0F, &pos, &size));
}

/* A loader that put the kernel above 16 MiB (GRUB by its relocatable tag, ticklab.efi where
 * the firmware had pages) lists the image as available RAM: the record store's region (the
 * largest available range above 16 MiB, high_ram) must leave it out, or the last screen's
 * records would be written over the running kernel. */
TEST(bootinfo_high_ram_leaves_out_the_kernel_image)
{
    static const struct { uint64_t base, len; uint32_t type; } e[] = {
        { 0x0, 0x9FC00, 1 }, { 0x100000, 0x1FEE0000, 1 },       /* 1 MiB .. 511 MiB */
    };
    uint8_t map[2 * 24];
    for (unsigned i = 0; i < 2; i++) {
        uint32_t size = 20;
        memcpy(map + i * 24, &size, 4);
        memcpy(map + i * 24 + 4, &e[i].base, 8);
        memcpy(map + i * 24 + 12, &e[i].len, 8);
        memcpy(map + i * 24 + 20, &e[i].type, 4);
    }
    uint32_t flags = 1u << 6, len = sizeof(map), addr = 0x2000;
    struct boot_info bi;
    static const uint64_t at[][2] = {          /* kernel base, expected high_ram base..end */
        { 0x100000, 0x1000000 },               /* at its link address: below 16 MiB */
        { 0x8000000, 0x8000000 + 0x700000 },   /* at 128 MiB: the larger side, above it */
        { 0x1C000000, 0x1000000 },             /* at 448 MiB: the larger side, below it */
    };
    for (unsigned k = 0; k < 3; k++) {
        mb1_mmap = map;
        uint8_t *blk = calloc(1, 116);
        memcpy(blk, &flags, 4);
        memcpy(blk + 44, &len, 4);
        memcpy(blk + 48, &addr, 4);
        bootinfo_reserve(at[k][0], 0x700000);
        bootinfo_parse(MB1_BOOT_MAGIC, blk, 116, mb1_virt, &bi);
        free(blk);
        CHECK_EQ_U64(bi.high_ram_base, at[k][1]);
        uint64_t end = bi.high_ram_base + bi.high_ram_len;
        CHECK(end <= at[k][0] || bi.high_ram_base >= at[k][0] + 0x700000);
    }
    bootinfo_reserve(0, 0);
}
