/* boot/efi/kernel.h - the kernel ELF embedded in ticklab.efi: checked, its physical range
 * reserved from the firmware, its segments copied into place. */
#ifndef TICKLAB_BOOT_EFI_KERNEL_H
#define TICKLAB_BOOT_EFI_KERNEL_H
#include <efi.h>

struct kernel_image {
    UINT64 lo, hi;      /* page-aligned physical range of all PT_LOAD segments */
    UINT64 entry;       /* _start_efi64, from the ticklab EFI header in the image */
};

/* Checks the embedded ELF and finds the EFI entry; prints the reason and returns
 * EFI_LOAD_ERROR when the image is not one this application can start. */
EFI_STATUS kernel_check(struct kernel_image *k);

/* AllocatePages(AllocateAddress) over [lo, hi), then zeroes it and copies the segments.
 * The kernel is linked to run where it is loaded; if the firmware owns part of the range
 * the overlapping memory map entries are printed and EFI_OUT_OF_RESOURCES returned. */
EFI_STATUS kernel_place(const struct kernel_image *k);

#endif
