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
static void *mb1_virt(uint64_t phys)
{
    return phys == 0x1000 ? (void *)mb1_cmdline : NULL;
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

TEST(bootinfo_mb1_keeps_first_word_with_equals)
{
    struct boot_info bi;
    parse_mb1_cmdline("hz=300 exp=none", &bi);
    CHECK_EQ_STR(bi.cmdline, "hz=300 exp=none");
    CHECK_EQ_STR(bi.image, "");
}
