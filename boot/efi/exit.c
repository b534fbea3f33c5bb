/* boot/efi/exit.c - the memory map and ExitBootServices (exit.h). */
#include "boot/efi/exit.h"

#include <efilib.h>

#define COM1            0x3F8
#define COM_LSR         5
#define  LSR_THRE       0x20      /* transmit holding register empty */
#define THRE_POLLS      100000    /* a port read takes about 1 us: 0.1 s at most per byte */

EFI_STATUS memmap_alloc(struct memmap *m)
{
    m->size = 0;
    m->buf = NULL;
    EFI_STATUS s = uefi_call_wrapper(BS->GetMemoryMap, 5, &m->size, NULL, &m->key,
                                     &m->desc_size, &m->desc_version);
    if (s != EFI_BUFFER_TOO_SMALL || m->desc_size == 0) {
        Print(L"ticklab.efi: GetMemoryMap would not give its size (%r)\n", s);
        return EFI_ERROR(s) ? s : EFI_DEVICE_ERROR;
    }
    m->cap = m->size + MAP_SLACK_DESCS * m->desc_size;
    s = uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, m->cap, &m->buf);
    if (EFI_ERROR(s)) {
        Print(L"ticklab.efi: no memory for the memory map (%r)\n", s);
        return s;
    }
    return EFI_SUCCESS;
}

static inline UINT8 port_in8(UINT16 port)
{
    UINT8 v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}

static inline void port_out8(UINT16 port, UINT8 v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

/* Straight to the UART the firmware set up for its own console; a missing UART reads 0xFF
 * (THRE set), so this never waits long. */
static void com1_puts(const char *s)
{
    for (; *s; s++) {
        for (UINTN i = 0; i < THRE_POLLS && !(port_in8(COM1 + COM_LSR) & LSR_THRE); i++)
            ;
        port_out8(COM1, (UINT8)*s);
    }
}

static void __attribute__((noreturn)) give_up(EFI_STATUS last, UINTN tries)
{
    static const char msg[] = "\r\nticklab.efi: ExitBootServices failed; the firmware kept "
                              "changing its memory map or refused the key. Stopped: power "
                              "off or reset this machine.\r\n";
    com1_puts(msg);
    Print(L"ticklab.efi: ExitBootServices failed %d times (last: %r); stopped\n",
          (UINT32)tries, last);
    for (;;)
        __asm__ volatile("cli; hlt");
}

EFI_STATUS exit_boot_services(EFI_HANDLE image, struct memmap *m)
{
    EFI_STATUS s = EFI_SUCCESS;
    UINTN tries = 0;
    while (tries < EXIT_TRIES) {
        m->size = m->cap;
        s = uefi_call_wrapper(BS->GetMemoryMap, 5, &m->size, m->buf, &m->key, &m->desc_size,
                              &m->desc_version);
        if (EFI_ERROR(s))
            break;     /* EFI_BUFFER_TOO_SMALL: the slack ran out; nothing else helps */
        s = uefi_call_wrapper(BS->ExitBootServices, 2, image, m->key);
        tries++;
        if (s == EFI_SUCCESS)
            return EFI_SUCCESS;
        if (s != EFI_INVALID_PARAMETER)
            break;
    }
    if (tries == 0) {
        Print(L"ticklab.efi: GetMemoryMap failed (%r)\n", s);
        return s;
    }
    give_up(s, tries);
}
