/* boot/efi/firmware.c - facts from the firmware for the handoff block (firmware.h). */
#include "boot/efi/firmware.h"

#include <efilib.h>

#define RSDP_V1_LEN 20      /* ACPI 6.5 section 5.2.5.3: through RsdtAddress */
#define RSDP_V2_LEN 36      /* through the extended checksum and reserved bytes */
#define VENDOR_UNITS 128    /* firmware vendor string: read at most this many characters */

#define WIDE_(s) L##s
#define WIDE(s) WIDE_(s)

/* One line as the load options would give it: the file's line breaks and tabs become
 * spaces, trailing spaces and a leading UTF-8 byte-order mark (Notepad's) go. Anything else
 * odd stays, for the kernel's parser to report. */
static void tidy_line(char *line)
{
    UINTN n = 0, start = 0;
    if ((UINT8)line[0] == 0xEF && (UINT8)line[1] == 0xBB && (UINT8)line[2] == 0xBF)
        start = 3;
    for (UINTN i = start; line[i]; i++)
        line[n++] = (line[i] == '\r' || line[i] == '\n' || line[i] == '\t') ? ' ' : line[i];
    while (n > 0 && line[n - 1] == ' ')
        n--;
    line[n] = 0;
}

/* EFI_CMDLINE_FILE from the root of the application's volume into line[cap].
 * Returns FALSE when there is no such file or it cannot be read. */
static BOOLEAN cmdline_file(EFI_HANDLE device, char *line, UINTN cap)
{
    EFI_FILE_HANDLE root = device ? LibOpenRoot(device) : NULL, f = NULL;
    if (!root)
        return FALSE;
    EFI_STATUS s = uefi_call_wrapper(root->Open, 5, root, &f, WIDE(EFI_CMDLINE_FILE),
                                     EFI_FILE_MODE_READ, 0ull);
    BOOLEAN ok = FALSE;
    if (!EFI_ERROR(s)) {
        UINTN n = cap - 1;
        s = uefi_call_wrapper(f->Read, 3, f, &n, line);
        ok = !EFI_ERROR(s);
        line[ok ? n : 0] = 0;
        tidy_line(line);
        if (!ok)
            Print(L"ticklab.efi: %a could not be read (%r)\n", EFI_CMDLINE_FILE, s);
        uefi_call_wrapper(f->Close, 1, f);
    }
    uefi_call_wrapper(root->Close, 1, root);
    return ok;
}

enum efi_load_options firmware_cmdline(EFI_HANDLE image, char *line, UINTN cap,
                                       BOOLEAN *from_file)
{
    EFI_LOADED_IMAGE *li = NULL;
    line[0] = 0;
    *from_file = FALSE;
    EFI_STATUS s = uefi_call_wrapper(BS->HandleProtocol, 3, image, &LoadedImageProtocol,
                                     (VOID **)&li);
    if (EFI_ERROR(s) || !li) {
        Print(L"ticklab.efi: no loaded-image protocol (%r): empty command line\n", s);
        return EFI_OPTIONS_NONE;
    }
    enum efi_load_options kind = classify_load_options(li->LoadOptions, li->LoadOptionsSize);
    if (kind == EFI_OPTIONS_TEXT) {
        ucs2_to_utf8(line, cap, li->LoadOptions, li->LoadOptionsSize / 2);
        return kind;
    }
    if (kind == EFI_OPTIONS_NOT_TEXT)
        Print(L"ticklab.efi: the load options (%d bytes) are not text: ignored\n",
              (UINT32)li->LoadOptionsSize);
    *from_file = cmdline_file(li->DeviceHandle, line, cap);
    if (*from_file)
        Print(L"ticklab.efi: command line from %a\n", EFI_CMDLINE_FILE);
    return kind;
}

static BOOLEAN is_rsdp(const UINT8 *p)
{
    return p && CompareMem((VOID *)p, (VOID *)"RSD PTR ", 8) == 0;
}

/* ACPI 2.0 table first: its RSDP carries the XSDT. A 1.0 RSDP is passed as well when the
 * firmware lists one, as GRUB does; the kernel prefers the 2.0 copy and checks both. */
static void rsdp_tags(struct handoff *b)
{
    EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
    const UINT8 *v2 = NULL, *v1 = NULL;
    for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];
        if (!v2 && CompareGuid(&t->VendorGuid, &acpi20) == 0)
            v2 = t->VendorTable;
        else if (!v1 && CompareGuid(&t->VendorGuid, &acpi10) == 0)
            v1 = t->VendorTable;
    }
    if (is_rsdp(v2) && v2[15] >= 2) {
        handoff_tag(b, MB2_TAG_ACPI_NEW, v2, RSDP_V2_LEN);
        Print(L"ticklab.efi: ACPI 2.0 RSDP at 0x%lx (revision %d)\n", (UINT64)(UINTN)v2,
              (UINT32)v2[15]);
    } else if (is_rsdp(v2)) {
        v1 = v1 ? v1 : v2;   /* listed under the 2.0 GUID with a 1.0 layout */
    }
    if (is_rsdp(v1)) {
        handoff_tag(b, MB2_TAG_ACPI_OLD, v1, RSDP_V1_LEN);
        Print(L"ticklab.efi: ACPI 1.0 RSDP at 0x%lx\n", (UINT64)(UINTN)v1);
    }
    if (!is_rsdp(v1) && !(is_rsdp(v2) && v2[15] >= 2))
        Print(L"ticklab.efi: no ACPI RSDP in the configuration table\n");
}

/* SMBIOS 3.0 first, then 2.x, as the kernel tries them; it checks what they hold. */
static void smbios_tags(struct handoff *b)
{
    EFI_GUID guids[2] = { SMBIOS3_TABLE_GUID, SMBIOS_TABLE_GUID };
    BOOLEAN any = FALSE;
    for (UINTN g = 0; g < 2; g++)
        for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
            EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];
            if (CompareGuid(&t->VendorGuid, &guids[g]) != 0)
                continue;
            if (handoff_put_smbios(b, t->VendorTable)) {
                Print(L"ticklab.efi: SMBIOS entry point at 0x%lx\n", (UINT64)(UINTN)t->VendorTable);
                any = TRUE;
            }
        }
    if (!any)
        Print(L"ticklab.efi: no SMBIOS entry point in the configuration table\n");
}

static BOOLEAN gop_layout(EFI_GRAPHICS_OUTPUT_PROTOCOL *gop, struct fb_layout *fb)
{
    EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *mi = gop->Mode->Info;
    fb->phys = gop->Mode->FrameBufferBase;
    fb->width = mi->HorizontalResolution;
    fb->height = mi->VerticalResolution;
    fb->bpp = 32;
    switch (mi->PixelFormat) {
    case PixelRedGreenBlueReserved8BitPerColor:         /* bytes R, G, B, reserved */
        fb->red_pos = 0, fb->green_pos = 8, fb->blue_pos = 16;
        fb->red_size = fb->green_size = fb->blue_size = 8;
        break;
    case PixelBlueGreenRedReserved8BitPerColor:         /* bytes B, G, R, reserved */
        fb->red_pos = 16, fb->green_pos = 8, fb->blue_pos = 0;
        fb->red_size = fb->green_size = fb->blue_size = 8;
        break;
    case PixelBitMask: {
        EFI_PIXEL_BITMASK *m = &mi->PixelInformation;
        UINT32 all = m->RedMask | m->GreenMask | m->BlueMask | m->ReservedMask;
        if (!mask_to_field(m->RedMask, &fb->red_pos, &fb->red_size) ||
            !mask_to_field(m->GreenMask, &fb->green_pos, &fb->green_size) ||
            !mask_to_field(m->BlueMask, &fb->blue_pos, &fb->blue_size))
            return FALSE;
        fb->bpp = 8;
        while (fb->bpp < 32 && (all >> fb->bpp))
            fb->bpp += 8;
        break;
    }
    default:                                            /* PixelBltOnly: no framebuffer */
        return FALSE;
    }
    fb->pitch = mi->PixelsPerScanLine * (fb->bpp / 8);
    return fb->phys != 0;
}

/* The mode the firmware set is kept: it is the one the firmware knows the screen shows. */
static void fb_tag(struct handoff *b)
{
    EFI_GRAPHICS_OUTPUT_PROTOCOL *gop = NULL;
    struct fb_layout fb = { 0 };
    EFI_STATUS s = LibLocateProtocol(&GraphicsOutputProtocol, (VOID **)&gop);
    if (EFI_ERROR(s) || !gop || !gop->Mode || !gop->Mode->Info) {
        Print(L"ticklab.efi: no graphics output protocol: no screen console\n");
        return;
    }
    if (!gop_layout(gop, &fb)) {
        Print(L"ticklab.efi: the GOP mode has no linear framebuffer we can draw (pixel "
              L"format %d): no screen console\n", (UINT32)gop->Mode->Info->PixelFormat);
        return;
    }
    handoff_put_fb(b, &fb);
    Print(L"ticklab.efi: GOP framebuffer %dx%d at 0x%lx, pitch %d\n", fb.width, fb.height,
          fb.phys, fb.pitch);
}

/* A one-byte boolean variable, read as the firmware gives it (UEFI 2.10 section 8.2). */
static enum efi_sb_var sb_var(CHAR16 *name, EFI_GUID *guid)
{
    UINT8 data[8];
    UINTN size = sizeof(data);
    UINT32 attrs = 0;
    EFI_STATUS s = uefi_call_wrapper(RT->GetVariable, 5, name, guid, &attrs, &size, data);
    if (s == EFI_NOT_FOUND)
        return classify_sb_var(false, NULL, 0);
    return classify_sb_var(true, EFI_ERROR(s) ? NULL : data, EFI_ERROR(s) ? 0 : size);
}

static const char *sb_word(enum efi_sb_var v)
{
    return v == EFI_SB_VAR_ON ? "1" : v == EFI_SB_VAR_OFF ? "0"
           : v == EFI_SB_VAR_ABSENT ? "absent" : "unreadable";
}

/* Secure Boot as the firmware's variables say it, and whether shim started us: shim keeps its
 * protocol installed while the image it verified runs, and mirrors the user's "do not
 * verify" choice (MokSBState) into the volatile MokSBStateRT. */
static void secure_boot_tag(struct handoff *b)
{
    EFI_GUID global = { 0x8be4df61, 0x93ca, 0x11d2,
                        { 0xaa, 0x0d, 0x00, 0xe0, 0x98, 0x03, 0x2b, 0x8c } };
    EFI_GUID shim_lock = { 0x605dab50, 0xe046, 0x4300,
                           { 0xab, 0xb6, 0x3d, 0xd8, 0x10, 0xdd, 0x8b, 0x23 } };
    enum efi_sb_var sb = sb_var(L"SecureBoot", &global);
    enum efi_sb_var setup = sb_var(L"SetupMode", &global);
    VOID *proto = NULL;
    enum efi_shim shim = EFI_SHIM_NONE;
    if (!EFI_ERROR(LibLocateProtocol(&shim_lock, &proto)) && proto)
        shim = sb_var(L"MokSBStateRT", &shim_lock) == EFI_SB_VAR_ON ? EFI_SHIM_INSECURE
                                                                     : EFI_SHIM_VERIFYING;
    handoff_put_secure_boot(b, sb, setup, shim);
    Print(L"ticklab.efi: Secure Boot %a (SecureBoot %a, SetupMode %a); %a\n",
          sb == EFI_SB_VAR_ON ? "on" : sb == EFI_SB_VAR_OFF ? "off" : "unknown", sb_word(sb),
          sb_word(setup), shim == EFI_SHIM_NONE ? "not started by shim"
                          : shim == EFI_SHIM_VERIFYING ? "started by shim, which verifies"
                                                       : "started by shim, verification off");
}

void firmware_tags(struct handoff *b, enum efi_load_options options, BOOLEAN from_file)
{
    UINT64 st_phys = (UINT64)(UINTN)ST;
    handoff_tag(b, MB2_TAG_EFI64, &st_phys, sizeof(st_phys));

    char vendor[64];
    ucs2_to_utf8(vendor, sizeof(vendor), ST->FirmwareVendor ? ST->FirmwareVendor : L"",
                 VENDOR_UNITS);
    handoff_put_firmware(b, ST->FirmwareRevision, ST->Hdr.Revision, options, from_file, vendor);
    Print(L"ticklab.efi: firmware %a revision 0x%x, UEFI %d.%d\n", vendor,
          ST->FirmwareRevision, ST->Hdr.Revision >> 16, ST->Hdr.Revision & 0xFFFF);

    secure_boot_tag(b);
    rsdp_tags(b);
    smbios_tags(b);
    fb_tag(b);
}
