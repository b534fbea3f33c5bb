/* kernel/arch/paging.c - builds the page tables described in paging.h and switches to them. */
#include "kernel/arch/paging.h"

#include "ticklab/errno.h"
#include <stddef.h>

#include "ticklab/io.h"
#include "kernel/arch/cr.h"
#include "ticklab/kstring.h"

#define PTE_P    (1ull << 0)
#define PTE_W    (1ull << 1)
#define PTE_PWT  (1ull << 3)
#define PTE_PCD  (1ull << 4)
#define PTE_PS   (1ull << 7)      /* in a PD entry: a 2 MiB page */
#define PTE_NX   (1ull << 63)
#define PTE_ADDR 0x000FFFFFFFFFF000ull

#define PAGE_4K   0x1000ull
#define PAGE_2M   0x200000ull
#define GIB       0x40000000ull
#define FINE_END  0x800000ull     /* 4 KiB granularity below 8 MiB (linker.ld asserts the fit) */
#define UC_START  0xFEC00000ull   /* IOAPIC, HPET, LAPIC live in the last 20 MiB below 4 GiB */
#define UC_END    0x100000000ull

#define MSR_EFER  0xC0000080u
#define EFER_NXE  (1ull << 11)

/* The page attribute table (SDM vol. 3A 11.12): entry 1 (selected by PWT alone in a 4 KiB or
 * 2 MiB entry, PCD and PAT clear) is write-through at reset; it is made write-combining, as
 * Linux makes it (its PAT layout: WB, WC, UC-, UC, ...). Nothing ticklab maps uses PWT alone
 * before (the uncached pages use PCD|PWT, entry 3), so no mapping changes type under it. */
#define MSR_PAT        0x277u
#define PAT_ENTRY1     (0xFFull << 8)
#define PAT_WC         0x01ull
#define CPUID1_EDX_PAT (1u << 16)

/* Device memory mapped on request (phys_map_wc): one PML4 slot of its own, 512 GiB of
 * virtual room whatever the physical address, so a framebuffer above the direct map's reach
 * is mapped too. */
#define IO_WINDOW_BASE 0xFFFFFF0000000000ull
#define IO_WINDOW_SLOT ((IO_WINDOW_BASE >> 39) & 511)
#define IO_WINDOW_SIZE (512 * GIB)

#define POOL_PAGES 32
static uint64_t pool[POOL_PAGES][512] __attribute__((aligned(4096)));
static unsigned pool_used;
static uint64_t *pml4, *pdpt_hi, *pdpt_io;
static uint64_t nx_bit;
static bool pat_wc;                    /* PAT entry 1 is write-combining on this machine */
static uint64_t io_used;               /* bytes of the IO window handed out */

extern char __text_start[], __text_end[], __rodata_start[], __rodata_end[];
extern char __kernel_start[], __kernel_end[];
/* Where the loader put the image, less where it is linked (boot/entry.asm): 0 under QEMU's
 * -kernel and whenever the link address was free. */
extern const int64_t kernel_load_delta;
extern char boot_stack_guard[], df_stack_guard[], nmi_stack_guard[], mc_stack_guard[];

static const struct {
    const char *name;
    char *page;
} guards[] = {
    { "boot", boot_stack_guard },
    { "double_fault", df_stack_guard },
    { "nmi", nmi_stack_guard },
    { "machine_check", mc_stack_guard },
};

static bool in_kernel(uint64_t virt)
{
    return virt >= (uintptr_t)__kernel_start && virt < (uintptr_t)__kernel_end;
}

/* The physical address behind a virtual one of the identity view: the kernel's own range
 * is where it was loaded, the rest of it is identity. */
static uint64_t virt_to_phys_low(uint64_t virt)
{
    return in_kernel(virt) ? virt + (uint64_t)kernel_load_delta : virt;
}

/* A table of the pool (in the kernel's .bss) from the physical address an entry holds. */
static uint64_t *table_of(uint64_t entry)
{
    return (uint64_t *)(uintptr_t)((entry & PTE_ADDR) - (uint64_t)kernel_load_delta);
}

static uint64_t table_entry(const uint64_t *table)
{
    return virt_to_phys_low((uintptr_t)table) | PTE_P | PTE_W;
}

static uint64_t *pool_alloc(void)
{
    if (pool_used == POOL_PAGES)
        return NULL;
    uint64_t *t = pool[pool_used++];
    memset(t, 0, PAGE_4K);
    return t;
}

static uint64_t cache_bits(uint64_t phys)
{
    return (phys >= UC_START && phys < UC_END) ? (PTE_PCD | PTE_PWT) : 0;
}

static bool is_guard(uint64_t virt)
{
    for (size_t i = 0; i < sizeof(guards) / sizeof(guards[0]); i++)
        if (virt == (uint64_t)(uintptr_t)guards[i].page)
            return true;
    return false;
}

/* The 4 KiB entry for virtual address virt below FINE_END: the kernel's range at its load
 * address with its rights, the rest identity. */
static uint64_t fine_entry(uint64_t virt)
{
    uint64_t text0 = (uintptr_t)__text_start, text1 = (uintptr_t)__text_end;
    uint64_t ro0 = (uintptr_t)__rodata_start, ro1 = (uintptr_t)__rodata_end;
    uint64_t phys = virt_to_phys_low(virt);

    if (virt == 0 || is_guard(virt))
        return 0;
    if (virt >= text0 && virt < text1)
        return phys | PTE_P;
    if (virt >= ro0 && virt < ro1)
        return phys | PTE_P | nx_bit;
    return phys | PTE_P | PTE_W | nx_bit;
}

/* One page directory covering the 1 GiB at gib_base; 4 KiB tables below FINE_END if fine. */
static uint64_t *build_pd(uint64_t gib_base, bool fine)
{
    uint64_t *pd = pool_alloc();
    if (!pd)
        return NULL;
    for (unsigned i = 0; i < 512; i++) {
        uint64_t phys = gib_base + i * PAGE_2M;
        if (fine && phys < FINE_END) {
            uint64_t *pt = pool_alloc();
            if (!pt)
                return NULL;
            for (unsigned k = 0; k < 512; k++)
                pt[k] = fine_entry(phys + k * PAGE_4K);
            pd[i] = table_entry(pt);
        } else {
            pd[i] = phys | PTE_P | PTE_W | PTE_PS | nx_bit | cache_bits(phys);
        }
    }
    return pd;
}

void paging_init(void)
{
    if (cpuid(0x80000000, 0).eax >= 0x80000001 && (cpuid(0x80000001, 0).edx & (1u << 20))) {
        wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_NXE);
        nx_bit = PTE_NX;
    }
    pml4 = pool_alloc();
    uint64_t *pdpt_lo = pool_alloc();
    pdpt_hi = pool_alloc();
    pml4[0] = table_entry(pdpt_lo);
    pml4[(PHYS_MAP_BASE >> 39) & 511] = table_entry(pdpt_hi);
    for (unsigned g = 0; g < 4; g++) {
        pdpt_lo[g] = table_entry(build_pd(g * GIB, true));
        pdpt_hi[g] = table_entry(build_pd(g * GIB, false));
    }
    write_cr3(paging_root());
    paging_pat_init();
}

bool paging_nx_enabled(void)
{
    return nx_bit != 0;
}

void paging_pat_init(void)
{
    if (cpuid(0, 0).eax < 1 || !(cpuid(1, 0).edx & CPUID1_EDX_PAT))
        return;
    wrmsr(MSR_PAT, (rdmsr(MSR_PAT) & ~PAT_ENTRY1) | PAT_WC << 8);
    pat_wc = true;
}

bool paging_wc(void)
{
    return pat_wc;
}

/* The physical address width: CPUID 0x80000008 EAX[7:0], 36 where it is not given (the
 * SDM's default). */
static unsigned phys_bits(void)
{
    if (cpuid(0x80000000, 0).eax >= 0x80000008) {
        unsigned b = cpuid(0x80000008, 0).eax & 0xFF;
        if (b >= 32 && b <= 52)
            return b;
    }
    return 36;
}

/* The page table covering the 2 MiB at window offset off, made (and its PD) when missing. */
static uint64_t *io_table(uint64_t off, uint64_t **pd_out)
{
    uint64_t *pd;
    if (!(pdpt_io[off / GIB] & PTE_P)) {
        if (!(pd = pool_alloc()))
            return NULL;
        pdpt_io[off / GIB] = table_entry(pd);
    }
    pd = table_of(pdpt_io[off / GIB]);
    *pd_out = pd;
    uint64_t *pde = &pd[(off >> 21) & 511];
    if (!(*pde & PTE_P)) {
        uint64_t *pt = pool_alloc();
        if (!pt)
            return NULL;
        *pde = table_entry(pt);
    }
    return table_of(*pde);
}

void *phys_map_wc(uint64_t phys, uint64_t len)
{
    uint64_t first = phys & ~(PAGE_4K - 1), end = (phys + len + PAGE_4K - 1) & ~(PAGE_4K - 1);
    if (!pml4 || len == 0 || phys + len < phys || end > (1ull << phys_bits()))
        return NULL;
    if (!pdpt_io) {
        if (!(pdpt_io = pool_alloc()))
            return NULL;
        pml4[IO_WINDOW_SLOT] = table_entry(pdpt_io);
    }
    /* The window's offset has the same place in a 2 MiB page as phys, so the aligned middle
     * of a large buffer takes 2 MiB pages and only its ends take page tables. */
    uint64_t off = ((io_used + PAGE_2M - 1) & ~(PAGE_2M - 1)) + (first & (PAGE_2M - 1));
    if (off + (end - first) > IO_WINDOW_SIZE)
        return NULL;
    uint64_t type = pat_wc ? PTE_PWT : 0;      /* no PAT: the MTRRs decide, as before */
    for (uint64_t a = first, o = off; a < end;) {
        uint64_t *pd;
        if (!(a & (PAGE_2M - 1)) && end - a >= PAGE_2M) {
            if (!(pdpt_io[o / GIB] & PTE_P)) {
                if (!(pd = pool_alloc()))
                    return NULL;
                pdpt_io[o / GIB] = table_entry(pd);
            }
            table_of(pdpt_io[o / GIB])[(o >> 21) & 511] =
                a | PTE_P | PTE_W | PTE_PS | nx_bit | type;
            a += PAGE_2M, o += PAGE_2M;
            continue;
        }
        uint64_t *pt = io_table(o, &pd);
        if (!pt)
            return NULL;
        pt[(o >> 12) & 511] = a | PTE_P | PTE_W | nx_bit | type;
        a += PAGE_4K, o += PAGE_4K;
    }
    io_used = off + (end - first);
    write_cr3(read_cr3());
    return (void *)(uintptr_t)(IO_WINDOW_BASE + off + (phys - first));
}

void *phys_map(uint64_t phys, uint64_t len)
{
    if (len == 0 || phys + len < phys || phys + len > 512 * GIB)
        return NULL;
    for (uint64_t g = phys / GIB; g <= (phys + len - 1) / GIB; g++) {
        if (pdpt_hi[g] & PTE_P)
            continue;
        uint64_t *pd = build_pd(g * GIB, false);
        if (!pd)
            return NULL;
        pdpt_hi[g] = table_entry(pd);
    }
    write_cr3(read_cr3());   /* new entries only: a flush is cheap insurance, not required */
    return phys_to_virt(phys);
}

void *phys_map_uncached(uint64_t phys, uint64_t len)
{
    void *v = phys_map(phys, len);
    if (!v)
        return NULL;
    for (uint64_t a = phys & ~(PAGE_2M - 1); a < phys + len; a += PAGE_2M) {
        uint64_t *pd = table_of(pdpt_hi[a / GIB]);
        pd[(a >> 21) & 511] |= PTE_PCD | PTE_PWT;
    }
    write_cr3(read_cr3());   /* the old (cacheable) entries must not stay in the TLB */
    return v;
}

/* Extra guard pages set after boot (the application processors' stacks). */
#define MAX_EXTRA_GUARDS 32
static struct {
    const char *name;
    uint64_t page;
} extra_guards[MAX_EXTRA_GUARDS];
static unsigned n_extra_guards;

/* The 4 KiB identity-map entry of phys (below FINE_END), or NULL. */
static uint64_t *fine_pte(uint64_t phys)
{
    if (phys >= FINE_END || !pml4)
        return NULL;
    uint64_t *pdpt = table_of(pml4[0]);
    uint64_t *pd = table_of(pdpt[phys / GIB]);
    uint64_t pde = pd[(phys >> 21) & 511];
    if (!(pde & PTE_P) || (pde & PTE_PS))
        return NULL;
    return &table_of(pde)[(phys >> 12) & 511];
}

int paging_set_page(uint64_t virt, enum page_kind kind, const char *guard_name)
{
    uint64_t *pte = fine_pte(virt & ~(PAGE_4K - 1));
    if (!pte)
        return -ERANGE;
    virt &= ~(PAGE_4K - 1);
    uint64_t phys = virt_to_phys_low(virt);
    switch (kind) {
    case PAGE_GUARD:
        *pte = 0;
        if (guard_name && n_extra_guards < MAX_EXTRA_GUARDS) {
            extra_guards[n_extra_guards].name = guard_name;
            extra_guards[n_extra_guards++].page = virt;
        }
        break;
    case PAGE_CODE:
        *pte = phys | PTE_P;
        break;
    case PAGE_DATA:
        *pte = phys | PTE_P | PTE_W | nx_bit;
        break;
    }
    __asm__ volatile("invlpg (%0)" : : "r"((uintptr_t)virt) : "memory");
    return 0;
}

uint64_t paging_root(void)
{
    return virt_to_phys_low((uintptr_t)pml4);
}

uint64_t paging_kernel_phys(void)
{
    return virt_to_phys_low((uintptr_t)__kernel_start);
}

uint64_t paging_kernel_bytes(void)
{
    return (uintptr_t)__kernel_end - (uintptr_t)__kernel_start;
}

uint64_t paging_kernel_link(void)
{
    return (uintptr_t)__kernel_start;
}

const char *paging_guard_name(uint64_t addr)
{
    for (unsigned i = 0; i < n_extra_guards; i++)
        if (addr >= extra_guards[i].page && addr < extra_guards[i].page + PAGE_4K)
            return extra_guards[i].name;
    for (size_t i = 0; i < sizeof(guards) / sizeof(guards[0]); i++) {
        uint64_t g = (uint64_t)(uintptr_t)guards[i].page;
        if (addr >= g && addr < g + PAGE_4K)
            return guards[i].name;
    }
    return NULL;
}
