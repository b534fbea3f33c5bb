/* tests/host/fake/hpet.h - an HPET (IA-PC HPET specification 1.0a) at MMIO 0xFED00000.
 *
 * Modelled: GCAP_ID (period in fs, default 10,000,000 = 100 MHz; vendor 0x8086; NUM_TIM_CAP;
 * COUNT_SIZE_CAP; LEG_RT_CAP), GEN_CONF (ENABLE_CNF, LEG_RT_CNF), GINTR_STA (level-triggered
 * status, write 1 to clear), the main counter (counts only while enabled; writes while
 * enabled are a fault, as the spec asks software to halt it first; a 32-bit counter wraps at
 * 2^32 and reads 0 in bits 63:32), and timers N at 0x100 + 0x20 * N: Tn_CONF_CAP (INT_TYPE,
 * INT_ENB, TYPE, PER_INT_CAP, SIZE_CAP, VAL_SET, 32MODE, INT_ROUTE_CNF, INT_ROUTE_CAP) and
 * Tn_COMPARATOR. 64-bit accesses and 32-bit halves are both allowed; each access samples the
 * counter at its own moment, so two 32-bit reads of a running counter can tear.
 *
 * The comparator is an EQUALITY match: it fires when the counter becomes equal to it. A value
 * the counter has already passed (or equals at the moment of the write) fires only after the
 * counter wraps: 2^32 ticks for a 32-bit timer (42.9 s at 100 MHz), never for a 64-bit one.
 * A one-shot 32-bit timer fires again at every wrap, as the spec says. Periodic mode: a
 * comparator write with VAL_SET sets the comparator and the period; a write without it sets
 * only the period (the accumulator increment); VAL_SET clears after any comparator write (as
 * QEMU, which also truncates the comparator and period when 32MODE is switched on). On a
 * match the comparator advances by the period. A match with INT_ENB clear still sets the
 * level status bit and still advances a periodic comparator.
 * Delivery: legacy replacement (LEG_RT_CNF) sends timer 0 to IRQ0 and timer 1 to IRQ8 (the
 * line FAKE_IRQ_ISA(0)/(8); under an IOAPIC IRQ0 would be GSI 2) and silences the PIT's IRQ0
 * and the RTC's IRQ8. Otherwise timer n raises FAKE_IRQ_HPET(n) if its INT_ROUTE_CNF is in
 * its INT_ROUTE_CAP (else a fault); the route used is fake_hpet_route(n). Level-triggered
 * timers raise once per status 0->1 (no storm while the status stays set; a second match is
 * counted as dropped).
 * Comparator write delay (fake_hpet_set_cmp_write_delay, default 0): some chipsets (AMD
 * SB700/SB800, per Linux's hpet.c) apply a comparator write up to two HPET clocks after it
 * was made. With a delay of d, a comparator write made when the counter reads c takes effect
 * when it reads c + d; until then the old value keeps matching, and a new value of at most
 * c + d is already passed when it lands (never fires, 64-bit; a wrap later, 32-bit). The
 * period register (a write without VAL_SET) is not delayed. A second write before the first
 * landed replaces it. A halted counter applies writes at once.
 * FSB delivery (fake_hpet_set_fsb_cap, default off as QEMU's msi=off): Tn_FSB_INT_DEL_CAP in
 * the configuration, Tn_FSB_INT_ROUTE at 0x110 + 0x20 * N (value in bits 31:0, address in
 * 63:32); with Tn_FSB_EN_CNF and INT_ENB a match writes the value to the address through
 * fake_lapic_msi() (fake_hpet_route() then gives FAKE_HPET_ROUTE_FSB), also under legacy
 * replacement. FSB_EN without the capability, or with a level-triggered timer, is a fault.
 * Stale comparator read-back (fake_hpet_set_stale_cmp_readback): Intel ICH9/ICH10 may return
 * the comparator's previous value to the first read after a write (Linux's hpet.c); with it
 * on, the first read of a comparator after each write returns the value before that write.
 * QEMU's passed comparator (fake_hpet_set_passed_fires): QEMU 7.2's HPET (hw/timer/hpet.c,
 * hpet_calculate_diff) does not wait for equality when a timer is re-armed: with its
 * interrupt enabled, a comparator the counter has passed (or equals) fires one clock after
 * a comparator write or after its interrupt is enabled. With the option on, the model does
 * the same (a match itself re-arms nothing).
 * Simplified: no IOAPIC, registers outside the spec read 0. */
#ifndef TICKLAB_TESTS_HOST_FAKE_HPET_H
#define TICKLAB_TESTS_HOST_FAKE_HPET_H
#include <stdbool.h>
#include <stdint.h>

#define FAKE_HPET_BASE      0xFED00000ull
#define FAKE_HPET_PERIOD_FS 10000000u
#define FAKE_HPET_MAX_TIMERS 32
/* QEMU q35: IRQ2, IRQ8 and GSI 16-23 for every timer (QEMU pc: IRQ2 only, 0x4). */
#define FAKE_HPET_ROUTE_CAP 0x00FF0104u

/* Machine shape: call after fake_reset(), before the driver looks. */
void fake_hpet_set_base(uint64_t base);
void fake_hpet_set_period_fs(uint32_t period_fs);       /* 1 .. 100,000,000 fs */
void fake_hpet_set_num_timers(unsigned n);              /* 1 .. 32, default 3 */
void fake_hpet_set_counter_32bit(bool on);              /* COUNT_SIZE_CAP = 0 */
void fake_hpet_set_legacy_cap(bool on);                 /* default true */
void fake_hpet_set_route_cap(unsigned timer, uint32_t cap);
void fake_hpet_set_periodic_cap(unsigned timer, bool on); /* default: all timers */
void fake_hpet_remove(void);                            /* no HPET: the range reads all ones */
/* Fault injection: a counter that never counts, and the counter's value (e.g. 0xFFFFFF00,
 * to make every run cross a 32-bit wrap); both work at any time. */
void fake_hpet_set_stuck(bool stuck);
void fake_hpet_set_counter(uint64_t value);
/* Comparator writes take effect `clocks` HPET clocks after they land (see above). */
void fake_hpet_set_cmp_write_delay(uint64_t clocks);
void fake_hpet_set_fsb_cap(unsigned timer, bool on);    /* default: none */
void fake_hpet_set_stale_cmp_readback(bool on);         /* default off */
void fake_hpet_set_passed_fires(bool on);               /* default off: equality only */
uint32_t fake_hpet_conf(unsigned timer);                /* Tn_CONF now, no access cost */

uint64_t fake_hpet_counter(void);                       /* now, no access cost */
/* Register accesses by kind (a 32-bit half counts as one access), since fake_reset(). Each
 * access is one uncached bus transaction on a PC (about 0.5-1 us to an HPET on a chipset):
 * reads + writes is what a driver's operation costs there. */
struct fake_hpet_stats {
    uint64_t reads, writes;     /* every access to the block, of any register and size */
    uint64_t counter_reads;     /* MAIN_CNT */
    uint64_t cmp_writes;        /* any Tn_COMPARATOR */
    uint64_t cmp_reads;         /* ... read back */
    uint64_t status_reads;      /* GINTR_STA */
    uint64_t conf_reads, conf_writes;   /* any Tn_CONF_CAP */
    uint64_t status_writes;     /* GINTR_STA */
    uint64_t fsb_messages;      /* FSB writes sent */
    uint64_t stale_cmp_reads;   /* comparator reads answered with the value before a write */
};
const struct fake_hpet_stats *fake_hpet_stats(void);
#define FAKE_HPET_ROUTE_FSB 32
int fake_hpet_route(unsigned timer);                    /* last route raised, -1 none,
                                                           FAKE_HPET_ROUTE_FSB a message */
bool fake_hpet_legacy_active(void);                     /* present, LEG_RT_CNF set */

void fake_hpet_reset(void);

#endif
