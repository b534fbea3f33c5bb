/* boot/efi/exit.h - the memory map, and leaving boot services with it.
 *
 * ExitBootServices takes the key of the current memory map; if anything changed the map
 * since GetMemoryMap (a timer event's allocation is enough), it fails with
 * EFI_INVALID_PARAMETER and the map must be taken again. After that first call only
 * GetMemoryMap and ExitBootServices may be used (UEFI 2.10 section 7.4), so the buffer is
 * allocated beforehand with room to spare, and nothing is allocated in the loop. */
#ifndef TICKLAB_BOOT_EFI_EXIT_H
#define TICKLAB_BOOT_EFI_EXIT_H
#include <efi.h>

#define EXIT_TRIES      8     /* ExitBootServices attempts before giving up */
#define MAP_SLACK_DESCS 64    /* descriptors of room beyond the map's size when sized */

struct memmap {
    VOID *buf;
    UINTN cap;                /* bytes allocated */
    UINTN size;               /* bytes of the last map taken */
    UINTN key, desc_size;
    UINT32 desc_version;
};

/* Sizes the map and allocates its buffer (EfiLoaderData). */
EFI_STATUS memmap_alloc(struct memmap *m);

/* Takes the final map into m and exits boot services. Returns EFI_SUCCESS with boot
 * services gone; or an error with boot services still up when the first GetMemoryMap failed
 * (the caller prints and returns to the firmware). When ExitBootServices was already called
 * and never succeeded it does not return: it says so on the firmware console (if it still
 * works) and on COM1 directly, then halts. */
EFI_STATUS exit_boot_services(EFI_HANDLE image, struct memmap *m);

#endif
