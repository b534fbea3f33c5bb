/* kernel/arch/frame.h - the frame every exception entry builds
 * (kernel/arch/isr.asm pushes it; the layout below must match the push order). Its own
 * header so that the dispatcher (trap.h) and the fault reporter (fault.h) both take it
 * without including each other. */
#ifndef TICKLAB_ARCH_FRAME_H
#define TICKLAB_ARCH_FRAME_H
#include <stdint.h>

/* An exception's frame (vectors 0-31). An interrupt (vector 32 and up) builds none: its
 * stub saves rax..r11 alone, pushes no vector or error code, and calls its handler with the
 * vector (kernel/arch/isr.asm, trap.h). */
struct trap_frame {
    uint64_t r15, r14, r13, r12, rbp, rbx;
    uint64_t r11, r10, r9, r8, rdi, rsi, rdx, rcx, rax;
    uint64_t vector, error_code;
    uint64_t rip, cs, rflags, rsp, ss;     /* pushed by the CPU */
};
_Static_assert(sizeof(struct trap_frame) == 22 * 8, "trap_frame layout");

#endif
