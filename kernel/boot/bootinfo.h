/* kernel/boot/bootinfo.h - what the loader told us, in one loader-independent shape.
 *
 * Multiboot1 (QEMU -kernel, GRUB's `multiboot`) and Multiboot2 (GRUB's `multiboot2`, BIOS or
 * UEFI) information blocks are parsed with every length checked against the block's own
 * size: a malformed block yields a `problem` string and whatever was whole before it. */
#ifndef TICKLAB_BOOT_BOOTINFO_H
#define TICKLAB_BOOT_BOOTINFO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/fbcon.h"
#include "lib/cmdline.h"

#define MB1_BOOT_MAGIC 0x2BADB002u
#define MB2_BOOT_MAGIC 0x36D76289u
#define MB2_INFO_MAX   (1u << 20)   /* larger than any real block: reject beyond this */

enum boot_path { BOOT_UNKNOWN, BOOT_MULTIBOOT1, BOOT_MULTIBOOT2, BOOT_EFI };

struct boot_info {
    enum boot_path path;
    bool uefi;                        /* firmware: UEFI (EFI tags present) or BIOS */
    char cmdline[CMDLINE_MAX_LINE];
    bool cmdline_truncated;
    char image[64];                   /* Multiboot1: the image path the loader put first */
    char loader[64];
    uint8_t rsdp[36];                 /* copy of the RSDP the loader handed over */
    size_t rsdp_len;                  /* 0: none (search the BIOS areas instead) */
    struct fb_info fb;
    uint64_t mem_usable_bytes;        /* sum of type-1 (available) memory map ranges */
    uint32_t mmap_entries;
    const char *problem;              /* first malformation found, or NULL */
};

/* info points at the loader's block (already mapped); avail bounds how many bytes may be
 * read from it (the caller maps MB2_INFO_MAX). For Multiboot1, strings and tables that
 * the block points to are reached through to_virt. */
void bootinfo_parse(uint32_t magic, const uint8_t *info, size_t avail,
                    void *(*to_virt)(uint64_t phys), struct boot_info *bi);
const char *boot_path_name(enum boot_path p);

#endif
