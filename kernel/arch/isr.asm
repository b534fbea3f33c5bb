; kernel/arch/isr.asm - one entry stub per vector; exceptions funnel into exception_dispatch(struct
; trap_frame *). Vectors where the CPU pushes an error code (8, 10-14, 17, 21, 29, 30) skip
; the dummy push so every exception frame has the same shape (kernel/arch/frame.h);
; interrupts push neither (IRQ_ENTRY).

bits 64
section .text
extern exception_dispatch, irq_probe_exit
extern irq_probe, irq_handlers, irq_counts, irq_unexpected_counts, irq_events

; An exception's stub pushes its vector and goes to the common path. An interrupt's stub
; is the whole entry, dispatch and exit in place (IRQ_ENTRY below): it is on every timer
; interrupt's path, and knowing its vector when assembled spares the jump, the vector's
; load, the index arithmetic and the test for a missing handler (every slot of
; irq_handlers holds one: irq_unhandled until a driver installs its own, trap.c). About
; 120 bytes a vector, 27 KB for the 224.
%macro STUB 1
align 16
isr_stub_%1:
%if %1 < 32
%if (%1 == 8) || (%1 >= 10 && %1 <= 14) || (%1 == 17) || (%1 == 21) || (%1 == 29) || (%1 == 30)
%else
    push 0
%endif
    push %1
%if (%1 == 2) || (%1 == 18)
    jmp isr_common_unmasked
%else
    jmp isr_common_exception
%endif
%else
    IRQ_ENTRY %1
%endif
%endmacro

; The frame (kernel/arch/frame.h), from the top: rax, rcx, rdx, rsi, rdi, r8-r11 (the
; registers a C call may change), then rbx, rbp, r12-r15 (those it preserves). An exception
; saves them all, for the fault report; an interrupt saves only the first nine (its handler
; is a C function that keeps the others) and builds no frame at all.
%macro SAVE_CALLER_SAVED 0-1 probe
    push rax
    push rcx
    push rdx
%ifidn %1, probe
    ; The entry time of the interrupt, while an experiment asks for it (irq_probe in trap.h:
    ; `on` at offset 44): the first thing done once the two registers RDTSC writes are saved.
    cmp byte [rel irq_probe + 44], 0
    je %%no_probe
    rdtsc
    mov [rel irq_probe], eax            ; entry_tsc_lo (the high half: irq_entry_tsc())
    mov byte [rel irq_probe + 46], 1    ; in_irq
%%no_probe:
%endif
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
%endmacro

%macro POP_CALLER_SAVED 0
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rax
%endmacro

%macro RESTORE_CALLER_SAVED 0
    POP_CALLER_SAVED
    add rsp, 16             ; vector and error code
    iretq
%endmacro

; NMI and machine check: the same frame and dispatch, but no entry stamp. Neither is masked
; by CLI, so either can land between an interrupt's entry stamp and its handler's use of it
; (irq_probe); it must leave the stamp and in_irq as it found them.
isr_common_unmasked:
    SAVE_CALLER_SAVED noprobe
    jmp isr_common_frame

isr_common_exception:
    SAVE_CALLER_SAVED
isr_common_frame:
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

; An interrupt, vector %1: no vector or error code pushed (an interrupt has no error code,
; and the vector is known here), the registers a C call may change, the vector's count and
; irq_events, then its handler from irq_handlers (kernel/arch/trap.c: 16 bytes a vector, fn
; then ctx), called with the vector and ctx (trap.h: a handler gets no frame). The CPU's five
; quadwords and the nine pushes leave the stack 16-byte aligned at the call (the CPU aligns
; it before pushing its frame).
%macro IRQ_ENTRY 1
    SAVE_CALLER_SAVED
    cld
    add qword [irq_counts + %1 * 8], 1
    add qword [rel irq_events], 1
    mov rsi, [irq_handlers + %1 * 16 + 8]
    mov edi, %1
    call [irq_handlers + %1 * 16]
    mov byte [rel irq_probe + 46], 0    ; in_irq: this interrupt is over
    ; the exit stamp, while an experiment splits the interrupt (irq_probe.split at 45)
    cmp byte [rel irq_probe + 45], 0
    jne %%split
    POP_CALLER_SAVED
    iretq
%%split:
    mov edi, %1
    jmp isr_irq_split
%endmacro

%assign v 0
%rep 256
STUB v
%assign v v + 1
%endrep

; The exit stamp of a split interrupt (its vector in edi), then its exit (its stub's own,
; repeated).
isr_irq_split:
    call irq_probe_exit
    POP_CALLER_SAVED
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

; wrmsr_safe(msr, val): the same for a WRMSR (kernel/arch/fault.c moves RIP from
; wrmsr_safe_insn to wrmsr_safe_fail).
global wrmsr_safe, wrmsr_safe_insn, wrmsr_safe_fail
wrmsr_safe:
    mov ecx, edi
    mov eax, esi
    mov rdx, rsi
    shr rdx, 32
wrmsr_safe_insn:
    wrmsr
    xor eax, eax
    ret
wrmsr_safe_fail:
    mov eax, -1
    ret
