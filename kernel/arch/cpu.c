/* kernel/arch/cpu.c - GDT, TSS and IDT for the boot CPU.
 *
 * Long mode ignores segment bases and limits; the GDT exists for the code selector, and for
 * the TSS, whose only job here is the interrupt stack table: double fault, NMI and machine
 * check switch to stacks of their own so they can be reported even when the running stack
 * has overflowed into its guard page. */
#include "kernel/arch/cpu.h"

#include <stddef.h>

#include "kernel/arch/trap.h"

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];          /* IST1..IST7: ist[n - 1] */
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} __attribute__((packed));
_Static_assert(sizeof(struct tss) == 104, "TSS is 104 bytes (SDM vol. 3, 8.7)");
_Static_assert(offsetof(struct tss, ist) == 0x24, "TSS IST1 at 0x24");

struct idt_gate {
    uint16_t offset_lo;
    uint16_t selector;
    uint8_t ist;
    uint8_t type_attr;        /* 0x8E: present, DPL 0, 64-bit interrupt gate */
    uint16_t offset_mid;
    uint32_t offset_hi;
    uint32_t reserved;
} __attribute__((packed));
_Static_assert(sizeof(struct idt_gate) == 16, "IDT gate is 16 bytes");

struct desc_ptr {
    uint16_t limit;
    uint64_t base;
} __attribute__((packed));

extern char df_stack_top[], nmi_stack_top[], mc_stack_top[];
extern const uint64_t isr_stub_table[256];

static struct tss boot_tss __attribute__((aligned(16)));
static uint64_t gdt[5] __attribute__((aligned(16)));
static struct idt_gate idt[256] __attribute__((aligned(16)));

/* The application processors' own GDT and TSS (the IDT is shared). */
static struct tss ap_tss[CPU_MAX] __attribute__((aligned(16)));
static uint64_t ap_gdt[CPU_MAX][5] __attribute__((aligned(16)));

static void gdt_load(uint64_t *gdt, struct tss *tss)
{
    uint64_t base = (uint64_t)tss;
    uint64_t limit = sizeof(*tss) - 1;

    gdt[0] = 0;
    gdt[1] = 0x00AF9A000000FFFFull;   /* 64-bit code, DPL 0 */
    gdt[2] = 0x00CF92000000FFFFull;   /* data */
    /* 16-byte system descriptor: type 9 (available 64-bit TSS), present */
    gdt[3] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) | (0x89ull << 40) |
             (((limit >> 16) & 0xF) << 48) | (((base >> 24) & 0xFF) << 56);
    gdt[4] = base >> 32;

    struct desc_ptr p = { 5 * sizeof(uint64_t) - 1, (uint64_t)gdt };
    __asm__ volatile("lgdt %0\n\t"
                     "pushq %1\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "movw %w2, %%ax\n\t"
                     "movw %%ax, %%ds\n\t"
                     "movw %%ax, %%es\n\t"
                     "movw %%ax, %%ss\n\t"
                     "ltr %w3"
                     :
                     : "m"(p), "i"(SEL_KCODE), "r"(SEL_KDATA), "r"(SEL_TSS)
                     : "rax", "memory");
}

static void idt_set(unsigned vec, uint64_t handler, unsigned ist)
{
    idt[vec] = (struct idt_gate){
        .offset_lo = handler & 0xFFFF,
        .selector = SEL_KCODE,
        .ist = ist & 7,
        .type_attr = 0x8E,
        .offset_mid = (handler >> 16) & 0xFFFF,
        .offset_hi = handler >> 32,
    };
}

void cpu_tables_init(void)
{
    boot_tss.ist[IST_DOUBLE_FAULT - 1] = (uint64_t)df_stack_top;
    boot_tss.ist[IST_NMI - 1] = (uint64_t)nmi_stack_top;
    boot_tss.ist[IST_MACHINE_CHECK - 1] = (uint64_t)mc_stack_top;
    boot_tss.iomap_base = sizeof(boot_tss);   /* no I/O bitmap */
    gdt_load(gdt, &boot_tss);

    for (unsigned v = 0; v < 256; v++)
        idt_set(v, isr_stub_table[v], 0);
    idt_set(2, isr_stub_table[2], IST_NMI);
    idt_set(8, isr_stub_table[8], IST_DOUBLE_FAULT);
    idt_set(18, isr_stub_table[18], IST_MACHINE_CHECK);

    struct desc_ptr p = { sizeof(idt) - 1, (uint64_t)idt };
    __asm__ volatile("lidt %0" : : "m"(p) : "memory");
}

void cpu_tables_init_ap(unsigned cpu, uint64_t df_top, uint64_t nmi_top, uint64_t mc_top)
{
    struct tss *t = &ap_tss[cpu];
    t->ist[IST_DOUBLE_FAULT - 1] = df_top;
    t->ist[IST_NMI - 1] = nmi_top;
    t->ist[IST_MACHINE_CHECK - 1] = mc_top;
    t->iomap_base = sizeof(*t);
    gdt_load(ap_gdt[cpu], t);
    struct desc_ptr p = { sizeof(idt) - 1, (uint64_t)idt };
    __asm__ volatile("lidt %0" : : "m"(p) : "memory");
}
