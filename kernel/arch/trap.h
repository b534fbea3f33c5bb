/* kernel/arch/trap.h - the frame every interrupt and exception entry builds
 * (kernel/arch/isr.asm pushes it; the layout below must match the push order). */
#ifndef TICKLAB_ARCH_TRAP_H
#define TICKLAB_ARCH_TRAP_H
#include <stdint.h>

struct trap_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error_code;
    uint64_t rip, cs, rflags, rsp, ss;     /* pushed by the CPU */
};
_Static_assert(sizeof(struct trap_frame) == 22 * 8, "trap_frame layout");

typedef void (*irq_handler_fn)(struct trap_frame *tf, void *ctx);

void isr_dispatch(struct trap_frame *tf);
/* Install a handler for vector 32..255. Returns -EINVAL for an exception vector or
 * -EBUSY when one is installed already. */
int irq_set_handler(unsigned vector, irq_handler_fn fn, void *ctx);
void irq_clear_handler(unsigned vector);
uint64_t irq_count(unsigned vector);

#endif
