/* kernel/arch/paging.h - the kernel's page tables.
 *
 * Two views of physical memory:
 *  - identity, 0..4 GiB (the low view), but for the kernel's link range (1 MiB up), which maps
 *    to wherever the loader put the image (boot/entry.asm): the kernel image with W^X (text read-only and executable, read-only
 *    data and writable data non-executable), page 0 unmapped so a NULL dereference faults,
 *    an unmapped guard page below every stack, everything else writable and non-executable;
 *  - the direct map at PHYS_MAP_BASE: all of 0..4 GiB (and more on request) writable,
 *    non-executable, for firmware tables, the framebuffer and MMIO, through phys_to_virt().
 * The 2 MiB pages holding the IOAPIC, HPET and LAPIC (0xFEC00000..4 GiB) are uncached in both
 * views; elsewhere the firmware's MTRRs decide the memory type. */
#ifndef TICKLAB_ARCH_PAGING_H
#define TICKLAB_ARCH_PAGING_H
#include <stdbool.h>
#include <stdint.h>

#define PHYS_MAP_BASE 0xFFFF800000000000ull

void paging_init(void);
bool paging_nx_enabled(void);

/* The direct-map address of a physical address below 4 GiB (no check, no mapping work). */
static inline void *phys_to_virt(uint64_t phys)
{
    return (void *)(uintptr_t)(PHYS_MAP_BASE + phys);
}
/* Makes [phys, phys + len) reachable through the direct map (mapping 1 GiB chunks above
 * 4 GiB as needed) and returns its address, or NULL when it lies beyond what the table pool
 * can map (then the caller goes on without that memory). */
void *phys_map(uint64_t phys, uint64_t len);

/* Device memory at any physical address the CPU can reach (a framebuffer a Resizable-BAR
 * board places above 512 GiB), in a virtual window of its own, write-combining where the CPU
 * has PAT (paging_pat_init()), else typed by the MTRRs as the direct map is. NULL when phys
 * is beyond the CPU's physical address width or the table pool is spent. */
void *phys_map_wc(uint64_t phys, uint64_t len);
/* PAT entry 1 made write-combining, on the CPU it runs on (every CPU must have the same
 * PAT: the boot CPU in paging_init(), each other CPU as it starts). Nothing without PAT. */
void paging_pat_init(void);
/* PAT is there and entry 1 is write-combining. */
bool paging_wc(void);

/* phys_map(), and the 2 MiB pages of the direct map holding the range made uncached: device
 * registers (a UART, PCI's ECAM window) outside the last 20 MiB below 4 GiB, whose memory
 * type would otherwise be whatever the firmware's MTRRs say. Only for MMIO: a 2 MiB page is
 * the unit, so RAM sharing one with the device would become uncached too. */
void *phys_map_uncached(uint64_t phys, uint64_t len);

/* One 4 KiB page of the low view below 8 MiB (virt: the kernel's own addresses, or identity
 * below 1 MiB), changed after boot (and flushed from this CPU's TLB): a guard (unmapped; guard_name is what paging_guard_name() reports for it), code
 * (read-only, executable: the application processors' start page while they start), or data
 * (writable, non-executable). 0, or -1 for a page outside the 4 KiB-mapped region. */
enum page_kind { PAGE_GUARD, PAGE_CODE, PAGE_DATA };
/* 0, or -ERANGE when phys is not in the range mapped with 4 KiB pages. */
int paging_set_page(uint64_t virt, enum page_kind kind, const char *guard_name);
/* The physical address of the top-level table (what CR3 holds; below 4 GiB). */
uint64_t paging_root(void);
/* Where the image is: its physical start (the loader's choice), its size, and its link
 * address (1 MiB). The two differ when the loader put it elsewhere (boot/entry.asm); the
 * kernel's virtual addresses are the link ones either way. */
uint64_t paging_kernel_phys(void);
uint64_t paging_kernel_bytes(void);
uint64_t paging_kernel_link(void);

/* The name of the stack whose guard page holds addr ("boot", "double_fault", ...) or NULL. */
const char *paging_guard_name(uint64_t addr);

#endif
