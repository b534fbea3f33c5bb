; boot/stacks.asm - every stack the kernel runs on, each with an unmapped guard page below.
;
; The guard pages are ordinary .bss pages here; kernel/arch/paging.c unmaps the pages listed
; in guard_pages[] so that running off the bottom of a stack faults instead of silently
; overwriting whatever lies below. The double-fault, NMI and machine-check handlers run on
; their own stacks (TSS IST1..3), so a stack overflow still gets reported.

bits 64
BOOT_STACK_SIZE equ 32768
IST_STACK_SIZE  equ 16384

%macro STACK 2          ; name, size
global %1_guard, %1_bottom, %1_top
align 4096
%1_guard:  resb 4096
%1_bottom: resb %2
%1_top:
%endmacro

section .bss.stacks nobits alloc noexec write align=4096
STACK boot_stack, BOOT_STACK_SIZE
STACK df_stack, IST_STACK_SIZE
STACK nmi_stack, IST_STACK_SIZE
STACK mc_stack, IST_STACK_SIZE
