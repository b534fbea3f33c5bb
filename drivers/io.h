/* drivers/io.h - every hardware primitive ticklab uses: port I/O, MMIO, MSRs, CPUID, the TSC,
 * interrupt-flag control. Nothing else in the tree contains inline assembly for hardware
 * access, so host tests can swap this file's bodies for device models: with TICKLAB_HOSTED
 * defined these are plain functions that tests/host/ implements against fake devices.
 *
 * Ordering: MMIO accessors are volatile and compiler barriers (a "memory" clobber: no load
 * or store the compiler sees is moved across one); x86 keeps uncached accesses in program
 * order. WRMSR to the x2APIC registers and IA32_TSC_DEADLINE is not serialising on Intel:
 * wrmsr_fence() (MFENCE;LFENCE, as the SDM and Linux's weak_wrmsr_fence use) before it lets
 * earlier stores land first. rdtsc() is not ordered against earlier loads; use rdtsc_ordered() (LFENCE
 * before RDTSC, as the SDM prescribes for Intel and AMD with LFENCE serialising) to time an
 * interval that must not start early, and rdtscp_aux() where the CPU number matters. */
#ifndef TICKLAB_DRIVERS_IO_H
#define TICKLAB_DRIVERS_IO_H
#include <stdbool.h>
#include <stdint.h>

struct cpuid_regs { uint32_t eax, ebx, ecx, edx; };

#ifdef TICKLAB_HOSTED

uint8_t inb(uint16_t port);
uint16_t inw(uint16_t port);
uint32_t inl(uint16_t port);
void outb(uint16_t port, uint8_t v);
void outw(uint16_t port, uint16_t v);
void outl(uint16_t port, uint32_t v);
uint8_t mmio_read8(uintptr_t addr);
uint32_t mmio_read32(uintptr_t addr);
void mmio_write8(uintptr_t addr, uint8_t v);
void mmio_write16(uintptr_t addr, uint16_t v);
void mmio_write32(uintptr_t addr, uint32_t v);
uint64_t mmio_read64(uintptr_t addr);
void mmio_write64(uintptr_t addr, uint64_t v);
uint64_t rdmsr(uint32_t msr);
int rdmsr_safe(uint32_t msr, uint64_t *val);
int wrmsr_safe(uint32_t msr, uint64_t val);
void wrmsr(uint32_t msr, uint64_t v);
struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf);
uint64_t rdtsc(void);
uint64_t rdtsc_ordered(void);
static inline uint64_t rdtsc_mmio64_rdtsc(uintptr_t addr, uint64_t *before, uint64_t *after)
{
    *before = rdtsc_ordered();
    uint64_t v = mmio_read64(addr);
    *after = rdtsc_ordered();
    return v;
}
uint64_t rdtscp_aux(uint32_t *aux);
unsigned long irq_save(void);
void irq_restore(unsigned long flags);
void irq_enable(void);
void irq_disable(void);
void cpu_relax(void);
void cpu_nop_block(void);
void cpu_nops(unsigned n);
void cpu_halt(void);
void serialize(void);
void wrmsr_fence(void);

#else

static inline uint8_t inb(uint16_t port)
{
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint16_t inw(uint16_t port)
{
    uint16_t v;
    __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint32_t inl(uint16_t port)
{
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline void outb(uint16_t port, uint8_t v)
{
    __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outw(uint16_t port, uint16_t v)
{
    __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outl(uint16_t port, uint32_t v)
{
    __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint32_t mmio_read32(uintptr_t addr)
{
    uint32_t v;
    __asm__ volatile("movl %1, %0" : "=r"(v) : "m"(*(volatile uint32_t *)addr) : "memory");
    return v;
}
/* 8-bit loads: a UART whose registers are memory (SPCR, PCI memory BARs). */
static inline uint8_t mmio_read8(uintptr_t addr)
{
    uint8_t v;
    __asm__ volatile("movb %1, %0" : "=q"(v) : "m"(*(volatile uint8_t *)addr) : "memory");
    return v;
}
/* 8- and 16-bit stores: the screen (EGA text cells, 16/24-bit pixels). */
static inline void mmio_write8(uintptr_t addr, uint8_t v)
{
    __asm__ volatile("movb %1, %0" : "=m"(*(volatile uint8_t *)addr) : "q"(v) : "memory");
}
static inline void mmio_write16(uintptr_t addr, uint16_t v)
{
    __asm__ volatile("movw %1, %0" : "=m"(*(volatile uint16_t *)addr) : "r"(v) : "memory");
}
static inline void mmio_write32(uintptr_t addr, uint32_t v)
{
    __asm__ volatile("movl %1, %0" : "=m"(*(volatile uint32_t *)addr) : "r"(v) : "memory");
}
static inline uint64_t mmio_read64(uintptr_t addr)
{
    uint64_t v;
    __asm__ volatile("movq %1, %0" : "=r"(v) : "m"(*(volatile uint64_t *)addr) : "memory");
    return v;
}
static inline void mmio_write64(uintptr_t addr, uint64_t v)
{
    __asm__ volatile("movq %1, %0" : "=m"(*(volatile uint64_t *)addr) : "r"(v) : "memory");
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}
/* An MSR that may not exist: returns -1 instead of faulting (kernel/arch/fault.c turns a #GP
 * at rdmsr_safe_insn into a skip). */
int rdmsr_safe(uint32_t msr, uint64_t *val);
/* The same for a write: -1 instead of the #GP (an MSR the CPU or its hypervisor lacks, or a
 * value it refuses). */
int wrmsr_safe(uint32_t msr, uint64_t val);
static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
    struct cpuid_regs r;
    __asm__ volatile("cpuid"
                     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
                     : "a"(leaf), "c"(subleaf));
    return r;
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t rdtsc_ordered(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}
/* An ordered TSC read, a 64-bit load, an ordered TSC read, with nothing of the compiler's
 * between them: the load happened between *before and *after, and the window is as narrow
 * as three instructions can make it. */
static inline uint64_t rdtsc_mmio64_rdtsc(uintptr_t addr, uint64_t *before, uint64_t *after)
{
    uint32_t lo1, hi1, lo2, hi2;
    uint64_t v;
    __asm__ volatile("lfence\n\t"
                     "rdtsc\n\t"
                     "mov %%eax, %0\n\t"
                     "mov %%edx, %1\n\t"
                     "mov (%5), %2\n\t"
                     "lfence\n\t"
                     "rdtsc"
                     : "=&r"(lo1), "=&r"(hi1), "=&r"(v), "=&a"(lo2), "=&d"(hi2)
                     : "r"(addr) : "memory");
    *before = ((uint64_t)hi1 << 32) | lo1;
    *after = ((uint64_t)hi2 << 32) | lo2;
    return v;
}
static inline uint64_t rdtscp_aux(uint32_t *aux)
{
    uint32_t lo, hi, c;
    __asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(c) : : "memory");
    if (aux)
        *aux = c;
    return ((uint64_t)hi << 32) | lo;
}

static inline unsigned long irq_save(void)
{
    unsigned long flags;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
    return flags;
}
static inline void irq_restore(unsigned long flags)
{
    if (flags & (1UL << 9))
        __asm__ volatile("sti" : : : "memory");
}
static inline void irq_enable(void) { __asm__ volatile("sti" : : : "memory"); }
static inline void irq_disable(void) { __asm__ volatile("cli" : : : "memory"); }
static inline void cpu_relax(void) { __asm__ volatile("pause" : : : "memory"); }
static inline void cpu_halt(void) { __asm__ volatile("hlt" : : : "memory"); }
/* 32 NOPs: a spin step for an emulator that counts instructions (QEMU TCG runs a block of
 * them in a few ns and counts each as one; PAUSE would leave its translated code). */
static inline void cpu_nop_block(void) { __asm__ volatile(".rept 32\n\tnop\n\t.endr" : : : "memory"); }
/* Exactly n (< 256) one-byte NOPs, by a jump into a run of 256: under QEMU -icount shift=0
 * one instruction is one ns of virtual time, so this pads a moment to the nanosecond. */
static inline void cpu_nops(unsigned n)
{
    uint64_t skip = 256 - (n < 256 ? n : 255);
    __asm__ volatile("lea 1f(%%rip), %%rax\n\t"
                     "add %0, %%rax\n\t"
                     "jmp *%%rax\n\t"
                     "1:\n\t"
                     ".rept 256\n\tnop\n\t.endr"
                     : : "r"(skip) : "rax", "memory", "cc");
}
/* CPUID serialises the instruction stream; the SDM asks for it (or MFENCE;LFENCE) before
 * writing the TSC-deadline MSR so that earlier stores cannot pass the arming write. */
static inline void serialize(void)
{
    struct cpuid_regs r = cpuid(0, 0);
    (void)r;
}
static inline void wrmsr_fence(void) { __asm__ volatile("mfence; lfence" : : : "memory"); }

#endif /* TICKLAB_HOSTED */

/* ---- arithmetic the compiler will not pick, for the time core's hot paths (not hardware:
 * the same in host builds; here because inline assembly lives in this file only) ---- */

/* floor((a * m + add) / 2^sh) for sh < 64, the 128-bit sum kept whole: four instructions
 * (MUL, ADD, ADC, SHRD; gcc's own 128-bit shift adds a test and a CMOV for shifts of 64 and
 * more), the fixed-point step of a clock conversion (time_ns(), a device's count). The
 * result must fit 64 bits (the caller bounds a). */
static inline __attribute__((always_inline)) uint64_t mul_add_shr_u64(uint64_t a, uint64_t m,
                                                                      uint64_t add,
                                                                      uint32_t sh)
{
    uint64_t hi;
    __asm__("mulq %[m]\n\t"
            "addq %[add], %%rax\n\t"
            "adcq $0, %%rdx\n\t"
            "shrdq %%cl, %%rdx, %%rax"
            : "+a"(a), "=&d"(hi)
            : [m] "rm"(m), [add] "rm"(add), "c"(sh)
            : "cc");
    return a;
}

/* (hi * 2^64 + lo) / d for hi < d (the quotient fits 64 bits): one DIV. */
static inline uint64_t div_u128_u64(uint64_t hi, uint64_t lo, uint64_t d)
{
    uint64_t q, r;
    __asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(d) : "cc");
    return q;
}

/* p itself, but opaque to the optimiser: a pointer computed from an index (a latch's copy)
 * is then kept as one base register for every field, not re-derived from the index. */
#define opaque_ptr(p) ({ __typeof__(p) p_ = (p); __asm__("" : "+r"(p_)); p_; })

/* A counter read that needs no call to its driver: one ordered RDTSC, or one 64-bit load
 * from a mapped address. A driver whose counter is that simple says so in its clocksource
 * (struct clocksource.direct), and cs_read() reads it here, in line: time_ns() is on every
 * timer interrupt's path, where the call would cost more than the read (Linux's vDSO has
 * the same idea, vclock_mode). IO_COUNTER_CALL: the driver's read() it is. */
enum io_counter_kind { IO_COUNTER_CALL = 0, IO_COUNTER_TSC, IO_COUNTER_MMIO64 };
struct io_counter {
    enum io_counter_kind kind;
    uintptr_t mmio;             /* IO_COUNTER_MMIO64: the counter's mapped address */
};

/* The counter's value; kind must not be IO_COUNTER_CALL. */
static inline __attribute__((always_inline)) uint64_t io_counter_read(const struct io_counter *c)
{
    return c->kind == IO_COUNTER_TSC ? rdtsc_ordered() : mmio_read64(c->mmio);
}

/* A 32-bit device register written in line, by whoever holds this (the clock event core arms
 * a LAPIC timer's count through it, clockevent.h count_reg): its mapped address, or the MSR
 * that stands for it (x2APIC). IO_REG_NONE: none given. */
enum io_reg_kind { IO_REG_NONE = 0, IO_REG_MMIO32, IO_REG_MSR };
struct io_reg32 {
    enum io_reg_kind kind;
    uint32_t msr;               /* IO_REG_MSR */
    uintptr_t mmio;             /* IO_REG_MMIO32 */
};

static inline __attribute__((always_inline)) void io_reg32_write(const struct io_reg32 *r,
                                                                 uint32_t v)
{
    if (r->kind == IO_REG_MSR)
        wrmsr(r->msr, v);
    else
        mmio_write32(r->mmio, v);
}

/* c read between two reads of ref, with nothing else between the three (what they are is
 * decided before the first): the bracket a measurement maps ref's stamps into c's time
 * through. Neither may be IO_COUNTER_CALL. */
static inline __attribute__((always_inline)) uint64_t
io_counter_read_between(const struct io_counter *ref, const struct io_counter *c,
                        uint64_t *before, uint64_t *after)
{
    bool ref_tsc = ref->kind == IO_COUNTER_TSC, c_tsc = c->kind == IO_COUNTER_TSC;
    uintptr_t ref_mmio = ref->mmio, c_mmio = c->mmio;
    uint64_t b, v, a;
    if (ref_tsc && !c_tsc) {         /* the usual pair (the TSC around an HPET) */
        v = rdtsc_mmio64_rdtsc(c_mmio, &b, &a);
    } else {
        b = ref_tsc ? rdtsc_ordered() : mmio_read64(ref_mmio);
        v = c_tsc ? rdtsc_ordered() : mmio_read64(c_mmio);
        a = ref_tsc ? rdtsc_ordered() : mmio_read64(ref_mmio);
    }
    *before = b;
    *after = a;
    return v;
}
#endif /* TICKLAB_DRIVERS_IO_H */
