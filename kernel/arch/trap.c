/* kernel/arch/trap.c - vector dispatch: exceptions go to the fault reporter, everything else
 * to the handler installed for the vector (counted per vector). A vector with no handler is
 * counted as unexpected and reported once, not silently ignored. */
#include "kernel/arch/trap.h"

#include <stdbool.h>

#include "ticklab/io.h"
#include "kernel/arch/fault.h"
#include "kernel/report/record.h"
#include "ticklab/errno.h"

#define FIRST_IRQ_VECTOR 32

static struct {
    irq_handler_fn fn;
    void *ctx;
} handlers[256];
static uint64_t counts[256];
struct irq_probe irq_probe;
static bool unexpected_reported[256];

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

void isr_dispatch(struct trap_frame *tf)
{
    unsigned v = (unsigned)tf->vector & 0xFF;
    counts[v]++;
    if (v < FIRST_IRQ_VECTOR) {
        fault_handle(tf);
        return;
    }
    if (handlers[v].fn) {
        handlers[v].fn(tf, handlers[v].ctx);
        if (irq_probe.split) {
            irq_probe.vector = v;
            irq_probe.exit_tsc = rdtsc_ordered();
            irq_probe.seq++;
        }
        return;
    }
    if (!unexpected_reported[v]) {
        unexpected_reported[v] = true;
        struct rec r;
        rec_begin(&r, "error");
        json_str(&r.j, "what", "unexpected_interrupt");
        json_u64(&r.j, "vector", v);
        rec_emit(&r);
    }
}
