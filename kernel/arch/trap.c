/* kernel/arch/trap.c - vector dispatch: exceptions go to the fault reporter, everything else
 * to the handler installed for the vector (counted per vector). A vector with no handler is
 * counted as unexpected; nothing is written from here (interrupt context): the counts are
 * reported later, from thread context (intr_report_stats). */
#include "kernel/arch/trap.h"

#include <stdbool.h>

#include "ticklab/io.h"
#include "kernel/arch/fault.h"
#include "ticklab/errno.h"

#define FIRST_IRQ_VECTOR 32

static struct {
    irq_handler_fn fn;
    void *ctx;
} handlers[256];
static uint64_t counts[256];
volatile uint64_t irq_events;
struct irq_probe irq_probe;
static uint64_t unexpected[256];

int irq_set_handler(unsigned vector, irq_handler_fn fn, void *ctx)
{
    if (vector < FIRST_IRQ_VECTOR || vector > 255)
        return -EINVAL;
    if (handlers[vector].fn)
        return -EBUSY;
    handlers[vector].ctx = ctx;
    handlers[vector].fn = fn;
    return 0;
}

void irq_clear_handler(unsigned vector)
{
    if (vector >= FIRST_IRQ_VECTOR && vector <= 255)
        handlers[vector].fn = 0;
}

uint64_t irq_count(unsigned vector)
{
    return vector < 256 ? counts[vector] : 0;
}

void exception_dispatch(struct trap_frame *tf)
{
    counts[tf->vector & 0xFF]++;
    fault_handle(tf);
}

/* The handler is the last thing done, so the call is a jump: nothing between the stub and
 * the handler but the count and the lookup. */
void irq_dispatch(struct trap_frame *tf)
{
    unsigned v = (unsigned)tf->vector & 0xFF;
    counts[v]++;
    irq_events++;
    irq_handler_fn fn = handlers[v].fn;
    if (!fn) {
        unexpected[v]++;
        return;
    }
    fn(tf, handlers[v].ctx);
}

void irq_probe_exit(const struct trap_frame *tf)
{
    irq_probe.vector = (uint32_t)(tf->vector & 0xFF);
    irq_probe.exit_tsc = rdtsc_ordered();
    irq_probe.seq++;
}

uint64_t irq_unexpected(unsigned vector)
{
    return vector < 256 ? unexpected[vector] : 0;
}
