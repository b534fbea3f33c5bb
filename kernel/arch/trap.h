/* kernel/arch/trap.h - interrupt dispatch, the entry probe, and the exception frame
 * (kernel/arch/isr.asm; the exception frame itself is frame.h). */
#ifndef TICKLAB_ARCH_TRAP_H
#define TICKLAB_ARCH_TRAP_H
#include <stdbool.h>
#include <stdint.h>

#include "kernel/arch/frame.h"

/* TSC timestamps of the interrupt path, for the experiments (kernel/exp), taken only while
 * asked for (so that the tick pays nothing for them otherwise). While `on`: the entry's TSC, by
 * the entry stub of every interrupt and exception, right after it saved the two registers
 * RDTSC writes (the "first instruction of the handler" in latency figures). While `split`
 * as well: eoi_begin/eoi_end around the acknowledgement of the interrupt controller
 *  (intr_eoi), exit_tsc as the handler returns to the stub; vector and seq (incremented
 * last) say which interrupt the set belongs to. One set for all CPUs: an experiment that turns it on keeps the other
 * CPUs quiet. */
struct irq_probe {
    volatile uint32_t entry_tsc_lo;    /* first member: isr.asm writes it by address; the
                                          low half of the entry's TSC alone (one store
                                          fewer before every handler): irq_entry_tsc() */
    uint32_t entry_pad;
    volatile uint64_t eoi_begin_tsc, eoi_end_tsc, exit_tsc;
    volatile uint64_t seq;
    volatile uint32_t vector;
    volatile bool on;                  /* entry_tsc_lo */
    volatile bool split;               /* eoi_begin/eoi_end, exit_tsc, vector, seq too */
    volatile bool in_irq;              /* while `on`: set by the entry stub with its stamp,
                                          cleared as the interrupt returns; so a handler's
                                          work run by hand (a rescued hrtimer) can tell that
                                          the stamp is not its own */
};
extern struct irq_probe irq_probe;
_Static_assert(__builtin_offsetof(struct irq_probe, on) == 44, "isr.asm tests irq_probe.on at 44");
_Static_assert(__builtin_offsetof(struct irq_probe, split) == 45,
               "isr.asm tests irq_probe.split at 45");
_Static_assert(__builtin_offsetof(struct irq_probe, in_irq) == 46,
               "isr.asm sets irq_probe.in_irq at 46");

/* The entry stamp in full, from any TSC reading taken after it within 2^32 cycles (a
 * second at 4 GHz; every reader is in the same interrupt or microseconds after it). */
static inline uint64_t irq_entry_tsc(uint64_t later)
{
    return later - (uint32_t)((uint32_t)later - irq_probe.entry_tsc_lo);
}

/* An interrupt's handler: called with its vector and the ctx it was installed with. It gets
 * no frame: an interrupt's stub saves only the registers a C call may change, and pushes no
 * vector or error code (an interrupt has none; the stub knows its vector when assembled). */
typedef void (*irq_handler_fn)(unsigned vector, void *ctx);

/* From kernel/arch/isr.asm: vectors 0-31 to the fault reporter with the whole frame
 * (frame.h); 32-255 are dispatched by the stub itself to irq_handlers[vector] (counted in
 * irq_counts; irq_unhandled, the handler of a vector none was installed for, counts it in
 * irq_unexpected_counts too); irq_probe_exit after a handler while irq_probe.split (the
 * exit stamp). */
void exception_dispatch(struct trap_frame *tf);
void irq_probe_exit(unsigned vector);
struct irq_handler {
    irq_handler_fn fn;
    void *ctx;
};
extern struct irq_handler irq_handlers[256];
extern uint64_t irq_counts[256], irq_unexpected_counts[256];
/* Install a handler for vector 32..255. Returns -EINVAL for an exception vector or
 * -EBUSY when one is installed already. */
int irq_set_handler(unsigned vector, irq_handler_fn fn, void *ctx);
void irq_clear_handler(unsigned vector);
void irq_unhandled(unsigned vector, void *ctx);
/* What irq_unhandled calls after counting, to end the interrupt at its controller (the
 * interrupt layer installs it: kernel/intr/intr.c). */
void irq_set_unhandled_ack(void (*ack)(unsigned vector));
uint64_t irq_count(unsigned vector);
/* Interrupts taken so far, on any CPU: a wait that polls instead of halting ends when this
 * moves (not atomic across CPUs: two at once may count one, the value still moves). */
extern volatile uint64_t irq_events;
/* Interrupts that came at `vector` with no handler installed. */
uint64_t irq_unexpected(unsigned vector);

#endif
