/* boot/efi/handoff.c - the Multiboot2-format block ticklab.efi hands the kernel (handoff.h).
 * Plain C: built into the EFI application and into the host tests. */
#include "boot/efi/handoff.h"

#define copy_bytes __builtin_memcpy
#define zero_bytes(p, n) __builtin_memset((p), 0, (n))

/* EFI memory types (UEFI 2.10, table 7-5) */
#define EFI_LOADER_CODE           1
#define EFI_LOADER_DATA           2
#define EFI_BOOT_SERVICES_CODE    3
#define EFI_BOOT_SERVICES_DATA    4
#define EFI_CONVENTIONAL_MEMORY   7
#define EFI_UNUSABLE_MEMORY       8
#define EFI_ACPI_RECLAIM_MEMORY   9
#define EFI_ACPI_MEMORY_NVS       10

/* Multiboot2 memory types (specification 3.6.8) */
#define MB2_MEM_AVAILABLE  1
#define MB2_MEM_RESERVED   2
#define MB2_MEM_ACPI       3
#define MB2_MEM_NVS        4
#define MB2_MEM_BADRAM     5

#define FB_TYPE_RGB        1

static void put32(uint8_t *p, uint32_t v)
{
    copy_bytes(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
    copy_bytes(p, &v, 8);
}

static uint16_t unit_at(const void *src, size_t i)
{
    uint16_t u;
    copy_bytes(&u, (const uint8_t *)src + 2 * i, 2);
    return u;
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

void handoff_begin(struct handoff *b, void *buf, size_t cap)
{
    b->buf = buf;
    b->cap = cap;
    b->len = 8;              /* total_size, reserved: written by handoff_finish */
    b->overflow = cap < 8 + 8;
    if (cap >= 8)
        zero_bytes(b->buf, 8);
}

/* Room for a tag of body_len bytes plus the end tag that must still follow it. */
static uint8_t *tag_room(struct handoff *b, uint32_t type, size_t body_len)
{
    size_t need = align8(8 + body_len);
    if (b->overflow || body_len > UINT32_MAX - 8 || b->len + need + 8 > b->cap) {
        b->overflow = true;
        return NULL;
    }
    uint8_t *t = b->buf + b->len;
    zero_bytes(t, need);
    put32(t, type);
    put32(t + 4, (uint32_t)(8 + body_len));
    b->len += need;
    return t + 8;
}

bool handoff_tag(struct handoff *b, uint32_t type, const void *body, size_t body_len)
{
    uint8_t *p = tag_room(b, type, body_len);
    if (p && body_len)
        copy_bytes(p, body, body_len);
    return p != NULL;
}

uint32_t handoff_finish(struct handoff *b)
{
    if (b->cap < 16 || b->len + 8 > b->cap)
        return 0;
    put32(b->buf + b->len, MB2_TAG_END);
    put32(b->buf + b->len + 4, 8);
    b->len += 8;
    put32(b->buf, (uint32_t)b->len);
    return (uint32_t)b->len;
}

uint32_t mb2_memory_type(uint32_t efi_type)
{
    switch (efi_type) {
    case EFI_LOADER_CODE:
    case EFI_LOADER_DATA:
    case EFI_BOOT_SERVICES_CODE:
    case EFI_BOOT_SERVICES_DATA:
    case EFI_CONVENTIONAL_MEMORY:
        return MB2_MEM_AVAILABLE;
    case EFI_ACPI_RECLAIM_MEMORY:
        return MB2_MEM_ACPI;
    case EFI_ACPI_MEMORY_NVS:
        return MB2_MEM_NVS;
    case EFI_UNUSABLE_MEMORY:
        return MB2_MEM_BADRAM;
    default:
        return MB2_MEM_RESERVED;
    }
}

size_t handoff_mmap_tag_bytes(size_t n_desc)
{
    return align8(8 + 8 + n_desc * MB2_MMAP_ENTRY_SIZE);
}

long handoff_put_efi_mmap(struct handoff *b, const void *map, size_t map_bytes, size_t desc_size)
{
    if (desc_size < sizeof(struct efi_mem_desc))
        return -1;
    size_t n_desc = map_bytes / desc_size;
    /* Reserve the worst case first (nothing merges), then shrink the tag to what was used. */
    uint8_t *body = tag_room(b, MB2_TAG_MMAP, 8 + n_desc * MB2_MMAP_ENTRY_SIZE);
    if (!body)
        return -1;
    put32(body, MB2_MMAP_ENTRY_SIZE);
    put32(body + 4, 0);                      /* entry_version */
    uint8_t *out = body + 8;
    long n = 0;
    uint64_t last_end = 0;
    uint32_t last_type = 0;
    for (size_t i = 0; i < n_desc; i++) {
        struct efi_mem_desc d;
        copy_bytes(&d, (const uint8_t *)map + i * desc_size, sizeof(d));
        if (d.pages == 0 || d.pages > (UINT64_MAX - d.phys_start) / MB2_EFI_PAGE_BYTES)
            continue;                        /* empty or wrapping: not a range */
        uint64_t len = d.pages * MB2_EFI_PAGE_BYTES;
        uint32_t type = mb2_memory_type(d.type);
        if (n > 0 && type == last_type && d.phys_start == last_end) {
            uint8_t *prev = out + (n - 1) * MB2_MMAP_ENTRY_SIZE;
            uint64_t prev_len;
            copy_bytes(&prev_len, prev + 8, 8);
            put64(prev + 8, prev_len + len);
        } else {
            uint8_t *e = out + n * MB2_MMAP_ENTRY_SIZE;
            put64(e, d.phys_start);
            put64(e + 8, len);
            put32(e + 16, type);
            put32(e + 20, 0);
            n++;
        }
        last_end = d.phys_start + len;
        last_type = type;
    }
    /* give back the unused worst-case room: the tag is the last one written */
    size_t used = 8 + (size_t)n * MB2_MMAP_ENTRY_SIZE;
    uint8_t *tag = body - 8;
    put32(tag + 4, (uint32_t)(8 + used));
    b->len = (size_t)(tag - b->buf) + align8(8 + used);
    return n;
}

bool handoff_put_fb(struct handoff *b, const struct fb_layout *fb)
{
    /* addr u64, pitch, width, height u32, bpp u8, type u8, reserved u16, then the colour
     * fields for a direct-colour framebuffer: red pos/size, green pos/size, blue pos/size */
    uint8_t body[30] = { 0 };
    put64(body, fb->phys);
    put32(body + 8, fb->pitch);
    put32(body + 12, fb->width);
    put32(body + 16, fb->height);
    body[20] = fb->bpp;
    body[21] = FB_TYPE_RGB;
    body[24] = fb->red_pos;
    body[25] = fb->red_size;
    body[26] = fb->green_pos;
    body[27] = fb->green_size;
    body[28] = fb->blue_pos;
    body[29] = fb->blue_size;
    return handoff_tag(b, MB2_TAG_FB, body, sizeof(body));
}

bool mask_to_field(uint32_t mask, uint8_t *pos, uint8_t *size)
{
    if (mask == 0)
        return false;
    uint8_t p = 0;
    while (!(mask & 1)) {
        mask >>= 1;
        p++;
    }
    uint8_t s = 0;
    while (mask & 1) {
        mask >>= 1;
        s++;
    }
    if (mask)
        return false;                        /* bits beyond a gap */
    *pos = p;
    *size = s;
    return true;
}

bool handoff_put_firmware(struct handoff *b, uint32_t fw_revision, uint32_t uefi_revision,
                      enum efi_load_options options, bool from_file, const char *vendor)
{
    uint8_t body[EFI_FW_FIXED_LEN + 64] = { 0 };
    put32(body + EFI_FW_OFF_REVISION, fw_revision);
    put32(body + EFI_FW_OFF_UEFI_REV, uefi_revision);
    put32(body + EFI_FW_OFF_OPTIONS, (uint32_t)options);
    put32(body + EFI_FW_OFF_FROM_FILE, from_file ? 1 : 0);
    size_t n = 0;
    while (vendor && vendor[n] && n < 63)
        n++;
    if (n)
        copy_bytes(body + EFI_FW_OFF_VENDOR, vendor, n);
    return handoff_tag(b, EFI_TAG_FIRMWARE, body, EFI_FW_FIXED_LEN + n + 1);
}

bool handoff_put_secure_boot(struct handoff *b, enum efi_sb_var secure_boot,
                             enum efi_sb_var setup_mode, enum efi_shim shim)
{
    uint8_t body[EFI_SB_LEN];
    put32(body + EFI_SB_OFF_SECURE_BOOT, (uint32_t)secure_boot);
    put32(body + EFI_SB_OFF_SETUP_MODE, (uint32_t)setup_mode);
    put32(body + EFI_SB_OFF_SHIM, (uint32_t)shim);
    return handoff_tag(b, EFI_TAG_SECURE_BOOT, body, sizeof(body));
}

bool handoff_put_smbios(struct handoff *b, const void *eps)
{
    const uint8_t *e = eps;
    uint8_t body[MB2_SMBIOS_TAG_HEAD + BOOT_SMBIOS_EPS_BYTES] = { 0 };
    size_t n;
    if (!e)
        return false;
    if (__builtin_memcmp(e, "_SM3_", 5) == 0) {          /* DSP0134 5.2.2 */
        n = e[6];
        body[0] = e[7], body[1] = e[8];
    } else if (__builtin_memcmp(e, "_SM_", 4) == 0) {    /* DSP0134 5.2.1 */
        n = e[5];
        body[0] = e[6], body[1] = e[7];
    } else {
        return false;
    }
    if (n < 4 || n > BOOT_SMBIOS_EPS_BYTES)
        return false;
    copy_bytes(body + MB2_SMBIOS_TAG_HEAD, e, n);
    return handoff_tag(b, MB2_TAG_SMBIOS, body, MB2_SMBIOS_TAG_HEAD + n);
}

enum efi_sb_var classify_sb_var(bool found, const void *data, size_t bytes)
{
    if (!found)
        return EFI_SB_VAR_ABSENT;
    if (!data || bytes != 1 || ((const uint8_t *)data)[0] > 1)
        return EFI_SB_VAR_BAD;
    return ((const uint8_t *)data)[0] ? EFI_SB_VAR_ON : EFI_SB_VAR_OFF;
}

enum efi_load_options classify_load_options(const void *opts, size_t bytes)
{
    if (!opts || bytes < 2)
        return EFI_OPTIONS_NONE;
    if (bytes % 2)
        return EFI_OPTIONS_NOT_TEXT;
    size_t units = bytes / 2, chars = 0, ascii = 0;
    for (size_t i = 0; i < units; i++) {
        uint16_t u = unit_at(opts, i);
        if (u == 0)
            break;
        if (u < 0x20 && u != '\t' && u != '\r' && u != '\n')
            return EFI_OPTIONS_NOT_TEXT;
        chars++;
        ascii += u >= 0x20 && u < 0x7f;
    }
    if (chars == 0)
        return EFI_OPTIONS_NONE;
    return 2 * ascii >= chars ? EFI_OPTIONS_TEXT : EFI_OPTIONS_NOT_TEXT;
}

/* UTF-8 for one code point (up to U+10FFFF); returns its length. */
static size_t utf8_encode(uint8_t out[4], uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (cp >> 18));
    out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

size_t ucs2_to_utf8(char *dst, size_t cap, const void *src, size_t units)
{
    size_t n = 0;
    if (cap == 0)
        return 0;
    for (size_t i = 0; i < units; i++) {
        uint32_t cp = unit_at(src, i);
        if (cp == 0)
            break;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < units) {
            uint16_t lo = unit_at(src, i + 1);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i++;
            }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF)
            cp = 0xFFFD;                     /* a surrogate without its other half */
        uint8_t seq[4];
        size_t len = utf8_encode(seq, cp);
        if (n + len > cap - 1)
            break;
        copy_bytes(dst + n, seq, len);
        n += len;
    }
    dst[n] = 0;
    return n;
}
