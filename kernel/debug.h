/* kernel/debug.h - faults on purpose (crash=), so the tests can prove faults are reported. */
#ifndef TICKLAB_DEBUG_H
#define TICKLAB_DEBUG_H
#include "kernel/config.h"

void debug_crash(enum crash_kind kind);

#endif
