/* kernel/arch/cpu.h - descriptor tables (GDT with a TSS, IDT) and control registers. */
#ifndef TICKLAB_ARCH_CPU_H
#define TICKLAB_ARCH_CPU_H
#include <stdint.h>

#define SEL_KCODE 0x08
#define SEL_KDATA 0x10
#define SEL_TSS   0x18

/* Interrupt stack table slots (TSS IST1..3): faults that must work on a broken stack. */
#define IST_DOUBLE_FAULT  1
#define IST_NMI           2
#define IST_MACHINE_CHECK 3

#define CPU_MAX 64            /* CPUs ticklab starts (the boot CPU and 63 others) */

void cpu_tables_init(void);   /* GDT + TSS + IDT for the boot CPU */
/* For application processor `cpu` (1..CPU_MAX-1), on that CPU: its own GDT and TSS (with
 * the given IST stack tops), the shared IDT. */
void cpu_tables_init_ap(unsigned cpu, uint64_t df_top, uint64_t nmi_top, uint64_t mc_top);

#endif
