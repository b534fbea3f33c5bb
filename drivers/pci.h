/* drivers/pci.h - PCI configuration space, just enough to find serial ports: the
 * 16550-compatible UARTs on add-in cards and in chipsets (Intel AMT's serial-over-LAN "KT"
 * function), class 07h subclass 00h.
 *
 * Follows the PCI Local Bus Specification 3.0 (6.1 the type 0/1 headers, 6.2.2 the command
 * register, 6.2.5 the BARs, 3.2.2.3.2 configuration mechanism #1: ports 0xCF8/0xCFC) and the
 * PCI Firmware Specification 3.2, 4.1.2 (ACPI's MCFG: the memory-mapped "ECAM" window).
 *
 * Configuration space is read through ECAM where the MCFG gives it (and the caller could map
 * it), else through ports 0xCF8/0xCFC (segment 0, 256 bytes a function: all this walk reads).
 *
 * The walk tries every device number on every bus of the range (0..255 through the ports,
 * the MCFG's range through ECAM) instead of following bridges, so a second root complex
 * (a two-socket server's bus 0x80) is found though no bridge on bus 0 leads to it; at most
 * 256 x 32 x 8 functions, every loop bounded by those counts. Functions 1..7 are looked at
 * only when function 0's header says multi-function: a single-function device may answer
 * for every function number ("ghosts").
 *
 * The BAR used is the first usable one (an I/O BAR with a port up to 0xFFF8, or a 32- or
 * 64-bit memory BAR not zero); the BARs are read, never sized (no write of all ones). When
 * the firmware left the BAR's decoding off in the command register (firmware enables only
 * what it booted from), the walk turns it on and says so (decode_enabled). */
#ifndef TICKLAB_DRIVERS_PCI_H
#define TICKLAB_DRIVERS_PCI_H
#include <stdbool.h>
#include <stdint.h>

#define PCI_CLASS_COMM         0x07
#define PCI_SUBCLASS_SERIAL    0x00
#define PCI_PROGIF_16550_MAX   0x06   /* 00 8250 .. 02 16550 .. 06 16950: all 8250 family */

enum pci_method { PCI_CFG_PORTS, PCI_CFG_ECAM };
struct pci_cfg {
    enum pci_method method;
    uintptr_t ecam;             /* ECAM: where the kernel reaches the window's start_bus */
    uint64_t ecam_phys;
    uint8_t start_bus, end_bus;
};

uint32_t pci_read32(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn,
                    uint16_t off);
void pci_write32(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off,
                 uint32_t v);

#define PCI_SERIAL_MAX 8
struct pci_serial {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint8_t prog_if;
    bool usable;                /* a BAR was found (reason NULL) */
    const char *reason;         /* "no usable BAR" */
    uint8_t bar;                /* its index */
    bool io;                    /* an I/O BAR (else memory) */
    bool bar64;
    uint64_t addr;              /* port or physical address */
    bool decode_enabled;        /* the walk turned on I/O or memory decoding */
};

struct pci_scan {
    struct pci_serial s[PCI_SERIAL_MAX];
    unsigned n, dropped;        /* more serial functions than s holds */
    unsigned functions;         /* functions present */
    unsigned buses_with_devices;
};

/* Walks the configuration space for 16550-compatible functions. Never fails: none found
 * is n == 0. */
void pci_find_serial(const struct pci_cfg *c, struct pci_scan *out);

/* A chipset function by its IDs (the watchdogs' LPC and SMBus functions, test devices): the
 * first on `bus` whose vendor and device match; false when none. Functions 1..7 only where
 * function 0 says multi-function. */
bool pci_find_id(const struct pci_cfg *c, uint8_t bus, uint16_t vendor, uint16_t device,
                 uint8_t *dev, uint8_t *fn);
/* BAR i of a type 0 header as a memory address (a 64-bit BAR whole); 0 for an I/O BAR, an
 * empty one, or a 64-bit one in the last slot. */
uint64_t pci_bar_mem(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn, unsigned i);
/* Memory decoding on in the command register (nothing else changed). */
void pci_enable_mem(const struct pci_cfg *c, uint8_t bus, uint8_t dev, uint8_t fn);

#endif
