/* boot/efi/main.c - ticklab.efi: a UEFI application that starts the ticklab kernel.
 *
 * The order (boot/efi/README.md explains the design):
 *   1. check the embedded kernel ELF and reserve its physical range (kernel.c);
 *   2. read the load options (or \ticklab-cmdline.txt) as the command line, the firmware's
 *      name and revisions, the RSDP and the GOP framebuffer into a Multiboot2-format block
 *      below 4 GiB (firmware.c, handoff.c);
 *   3. copy the kernel into place while the firmware can still report a failure;
 *   4. take the memory map and leave boot services, retrying when the map changed (exit.c);
 *   5. add the memory map to the block and jump to the kernel's 64-bit entry with
 *      EFI_BOOT_MAGIC and the block's address. kmain does the rest as on the other paths.
 * Every failure before step 4 is printed and returned to the firmware (the boot manager
 * then tries its next entry, or the shell shows the error). */
#include <efi.h>
#include <efilib.h>

#include "boot/efi/exit.h"
#include "boot/efi/firmware.h"
#include "boot/efi/handoff.h"
#include "boot/efi/kernel.h"

#ifndef TICKLAB_VERSION
#define TICKLAB_VERSION "unknown"
#endif

/* Command line: read this much of the load options, more than the kernel takes
 * (CMDLINE_MAX_LINE), so that an over-long line reaches the kernel over-long and is
 * reported there as truncated. */
#define CMDLINE_BYTES     (CMDLINE_MAX_LINE + 64)
#define INFO_FIXED_BYTES  (CMDLINE_BYTES + 4096)   /* every tag but the memory map */
#define INFO_MAX_ADDR     0xFFFFFFFFull            /* kmain takes a 32-bit address */

static EFI_STATUS alloc_info(struct handoff *b, const struct memmap *m, UINT32 *phys)
{
    UINTN bytes = INFO_FIXED_BYTES + handoff_mmap_tag_bytes(m->cap / m->desc_size);
    EFI_PHYSICAL_ADDRESS at = INFO_MAX_ADDR;
    UINTN pages = EFI_SIZE_TO_PAGES(bytes);
    EFI_STATUS s = uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress, EfiLoaderData,
                                     pages, &at);
    if (EFI_ERROR(s)) {
        Print(L"ticklab.efi: no memory below 4 GiB for the boot information (%r)\n", s);
        return s;
    }
    handoff_begin(b, (VOID *)(UINTN)at, pages * EFI_PAGE_SIZE);
    *phys = (UINT32)at;
    return EFI_SUCCESS;
}

static void __attribute__((noreturn)) enter_kernel(UINT64 entry, UINT32 info_phys)
{
    /* _start_efi64 (boot/entry.asm): EDI magic, ESI block; it sets its own stack. */
    __asm__ volatile("cli\n\tjmp *%0"
                     :
                     : "r"(entry), "D"((UINT64)EFI_BOOT_MAGIC), "S"((UINT64)info_phys)
                     : "memory");
    __builtin_unreachable();
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
    struct kernel_image k;
    struct memmap m;
    struct handoff b;
    UINT32 info_phys;
    char *line;
    EFI_STATUS s;

    InitializeLib(image, systab);
    Print(L"ticklab.efi %a: starting the ticklab kernel\n", TICKLAB_VERSION);
    if ((s = kernel_check(&k)) || (s = kernel_place(&k)))
        return s;
    if ((s = memmap_alloc(&m)) || (s = alloc_info(&b, &m, &info_phys)))
        return s;
    s = uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, CMDLINE_BYTES, (VOID **)&line);
    if (EFI_ERROR(s)) {
        Print(L"ticklab.efi: no memory for the command line (%r)\n", s);
        return s;
    }

    BOOLEAN from_file;
    enum efi_load_options opts = firmware_cmdline(image, line, CMDLINE_BYTES, &from_file);
    handoff_tag(&b, MB2_TAG_CMDLINE, line, strlena((CHAR8 *)line) + 1);
    static const char loader[] = "ticklab.efi " TICKLAB_VERSION;
    handoff_tag(&b, MB2_TAG_LOADER, loader, sizeof(loader));
    firmware_tags(&b, opts, from_file);
    if (b.overflow) {   /* INFO_FIXED_BYTES covers every tag: this is a bug, not a firmware */
        Print(L"ticklab.efi: boot information block overflow\n");
        return EFI_BUFFER_TOO_SMALL;
    }
    Print(L"ticklab.efi: command line '%a' (load options: %a)\n", line,
          efi_load_options_name(opts));
    Print(L"ticklab.efi: kernel at 0x%lx-0x%lx (linked at 0x%lx), entry 0x%lx; leaving boot "
          L"services\n", k.load, k.load + (k.hi - k.lo), k.lo, k.entry_at);

    if ((s = exit_boot_services(image, &m)))
        return s;
    /* Boot services are gone: no more Print; the block has room for the whole map. */
    handoff_put_efi_mmap(&b, m.buf, m.size, m.desc_size);
    handoff_finish(&b);
    enter_kernel(k.entry_at, info_phys);
}
