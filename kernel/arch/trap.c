/* kernel/arch/trap.c - vector dispatch: exceptions go to the fault reporter; every other
 * vector to the handler installed here, which the entry stub (isr.asm) calls itself,
 * counting it per vector. A vector with no handler is counted as unexpected; nothing is
 * written from interrupt context: the counts are reported later, from thread context
 * (intr_report_stats). */
#include "kernel/arch/trap.h"

#include <stdbool.h>

#include "ticklab/io.h"
#include "kernel/arch/fault.h"
#include "kernel/arch/machine_events.h"
#include "kernel/arch/mce.h"
#include "kernel/arch/nmi.h"
#include "ticklab/errno.h"

#define FIRST_IRQ_VECTOR 32
#define VEC_NMI          2
#define VEC_MC           18

/* isr.asm reads these by address: a handler and its context 16 bytes a vector, the counts
 * 8 bytes a vector. Every slot holds a handler (the stubs call it without a test):
 * irq_unhandled where no driver installed its own. */
struct irq_handler irq_handlers[256] = { [0 ... 255] = { irq_unhandled, 0 } };
uint64_t irq_counts[256];
volatile uint64_t irq_events;
struct irq_probe irq_probe;
uint64_t irq_unexpected_counts[256];
_Static_assert(sizeof(struct irq_handler) == 16, "isr.asm indexes irq_handlers by vector * 16");
_Static_assert(__builtin_offsetof(struct irq_handler, ctx) == 8, "isr.asm loads ctx at 8");

static void (*unhandled_ack)(unsigned vector);

void irq_set_unhandled_ack(void (*ack)(unsigned vector))
{
    unhandled_ack = ack;
}

/* A vector with no handler installed: counted in irq_unexpected_counts and as a machine
 * event of this CPU, then acknowledged by the interrupt layer (an interrupt never ended keeps
 * its priority class, and every class below it, from being delivered again). */
void irq_unhandled(unsigned vector, void *ctx)
{
    (void)ctx;
    irq_unexpected_counts[vector & 0xFF]++;
    machine_events_note(&machine_events[machine_events_cpu()].unexpected);
    if (unhandled_ack)
        unhandled_ack(vector & 0xFF);
}

int irq_set_handler(unsigned vector, irq_handler_fn fn, void *ctx)
{
    if (vector < FIRST_IRQ_VECTOR || vector > 255 || !fn)
        return -EINVAL;
    if (irq_handlers[vector].fn != irq_unhandled)
        return -EBUSY;
    irq_handlers[vector].ctx = ctx;
    irq_handlers[vector].fn = fn;
    return 0;
}

void irq_clear_handler(unsigned vector)
{
    if (vector >= FIRST_IRQ_VECTOR && vector <= 255)
        irq_handlers[vector].fn = irq_unhandled;
}

uint64_t irq_count(unsigned vector)
{
    return vector < 256 ? irq_counts[vector] : 0;
}

void exception_dispatch(struct trap_frame *tf)
{
    irq_counts[tf->vector & 0xFF]++;
    if (tf->vector == VEC_NMI) {
        nmi_handle(tf);
        return;
    }
    if (tf->vector == VEC_MC && mce_handle(tf))
        return;         /* corrected errors only: counted, the run goes on */
    fault_handle(tf);
}

void irq_probe_exit(unsigned vector)
{
    irq_probe.vector = (uint32_t)(vector & 0xFF);
    irq_probe.exit_tsc = rdtsc_ordered();
    irq_probe.seq++;
}

uint64_t irq_unexpected(unsigned vector)
{
    return vector < 256 ? irq_unexpected_counts[vector] : 0;
}
