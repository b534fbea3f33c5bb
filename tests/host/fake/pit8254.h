/* tests/host/fake/pit8254.h - an Intel 8254 programmable interval timer (82C54 data sheet)
 * at ports 0x40-0x43, plus the PC's port 0x61 (channel 2 gate and OUT2).
 *
 * Modelled: the 1,193,182 Hz input clock (as QEMU, 1.193182 MHz rather than the crystal's
 * 1.1931817); control words; access modes LSB, MSB, LSB-then-MSB with their flip-flops;
 * count 0 = 65536; a written count is loaded into the counting element at the next input
 * clock edge (clock edges sit on one global grid from power on); the counter-latch command
 * and the read-back command (count and status, with NULL COUNT); live reads that tear
 * between the two bytes. Modes: 0 (interrupt on terminal count: OUT low on the control
 * word and on the first byte of a count, high at terminal count, the counter keeps wrapping
 * past 0), 2 (rate generator: OUT low for the one clock at count 1, reload with a rising
 * edge every N clocks; a new count takes effect at the next reload), 3 (square wave: OUT
 * high for ceil(N/2) and low for floor(N/2) clocks, counting down by two). Channel 0's OUT
 * rising edge raises IRQ0 (the 8259 input is edge triggered) - unless the HPET's legacy
 * replacement route owns IRQ0, or the test killed the PIT. Channel 2's gate is port 0x61 bit
 * 0 (gate low pauses mode 0; in modes 2/3 it forces OUT high and a rising gate reloads);
 * port 0x61 reads OUT2 in bit 5 and the refresh toggle (15.085 us half-period) in bit 4.
 *
 * Simplified: modes 1, 4, 5 and BCD counting are faults (not modelled; the counter then
 * behaves as mode 0, binary); reads before the first clock after a count write return the
 * count; mode 3 read values for odd counts follow the even-count pattern; a new count in
 * mode 3 takes effect at the end of the whole period, not the half-cycle. */
#ifndef TICKLAB_TESTS_HOST_FAKE_PIT8254_H
#define TICKLAB_TESTS_HOST_FAKE_PIT8254_H
#include <stdbool.h>
#include <stdint.h>

#define FAKE_PIT_HZ 1193182u

/* A dead PIT: the counters count and read back, but IRQ0 never comes. */
void fake_pit_set_irq_dead(bool dead);
/* A gated PIT, as many 2020s boards leave it: the ports answer, control words and counts are
 * taken, reads return the count, but the input clock no longer ticks, so nothing counts and
 * OUT never changes (no IRQ0). Turned back on, it reads
 * as though it had counted all along. */
void fake_pit_set_gated(bool on);
bool fake_pit_out(unsigned channel);         /* OUT now, no access cost */
uint16_t fake_pit_count(unsigned channel);   /* the counting element now, no access cost */
uint64_t fake_pit_clock_edges(void);         /* input clock edges since power on */

void fake_pit_reset(void);

#endif
