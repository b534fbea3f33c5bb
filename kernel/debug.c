/* kernel/debug.c - see debug.h. Each case must really fault; none may be optimised away. */
#include "kernel/debug.h"

#include <stdint.h>

#include "kernel/intr/intr.h"
#include "kernel/report/console.h"

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
