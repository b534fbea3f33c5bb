/* boot/efi/firmware.h - what ticklab.efi takes from the firmware before leaving it: the
 * load options, the firmware's name and revisions, the ACPI RSDP, the GOP framebuffer. Each
 * becomes a tag of the handoff block (handoff.h). */
#ifndef TICKLAB_BOOT_EFI_FIRMWARE_H
#define TICKLAB_BOOT_EFI_FIRMWARE_H
#include <efi.h>

#include "boot/efi/handoff.h"

/* The command line (UTF-8, NUL-terminated, into line[cap]): LoadedImage->LoadOptions when
 * they are text; otherwise the file EFI_CMDLINE_FILE (kernel/boot/bootinfo.h) on the volume
 * the application was loaded from, if there is one (*from_file). Returns what the options
 * were. A line longer than the kernel reads is kept longer, so the kernel sees and reports
 * the truncation itself. */
enum efi_load_options firmware_cmdline(EFI_HANDLE image, char *line, UINTN cap,
                                       BOOLEAN *from_file);

/* Tag 12 (the system table), the ticklab firmware tag, tags 15 and/or 14 (RSDP) and tag 8
 * (framebuffer). Prints one line per finding; the ones that are missing are said too. */
void firmware_tags(struct handoff *b, enum efi_load_options options, BOOLEAN from_file);

#endif
