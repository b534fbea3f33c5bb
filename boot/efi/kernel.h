/* boot/efi/kernel.h - the kernel ELF embedded in ticklab.efi: checked, its physical range
 * reserved from the firmware, its segments copied into place. */
#ifndef TICKLAB_BOOT_EFI_KERNEL_H
#define TICKLAB_BOOT_EFI_KERNEL_H
#include <efi.h>

struct kernel_image {
    UINT64 lo, hi;      /* page-aligned range of all PT_LOAD segments, as linked */
    UINT64 entry;       /* _start_efi64, from the ticklab EFI header in the image (linked) */
    UINT64 load;        /* where kernel_place() put lo */
    UINT64 entry_at;    /* where _start_efi64 is then */
};

/* Checks the embedded ELF and finds the EFI entry; prints the reason and returns
 * EFI_LOAD_ERROR when the image is not one this application can start. */
EFI_STATUS kernel_check(struct kernel_image *k);

/* Pages for hi - lo anywhere between 1 MiB and 4 GiB (AllocateMaxAddress), zeroed, the
 * segments copied at their distances from lo; k->load and k->entry_at say where. When the
 * firmware has no such pages, what it holds at the link address is printed and
 * EFI_OUT_OF_RESOURCES returned. */
EFI_STATUS kernel_place(struct kernel_image *k);

#endif
