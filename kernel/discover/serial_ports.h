/* kernel/discover/serial_ports.h - every serial port ticklab can write to, found before the
 * first line is written: the one ACPI's SPCR names (a server's serial-over-LAN, often COM2
 * or a memory-mapped UART), the 16550s on PCI (add-in cards, Intel AMT's serial-over-LAN),
 * and COM1..COM4 probed at their fixed ports. Each is probed (scratch register, loopback
 * byte: uart16550.h); console=auto (the default) writes to every one that answers, the
 * SPCR's first; console=spcr, console=comN/0xPORT and console=none narrow it
 * (docs/command-line.md). The `serial_ports` and `serial_port` records
 * (docs/report-format.md) say what was found, where from and whether it answered. */
#ifndef TICKLAB_DISCOVER_SERIAL_PORTS_H
#define TICKLAB_DISCOVER_SERIAL_PORTS_H
#include <stdbool.h>

#include "ticklab/uart16550.h"

#define SERIAL_PORTS_MAX 12

/* Finds and probes the ports (acpi_facts must be parsed) and hands the chosen ones to the
 * in-memory log. Writes nothing itself: the problems are reported by serial_ports_report.
 * Returns the number of ports output goes to. */
unsigned serial_ports_init(void);
/* The records and the human lines of the inventory. */
void serial_ports_report(void);

#endif
