; kernel/arch/isr.asm - one entry stub per vector; exceptions funnel into exception_dispatch(struct
; trap_frame *). Vectors where the CPU pushes an error code (8, 10-14, 17, 21, 29, 30) skip
; the dummy push so every frame has the same shape (kernel/arch/trap.h).

bits 64
section .text
extern exception_dispatch, irq_probe_exit
extern irq_probe, irq_handlers, irq_counts, irq_unexpected_counts, irq_events

%macro STUB 1
align 16
isr_stub_%1:
%if (%1 == 8) || (%1 >= 10 && %1 <= 14) || (%1 == 17) || (%1 == 21) || (%1 == 29) || (%1 == 30)
%else
    push 0
%endif
    push %1
%if %1 < 32
    jmp isr_common_exception
%else
    jmp isr_common_irq
%endif
%endmacro

%assign v 0
%rep 256
STUB v
%assign v v + 1
%endrep

; The frame (kernel/arch/frame.h), from the top: rax, rcx, rdx, rsi, rdi, r8-r11 (the
; registers a C call may change), then rbx, rbp, r12-r15 (those it preserves). An exception
; saves them all, for the fault report; an interrupt does not even reserve their slots
; (isr_common_irq), since the handlers are C functions that keep them anyway and nothing
; reads them: six pushes and six pops fewer between an interrupt and its handler.
%macro SAVE_CALLER_SAVED 0
    push rax
    push rcx
    push rdx
    ; The entry time of the interrupt, while an experiment asks for it (irq_probe in trap.h:
    ; `on` at offset 44): the first thing done once the two registers RDTSC writes are saved.
    cmp byte [rel irq_probe + 44], 0
    je %%no_probe
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [rel irq_probe], rax
    mov byte [rel irq_probe + 46], 1    ; in_irq
%%no_probe:
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
%endmacro

%macro RESTORE_CALLER_SAVED 0
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rax
    add rsp, 16             ; vector and error code
    iretq
%endmacro

isr_common_exception:
    SAVE_CALLER_SAVED
    push rbx
    push rbp
    push r12
    push r13
    push r14
    push r15
    cld
    mov rdi, rsp            ; the frame is 16-byte aligned here: 5 + 2 + 15 quadwords
    call exception_dispatch
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbp
    pop rbx
    RESTORE_CALLER_SAVED

; An interrupt's dispatch, in place (it is on every timer interrupt's path): the vector's
; count and irq_events, then its handler from irq_handlers (kernel/arch/trap.c: 16 bytes a
; vector, fn then ctx), called with the frame and ctx; a vector with no handler is counted
; in irq_unexpected_counts. The frame's six slots for rbx, rbp and r12-r15 are not reserved:
; nothing reads them for an interrupt (frame.h), so the frame handed over starts 48 bytes
; below the stack pointer, where the handler's own frames then go. 16 pushes in all keep
; the stack 16-byte aligned at the call, as 22 did.
isr_common_irq:
    SAVE_CALLER_SAVED
    cld
    movzx eax, byte [rsp + 72]          ; the vector (struct trap_frame, less the six slots)
    add qword [irq_counts + rax*8], 1
    add qword [rel irq_events], 1
    shl eax, 4
    mov rcx, [irq_handlers + rax]
    test rcx, rcx
    jz .unexpected
    mov rsi, [irq_handlers + rax + 8]
    lea rdi, [rsp - 48]
    call rcx
    mov byte [rel irq_probe + 46], 0    ; in_irq: this interrupt is over
    ; the exit stamp, while tick-overhead splits the interrupt (irq_probe.split at 45)
    cmp byte [rel irq_probe + 45], 0
    jne .split
.out:
    RESTORE_CALLER_SAVED
.unexpected:
    shr eax, 1
    add qword [irq_unexpected_counts + rax], 1
    jmp .out
.split:
    lea rdi, [rsp - 48]
    call irq_probe_exit
    jmp .out

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
