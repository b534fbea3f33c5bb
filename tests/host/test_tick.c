/* tests/host/test_tick.c - the jiffies tick (lib/time/tick.c) on the fake PC: periodic
 * on the LAPIC timer (1 GHz timer clock: 1 ms is exact) and on the PIT (1193 clocks,
 * 999,847 ns) counted exactly over long runs across the 32-bit jiffies wrap; ticks lost to a
 * long interrupts-off stretch counted and caught up; one-shot mode re-armed each tick; a
 * device that refuses every re-arm (the tick stops and says so, and tick_overdue() /
 * tick_rescue() bring it back); tickless idle (tick_nohz_stop / tick_nohz_restart).
 * time_ns() runs on the fake TSC (2.1 GHz, calibrated exactly). */
#include "ticklab/cpuid.h"
#include "ticklab/errno.h"
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
static struct tsc the_tsc;

#define VEC 0x40
#define MS 1000000ull

static struct lapic_timer_ce lt;
static struct pit_clockevent pit;
static struct clocksource tsc;

static void entry(int line, void *ctx)
{
    (void)ctx;
    if (line == FAKE_IRQ_LAPIC_TIMER) {
        lapic_eoi(&the_apic);
        lapic_timer_ce_irq(&lt);
    } else if (line == FAKE_IRQ_ISA(0)) {
        pit_clockevent_irq(&pit);
    }
}

/* The machine: TSC as time_ns()'s source (a copy of the driver's, so its calibration stays
 * here), the LAPIC timer's two devices (TSC-deadline offered) and the PIT's registered,
 * interrupts on. */
static bool machine(void)
{
    struct lapic_info li;
    struct cpu_info ci;

    tick_stop(&tk);
    tk.wheel = NULL;
    if (!tsc_machine_start(&the_tsc, &tsc, &the_apic, &ci, &li, entry))
        return false;
    lapic_timer_ce_init(&lt, &the_apic, 0, VEC, 1000000000, &tsc, &ci);
    pit_clockevent_init(&pit, NULL);
    if (!CHECK_EQ_I64(clockevent_register(&lt.lapic), 0) ||
        !CHECK_EQ_I64(clockevent_register(&lt.deadline), 0) ||
        !CHECK_EQ_I64(clockevent_register(&pit.ce), 0))
        return false;
    irq_enable();
    return true;
}

static void entry_noop(struct clockevent *ce)
{
    (void)ce;
}

static uint64_t advanced(void)
{
    return tk.jiffies - tick_info(&tk)->jiffies_start;
}

/* The tick's wheel: a timer every 100 jiffies, re-armed from its own expiry, that notes the
 * jiffies it ran at; between them the tick takes the wheel's quiet case. */
static struct wheel tw;
static struct wheel_timer every100;
static uint64_t every100_calls, every100_bad;
static void on_every100(struct wheel_timer *t, void *ctx)
{
    (void)ctx;
    every100_calls++;
    if (tk.jiffies != t->expires)
        every100_bad++;
    wheel_add(&tw, t, t->expires + 100);
}

/* 10 s at 1000 Hz on the LAPIC timer: 10,000 interrupts, 10,000 jiffies, none lost, none
 * early, the wrap of the low 32 bits crossed, every gap one period. */
TEST(tick_periodic_counts_jiffies_exactly_on_the_lapic_timer)
{
    char why[96];
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, why, sizeof(why)) == 0);
    wheel_init(&tw, tk.jiffies + 1);
    wheel_timer_init(&every100, on_every100, NULL);
    every100_calls = every100_bad = 0;
    wheel_add(&tw, &every100, tk.jiffies + 100);
    tk.wheel = &tw;
    uint64_t usual0 = tick_test_fast_runs, quiet0 = wheel_test_quiet_calls;
    CHECK_EQ_STR(why, "");
    const struct tick_info *ti = tick_info(&tk);
    CHECK(ti->dev == &lt.lapic && ti->periodic);
    CHECK_EQ_U64(ti->period_ns, 1000000);
    CHECK_EQ_U64(ti->jiffies_start, (1ull << 32) - 2000);
    CHECK(lt.deadline.usable);
    CHECK(lt.lapic.owner != NULL && !clockevent_is_free(&lt.deadline));   /* same timer */
    for (int s = 0; s < 10; s++)
        fake_run_for_ns(1000 * MS);
    CHECK_EQ_U64(ti->ticks, 10000);
    CHECK_EQ_U64(advanced(), 10000);
    CHECK_EQ_U64(ti->lost + ti->early + ti->failures, 0);
    CHECK(tk.jiffies > (1ull << 32));
    /* the first gap also holds the start's register writes (under 1 us) */
    if (!CHECK(ti->max_gap_ns >= 1000000 && ti->max_gap_ns <= 1000000 + 1000))
        printf("    max gap %" PRIu64 " ns\n", ti->max_gap_ns);
    CHECK_EQ_U64(tw.clk, tk.jiffies + 1);            /* every jiffy processed */
    CHECK_EQ_U64(every100_calls, 100);               /* each on its own jiffy */
    CHECK_EQ_U64(every100_bad, 0);
    CHECK_EQ_U64(tw.stats.fired, 100);
    /* the handler's and the wheel's short ways, held to the long ways' conditions in host
     * builds: every run but the fourth (it starts the measured period), and every call but
     * the wheel's event jiffies (the 100 timers', the cascades') and the jiffies after them */
    CHECK_EQ_U64(tick_test_fast_runs - usual0, 10000 - 1);
    if (!CHECK(wheel_test_quiet_calls - quiet0 >= 10000 - 1 - 2 * 100 - 200))
        printf("    %" PRIu64 " quiet calls\n", wheel_test_quiet_calls - quiet0);
    CHECK_EQ_U64(lt.lapic.programs, 1);             /* periodic: one start, no re-arms */
    tick_stop(&tk);
    CHECK(!tick_running(&tk));
    CHECK(clockevent_is_free(&lt.lapic));
    CHECK(clockevent_is_free(&lt.deadline));
    fake_run_for_ns(10 * MS);
    CHECK_EQ_U64(ti->ticks, 10000);
}

/* 20 s on the PIT at HZ=1000: 1193 clocks a tick, 999,847 ns. Every IRQ0 is one jiffy, and
 * the jiffies keep pace with the time the device really makes (1000.152 Hz, not 1000). */
TEST(tick_periodic_counts_jiffies_exactly_on_the_pit)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("pit", 0), false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    CHECK(ti->dev == &pit.ce && ti->periodic);
    CHECK_EQ_U64(ti->period_ns, 999847);
    uint64_t t0 = time_ns();
    for (int s = 0; s < 20; s++)
        fake_run_for_ns(1000 * MS);
    uint64_t elapsed = time_ns() - t0;
    CHECK_EQ_U64(ti->ticks, fake_irq_stats(FAKE_IRQ_ISA(0))->delivered);
    CHECK_EQ_U64(advanced(), ti->ticks);
    CHECK_EQ_U64(ti->lost + ti->early, 0);
    /* 1193 clocks at 1,193,182 Hz: the ticks in 20 s are 20 s / 999,847.47 ns */
    uint64_t want = elapsed * PIT_HZ / (1193 * 1000000000ull);
    CHECK(ti->ticks == want || ti->ticks == want + 1);
    CHECK(ti->ticks > 20000 + 2);                   /* 1000.152 Hz: three more than 1000 Hz */
    CHECK(tk.jiffies > (1ull << 32));
    tick_stop(&tk);
}

/* Interrupts off for 10.5 ms: the edges at 6..15 ms find interrupts off; the LAPIC holds
 * one in IRR and delivers it at 15.75 ms. That run finds ten periods passed: jiffies move
 * to 15 (not 16: 16 ms has not come), nine counted lost. The 16 ms edge then comes on
 * time and counts its own period; from then on jiffies are exact again. */
TEST(tick_lost_ticks_counted_and_caught_up)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    uint64_t t_start = vclock_now_ns();
    fake_run_until_ns(t_start + 5 * MS + MS / 4);
    CHECK_EQ_U64(advanced(), 5);
    irq_disable();
    fake_run_until_ns(t_start + 15 * MS + 3 * MS / 4);
    CHECK_EQ_U64(advanced(), 5);
    irq_enable();                                    /* the held tick, 9.75 ms late */
    CHECK_EQ_U64(ti->lost, 9);
    CHECK_EQ_U64(advanced(), 15);
    CHECK(ti->max_gap_ns > 10 * MS);
    fake_run_until_ns(t_start + 30 * MS + MS / 4);
    CHECK_EQ_U64(ti->early + ti->late, 0);
    CHECK_EQ_U64(advanced(), 30);
    CHECK_EQ_U64(ti->lost, 9);
    uint64_t before = ti->lost_earlier_starts;
    tick_stop(&tk);
    /* a restart (an experiment changing the rate) starts `lost` again; the nine stay counted
     * for the whole stretch */
    REQUIRE(tick_start(&tk, 250, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    CHECK_EQ_U64(ti->lost, 0);
    CHECK_EQ_U64(ti->lost_earlier_starts, before + 9);
    tick_stop(&tk);
}

/* tick_sync() between interrupts: with interrupts off for 3.5 ms, jiffies read 5 until the
 * sync brings them to 8 (the periods passed, never one to come); the held interrupt then
 * counts as the first of them, and nothing is counted twice: 3 lost as the sync found them,
 * two of them never came. A wheel timer added after the sync counts from the true jiffies. */
TEST(tick_sync_brings_jiffies_up_to_date_between_interrupts)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    uint64_t t_start = vclock_now_ns();
    fake_run_until_ns(t_start + 5 * MS + MS / 4);
    irq_disable();
    fake_run_until_ns(t_start + 8 * MS + MS / 2);
    CHECK_EQ_U64(advanced(), 5);
    tick_sync(&tk);
    CHECK_EQ_U64(advanced(), 8);
    CHECK(tick_jiffies_ns(&tk, tk.jiffies) <= time_ns());
    CHECK(tick_jiffies_ns(&tk, tk.jiffies + 1) > time_ns());
    tick_sync(&tk);                                     /* idempotent */
    CHECK_EQ_U64(advanced(), 8);
    irq_enable();                                    /* the held one (the 6 ms edge) */
    CHECK_EQ_U64(advanced(), 8);
    CHECK_EQ_U64(ti->lost, 2);
    fake_run_until_ns(t_start + 20 * MS + MS / 4);
    CHECK_EQ_U64(advanced(), 20);
    CHECK_EQ_U64(ti->lost, 2);
    CHECK_EQ_U64(ti->late + ti->early, 0);
    tick_stop(&tk);
}

/* A hypervisor that re-injects missed periodic interrupts: after a 4 ms stall the late
 * interrupt comes, then three more back to back (what KVM does). The first counts the four
 * periods (three lost), the three re-injected ones advance nothing and take the three back
 * (late), so jiffies are not counted twice and never come before their time. */
TEST(tick_reinjected_interrupts_are_not_counted_twice)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    uint64_t t_start = vclock_now_ns();
    fake_run_until_ns(t_start + 5 * MS + MS / 4);
    irq_disable();
    fake_run_until_ns(t_start + 9 * MS + MS / 2);
    irq_enable();                                    /* the held one: jiffies to 9 */
    CHECK_EQ_U64(advanced(), 9);
    CHECK_EQ_U64(ti->lost, 3);
    for (int i = 0; i < 3; i++)                      /* re-injected, 1 us apart */
        clockevent_handle_irq(&lt.lapic);
    CHECK_EQ_U64(advanced(), 9);
    CHECK_EQ_U64(ti->late, 3);
    CHECK_EQ_U64(ti->early, 0);
    clockevent_handle_irq(&lt.lapic);                /* one more: a true extra */
    CHECK_EQ_U64(ti->early, 1);
    CHECK_EQ_U64(advanced(), 9);
    fake_run_until_ns(t_start + 12 * MS + MS / 4);
    CHECK_EQ_U64(advanced(), 12);
    tick_stop(&tk);
}

/* The grid is kept to 1/65536 ns: on the PIT (999,847.47 ns) an hour of jiffies computed
 * from the grid is within a nanosecond of 3600 s / period, where whole-ns periods would be
 * 1.7 ms (1.7 ticks) off. */
TEST(tick_grid_keeps_the_period_fraction)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("pit", 0), false, NULL, 0) == 0);
    uint64_t j = tk.jiffies, hour_ticks = 3600000000000ull * PIT_HZ / (1193 * 1000000000ull);
    uint64_t at = tick_jiffies_ns(&tk, j + hour_ticks) - tick_jiffies_ns(&tk, j);
    /* hour_ticks * 1193 / 1193182 s */
    uint64_t want = hour_ticks * 1193ull * 1000000000ull / PIT_HZ;
    CHECK(at + 2 >= want && at <= want + 2);
    tick_stop(&tk);
}

/* tickmode=oneshot: re-armed every tick at start + k * period (absolute), so a second of
 * re-arms does not drift: as many jiffies as periods, none lost, no retries. */
TEST(tick_oneshot_mode_rearms_without_drift)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), true, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    CHECK(!ti->periodic);
    uint64_t t_start = vclock_now_ns();
    fake_run_until_ns(t_start + 1000 * MS + MS / 2);
    CHECK_EQ_U64(ti->ticks, 1000);
    CHECK_EQ_U64(advanced(), 1000);
    CHECK_EQ_U64(ti->lost + ti->early + ti->rearm_retries + ti->failures, 0);
    CHECK(!ti->stalled);
    CHECK_EQ_U64(lt.lapic.programs, 1001);          /* the start and one re-arm per tick */
    CHECK(ti->max_gap_ns <= 1000000 + 1000);
    tick_stop(&tk);
}

/* ---- a device that refuses every re-arm ------------------------------------------------ */

static bool refuse;                  /* set_next_event says -ETIME */
static uint64_t armed_calls;
static int refusing_next(struct clockevent *ce, uint64_t delta_cyc)
{
    (void)ce, (void)delta_cyc;
    if (refuse)
        return -ETIME;
    armed_calls++;
    return 0;
}
static int refusing_state(struct clockevent *ce)
{
    (void)ce;
    return 0;
}
static struct clockevent refusing;

/* Regression: in one-shot mode the tick ignored -ETIME from its re-arm, so a device that
 * could no longer be armed stopped the tick in silence: no interrupt ever came again and
 * nothing said so. Now the failed re-arm is retried a whole period later, and when that
 * fails too the tick counts a failure and says it is stalled; tick_overdue() sees it once
 * four periods and TICK_OVERDUE_NS have passed, and tick_rescue() runs the tick by hand
 * (jiffies catch up) and re-arms the device. */
TEST(tick_oneshot_rearm_etime_forever_stalls_and_says_so)
{
    REQUIRE(machine());
    refusing = (struct clockevent){ .name = "refusing", .features = CE_ONESHOT,
                                    .freq_hz = 1000000000, .min_delta_cyc = 1,
                                    .max_delta_cyc = 1000000000, .rating = 500,
                                    .set_state_oneshot = refusing_state,
                                    .set_state_shutdown = refusing_state,
                                    .set_next_event = refusing_next, .usable = true };
    REQUIRE(clockevent_register(&refusing) == 0);
    refuse = false;
    armed_calls = 0;
    REQUIRE(tick_start(&tk, 1000, clockevent_find("refusing", 0), true, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    CHECK(!ti->periodic && ti->dev == &refusing);
    CHECK_EQ_U64(armed_calls, 1);

    fake_run_for_ns(MS);
    clockevent_handle_irq(&refusing);               /* the first tick comes; re-arm works */
    CHECK_EQ_U64(ti->ticks, 1);
    CHECK_EQ_U64(armed_calls, 2);
    refuse = true;                                   /* from now on: -ETIME forever */
    fake_run_for_ns(MS);
    clockevent_handle_irq(&refusing);
    CHECK_EQ_U64(ti->ticks, 2);
    CHECK_EQ_U64(ti->rearm_retries, 1);
    CHECK_EQ_U64(ti->failures, 1);
    CHECK(ti->stalled);
    CHECK_EQ_U64(refusing.etime_failures, 2);        /* both tries, after their retries */
    CHECK(tick_running(&tk));

    /* No interrupt comes. Overdue only after 4 periods + TICK_OVERDUE_NS. */
    fake_run_for_ns(4 * MS + TICK_OVERDUE_NS - 100000);
    CHECK(!tick_overdue(&tk, time_ns()));
    fake_run_for_ns(200000);
    CHECK(tick_overdue(&tk, time_ns()));
    tick_rescue(&tk);                                    /* still refusing: counted again */
    CHECK_EQ_U64(ti->rescued, 1);
    CHECK_EQ_U64(ti->ticks, 3);
    CHECK(ti->stalled);
    CHECK_EQ_U64(ti->failures, 2);
    uint64_t behind = advanced();
    CHECK(behind >= 2 + 54 && behind <= 2 + 56);     /* caught up with the 54.1 ms gap */

    refuse = false;                                   /* the device recovers */
    fake_run_for_ns(TICK_OVERDUE_NS + 5 * MS);
    CHECK(tick_overdue(&tk, time_ns()));
    tick_rescue(&tk);
    CHECK_EQ_U64(ti->rescued, 2);
    CHECK(!ti->stalled);
    CHECK_EQ_U64(ti->failures, 2);
    CHECK_EQ_U64(armed_calls, 3);                     /* re-armed by the rescue */
    CHECK(!tick_overdue(&tk, time_ns()));
    uint64_t t = time_ns();
    CHECK(advanced() >= (t - tick_last_ns(&tk)) / MS);
    fake_run_for_ns(MS);
    clockevent_handle_irq(&refusing);                 /* and ticks again */
    CHECK_EQ_U64(ti->ticks, 5);
    CHECK(!ti->stalled);
    tick_stop(&tk);
    CHECK(clockevent_is_free(&refusing));
}

/* A periodic tick that stopped coming (its interrupt lost) is rescued the same way. */
TEST(tick_rescue_restarts_a_periodic_tick_that_stopped)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    fake_run_for_ns(10 * MS + MS / 2);
    CHECK_EQ_U64(advanced(), 10);
    CHECK(!tick_overdue(&tk, time_ns()));
    lapic_write(&the_apic, LAPIC_LVT_TIMER, lapic_read(&the_apic, LAPIC_LVT_TIMER) | LVT_MASKED);   /* lost */
    fake_run_for_ns(4 * MS + TICK_OVERDUE_NS + MS);
    CHECK_EQ_U64(advanced(), 10);
    CHECK(tick_overdue(&tk, time_ns()));
    tick_rescue(&tk);
    CHECK_EQ_U64(ti->rescued, 1);
    CHECK(!tick_overdue(&tk, time_ns()));
    uint64_t j = advanced();
    CHECK(j >= 10 + 54 && j <= 10 + 56);
    fake_run_for_ns(10 * MS);                         /* restarted: unmasked, periodic */
    CHECK(advanced() >= j + 9 && advanced() <= j + 10);
    tick_stop(&tk);
}

/* ---- tickless idle ----------------------------------------------------------------------- */

TEST(tick_nohz_stop_and_restart)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    uint64_t t_start = vclock_now_ns();
    fake_run_until_ns(t_start + 10 * MS + MS / 4);
    CHECK_EQ_U64(advanced(), 10);

    CHECK(!tick_nohz_stop(&tk, time_ns() + MS));          /* under two periods: not worth it */
    CHECK(!tick_nohz_stopped(&tk));
    irq_disable();
    CHECK(tick_nohz_stop(&tk, time_ns() + 20 * MS));
    irq_enable();
    CHECK(tick_nohz_stopped(&tk));
    CHECK(!tick_nohz_stop(&tk, time_ns() + 40 * MS));     /* already stopped */
    CHECK_EQ_U64(ti->nohz_stops, 1);
    fake_run_for_ns(15 * MS);
    CHECK_EQ_U64(advanced(), 10);                    /* no tick while stopped ... */
    CHECK(!tick_overdue(&tk, time_ns()));                 /* ... and that is not overdue */
    fake_run_for_ns(5 * MS + MS / 2);                /* the one-shot for until_ns */
    CHECK(!tick_nohz_stopped(&tk));
    CHECK_EQ_U64(advanced(), 30);                    /* caught up ... */
    CHECK_EQ_U64(ti->idle_skipped, 19);              /* ... as skipped, not lost */
    CHECK_EQ_U64(ti->lost, 0);
    fake_run_for_ns(10 * MS);                        /* periodic again */
    CHECK(advanced() >= 39 && advanced() <= 40);

    /* Leaving idle early: restart catches up at once and the periodic tick goes on. */
    irq_disable();
    CHECK(tick_nohz_stop(&tk, time_ns() + 50 * MS));
    irq_enable();
    fake_run_for_ns(10 * MS + MS / 3);
    uint64_t before = advanced();
    irq_disable();
    tick_nohz_restart(&tk);
    irq_enable();
    CHECK(!tick_nohz_stopped(&tk));
    CHECK(advanced() >= before + 10 && advanced() <= before + 11);
    uint64_t j = advanced();
    fake_run_for_ns(5 * MS);
    CHECK(advanced() >= j + 4 && advanced() <= j + 5);
    CHECK_EQ_U64(ti->lost, 0);
    CHECK_EQ_U64(ti->nohz_stops, 2);
    tick_nohz_restart(&tk);                              /* not stopped: nothing */
    tick_stop(&tk);
    CHECK(!tick_nohz_stop(&tk, time_ns() + 50 * MS));     /* not running */
}

/* The tick's limits: at least TICK_MIN_PERIOD_NS, at most a second, a device to run on. */
TEST(tick_start_refusals)
{
    char why[96];
    REQUIRE(machine());
    CHECK_EQ_I64(tick_start(&tk, 0, NULL, false, NULL, 0), -EINVAL);
    CHECK_EQ_I64(tick_start(&tk, 100000, NULL, false, NULL, 0), -ERANGE);   /* 10 us */
    CHECK_EQ_I64(tick_start_ns(&tk, TICK_MIN_PERIOD_NS - 1, NULL, false, NULL, 0), -ERANGE);
    CHECK_EQ_I64(tick_start_ns(&tk, TICK_MAX_PERIOD_NS + 1, NULL, false, NULL, 0), -ERANGE);
    CHECK(!tick_running(&tk));
    /* No device preferred: the best free periodic one, and nothing to explain. */
    CHECK_EQ_I64(tick_start(&tk, 1000, NULL, false, why, sizeof(why)), 0);
    CHECK_EQ_STR(why, "");
    CHECK(tick_info(&tk)->dev == &lt.lapic);
    CHECK(tick_info(&tk)->passed_over == NULL);
    tick_stop(&tk);
    /* The best one claimed by someone else: the next, and the tick says which it passed
     * over and why (-EBUSY), so a run that ticks elsewhere than expected can be read. */
    REQUIRE(clockevent_claim(&lt.lapic, entry_noop, &why) == 0);
    CHECK_EQ_I64(tick_start(&tk, 1000, NULL, false, NULL, 0), 0);
    CHECK(tick_info(&tk)->dev == &pit.ce);
    CHECK_EQ_STR(tick_info(&tk)->passed_over, "lapic");
    CHECK_EQ_I64(tick_info(&tk)->passed_over_rc, -EBUSY);
    tick_stop(&tk);
    clockevent_release(&lt.lapic);
    /* The preferred device cannot make the period (the PIT counts at most 65536 clocks,
     * 54.9 ms): the next best that can, and why says so. */
    CHECK_EQ_I64(tick_start_ns(&tk, 100 * MS, &pit.ce, false, why, sizeof(why)), 0);
    CHECK(tick_info(&tk)->dev == &lt.lapic);
    CHECK_EQ_STR(why, "clockevent=pit cannot tick at 100000000 ns (error -34); ticking on lapic");
    CHECK(clockevent_is_free(&pit.ce));               /* given back after its refusal */
    tick_stop(&tk);
    clockevent_test_reset();
    CHECK_EQ_I64(tick_start(&tk, 1000, NULL, false, NULL, 0), -ENODEV);
    CHECK(!tick_running(&tk));
}

/* Regression: a late one-shot tick re-armed for the next point of its grid (start + k *
 * period) even when that point had already passed, and the next, and the next: after ten
 * lost periods the device was armed for the past nine times in a row, a burst of
 * back-to-back interrupts each counted as early. The re-arm now skips to the first grid
 * point still ahead, so a one-shot tick recovers from a stall as the periodic one does. */
TEST(tick_oneshot_late_tick_rearms_on_the_next_future_period)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), true, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    uint64_t t_start = vclock_now_ns();
    fake_run_until_ns(t_start + 5 * MS + MS / 4);
    CHECK_EQ_U64(advanced(), 5);
    irq_disable();
    fake_run_until_ns(t_start + 15 * MS + 3 * MS / 4);
    uint64_t delivered = fake_irq_stats(FAKE_IRQ_LAPIC_TIMER)->delivered;
    irq_enable();                                    /* the held tick, 9.75 ms late */
    CHECK_EQ_U64(ti->lost, 9);
    CHECK_EQ_U64(advanced(), 15);                    /* 16 ms has not come yet */
    fake_run_until_ns(t_start + 16 * MS - 1000);
    CHECK_EQ_U64(fake_irq_stats(FAKE_IRQ_LAPIC_TIMER)->delivered, delivered + 1);
    CHECK_EQ_U64(ti->early, 0);
    fake_run_until_ns(t_start + 30 * MS + MS / 4);
    CHECK_EQ_U64(advanced(), 30);
    CHECK_EQ_U64(ti->early + ti->late, 0);           /* 16 ms on time counts its own */
    CHECK_EQ_U64(ti->lost, 9);
    CHECK_EQ_U64(ti->ticks, 5 + 1 + 15);
    tick_stop(&tk);
}

/* A named device ticks in the mode it has (regression: clockevent=tsc_deadline, one-shot
 * only, was passed over for another periodic device): TSC-deadline re-arms one-shots, a
 * named periodic device runs periodic, and a named device that is busy gives the best other
 * one with why saying so. */
TEST(tick_named_oneshot_only_device_ticks_in_oneshot_mode)
{
    char why[96];
    REQUIRE(machine());
    CHECK_EQ_I64(tick_start(&tk, 1000, clockevent_find("tsc_deadline", 0), false, why, sizeof(why)), 0);
    CHECK(tick_info(&tk)->dev == &lt.deadline);
    CHECK(!tick_info(&tk)->periodic);
    CHECK_EQ_STR(why, "");
    uint64_t j0 = tk.jiffies;
    fake_run_for_ns(100000000ull);
    CHECK_EQ_U64(tk.jiffies - j0, 100);
    tick_stop(&tk);
    CHECK_EQ_I64(tick_start(&tk, 1000, clockevent_find("pit", 0), false, why, sizeof(why)), 0);
    CHECK(tick_info(&tk)->dev == &pit.ce);
    CHECK(tick_info(&tk)->periodic);
    tick_stop(&tk);
    /* the LAPIC's one-shot device owned: its TSC-deadline sibling is not free either */
    CHECK_EQ_I64(clockevent_claim(&lt.lapic, entry_noop, &lt), 0);
    CHECK_EQ_I64(tick_start(&tk, 1000, clockevent_find("tsc_deadline", 0), false, why, sizeof(why)), 0);
    CHECK(tick_info(&tk)->dev == &pit.ce);
    CHECK_EQ_STR(why, "clockevent=tsc_deadline: in use (it or its hardware); ticking on pit");
    tick_stop(&tk);
    clockevent_release(&lt.lapic);
}

/* The LAPIC timer's two devices say whether their armed event is still to come: the
 * one-shot's current count is not 0 yet, the deadline MSR is not cleared yet. */
TEST(lapic_devices_pending_until_they_fire)
{
    REQUIRE(machine());
    static uint64_t seen;
    seen = 0;
    struct clockevent *devs[2] = { &lt.lapic, &lt.deadline };
    for (int i = 0; i < 2; i++) {
        REQUIRE(clockevent_claim(devs[i], entry_noop, &seen) == 0);
        CHECK_EQ_I64(clockevent_pending(devs[i]), -ENOTSUP);
        REQUIRE(clockevent_program_ns(devs[i], 100000) == 0);
        CHECK_EQ_I64(clockevent_pending(devs[i]), 1);
        uint64_t events = devs[i]->events;
        fake_run_for_ns(200000);
        CHECK_EQ_U64(devs[i]->events, events + 1);
        CHECK_EQ_I64(clockevent_pending(devs[i]), 0);
        clockevent_release(devs[i]);
    }
}

/* The measured period: from the fourth handler run on, by time_ns, the period the device
 * really makes (here the model's exact one), to within a ns; none before eight periods.
 * ticks_all_starts keeps counting across a restart, where ticks starts again. */
TEST(tick_measures_its_real_period_and_counts_ticks_across_starts)
{
    REQUIRE(machine());
    REQUIRE(tick_start(&tk, 1000, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    uint64_t t_start = vclock_now_ns();
    fake_run_until_ns(t_start + 5 * MS + MS / 4);
    CHECK_EQ_U64(tick_measured_period_ps(&tk), 0);      /* too few periods yet */
    fake_run_until_ns(t_start + 200 * MS + MS / 4);
    uint64_t ps = tick_measured_period_ps(&tk);
    CHECK(ti->measured_periods >= 190);
    CHECK(ps + 1000 >= ti->period_ns * 1000 && ps <= ti->period_ns * 1000 + 1000);
    uint64_t all = ti->ticks_all_starts;
    CHECK(all >= 200);
    tick_stop(&tk);
    REQUIRE(tick_start(&tk, 250, clockevent_find("lapic", 0), false, NULL, 0) == 0);
    ti = tick_info(&tk);
    CHECK_EQ_U64(ti->ticks, 0);
    CHECK_EQ_U64(ti->ticks_all_starts, all);
    fake_run_until_ns(vclock_now_ns() + 40 * MS + MS / 4);
    CHECK_EQ_U64(ti->ticks_all_starts, all + ti->ticks);
    tick_stop(&tk);
}

/* Jiffies never lead time_ns(). A device a little faster than the clocksource says (the
 * LAPIC timer told it counts 999.5 MHz while it counts 1 GHz: each period 0.5 us short)
 * gains a whole period every 2000: such an interrupt finds no new period and counts as
 * early, and at every moment the jiffy stands for a time already passed. Regression: jiffies used
 * to follow such a device (an interrupt up to a quarter period before its grid point
 * counted its period and moved the grid back), so under plain emulation a select() sleep of
 * 100 ms on a LAPIC tick calibrated 0.2 % fast ended 200 us early by time_ns(). An extra
 * interrupt 0.6 periods after a tick counts nothing either. */
TEST(tick_jiffies_never_lead_time_on_a_fast_device)
{
    REQUIRE(machine());
    lt.lapic.freq_hz = 999500000;
    clockevent_set_min_delta(&lt.lapic, 1);           /* the ns limits from the new rate */
    REQUIRE(tick_start(&tk, 1000, &lt.lapic, false, NULL, 0) == 0);
    const struct tick_info *ti = tick_info(&tk);
    uint64_t j0 = tk.jiffies;
    for (int i = 0; i < 6000; i++) {
        fake_run_for_ns(MS / 2);
        if (!CHECK(tick_jiffies_ns(&tk, tk.jiffies) <= time_ns()))
            break;
    }
    CHECK_EQ_U64(ti->ticks, 3001);                    /* 3 s at 0.9995 ms: 3001.5 */
    CHECK_EQ_U64(tk.jiffies - j0, 2999);              /* the last at 2999.5 ms */
    CHECK_EQ_U64(ti->early, 2);                       /* the interrupts beyond the periods */
    CHECK_EQ_U64(ti->lost, 0);
    tick_stop(&tk);

    lt.lapic.freq_hz = 1000000000;
    clockevent_set_min_delta(&lt.lapic, 1);
    REQUIRE(tick_start(&tk, 1000, &lt.lapic, false, NULL, 0) == 0);
    fake_run_for_ns(10 * MS + 6 * MS / 10);           /* 0.6 periods after the 10th tick */
    uint64_t j = tk.jiffies;
    clockevent_handle_irq(&lt.lapic);                 /* 0.4 periods before the 11th */
    CHECK_EQ_U64(tk.jiffies, j);
    CHECK_EQ_U64(ti->early, 1);
    fake_run_for_ns(MS);
    CHECK_EQ_U64(tk.jiffies, j + 1);                  /* the 11th counts as ever */
    tick_stop(&tk);
}
