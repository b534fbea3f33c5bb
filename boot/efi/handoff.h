/* boot/efi/handoff.h - the block ticklab.efi hands the kernel, and the conversions that fill
 * it from what the firmware gave.
 *
 * The block is in the Multiboot2 format (specification 1.0, section 3.6) so the kernel parses
 * it with the code it uses for GRUB's, plus one ticklab tag (EFI_TAG_FIRMWARE in
 * kernel/boot/bootinfo.h). Nothing here includes the UEFI headers: this file is plain C that
 * the host tests run under ASan (tests/host/test_bootinfo.c), and the EFI descriptor layout it
 * needs is declared below from the UEFI specification (2.10, section 7.2, GetMemoryMap). */
#ifndef TICKLAB_BOOT_EFI_HANDOFF_H
#define TICKLAB_BOOT_EFI_HANDOFF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/boot/bootinfo.h"

/* Multiboot2 tag numbers the application writes */
#define MB2_TAG_END       0
#define MB2_TAG_CMDLINE   1
#define MB2_TAG_LOADER    2
#define MB2_TAG_MMAP      6
#define MB2_TAG_FB        8
#define MB2_TAG_EFI64     12
#define MB2_TAG_SMBIOS    13
#define MB2_TAG_ACPI_OLD  14
#define MB2_TAG_ACPI_NEW  15

#define MB2_MMAP_ENTRY_SIZE 24  /* base u64, length u64, type u32, reserved u32 */

/* A block being written into a fixed buffer. A tag that does not fit is left out whole and
 * `overflow` is set; the block stays well formed. */
struct handoff {
    uint8_t *buf;
    size_t cap, len;
    bool overflow;
};

void handoff_begin(struct handoff *b, void *buf, size_t cap);
bool handoff_tag(struct handoff *b, uint32_t type, const void *body, size_t body_len);
/* Appends the end tag and writes total_size; returns it (0 if even the end tag did not fit). */
uint32_t handoff_finish(struct handoff *b);

/* One EFI_MEMORY_DESCRIPTOR. The firmware's descriptors are desc_size bytes apart, which
 * may be more than this struct (newer firmware appends fields): always step by desc_size. */
struct efi_mem_desc {
    uint32_t type;
    uint32_t pad;
    uint64_t phys_start;
    uint64_t virt_start;
    uint64_t pages;          /* 4 KiB pages */
    uint64_t attribute;
};
#define MB2_EFI_PAGE_BYTES 4096u   /* EFI pages are 4 KiB whatever the CPU uses */

/* Multiboot2 memory type for an EFI memory type: boot services and loader memory is free
 * once boot services are gone (type 1, like conventional memory), ACPI reclaim is 3, ACPI
 * NVS 4, unusable 5, everything else (runtime services, MMIO, reserved) 2. */
uint32_t mb2_memory_type(uint32_t efi_type);

/* Bytes the memory map tag takes for at most n_desc descriptors (contiguous runs of one type
 * merge, so the tag is never larger). */
size_t handoff_mmap_tag_bytes(size_t n_desc);

/* Appends tag 6 converted from the EFI map (map_bytes of descriptors desc_size apart).
 * Returns the number of Multiboot2 entries written, or -1 when the tag did not fit or
 * desc_size is below the descriptor's size. */
long handoff_put_efi_mmap(struct handoff *b, const void *map, size_t map_bytes, size_t desc_size);

/* A linear framebuffer as tag 8 wants it (RGB, direct colour). */
struct fb_layout {
    uint64_t phys;
    uint32_t pitch, width, height;
    uint8_t bpp;
    uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};
bool handoff_put_fb(struct handoff *b, const struct fb_layout *fb);

/* Position and width of the set bits of a GOP PixelBitMask colour mask (contiguous masks
 * only: returns false for 0 or a mask with holes). */
bool mask_to_field(uint32_t mask, uint8_t *pos, uint8_t *size);

/* The ticklab tag: firmware revision, UEFI revision, what the load options were, whether
 * the command line came from EFI_CMDLINE_FILE, vendor (UTF-8; cut at 63 bytes). */
bool handoff_put_firmware(struct handoff *b, uint32_t fw_revision, uint32_t uefi_revision,
                      enum efi_load_options options, bool from_file, const char *vendor);

/* The second ticklab tag: the Secure Boot state (EFI_TAG_SECURE_BOOT). */
bool handoff_put_secure_boot(struct handoff *b, enum efi_sb_var secure_boot,
                             enum efi_sb_var setup_mode, enum efi_shim shim);

/* Tag 13 for an SMBIOS entry point the configuration table lists: the version from the
 * entry point, then its bytes (its own length byte says how many, at most
 * BOOT_SMBIOS_EPS_BYTES). False, and no tag, when eps is not readable as one ("_SM_" or
 * "_SM3_" and a length that fits): the kernel checks the rest. */
bool handoff_put_smbios(struct handoff *b, const void *eps);

/* What a one-byte boolean variable (SecureBoot, SetupMode) says: found is false when
 * GetVariable said EFI_NOT_FOUND; anything but exactly one byte 0 or 1 is EFI_SB_VAR_BAD. */
enum efi_sb_var classify_sb_var(bool found, const void *data, size_t bytes);

/* What LoadedImage->LoadOptions holds. The UEFI shell passes the command as typed (UCS-2,
 * the program first); a boot entry passes its optional data, which firmware fills with
 * anything (EDK2 puts a 16-byte GUID in the entries it makes itself). Text is: an even
 * number of bytes, no control character other than TAB, CR, LF before the first NUL, and at
 * least half of its characters printable ASCII; anything else is NOT_TEXT. Reads `bytes`
 * bytes at most, at any alignment. */
enum efi_load_options classify_load_options(const void *opts, size_t bytes);

/* UCS-2 (UTF-16 code units, as UEFI strings are) to UTF-8: stops at a NUL unit or after
 * `units`; a surrogate pair becomes one 4-byte sequence, a lone surrogate U+FFFD. Writes at
 * most cap - 1 bytes, never part of a sequence, and a NUL; returns the bytes written. src
 * may be unaligned. */
size_t ucs2_to_utf8(char *dst, size_t cap, const void *src, size_t units);

#endif
