; kernel/arch/isr.asm - one entry stub per vector; all funnel into isr_dispatch(struct
; trap_frame *). Vectors where the CPU pushes an error code (8, 10-14, 17, 21, 29, 30) skip
; the dummy push so every frame has the same shape (kernel/arch/trap.h).

bits 64
section .text
extern isr_dispatch
extern irq_probe

%macro STUB 1
align 16
isr_stub_%1:
%if (%1 == 8) || (%1 >= 10 && %1 <= 14) || (%1 == 17) || (%1 == 21) || (%1 == 29) || (%1 == 30)
%else
    push 0
%endif
    push %1
    jmp isr_common
%endmacro

%assign v 0
%rep 256
STUB v
%assign v v + 1
%endrep

isr_common:
    push rax
    push rbx
    push rcx
    push rdx
    ; The entry time of the interrupt, while an experiment asks for it (irq_probe in trap.h:
    ; `on` at offset 44): the first thing done once the two registers RDTSC writes are saved.
    cmp byte [rel irq_probe + 44], 0
    je .no_probe
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [rel irq_probe], rax
.no_probe:
    push rsi
    push rdi
    push rbp
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    cld
    mov rdi, rsp            ; the frame is 16-byte aligned here: 5 + 2 + 15 quadwords
    call isr_dispatch
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rbp
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rbx
    pop rax
    add rsp, 16             ; vector and error code
    iretq

section .rodata
global isr_stub_table
align 8
isr_stub_table:
%assign v 0
%rep 256
    dq isr_stub_%+v
%assign v v + 1
%endrep

; rdmsr_safe(msr, *val): a #GP on the RDMSR below is turned into a return of -1 by the fault
; handler, which moves RIP to rdmsr_safe_fail (kernel/arch/fault.c).
section .text
global rdmsr_safe, rdmsr_safe_insn, rdmsr_safe_fail
rdmsr_safe:
    mov ecx, edi
rdmsr_safe_insn:
    rdmsr
    shl rdx, 32
    or rax, rdx
    mov [rsi], rax
    xor eax, eax
    ret
rdmsr_safe_fail:
    mov eax, -1
    ret
