/* lib/port/port.h - what the library needs its host kernel to define: the symbols
 * libticklab.a calls but does not contain (scripts/check-lib.sh reads this list; nothing else
 * may be left undefined). lib/port/README.md has the whole porting layer: these symbols, the
 * io header, interrupt delivery and what the library never does on its own. */
#ifndef TICKLAB_PORT_PORT_H
#define TICKLAB_PORT_PORT_H
#include <stddef.h>
#include <stdint.h>

/* The C memory functions. The compiler may emit calls to them by itself, so they keep their
 * standard names. The ticklab kernel's are in kernel/arch/mem.c; host tests use libc's. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

/* RDMSR of an MSR the CPU may lack: 0 and *val, or non-zero instead of a #GP. Used to probe
 * MSR_SMI_COUNT, the microcode revision and the like. A kernel without #GP recovery may
 * return -1 for any MSR it is not sure of. The ticklab kernel's is in kernel/arch/isr.asm
 * (its fault handler skips the RDMSR, kernel/arch/fault.c). */
int rdmsr_safe(uint32_t msr, uint64_t *val);
/* WRMSR that may fault: 0, or non-zero instead of the #GP (an MSR the CPU or its hypervisor
 * lacks, or a value it refuses). Used to set AMD's DE_CFG (drivers/amd_de_cfg.c); a kernel
 * without #GP recovery may return -1. The ticklab kernel's is beside rdmsr_safe. */
int wrmsr_safe(uint32_t msr, uint64_t val);

#endif
