; boot/trampoline.asm - where an application processor starts (kernel/arch/smp.c).
;
; A STARTUP IPI starts a CPU in real mode at vector * 4 KiB. smp.c copies this blob to one
; page below 1 MiB (TRAMP_BASE), fills in the data at its end, and makes that page executable
; for as long as CPUs are starting. The code switches to protected mode with a GDT of its
; own, enables PAE, the kernel's page tables, long mode (and NX when the boot CPU uses it),
; and jumps into the kernel's text at ap_entry with the CPU's index and stack. Everything
; here runs at TRAMP_BASE, so addresses are written as TR(label).
;
; Each CPU finds its own parameters: a slot per CPU to start (APIC ID, state, stack), looked
; up by the APIC ID CPUID gives it (leaf 0xB's x2APIC ID, else CPUID.1:EBX[31:24]). A CPU
; that answers after the boot CPU gave up on it (and went on to start the next one) thus
; never runs on another CPU's stack: it claims its slot (ARMED -> CLAIMED, one locked
; CMPXCHG against the boot CPU's ARMED -> ABANDONED), and finding it abandoned it marks it
; LATE and halts here, before paging, with interrupts off. A CPU with no slot (no start was
; meant for it) counts itself in tramp_strays and halts the same way.

TRAMP_BASE equ 0x7000
TRAMP_SLOTS equ 64                      ; CPU_MAX (kernel/arch/cpu.h); smp.c checks
SLOT_BYTES  equ 16                      ; u32 apic_id, u32 state, u64 stack (smp.c: tramp_slot)
SLOT_ARMED  equ 1                       ; the states: smp.c's enum slot_state
SLOT_CLAIMED equ 2
SLOT_ABANDONED equ 4
SLOT_LATE   equ 5
%define TR(x) ((x) - tramp_start + TRAMP_BASE)

; edi = the slot whose APIC ID is esi, and jump to %1; fall through when there is none.
%macro FIND_SLOT 1
    mov ecx, [TR(tramp_nslots)]
    mov edi, TR(tramp_slots)
%%next:
    test ecx, ecx
    jz %%none
    cmp [edi], esi
    je %1
    add edi, SLOT_BYTES
    dec ecx
    jmp %%next
%%none:
%endmacro

section .rodata
global tramp_start, tramp_end, tramp_cr3, tramp_entry, tramp_efer, tramp_nslots, tramp_strays
global tramp_stray_id, tramp_slots


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
    xor eax, eax                        ; who am I: leaf 0xB's x2APIC ID when it is there
    cpuid
    cmp eax, 0xB
    jb .leaf1
    mov eax, 0xB
    xor ecx, ecx
    cpuid
    test ebx, 0xFFFF                    ; leaf 0xB is valid when level 0 has processors
    jz .leaf1
    mov esi, edx
    FIND_SLOT .claim
.leaf1:                                 ; else (or no slot by it) the initial 8-bit ID
    mov eax, 1
    cpuid
    shr ebx, 24
    mov esi, ebx
    FIND_SLOT .claim
    jmp .stray
.claim:
    mov eax, SLOT_ARMED
    mov edx, SLOT_CLAIMED
    lock cmpxchg [edi + 4], edx
    je .go
    cmp eax, SLOT_ABANDONED
    jne .stray                          ; its slot was never armed: no start was meant
    mov eax, SLOT_LATE
    xchg [edi + 4], eax                 ; locked: the boot CPU sees it
    jmp .park
.stray:
    lock inc dword [TR(tramp_strays)]
    mov [TR(tramp_stray_id)], esi
.park:
    cli
    hlt
    jmp .park
.go:
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
    mov edi, edi                        ; the slot's address, zero-extended
    mov rsp, [rdi + 8]
    sub edi, TR(tramp_slots)
    shr edi, 4                          ; / SLOT_BYTES: the slot index is the CPU's index
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
tramp_efer:  dq 0
tramp_nslots: dd 0                      ; slots in use (index 0, the boot CPU's, never armed)
tramp_strays: dd 0                      ; CPUs that found no armed or abandoned slot
tramp_stray_id: dd 0                    ; the last one's APIC ID
align 16
tramp_slots: times TRAMP_SLOTS * SLOT_BYTES db 0
tramp_end:

section .note.GNU-stack noalloc noexec nowrite progbits
