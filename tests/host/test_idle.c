/* tests/host/test_idle.c - kernel/timers/idle.c (HLT with a backup wake-up) on the fake PC,
 * with the LAPIC timer's two devices, an HPET channel and the PIT registered for CPU 0: which
 * device backs a wait up (the best free one-shot of this CPU that shares no hardware with
 * the device waited for, nor with the tick's), that the backup ends a wait nothing else ends,
 * that a CPU without a backup polls instead of halting, and that every wake-up on the boot
 * CPU folds the clocksource and rescues a tick that stopped. The CPU a test runs on is
 * fake_smp_cpu (tests/host/shim/kernel/smp/smp.h). */
#include "kernel/timers/idle.h"
#include <string.h>
#include "ticklab/cpuid.h"
#include "ticklab/hpet.h"
#include "ticklab/lapic.h"
#include "ticklab/lapic_timer.h"
#include "ticklab/pit8254.h"
#include "ticklab/tick.h"
#include "ticklab/tsc.h"
#include "fake/fake.h"
#include "test.h"
#include "tsc_machine.h"
#include "ticklab/timekeeping.h"

static struct tick tk;          /* the tick under test */

/* The drivers' state, as the kernel keeps it. */
static struct lapic the_apic;
static struct hpet the_hpet;
static struct tsc the_tsc;

#define VEC 0x40
#define GSI 20
#define MS 1000000ull

unsigned fake_smp_cpu;
/* kernel/arch/trap.c's count of interrupts taken (not linked here): a polling wait ends
 * when it moves, so the fake's interrupt entry below counts like the entry stub (isr.asm) does. */
volatile uint64_t irq_events;

static struct lapic_timer_ce lt;
static struct hpet_channel ch, ch1;          /* comparator 1: a device of CPU 1 */
static uint64_t other_events;
static void other_owner_event(struct clockevent *ce)
{
    (void)ce;
    other_events++;
}
static struct pit_clockevent pit;
static struct clocksource tsc;

static void entry(int line, void *ctx)
{
    (void)ctx;
    irq_events++;
    if (line == FAKE_IRQ_LAPIC_TIMER) {
        lapic_eoi(&the_apic);
        lapic_timer_ce_irq(&lt);
    } else if (line == FAKE_IRQ_HPET(0)) {
        hpet_channel_irq(&ch);
    } else if (line == FAKE_IRQ_HPET(1)) {
        hpet_channel_irq(&ch1);
    } else if (line == FAKE_IRQ_ISA(0)) {
        pit_clockevent_irq(&pit);
    }
}

static bool machine(void)
{
    struct lapic_info li;
    struct hpet_info hi;
    struct cpu_info ci;

    fake_smp_cpu = 1;
    halt_backup_stop();
    fake_smp_cpu = 0;
    halt_backup_stop();
    idle_configure(IDLE_HALT, false);
    tick_stop(&tk);
    halt_set_tick(&tk);
    if (!tsc_machine_start(&the_tsc, &tsc, &the_apic, &ci, &li, entry) ||
        !CHECK_EQ_I64(hpet_init(&the_hpet, FAKE_HPET_BASE, false, &hi), 0))
        return false;
    hpet_enable(&the_hpet);
    lapic_timer_ce_init(&lt, &the_apic, 0, VEC, 1000000000, &tsc, &ci);
    pit_clockevent_init(&pit, NULL);
    if (!CHECK_EQ_I64(hpet_comparator_route(&the_hpet, 0, GSI), 0) ||
        !CHECK_EQ_I64(hpet_channel_init(&ch, &the_hpet, 0, 0, NULL), 0) ||
        !CHECK_EQ_I64(clockevent_register(&lt.lapic), 0) ||
        !CHECK_EQ_I64(clockevent_register(&lt.deadline), 0) ||
        !CHECK_EQ_I64(clockevent_register(&ch.ce), 0) ||
        !CHECK_EQ_I64(clockevent_register(&pit.ce), 0))
        return false;
    return CHECK(lt.deadline.usable);
}

static const struct clockevent *backup_for(const struct clockevent *busy)
{
    if (!halt_backup_start(busy))
        return NULL;
    const struct clockevent *b = halt_backup_device();
    halt_backup_stop();
    return b;
}

/* The best free one-shot device (tsc_deadline 200, lapic 150, hpet 120, pit 100), never one
 * that shares hardware with the device waited for: waiting on either LAPIC mode, the backup
 * is the HPET; found by the hw pointer, not by names. */
TEST(halt_backup_never_shares_hardware_with_the_device_waited_for)
{
    REQUIRE(machine());
    CHECK(backup_for(NULL) == &lt.deadline);
    CHECK(backup_for(&ch.ce) == &lt.deadline);
    CHECK(backup_for(&lt.lapic) == &ch.ce);
    CHECK(backup_for(&lt.deadline) == &ch.ce);
    CHECK(backup_for(&pit.ce) == &lt.deadline);
    /* The backup is claimed for the wait, and given back after it. */
    REQUIRE(halt_backup_start(&lt.lapic));
    CHECK(halt_backup_device() == &ch.ce);
    CHECK(!clockevent_is_free(&ch.ce));
    CHECK(ch.ce.event != NULL && ch.ce.owner != NULL);
    halt_backup_stop();
    CHECK(halt_backup_device() == NULL);
    CHECK(clockevent_is_free(&ch.ce));
}

/* Never the tick's device nor its hardware: arming a one-shot there would stop the tick.
 * A device someone else owns (an hrtimer base, a check) is not taken either. */
TEST(halt_backup_never_the_tick_device_or_an_owned_one)
{
    static int someone;
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    CHECK(backup_for(NULL) == &ch.ce);               /* not lapic, not tsc_deadline */
    REQUIRE(clockevent_claim(&ch.ce, other_owner_event, &someone) == 0);
    CHECK(backup_for(NULL) == &pit.ce);
    clockevent_release(&ch.ce);
    tick_stop(&tk);
    REQUIRE(tick_start(&tk, 1000, clockevent_find("pit", 0), false, NULL, 0) == 0);
    CHECK(backup_for(&ch.ce) == &lt.deadline);
    tick_stop(&tk);
}

/* Nothing else will interrupt: the backup ends the HLT after HALT_BACKUP_NS, counted as a
 * backup wake, and the CPU never sleeps forever (no stuck halt). */
TEST(halt_once_wakes_by_the_backup_when_nothing_else_comes)
{
    REQUIRE(machine());
    REQUIRE(halt_backup_start(&lt.lapic));
    REQUIRE(halt_backup_device() == &ch.ce);
    uint64_t wakes = halt_backup_wakes(), t0 = vclock_now_ns(), halts = fake_stats.halts;
    halt_once();
    CHECK_EQ_U64(halt_backup_wakes() - wakes, 1);
    CHECK_EQ_U64(fake_stats.halts - halts, 1);
    CHECK_EQ_U64(fake_stats.halt_stuck, 0);
    uint64_t slept = vclock_now_ns() - t0;
    CHECK(slept >= HALT_BACKUP_NS && slept < HALT_BACKUP_NS + 10000);
    CHECK(!fake_irq_enabled());                      /* interrupts off again */
    /* Woken by what it waited for first: the backup does not count. */
    static int owner;
    REQUIRE(clockevent_claim(&lt.lapic, other_owner_event, &owner) == 0);
    REQUIRE(clockevent_program_ns(&lt.lapic, 1 * MS) == 0);
    wakes = halt_backup_wakes();
    other_events = 0;
    t0 = vclock_now_ns();
    halt_once();
    CHECK(vclock_now_ns() - t0 < 2 * MS);
    CHECK_EQ_U64(other_events, 1);
    CHECK_EQ_U64(halt_backup_wakes(), wakes);
    clockevent_release(&lt.lapic);
    halt_backup_stop();
    CHECK(clockevent_is_free(&ch.ce));
}

/* No second wake-up exists: halt_backup_start says so, and halt_once() polls with interrupts
 * on (one PAUSE) instead of halting into a sleep nothing would end. */
TEST(halt_once_without_a_backup_polls_instead_of_halting)
{
    REQUIRE(machine());
    clockevent_test_reset();                         /* no devices at all */
    CHECK(!halt_backup_start(NULL));
    CHECK(halt_backup_device() == NULL);
    uint64_t halts = fake_stats.halts, relax = fake_stats.relax_calls;
    halt_once();
    CHECK_EQ_U64(fake_stats.halts, halts);
    CHECK_EQ_U64(fake_stats.relax_calls - relax, 1);
    halt_backup_stop();                              /* harmless without one */
}

/* Every wake-up on the boot CPU folds the clocksource (a long wait with no tick must not
 * outlast a narrow counter's wrap) and rescues a tick that stopped coming; other CPUs do
 * neither. */
TEST(halt_once_on_the_boot_cpu_folds_and_rescues_a_stopped_tick)
{
    struct timekeeping_stats st0, st;
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("pit", 0), false, NULL, 0) == 0);
    irq_enable();
    fake_run_for_ns(10 * MS);
    irq_disable();
    fake_pit_set_irq_dead(true);                     /* the tick's interrupts stop */
    REQUIRE(halt_backup_start(&pit.ce));
    timekeeping_get_stats(&st0);
    for (int i = 0; i < 3; i++)                      /* 150 ms of backup wakes */
        halt_once();
    timekeeping_get_stats(&st);
    CHECK(st.accumulates >= st0.accumulates + 3);
    CHECK(tick_info(&tk)->rescued >= 1);
    CHECK(!tick_overdue(&tk, time_ns()));
    halt_backup_stop();

    tick_stop(&tk);

    /* CPU 1 backs its waits up with its own device, and its wake-ups fold nothing. */
    REQUIRE(hpet_comparator_route(&the_hpet, 1, GSI + 1) == 0);
    REQUIRE(hpet_channel_init(&ch1, &the_hpet, 1, 1, NULL) == 0);
    REQUIRE(clockevent_register(&ch1.ce) == 0);
    fake_smp_cpu = 1;
    REQUIRE(halt_backup_start(NULL));
    CHECK(halt_backup_device() == &ch1.ce);
    uint64_t wakes = halt_backup_wakes();
    timekeeping_get_stats(&st0);
    halt_once();
    timekeeping_get_stats(&st);
    CHECK_EQ_U64(halt_backup_wakes() - wakes, 1);
    CHECK_EQ_U64(st.accumulates, st0.accumulates);
    halt_backup_stop();
    fake_smp_cpu = 0;
    CHECK(halt_backup_device() == NULL);
}

/* idle=: halt or poll, the name and the reason the environment record carries. */
TEST(idle_modes_name_themselves)
{
    idle_configure(IDLE_POLL, true);
    CHECK(idle_polls());
    CHECK_EQ_STR(idle_name(), "poll");
    CHECK(strstr(idle_reason(), "idle=poll") != NULL);
    idle_configure(IDLE_HALT, true);
    CHECK(!idle_polls());
    CHECK_EQ_STR(idle_name(), "halt");
    CHECK(strstr(idle_reason(), "idle=halt") != NULL);
}

/* idle=auto (the default): poll only under virtual time on one CPU, and say why; halt and
 * poll asked for stay as asked whatever the clock. */
TEST(idle_auto_polls_only_under_virtual_time_on_one_cpu)
{
    const char *why = NULL;
    CHECK(idle_resolve(IDLE_AUTO, true, 1, &why) == IDLE_POLL);
    CHECK(why && strstr(why, "virtual time") && strstr(why, "byte for byte"));
    CHECK(idle_resolve(IDLE_AUTO, false, 1, &why) == IDLE_HALT);
    CHECK(strstr(why, "real time") != NULL);
    CHECK(idle_resolve(IDLE_AUTO, true, 2, &why) == IDLE_HALT);
    CHECK(strstr(why, "more than one CPU") != NULL);
    CHECK(idle_resolve(IDLE_HALT, true, 1, &why) == IDLE_HALT);
    CHECK(idle_resolve(IDLE_POLL, false, 1, &why) == IDLE_POLL);
    idle_configure(IDLE_POLL, true);
    idle_set_reason("idle=auto, virtual time");
    CHECK_EQ_STR(idle_reason(), "idle=auto, virtual time");
    idle_configure(IDLE_HALT, true);          /* a new mode drops the old sentence */
    CHECK(strstr(idle_reason(), "idle=halt") != NULL);
}

/* A polling wait never halts: it spins with interrupts on (PAUSE, or NOP blocks under TCG)
 * until an interrupt comes, here the device waited for after 1 ms, then the backup after
 * HALT_BACKUP_NS when nothing else comes; interrupts are off again after each. */
TEST(halt_once_polls_until_an_interrupt_when_idle_polls)
{
    static int owner;
    for (int tcg = 0; tcg < 2; tcg++) {
        REQUIRE(machine());
        fake_cost.relax_ns = 1000;                   /* 50 ms of backup in 50000 spins */
        fake_irq_set_async(true);                    /* a spin step is a delivery point */
        idle_configure(IDLE_POLL, tcg);
        REQUIRE(halt_backup_start(&lt.lapic));
        REQUIRE(clockevent_claim(&lt.lapic, other_owner_event, &owner) == 0);
        REQUIRE(clockevent_program_ns(&lt.lapic, 1 * MS) == 0);
        uint64_t halts = fake_stats.halts, relax = fake_stats.relax_calls;
        uint64_t nops = fake_stats.nop_blocks, t0 = vclock_now_ns();
        other_events = 0;
        halt_once();
        uint64_t waited = vclock_now_ns() - t0;
        CHECK_EQ_U64(other_events, 1);
        CHECK(waited >= 1 * MS && waited < 1 * MS + 10000);
        CHECK_EQ_U64(fake_stats.halts, halts);
        CHECK(tcg ? fake_stats.nop_blocks > nops && fake_stats.relax_calls == relax
                  : fake_stats.relax_calls > relax && fake_stats.nop_blocks == nops);
        CHECK(!fake_irq_enabled());
        uint64_t wakes = halt_backup_wakes();
        t0 = vclock_now_ns();
        halt_once();                                 /* nothing armed: the backup ends it */
        CHECK_EQ_U64(halt_backup_wakes() - wakes, 1);
        CHECK(vclock_now_ns() - t0 >= HALT_BACKUP_NS);
        CHECK_EQ_U64(fake_stats.halts, halts);
        CHECK(!fake_irq_enabled());
        clockevent_release(&lt.lapic);
        halt_backup_stop();
        fake_irq_set_async(false);
    }
    idle_configure(IDLE_HALT, false);
}

/* An interrupt already pending when the wait begins ends it at once: the poll samples the
 * count before it enables interrupts, as STI's shadow makes HLT wake for one. */
TEST(cpu_wait_irq_poll_takes_a_pending_interrupt_at_once)
{
    static int owner;
    REQUIRE(machine());
    idle_configure(IDLE_POLL, false);
    REQUIRE(clockevent_claim(&lt.lapic, other_owner_event, &owner) == 0);
    REQUIRE(clockevent_program_ns(&lt.lapic, 1000) == 0);
    vclock_advance_to_ns(vclock_now_ns() + 1 * MS);  /* due while interrupts are off */
    /* A later interrupt, so a wait that missed the pending one ends (late) and fails. */
    REQUIRE(clockevent_claim(&ch.ce, other_owner_event, &owner) == 0);
    REQUIRE(clockevent_program_ns(&ch.ce, 1 * MS) == 0);
    fake_irq_set_async(true);
    other_events = 0;
    uint64_t relax = fake_stats.relax_calls, t0 = vclock_now_ns();
    cpu_wait_irq();
    CHECK_EQ_U64(other_events, 1);
    CHECK_EQ_U64(fake_stats.relax_calls, relax);    /* no spin at all */
    CHECK(vclock_now_ns() - t0 < 1000);
    CHECK(!fake_irq_enabled());
    fake_irq_set_async(false);
    clockevent_release(&ch.ce);
    clockevent_release(&lt.lapic);
    idle_configure(IDLE_HALT, false);
}
