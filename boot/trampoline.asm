; boot/trampoline.asm - where an application processor starts (kernel/arch/smp.c).
;
; A STARTUP IPI starts a CPU in real mode at vector * 4 KiB. smp.c copies this blob to one
; page below 1 MiB (TRAMP_BASE), fills in the data at its end, and makes that page executable
; for as long as CPUs are starting. The code switches to protected mode with a GDT of its
; own, enables PAE, the kernel's page tables, long mode (and NX when the boot CPU uses it),
; and jumps into the kernel's text at ap_entry with the CPU's index and stack. Everything
; here runs at TRAMP_BASE, so addresses are written as TR(label).

TRAMP_BASE equ 0x7000
%define TR(x) ((x) - tramp_start + TRAMP_BASE)

section .rodata
global tramp_start, tramp_end, tramp_cr3, tramp_entry, tramp_stack, tramp_cpu, tramp_efer


bits 16
tramp_start:
    cli
    cld
    xor ax, ax
    mov ds, ax
    lgdt [TR(tr_gdt_ptr)]
    mov eax, cr0
    or eax, 1                           ; protected mode
    mov cr0, eax
    jmp dword 0x08:TR(tr_pm32)

bits 32
tr_pm32:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    mov eax, cr4
    or eax, 1 << 5                      ; PAE
    mov cr4, eax
    mov eax, [TR(tramp_cr3)]
    mov cr3, eax
    mov ecx, 0xC0000080                 ; EFER: LME, and NXE when the boot CPU has it on
    rdmsr
    or eax, [TR(tramp_efer)]
    wrmsr
    mov eax, cr0
    or eax, 0x80000001                  ; paging
    mov cr0, eax
    jmp 0x18:TR(tr_lm64)

bits 64
tr_lm64:
    mov rsp, [TR(tramp_stack)]
    mov rdi, [TR(tramp_cpu)]
    mov rax, [TR(tramp_entry)]
    jmp rax

align 8
tr_gdt:
    dq 0
    dq 0x00CF9A000000FFFF               ; 0x08: 32-bit code
    dq 0x00CF92000000FFFF               ; 0x10: data
    dq 0x00AF9A000000FFFF               ; 0x18: 64-bit code
tr_gdt_ptr:
    dw tr_gdt_ptr - tr_gdt - 1
    dd TR(tr_gdt)

align 8
tramp_cr3:   dq 0
tramp_entry: dq 0
tramp_stack: dq 0
tramp_cpu:   dq 0
tramp_efer:  dq 0
tramp_end:

section .note.GNU-stack noalloc noexec nowrite progbits
