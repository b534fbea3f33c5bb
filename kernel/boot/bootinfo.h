/* kernel/boot/bootinfo.h - what the loader told us, in one loader-independent shape.
 *
 * Multiboot1 (QEMU -kernel, GRUB's `multiboot`), Multiboot2 (GRUB's `multiboot2`, BIOS or
 * UEFI) and the ticklab EFI application's blocks are parsed with every length checked
 * against the block's own size: a malformed block yields a `problem` string and whatever was
 * whole before it. */
#ifndef TICKLAB_BOOT_BOOTINFO_H
#define TICKLAB_BOOT_BOOTINFO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/console/fbcon.h"
#include "ticklab/cmdline.h"

#define MB1_BOOT_MAGIC 0x2BADB002u
#define MB2_BOOT_MAGIC 0x36D76289u
#define MB2_INFO_MAX   (1u << 20)   /* larger than any real block: reject beyond this */

/* The ticklab EFI application (boot/efi/README.md) enters at _start_efi64 with this magic
 * and a block in the Multiboot2 format that it built itself: tags 1 (command line, from the
 * load options), 2 (loader name), 6 (memory map), 8 (GOP framebuffer), 12 (EFI system
 * table), 14/15 (RSDP), plus one tag of its own, EFI_TAG_FIRMWARE, laid out below. The
 * kernel parses it like a GRUB block, with every length checked the same way. */
#define EFI_BOOT_MAGIC 0x71C1AEF1u
#define EFI_TAG_FIRMWARE       0x7E1C0001u  /* above every Multiboot2 tag number */
#define EFI_FW_OFF_REVISION    0    /* u32 SystemTable->FirmwareRevision (vendor-defined) */
#define EFI_FW_OFF_UEFI_REV    4    /* u32 SystemTable->Hdr.Revision: major << 16 | minor */
#define EFI_FW_OFF_OPTIONS     8    /* u32 enum efi_load_options */
#define EFI_FW_OFF_FROM_FILE   12   /* u32 1: the command line was read from EFI_CMDLINE_FILE */
#define EFI_FW_OFF_VENDOR      16   /* NUL-terminated UTF-8: SystemTable->FirmwareVendor */
#define EFI_FW_FIXED_LEN       16

/* A second ticklab tag: the Secure Boot state as the firmware's variables gave it, read by the
 * application before it left boot services (the variables are boot-time readable only as
 * long as boot services last). Three u32 fields, enum efi_sb_var / enum efi_shim. */
#define EFI_TAG_SECURE_BOOT    0x7E1C0002u
#define EFI_SB_OFF_SECURE_BOOT 0    /* u32 enum efi_sb_var: the SecureBoot variable */
#define EFI_SB_OFF_SETUP_MODE  4    /* u32 enum efi_sb_var: the SetupMode variable */
#define EFI_SB_OFF_SHIM        8    /* u32 enum efi_shim */
#define EFI_SB_LEN             12

/* A one-byte boolean UEFI variable (SecureBoot, SetupMode: UEFI 2.10 section 3.3). */
enum efi_sb_var {
    EFI_SB_VAR_ABSENT = 0,       /* not there: firmware before UEFI 2.3.1, or no Secure Boot */
    EFI_SB_VAR_OFF = 1,          /* one byte, 0 */
    EFI_SB_VAR_ON = 2,           /* one byte, 1 */
    EFI_SB_VAR_BAD = 3,          /* there, but not one byte 0 or 1, or unreadable */
};

/* Whether shim started the application: its protocol (SHIM_LOCK, GUID 605dab50-...) is
 * installed while the image it loaded runs. */
enum efi_shim {
    EFI_SHIM_NONE = 0,           /* no shim protocol */
    EFI_SHIM_VERIFYING = 1,      /* shim is there and checks signatures */
    EFI_SHIM_INSECURE = 2,       /* shim is there, but its MokSBStateRT variable says the
                                    user turned its checking off (mokutil --disable-validation) */
};

/* Read from the application's own volume when the load options hold no text (firmware
 * starts BOOTX64.EFI from a USB stick with none): the command line, as plain text. */
#define EFI_CMDLINE_FILE       "\\ticklab-cmdline.txt"

/* What the application found in its load options (LoadedImage->LoadOptions). */
enum efi_load_options {
    EFI_OPTIONS_NONE = 0,        /* none given (removable-media boot passes none) */
    EFI_OPTIONS_TEXT = 1,        /* UCS-2 text: became the command line */
    EFI_OPTIONS_NOT_TEXT = 2,    /* binary data (a boot entry's private bytes): ignored */
};

enum boot_path { BOOT_UNKNOWN, BOOT_MULTIBOOT1, BOOT_MULTIBOOT2, BOOT_EFI };

struct efi_firmware {
    bool present;                     /* only on the EFI application's path */
    char vendor[64];
    uint32_t revision;
    uint32_t uefi_revision;
    enum efi_load_options options;
    bool cmdline_from_file;           /* the line came from EFI_CMDLINE_FILE */
    bool sb_present;                  /* the EFI_TAG_SECURE_BOOT tag came */
    enum efi_sb_var secure_boot, setup_mode;
    enum efi_shim shim;
};

#define BOOT_LOW_RAM_MAX 8
#define BOOT_SMBIOS_COPIES 2          /* a 3.0 and a 2.x entry point */
#define BOOT_SMBIOS_EPS_BYTES 32      /* either fits (DSP0134: 24 and 31 bytes) */
#define MB2_SMBIOS_TAG_HEAD 8         /* tag 13's body: u8 major, u8 minor, 6 reserved, then
                                         the entry point */
/* Above the kernel image (below 8 MiB, linker.ld) with room to spare. */
#define BOOT_HIGH_RAM_FROM 0x1000000ull

struct boot_info {
    enum boot_path path;
    bool uefi;                        /* firmware: UEFI (EFI tags present) or BIOS */
    /* A word more than the parser looks at: a line longer than CMDLINE_MAX_LINE reaches it
     * longer, so the word across the limit is refused ("line too long") and named whole,
     * not half-used. A line longer still is cut here (cmdline_truncated), and the parser
     * refuses the word at the cut as well (cmdline_parse_cut). */
    char cmdline[CMDLINE_MAX_LINE + CMDLINE_MAX_WORD + 1];
    bool cmdline_truncated;
    char image[64];                   /* the image path the loader or UEFI shell put first */
    char loader[64];
    uint8_t rsdp[36];                 /* copy of the RSDP the loader handed over */
    size_t rsdp_len;                  /* 0: none (search the BIOS areas instead) */
    struct {                          /* SMBIOS entry points the loader copied (Multiboot2
                                         tag 13: one per tag, in the block's order) */
        uint8_t bytes[BOOT_SMBIOS_EPS_BYTES];
        size_t len;
    } smbios[BOOT_SMBIOS_COPIES];
    unsigned n_smbios;
    uint64_t efi_systab;              /* the EFI system table (Multiboot2 tag 11 or 12); 0:
                                         none */
    struct fb_info fb;
    uint64_t mem_usable_bytes;        /* sum of type-1 (available) memory map ranges */
    uint64_t high_ram_base, high_ram_len;   /* the largest available range, clipped to
                                         [BOOT_HIGH_RAM_FROM, 4 GiB) (the direct map's
                                         first 4 GiB): the last screen's record store */
    uint32_t mmap_entries;
    struct {                          /* available ranges starting below 1 MiB (the other
                                         CPUs' start page must be one of them) */
        uint64_t base, len;
    } low_ram[BOOT_LOW_RAM_MAX];
    unsigned n_low_ram;
    struct efi_firmware efi;          /* the firmware the EFI application ran on */
    const char *problem;              /* first malformation found, or NULL */
};

/* True when one available memory-map range below 1 MiB holds all of [base, base + len). */
/* The kernel image's physical range, kept out of high_ram by every later bootinfo_parse()
 * (a loader's memory map lists the image as available RAM). */
void bootinfo_reserve(uint64_t base, uint64_t len);
bool bootinfo_low_ram_covers(const struct boot_info *bi, uint64_t base, uint64_t len);

/* info points at the loader's block (already mapped); avail bounds how many bytes may be
 * read from it (the caller maps MB2_INFO_MAX). For Multiboot1, strings and tables that
 * the block points to are reached through to_virt. */
void bootinfo_parse(uint32_t magic, const uint8_t *info, size_t avail,
                    void *(*to_virt)(uint64_t phys), struct boot_info *bi);
const char *boot_path_name(enum boot_path p);

static inline const char *efi_load_options_name(enum efi_load_options o)
{
    return o == EFI_OPTIONS_TEXT ? "text" : o == EFI_OPTIONS_NOT_TEXT ? "not text (ignored)"
                                                                         : "none";
}

static inline const char *efi_shim_name(enum efi_shim s)
{
    return s == EFI_SHIM_VERIFYING ? "verifying" : s == EFI_SHIM_INSECURE ? "not verifying"
                                                                          : "none";
}

#endif
