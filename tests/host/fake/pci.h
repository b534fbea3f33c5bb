/* tests/host/fake/pci.h - PCI configuration space for the serial-port walk (drivers/pci.c):
 * up to FAKE_PCI_MAX functions, 256 bytes each, reached through ports 0xCF8/0xCFC
 * (mechanism #1) and, when attached, an ECAM window. Absent functions read all ones.
 * A "ghost" device answers every function number with function 0's bytes (a single-function
 * device that does not decode the function number): only the multi-function bit in its
 * header may make a walk look past function 0. Writes land in the bytes (the command
 * register; BARs are never sized by the walk, so no size masks are modelled). Byte writes
 * through 0xCFC-0xCFF land in their byte alone; a hook (a device model: firmware answering a
 * semaphore) sees every write after it landed. */
#ifndef TICKLAB_TESTS_HOST_FAKE_PCI_H
#define TICKLAB_TESTS_HOST_FAKE_PCI_H
#include <stdbool.h>
#include <stdint.h>

#define FAKE_PCI_MAX 32

/* Adds a function; returns its 256 configuration bytes (to set BARs, the command word), or
 * NULL when the table is full. class_code: class << 16 | subclass << 8 | prog-if. */
uint8_t *fake_pci_add(uint8_t bus, uint8_t dev, uint8_t fn, uint16_t vendor, uint16_t device,
                      uint32_t class_code, uint8_t header_type);
/* cfg: the function's 256 bytes; off and size: the bytes just written. */
typedef void (*fake_pci_write_hook)(void *ctx, uint8_t *cfg, unsigned off, unsigned size);
void fake_pci_on_write(fake_pci_write_hook hook, void *ctx);
void fake_pci_ghost(uint8_t bus, uint8_t dev);
void fake_pci_attach_ports(void);
void fake_pci_attach_ecam(uint64_t base, uint8_t start_bus, uint8_t end_bus);
uint64_t fake_pci_reads(void);   /* configuration reads answered (bounds the walk) */
void fake_pci_reset(void);

#endif
