/* kernel/debug.h - faults on purpose (crash=), so the tests can prove faults are reported;
 * and a stray interrupt (stray_irq=), so they can prove it is survived. */
#ifndef TICKLAB_DEBUG_H
#define TICKLAB_DEBUG_H
#include <stdbool.h>

#include "kernel/config.h"

void debug_crash(enum crash_kind kind);
/* stray_irq=: a self IPI at `vector` (32..255; 0 or an exception vector: nothing), which no
 * handler is installed for: the run must acknowledge it, count it, name it, and go on (the
 * interrupts of its priority class and below keep coming). */
void debug_stray_irq(unsigned vector);
/* stuck_line=edu: QEMU's edu PCI device asserts its INTx and is never acknowledged: a level
 * line held for the rest of the run, on whatever input its pin routes to (on q35, slot s
 * pin A is GSI 20 + s % 4, an input an HPET comparator may share). */
void debug_stuck_line(bool edu);
/* fb_override=ivshmem: the screen is QEMU's ivshmem-plain device's BAR 2 (1024x768, 32 bpp)
 * instead of the loader's framebuffer: a framebuffer wherever the firmware put that BAR. */
struct fb_info;
void debug_fb_override(struct fb_info *fb, bool ivshmem);

#endif
