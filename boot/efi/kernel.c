/* boot/efi/kernel.c - the embedded kernel ELF (kernel.h).
 *
 * The image is build/ticklab.elf with its debug sections stripped, included by
 * kernel_image.S. It is linked at 1 MiB (linker.ld) and runs wherever it is loaded: its
 * entry maps its link addresses to where it is (boot/entry.asm), so the segments go wherever
 * the firmware has free pages below 4 GiB, in the order and at the distances their p_paddr
 * give. A firmware that holds anything at 1 MiB can therefore still start it. Its 32-bit Multiboot
 * entry is no use from long mode; the 64-bit one is found through the ticklab EFI header
 * (boot/entry.asm), a magic and its negation followed by the entry address, looked for at
 * 8-byte steps in the file's first 32 KiB as Multiboot2 loaders look for their header. */
#include "boot/efi/kernel.h"

#include <efilib.h>

extern const UINT8 ticklab_kernel_elf[], ticklab_kernel_elf_end[];

#define EFI_HDR_MAGIC    0x45464C54u   /* "TLFE": boot/entry.asm TL_EFI_HDR_MAGIC */
#define EFI_HDR_SEARCH   32768
#define LOAD_MIN         0x100000ull   /* nothing is linked below 1 MiB */
#define LOAD_MAX         0x100000000ull
#define MAX_PHDRS        16

/* ELF64 (System V ABI, Generic) fields used here */
#define EI_CLASS_64      2
#define EI_DATA_LE       1
#define EM_X86_64        62
#define PT_LOAD          1
#define PF_X             1

struct elf64_ehdr {
    UINT8 ident[16];
    UINT16 type, machine;
    UINT32 version;
    UINT64 entry, phoff, shoff;
    UINT32 flags;
    UINT16 ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_phdr {
    UINT32 type, flags;
    UINT64 offset, vaddr, paddr, filesz, memsz, align;
};

static UINTN image_size(void)
{
    return (UINTN)(ticklab_kernel_elf_end - ticklab_kernel_elf);
}

static const struct elf64_phdr *phdr(const struct elf64_ehdr *eh, UINTN i)
{
    return (const struct elf64_phdr *)(ticklab_kernel_elf + eh->phoff + i * sizeof(struct elf64_phdr));
}

static const CHAR16 *check_header(const struct elf64_ehdr *eh)
{
    if (image_size() < sizeof(*eh))
        return L"shorter than an ELF header";
    if (eh->ident[0] != 0x7F || eh->ident[1] != 'E' || eh->ident[2] != 'L' || eh->ident[3] != 'F')
        return L"no ELF magic";
    if (eh->ident[4] != EI_CLASS_64 || eh->ident[5] != EI_DATA_LE || eh->machine != EM_X86_64)
        return L"not a little-endian x86-64 ELF64 file";
    if (eh->phentsize != sizeof(struct elf64_phdr) || eh->phnum == 0 || eh->phnum > MAX_PHDRS)
        return L"program header table size";
    if (eh->phoff > image_size() || (image_size() - eh->phoff) / sizeof(struct elf64_phdr) < eh->phnum)
        return L"program header table past the end of the file";
    return NULL;
}

/* [lo, hi) over every PT_LOAD segment, each checked against the file and the load window. */
static const CHAR16 *check_segments(const struct elf64_ehdr *eh, struct kernel_image *k)
{
    k->lo = LOAD_MAX;
    k->hi = 0;
    for (UINTN i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *ph = phdr(eh, i);
        if (ph->type != PT_LOAD || ph->memsz == 0)
            continue;
        if (ph->filesz > ph->memsz || ph->offset > image_size() ||
            ph->filesz > image_size() - ph->offset)
            return L"a segment's file bytes lie outside the file";
        if (ph->paddr < LOAD_MIN || ph->paddr >= LOAD_MAX || ph->memsz > LOAD_MAX - ph->paddr)
            return L"a segment lies outside 1 MiB .. 4 GiB";
        if (ph->paddr < k->lo)
            k->lo = ph->paddr;
        if (ph->paddr + ph->memsz > k->hi)
            k->hi = ph->paddr + ph->memsz;
    }
    if (k->hi == 0)
        return L"no loadable segment";
    k->lo &= ~(UINT64)(EFI_PAGE_SIZE - 1);
    k->hi = (k->hi + EFI_PAGE_SIZE - 1) & ~(UINT64)(EFI_PAGE_SIZE - 1);
    return NULL;
}

static BOOLEAN in_exec_segment(const struct elf64_ehdr *eh, UINT64 addr)
{
    for (UINTN i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *ph = phdr(eh, i);
        if (ph->type == PT_LOAD && (ph->flags & PF_X) && addr >= ph->paddr &&
            addr - ph->paddr < ph->filesz)
            return TRUE;
    }
    return FALSE;
}

static const CHAR16 *find_entry(const struct elf64_ehdr *eh, struct kernel_image *k)
{
    UINTN end = image_size() < EFI_HDR_SEARCH ? image_size() : EFI_HDR_SEARCH;
    for (UINTN off = 0; off + 16 <= end; off += 8) {
        UINT32 magic, check;
        CopyMem(&magic, (VOID *)(ticklab_kernel_elf + off), 4);
        CopyMem(&check, (VOID *)(ticklab_kernel_elf + off + 4), 4);
        if (magic != EFI_HDR_MAGIC || (UINT32)(magic + check) != 0)
            continue;
        CopyMem(&k->entry, (VOID *)(ticklab_kernel_elf + off + 8), 8);
        if (!in_exec_segment(eh, k->entry))
            return L"the EFI header's entry is not in an executable segment";
        return NULL;
    }
    return L"no ticklab EFI header in the first 32 KiB (a kernel older than the EFI entry?)";
}

EFI_STATUS kernel_check(struct kernel_image *k)
{
    const struct elf64_ehdr *eh = (const struct elf64_ehdr *)ticklab_kernel_elf;
    const CHAR16 *why = check_header(eh);
    if (!why)
        why = check_segments(eh, k);
    if (!why)
        why = find_entry(eh, k);
    if (why) {
        Print(L"ticklab.efi: the embedded kernel cannot be started: %s\n", why);
        return EFI_LOAD_ERROR;
    }
    return EFI_SUCCESS;
}

/* Which firmware memory overlaps [lo, hi): printed when the range cannot be had. */
static void print_overlaps(UINT64 lo, UINT64 hi)
{
    UINTN entries, key, desc_size;
    UINT32 desc_version;
    EFI_MEMORY_DESCRIPTOR *map = LibMemoryMap(&entries, &key, &desc_size, &desc_version);
    if (!map) {
        Print(L"ticklab.efi: (and the memory map could not be read)\n");
        return;
    }
    for (UINTN i = 0; i < entries; i++) {
        EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + i * desc_size);
        UINT64 end = d->PhysicalStart + d->NumberOfPages * EFI_PAGE_SIZE;
        if (d->PhysicalStart < hi && end > lo && d->Type != EfiConventionalMemory)
            Print(L"  0x%lx-0x%lx EFI memory type %d\n", d->PhysicalStart, end, d->Type);
    }
    FreePool(map);
}

/* Pages for the image below 4 GiB, anywhere the firmware has them (OVMF gives the highest
 * free range), never below 1 MiB (where the application processors' start page and the
 * firmware's legacy areas are); at the link address only when nothing else is free. */
static EFI_STATUS allocate(UINTN pages, EFI_PHYSICAL_ADDRESS *at)
{
    *at = LOAD_MAX - 1;
    EFI_STATUS s = uefi_call_wrapper(BS->AllocatePages, 4, AllocateMaxAddress, EfiLoaderCode,
                                     pages, at);
    if (!EFI_ERROR(s) && *at >= LOAD_MIN)
        return s;
    if (!EFI_ERROR(s))
        uefi_call_wrapper(BS->FreePages, 2, *at, pages);
    return EFI_OUT_OF_RESOURCES;
}

EFI_STATUS kernel_place(struct kernel_image *k)
{
    EFI_PHYSICAL_ADDRESS at;
    UINTN pages = (UINTN)((k->hi - k->lo) / EFI_PAGE_SIZE);
    /* LoaderCode: firmware that applies NX to data allocations leaves code types executable,
     * and _start_efi64 runs its first instructions on the firmware's page tables. */
    EFI_STATUS s = allocate(pages, &at);
    if (EFI_ERROR(s)) {
        Print(L"ticklab.efi: no %lu free pages between 1 MiB and 4 GiB for the kernel (%r); "
              L"in use at its link address:\n", (UINT64)pages, s);
        print_overlaps(k->lo, k->hi);
        return EFI_OUT_OF_RESOURCES;
    }
    const struct elf64_ehdr *eh = (const struct elf64_ehdr *)ticklab_kernel_elf;
    SetMem((VOID *)(UINTN)at, (UINTN)(k->hi - k->lo), 0);   /* .bss and the gaps */
    for (UINTN i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *ph = phdr(eh, i);
        if (ph->type == PT_LOAD && ph->filesz)
            CopyMem((VOID *)(UINTN)(at + (ph->paddr - k->lo)),
                    (VOID *)(ticklab_kernel_elf + ph->offset), (UINTN)ph->filesz);
    }
    k->load = at;
    k->entry_at = k->entry - k->lo + at;
    return EFI_SUCCESS;
}
