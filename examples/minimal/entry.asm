; examples/minimal/entry.asm - the example kernel's own way in: a Multiboot1 header (QEMU
; -kernel), 32-bit entry, identity-mapped long mode (the first 4 GiB in 2 MiB pages, the top
; GiB uncached for the LAPIC), a 64-bit GDT, and two interrupt stubs. Nothing here comes
; from ticklab's kernel: this is what any small kernel brings of its own.

MB1_MAGIC equ 0x1BADB002
MB1_FLAGS equ (1 << 16)                 ; the address fields below are valid (ELF64 image)
extern __load_start, __load_end, __bss_end

section .multiboot progbits alloc exec nowrite align=4
mb1:
    dd MB1_MAGIC, MB1_FLAGS, -(MB1_MAGIC + MB1_FLAGS)
    dd mb1, __load_start, __load_end, __bss_end, start32

section .bss
align 4096
pml4:   resb 4096
pdpt:   resb 4096
pd:     resb 4096 * 4
stack:  resb 16384
stack_top:

section .rodata
align 8
gdt:
    dq 0
    dq 0x00AF9A000000FFFF                   ; 0x08: 64-bit code
    dq 0x00CF92000000FFFF                   ; 0x10: data
gdt_end:
gdt_ptr:
    dw gdt_end - gdt - 1
    dq gdt

section .text
bits 32
global start32
start32:
    cli
    mov esp, stack_top
    ; page tables: PML4[0] -> PDPT, PDPT[0..3] -> 4 PDs of 512 x 2 MiB pages
    mov dword [pml4], pdpt + 3
    mov ecx, 0
.pdpt:
    mov eax, ecx
    shl eax, 12
    add eax, pd + 3
    mov [pdpt + ecx * 8], eax
    inc ecx
    cmp ecx, 4
    jb .pdpt
    mov ecx, 0
.pde:
    mov eax, ecx
    shl eax, 21
    or eax, 0x83                            ; present, writable, 2 MiB
    cmp ecx, 3 * 512
    jb .cached
    or eax, 0x18                            ; PCD | PWT: the top GiB holds the APICs
.cached:
    mov [pd + ecx * 8], eax
    mov dword [pd + ecx * 8 + 4], 0
    inc ecx
    cmp ecx, 4 * 512
    jb .pde
    mov eax, pml4
    mov cr3, eax
    mov eax, cr4
    or eax, 1 << 5                          ; PAE
    mov cr4, eax
    mov ecx, 0xC0000080                     ; EFER.LME
    rdmsr
    or eax, 1 << 8
    wrmsr
    mov eax, cr0
    or eax, (1 << 31) | 1                   ; paging, protected mode
    mov cr0, eax
    lgdt [gdt_ptr]
    jmp 0x08:start64

bits 64
extern example_main
start64:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    xor ax, ax
    mov fs, ax
    mov gs, ax
    mov rsp, stack_top
    call example_main
.halt:
    cli
    hlt
    jmp .halt

; Interrupt stubs: save the registers C may clobber, call the handler, return.
extern example_timer_irq
%macro STUB 2
global %1
%1:
    push rax
    push rcx
    push rdx
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
    cld
    call %2
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rax
    iretq
%endmacro
STUB timer_stub, example_timer_irq
global spurious_stub
spurious_stub:
    iretq

section .note.GNU-stack noalloc noexec nowrite progbits
