/* kernel/debug.h - faults on purpose (crash=), so the tests can prove faults are reported;
 * and a stray interrupt (stray_irq=), so they can prove it is survived. */
#ifndef TICKLAB_DEBUG_H
#define TICKLAB_DEBUG_H
#include "kernel/config.h"

void debug_crash(enum crash_kind kind);
/* stray_irq=: a self IPI at `vector` (32..255; 0 or an exception vector: nothing), which no
 * handler is installed for: the run must acknowledge it, count it, name it, and go on (the
 * interrupts of its priority class and below keep coming). */
void debug_stray_irq(unsigned vector);

#endif
