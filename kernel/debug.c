/* kernel/debug.c - see debug.h. Each case must really fault; none may be optimised away. */
#include "kernel/debug.h"

#include <stdint.h>

#include "ticklab/pci.h"
#include "kernel/console/fbcon.h"
#include "kernel/arch/paging.h"
#include "kernel/intr/intr.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"

/* Recursion that the compiler cannot turn into a loop: each frame keeps a live buffer. The
 * limit is never reached (the stack is far smaller); it only tells the compiler that the
 * recursion is bounded. */
static volatile uint64_t recurse_limit = UINT64_MAX;

static __attribute__((noinline)) uint64_t recurse(uint64_t depth)
{
    volatile uint8_t pad[256];
    pad[depth & 0xFF] = (uint8_t)depth;
    if (depth == recurse_limit)
        return pad[0];
    return recurse(depth + 1) + pad[(depth + 1) & 0xFF];
}

void debug_crash(enum crash_kind kind)
{
    if (kind == CRASH_NONE)
        return;
    kprintf("crash=%d requested: faulting on purpose\n", (int)kind);
    switch (kind) {
    case CRASH_UD:
        __asm__ volatile("ud2");
        break;
    case CRASH_PF:
        *(volatile uint64_t *)0xFFFF900000000000ull = 1;   /* unmapped, non-canonical-safe */
        break;
    case CRASH_NULL:
        (void)*(volatile uint64_t *)0;
        break;
    case CRASH_DIV0: {
        /* In C the compiler turns 1/x into a comparison; only a real DIV faults. */
        uint32_t lo = 1, hi = 0, zero = 0;
        __asm__ volatile("divl %2" : "+a"(lo), "+d"(hi) : "r"(zero));
        break;
    }
    case CRASH_OVERFLOW:
        (void)recurse(0);
        break;
    default:
        break;
    }
}

void debug_stray_irq(unsigned vector)
{
    if (vector < 32 || vector > 255)
        return;
    kprintf("stray_irq=%#x requested: a self IPI at a vector with no handler\n", vector);
    unsigned long flags = irq_save();
    if (irq_handlers[vector].fn == irq_unhandled)
        lapic_self_ipi(intr_apic(), (uint8_t)vector);
    irq_restore(flags);
}

/* QEMU's edu device (docs/specs/edu.rst in QEMU): 1234:11e8, BAR 0 its registers; writing
 * a value to the raise register sets it in the status register and asserts INTx (level)
 * until the acknowledge register clears it, which ticklab never writes. */
#define EDU_VENDOR     0x1234
#define EDU_DEVICE     0x11E8
#define EDU_IRQ_RAISE  0x60
#define EDU_REGS_BYTES 0x100

void debug_stuck_line(bool edu)
{
    if (!edu)
        return;
    struct pci_cfg c = { .method = PCI_CFG_PORTS };
    uint8_t dev, fn;
    uint64_t bar;
    void *regs = 0;
    if (pci_find_id(&c, 0, EDU_VENDOR, EDU_DEVICE, &dev, &fn) &&
        (bar = pci_bar_mem(&c, 0, dev, fn, 0)) != 0)
        regs = phys_map_uncached(bar, EDU_REGS_BYTES);
    if (!regs) {
        rec_error("stuck_line", "stuck_line=edu: no edu device (1234:11e8) with a memory BAR "
                                "on bus 0");
        return;
    }
    pci_enable_mem(&c, 0, dev, fn);
    kprintf("stuck_line=edu requested: the edu device at 00:%02x.%u holds its INTx asserted\n",
            dev, fn);
    mmio_write32((uintptr_t)regs + EDU_IRQ_RAISE, 1);
}

/* QEMU's ivshmem-plain (1af4:1110): BAR 2 is a 64-bit prefetchable window on a host file,
 * which OVMF places in its 64-bit PCI aperture (at 512 GiB with opt/ovmf/X-PciMmio64Mb at
 * 512 GiB): a stand-in for a Resizable-BAR board's framebuffer, whose pixels the host reads
 * back from the file. */
#define IVSHMEM_VENDOR 0x1AF4
#define IVSHMEM_DEVICE 0x1110
#define IVSHMEM_BAR    2
#define FAKE_FB_W      1024
#define FAKE_FB_H      768

void debug_fb_override(struct fb_info *fb, bool ivshmem)
{
    if (!ivshmem)
        return;
    struct pci_cfg c = { .method = PCI_CFG_PORTS };
    uint8_t dev, fn;
    uint64_t bar;
    if (!pci_find_id(&c, 0, IVSHMEM_VENDOR, IVSHMEM_DEVICE, &dev, &fn) ||
        (bar = pci_bar_mem(&c, 0, dev, fn, IVSHMEM_BAR)) == 0)
        return;                 /* said in the console record: the loader's screen stays */
    pci_enable_mem(&c, 0, dev, fn);
    *fb = (struct fb_info){ .kind = FB_RGB, .phys = bar, .pitch = FAKE_FB_W * 4,
                            .width = FAKE_FB_W, .height = FAKE_FB_H, .bpp = 32,
                            .red_pos = 16, .red_size = 8, .green_pos = 8, .green_size = 8,
                            .blue_pos = 0, .blue_size = 8 };
}
