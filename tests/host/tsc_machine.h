/* tests/host/tsc_machine.h - where the tick's and idle's host tests start: a fresh fake PC
 * (tests/host/fake) whose TSC is registered and chosen as time_ns()'s clocksource at the
 * fake's default rate, with the LAPIC found. */
#ifndef TESTS_HOST_TSC_MACHINE_H
#define TESTS_HOST_TSC_MACHINE_H

#include <stdbool.h>
#include "ticklab/cpuid.h"
#include "ticklab/lapic.h"
#include "ticklab/tsc.h"

/* Resets the fake PC, timekeeping and the clockevent registry, hands the fake's interrupts
 * to entry, offers TSC-deadline in CPUID and probes the CPU (ci), registers *tsc (made from
 * tsc_dev) at FAKE_TSC_DEFAULT_HZ, selects it and runs lapic_init (li). False, with the
 * failed check reported, when any step fails. */
bool tsc_machine_start(struct tsc *tsc_dev, struct clocksource *tsc, struct lapic *apic,
                       struct cpu_info *ci, struct lapic_info *li,
                       void (*entry)(int line, void *ctx));

#endif
