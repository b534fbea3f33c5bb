/* kernel/boot/bootinfo.c - Multiboot1 and Multiboot2 information blocks, and the ticklab EFI
 * application's (Multiboot2 format plus one tag; see bootinfo.h). Layouts follow the
 * Multiboot 0.6.96 and Multiboot2 1.0 specifications. */
#include "kernel/boot/bootinfo.h"

#include "ticklab/kstring.h"

/* Multiboot1 info: flag bits and field offsets */
#define MB1_FLAG_MEM      (1u << 0)
#define MB1_FLAG_CMDLINE  (1u << 2)
#define MB1_FLAG_MMAP     (1u << 6)
#define MB1_FLAG_LOADER   (1u << 9)
#define MB1_FLAG_FB       (1u << 12)
#define MB1_OFF_FLAGS     0
#define MB1_OFF_CMDLINE   16
#define MB1_OFF_MMAP_LEN  44
#define MB1_OFF_MMAP_ADDR 48
#define MB1_OFF_LOADER    64
#define MB1_OFF_FB        88      /* addr u64, pitch, width, height u32, bpp u8, type u8 */
#define MB1_INFO_SIZE     116

/* Multiboot2 tags */
#define MB2_TAG_END       0
#define MB2_TAG_CMDLINE   1
#define MB2_TAG_LOADER    2
#define MB2_TAG_MMAP      6
#define MB2_TAG_FB        8
#define MB2_TAG_EFI32     11
#define MB2_TAG_EFI64     12
#define MB2_TAG_SMBIOS    13
#define MB2_TAG_ACPI_OLD  14
#define MB2_TAG_ACPI_NEW  15
#define MB2_TAG_EFI_MMAP  17

#define FB_TYPE_RGB       1
#define FB_TYPE_EGA_TEXT  2
#define MMAP_AVAILABLE    1

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static uint64_t rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void copy_string(char *dst, size_t cap, const uint8_t *src, size_t max, bool *truncated)
{
    size_t n = 0;
    while (n < max && src[n])
        n++;
    if (truncated)
        *truncated = n >= cap;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* The UEFI shell puts the program as typed first (`fs0:\ticklab.efi hz=250`); a boot entry
 * made with efibootmgr puts only its own text. So on the EFI path the first word is taken
 * for the program only when it looks like one: a '\' in it or a ".efi" ending. */
static bool looks_like_efi_program(const char *w, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (w[i] == '\\')
            return true;
    if (len < 4)
        return false;
    const char *e = w + len - 4;
    return e[0] == '.' && (e[1] | 0x20) == 'e' && (e[2] | 0x20) == 'f' && (e[3] | 0x20) == 'i';
}

/* Multiboot1 loaders (QEMU -kernel, GRUB's `multiboot`) put the image's path first; a first
 * word without '=' is taken to be that path and moved out of the command line. The EFI path
 * does the same for the shell's program word (looks_like_efi_program). */
static void split_image_path(struct boot_info *bi, bool efi)
{
    char *c = bi->cmdline;
    size_t n = 0;
    while (c[n] == ' ')
        n++;
    size_t start = n;
    bool has_eq = false;
    while (c[n] && c[n] != ' ')
        has_eq |= c[n++] == '=';
    if (has_eq || n == start)
        return;
    if (efi && !looks_like_efi_program(c + start, n - start))
        return;
    size_t len = n - start < sizeof(bi->image) - 1 ? n - start : sizeof(bi->image) - 1;
    memcpy(bi->image, c + start, len);
    bi->image[len] = 0;
    while (c[n] == ' ')
        n++;
    memmove(c, c + n, k_strlen(c + n) + 1);
}

static void note(struct boot_info *bi, const char *problem)
{
    if (!bi->problem)
        bi->problem = problem;
}

static void fb_from(struct fb_info *fb, const uint8_t *p, size_t len)
{
    /* p: addr u64, pitch, width, height u32, bpp u8, type u8, 2 reserved, colour info */
    if (len < 22)
        return;
    fb->phys = rd64(p);
    fb->pitch = rd32(p + 8);
    fb->width = rd32(p + 12);
    fb->height = rd32(p + 16);
    fb->bpp = p[20];
    if (p[21] == FB_TYPE_EGA_TEXT) {
        fb->kind = FB_EGA_TEXT;
    } else if (p[21] == FB_TYPE_RGB && len >= 30) {
        fb->kind = FB_RGB;
        fb->red_pos = p[24];
        fb->red_size = p[25];
        fb->green_pos = p[26];
        fb->green_size = p[27];
        fb->blue_pos = p[28];
        fb->blue_size = p[29];
    }
}

/* The kernel image, wherever the loader put it (bootinfo_reserve): a loader's map lists it
 * as available (GRUB's does; ticklab.efi's gives its LoaderCode pages as available too). */
static uint64_t reserved_lo, reserved_hi;

void bootinfo_reserve(uint64_t base, uint64_t len)
{
    reserved_lo = base;
    reserved_hi = base + len < base ? UINT64_MAX : base + len;
}

static void high_ram_candidate(struct boot_info *bi, uint64_t lo, uint64_t hi)
{
    if (hi > lo && hi - lo > bi->high_ram_len) {
        bi->high_ram_base = lo;
        bi->high_ram_len = hi - lo;
    }
}

static void mmap_entry(struct boot_info *bi, uint64_t base, uint64_t len, uint32_t type)
{
    bi->mmap_entries++;
    if (type != MMAP_AVAILABLE)
        return;
    bi->mem_usable_bytes += len;
    uint64_t lo = base > BOOT_HIGH_RAM_FROM ? base : BOOT_HIGH_RAM_FROM;
    uint64_t hi = base + len < base || base + len > (1ull << 32) ? 1ull << 32 : base + len;
    if (reserved_hi > lo && reserved_lo < hi) {      /* the range holds the kernel: its sides */
        high_ram_candidate(bi, lo, reserved_lo > lo ? reserved_lo : lo);
        high_ram_candidate(bi, reserved_hi < hi ? reserved_hi : hi, hi);
    } else {
        high_ram_candidate(bi, lo, hi);
    }
    if (base < 0x100000 && bi->n_low_ram < BOOT_LOW_RAM_MAX) {
        bi->low_ram[bi->n_low_ram].base = base;
        bi->low_ram[bi->n_low_ram++].len = len;
    }
}

bool bootinfo_low_ram_covers(const struct boot_info *bi, uint64_t base, uint64_t len)
{
    for (unsigned i = 0; i < bi->n_low_ram; i++)
        if (bi->low_ram[i].base <= base && base + len >= base &&
            base + len - bi->low_ram[i].base <= bi->low_ram[i].len)
            return true;
    return false;
}

static void parse_mb1(const uint8_t *info, size_t avail, void *(*to_virt)(uint64_t),
                      struct boot_info *bi)
{
    if (avail < MB1_INFO_SIZE) {
        note(bi, "multiboot1 block shorter than its fixed fields");
        return;
    }
    uint32_t flags = rd32(info + MB1_OFF_FLAGS);
    if ((flags & MB1_FLAG_CMDLINE) && rd32(info + MB1_OFF_CMDLINE))
        copy_string(bi->cmdline, sizeof(bi->cmdline), to_virt(rd32(info + MB1_OFF_CMDLINE)),
                    CMDLINE_MAX_LINE * 4, &bi->cmdline_truncated);
    split_image_path(bi, false);
    if ((flags & MB1_FLAG_LOADER) && rd32(info + MB1_OFF_LOADER))
        copy_string(bi->loader, sizeof(bi->loader), to_virt(rd32(info + MB1_OFF_LOADER)),
                    sizeof(bi->loader) * 4, NULL);
    if (flags & MB1_FLAG_MMAP) {
        /* entries: size u32 (not counting itself), base u64, len u64, type u32 */
        uint32_t len = rd32(info + MB1_OFF_MMAP_LEN);
        const uint8_t *m = to_virt(rd32(info + MB1_OFF_MMAP_ADDR));
        for (uint32_t off = 0; off + 24 <= len && len <= 65536;) {
            uint32_t size = rd32(m + off);
            if (size < 20) {
                note(bi, "multiboot1 memory map entry shorter than 20 bytes");
                break;
            }
            mmap_entry(bi, rd64(m + off + 4), rd64(m + off + 12), rd32(m + off + 20));
            off += size + 4;
        }
    }
    if (flags & MB1_FLAG_FB)
        fb_from(&bi->fb, info + MB1_OFF_FB, MB1_INFO_SIZE - MB1_OFF_FB);
    else
        bi->fb = (struct fb_info){ .kind = FB_EGA_TEXT, .phys = 0xB8000, .pitch = 160,
                                   .width = 80, .height = 25 };   /* BIOS text mode */
}

static void efi_firmware_from(struct boot_info *bi, const uint8_t *body, size_t len)
{
    if (len < EFI_FW_FIXED_LEN) {
        note(bi, "efi firmware tag shorter than its fixed fields");
        return;
    }
    struct efi_firmware *f = &bi->efi;
    f->present = true;
    f->revision = rd32(body + EFI_FW_OFF_REVISION);
    f->uefi_revision = rd32(body + EFI_FW_OFF_UEFI_REV);
    uint32_t opt = rd32(body + EFI_FW_OFF_OPTIONS);
    f->options = opt <= EFI_OPTIONS_NOT_TEXT ? (enum efi_load_options)opt : EFI_OPTIONS_NONE;
    if (opt > EFI_OPTIONS_NOT_TEXT)
        note(bi, "efi firmware tag: unknown load options kind");
    f->cmdline_from_file = rd32(body + EFI_FW_OFF_FROM_FILE) == 1;
    copy_string(f->vendor, sizeof(f->vendor), body + EFI_FW_OFF_VENDOR, len - EFI_FW_FIXED_LEN,
                NULL);
}

static void efi_secure_boot_from(struct boot_info *bi, const uint8_t *body, size_t len)
{
    if (len < EFI_SB_LEN) {
        note(bi, "efi secure boot tag shorter than its fields");
        return;
    }
    uint32_t sb = rd32(body + EFI_SB_OFF_SECURE_BOOT), setup = rd32(body + EFI_SB_OFF_SETUP_MODE);
    uint32_t shim = rd32(body + EFI_SB_OFF_SHIM);
    if (sb > EFI_SB_VAR_BAD || setup > EFI_SB_VAR_BAD || shim > EFI_SHIM_INSECURE) {
        note(bi, "efi secure boot tag: a value out of range (the tag is ignored)");
        return;
    }
    struct efi_firmware *f = &bi->efi;
    f->sb_present = true;
    f->secure_boot = (enum efi_sb_var)sb;
    f->setup_mode = (enum efi_sb_var)setup;
    f->shim = (enum efi_shim)shim;
}

static void smbios_copy(struct boot_info *bi, const uint8_t *body, size_t len)
{
    if (len <= MB2_SMBIOS_TAG_HEAD || bi->n_smbios == BOOT_SMBIOS_COPIES)
        return;
    size_t n = len - MB2_SMBIOS_TAG_HEAD;
    n = n < BOOT_SMBIOS_EPS_BYTES ? n : BOOT_SMBIOS_EPS_BYTES;
    memcpy(bi->smbios[bi->n_smbios].bytes, body + MB2_SMBIOS_TAG_HEAD, n);
    bi->smbios[bi->n_smbios++].len = n;
}

static void parse_mb2_tag(struct boot_info *bi, uint32_t type, const uint8_t *body, size_t len)
{
    switch (type) {
    case EFI_TAG_FIRMWARE:
        /* ticklab's own tag: only the EFI application's block may carry it */
        if (bi->path == BOOT_EFI)
            efi_firmware_from(bi, body, len);
        break;
    case EFI_TAG_SECURE_BOOT:
        if (bi->path == BOOT_EFI)
            efi_secure_boot_from(bi, body, len);
        break;
    case MB2_TAG_CMDLINE:
        copy_string(bi->cmdline, sizeof(bi->cmdline), body, len, &bi->cmdline_truncated);
        break;
    case MB2_TAG_LOADER:
        copy_string(bi->loader, sizeof(bi->loader), body, len, NULL);
        break;
    case MB2_TAG_MMAP: {
        if (len < 8)
            break;
        uint32_t esize = rd32(body);
        if (esize < 24) {
            note(bi, "multiboot2 memory map entry_size below 24");
            break;
        }
        for (size_t off = 8; off + esize <= len; off += esize)
            mmap_entry(bi, rd64(body + off), rd64(body + off + 8), rd32(body + off + 16));
        break;
    }
    case MB2_TAG_FB:
        fb_from(&bi->fb, body, len);
        break;
    case MB2_TAG_EFI32:
        if (len >= 4)
            bi->efi_systab = rd32(body);
        bi->uefi = true;
        break;
    case MB2_TAG_EFI64:
        if (len >= 8)
            bi->efi_systab = rd64(body);
        bi->uefi = true;
        break;
    case MB2_TAG_EFI_MMAP:
        bi->uefi = true;
        break;
    case MB2_TAG_SMBIOS:
        smbios_copy(bi, body, len);
        break;
    case MB2_TAG_ACPI_OLD:
    case MB2_TAG_ACPI_NEW:
        /* prefer the 2.0 copy (tag 15) when both are given */
        if (type == MB2_TAG_ACPI_NEW || bi->rsdp_len == 0) {
            size_t n = len < sizeof(bi->rsdp) ? len : sizeof(bi->rsdp);
            memcpy(bi->rsdp, body, n);
            bi->rsdp_len = n;
        }
        break;
    default:
        break;
    }
}

static void parse_mb2(const uint8_t *info, size_t avail, struct boot_info *bi)
{
    if (avail < 8) {
        note(bi, "multiboot2 block shorter than its header");
        return;
    }
    uint32_t total = rd32(info);
    if (total < 16 || total > avail) {
        note(bi, "multiboot2 total_size out of range");
        return;
    }
    size_t off = 8;
    while (off + 8 <= total) {
        uint32_t type = rd32(info + off), size = rd32(info + off + 4);
        if (size < 8 || size > total - off) {
            note(bi, "multiboot2 tag size runs past the block");
            return;
        }
        if (type == MB2_TAG_END)
            return;
        parse_mb2_tag(bi, type, info + off + 8, size - 8);
        off += (size + 7) & ~7u;
    }
    note(bi, "multiboot2 block has no end tag");
}

void bootinfo_parse(uint32_t magic, const uint8_t *info, size_t avail,
                    void *(*to_virt)(uint64_t phys), struct boot_info *bi)
{
    memset(bi, 0, sizeof(*bi));
    if (magic == MB1_BOOT_MAGIC) {
        bi->path = BOOT_MULTIBOOT1;
        parse_mb1(info, avail, to_virt, bi);
    } else if (magic == MB2_BOOT_MAGIC) {
        bi->path = BOOT_MULTIBOOT2;
        parse_mb2(info, avail, bi);
    } else if (magic == EFI_BOOT_MAGIC) {
        bi->path = BOOT_EFI;
        bi->uefi = true;
        parse_mb2(info, avail, bi);
        split_image_path(bi, true);
    } else {
        bi->path = BOOT_UNKNOWN;
        note(bi, "unknown loader magic");
    }
}

const char *boot_path_name(enum boot_path p)
{
    switch (p) {
    case BOOT_MULTIBOOT1: return "multiboot1";
    case BOOT_MULTIBOOT2: return "multiboot2";
    case BOOT_EFI: return "efi";
    default: return "unknown";
    }
}
