; boot/entry.asm - the way in: Multiboot1 and Multiboot2 headers, 32-bit entry, long mode.
;
; Both loaders enter here in 32-bit protected mode with paging off: EAX holds the loader's
; magic (0x2BADB002 for Multiboot1, 0x36D76289 for Multiboot2) and EBX the physical address
; of its information block, wherever the loader put the image (below: "where the image
; runs"). We build throw-away page tables, switch to long mode, map the kernel's link
; addresses to where it is, and call kmain(magic, info). The C side then builds the real
; tables (W^X, NX, guard pages; kernel/arch/paging.c).
;
; Multiboot1 is here for QEMU's -kernel, which loads only 32-bit Multiboot1 images; for an
; ELF64 file it needs the address fields (flag bit 16), so the image must be laid out in the
; file exactly as in memory from __load_start (linker.ld keeps it so).
;
; The ticklab EFI application (boot/efi/) is the third way in: it leaves the firmware's boot
; services and jumps to _start_efi64 already in long mode, on the firmware's identity-mapped
; page tables, with EDI = 0x71C1AEF1 (EFI_BOOT_MAGIC, kernel/boot/bootinfo.h) and ESI = the
; physical address (below 4 GiB) of a Multiboot2-format block it built. It finds that entry
; through the ticklab EFI header below, which it looks for in the file as Multiboot loaders
; look for theirs.

bits 32

MB1_MAGIC       equ 0x1BADB002
MB1_FLAGS       equ (1 << 1) | (1 << 16)     ; memory info; address fields valid
MB2_MAGIC       equ 0xE85250D6
MB2_ARCH_I386   equ 0
MB1_BOOT_MAGIC  equ 0x2BADB002            ; in EAX from a Multiboot1 loader

extern __load_start, __load_end, __bss_end, kmain
extern boot_stack_top

section .multiboot progbits alloc exec nowrite align=8
global multiboot_headers
multiboot_headers:
align 4
mb1_header:
    dd MB1_MAGIC
    dd MB1_FLAGS
    dd -(MB1_MAGIC + MB1_FLAGS)
    dd mb1_header           ; header_addr
    dd __load_start         ; load_addr
    dd __load_end           ; load_end_addr
    dd __bss_end            ; bss_end_addr: the loader zeroes up to here
    dd _start32             ; entry_addr

align 8
mb2_header:
    dd MB2_MAGIC
    dd MB2_ARCH_I386
    dd mb2_header_end - mb2_header
    dd -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
    ; information request, optional (flags=1): what we want GRUB to hand over
align 8
    dw 1, 1
    dd mb2_info_req_end - ($ - 4)
    dd 1                    ; boot command line
    dd 2                    ; boot loader name
    dd 6                    ; memory map
    dd 8                    ; framebuffer info
    dd 14                   ; ACPI 1.0 RSDP
    dd 15                   ; ACPI 2.0 RSDP
mb2_info_req_end:
    ; relocatable, optional: anywhere from 1 MiB up, ending below 4 GiB, on a 4 KiB
    ; boundary, the lowest address GRUB has (the link address when it is free)
align 8
    dw 10, 1
    dd 24
    dd 0x100000             ; min_addr
    dd 0xFFFFFFFF           ; max_addr: the image ends below 4 GiB (the 32-bit entry)
    dd 0x1000               ; align
    dd 1                    ; preference: low
    ; framebuffer, optional: any mode GRUB likes (0 = no preference)
align 8
    dw 5, 1
    dd 20
    dd 0, 0, 0
    ; end tag
align 8
    dw 0, 0
    dd 8
mb2_header_end:

; ticklab EFI header: magic, checksum (magic + checksum = 0 mod 2^32), 64-bit entry address.
; boot/efi/kernel.c reads it (EFI_HDR_MAGIC there).
TL_EFI_HDR_MAGIC equ 0x4546_4C54       ; "TLFE" in memory order
align 8
efi_header:
    dd TL_EFI_HDR_MAGIC
    dd -TL_EFI_HDR_MAGIC
    dq _start_efi64

section .boot.text progbits alloc exec nowrite align=16
; ---- where the image runs -------------------------------------------------------------------
; The kernel is linked at 1 MiB (linker.ld) and its virtual addresses stay there, whatever
; physical address the loader chose: GRUB places it by the relocatable tag (any 4 KiB
; boundary from 1 MiB up, below 4 GiB), ticklab.efi where the firmware has room; QEMU's
; -kernel puts it at 1 MiB. The entry code runs position-independently, at the physical
; address it was loaded at, with `delta` (load - link) in EBP/RBP:
;   1. the early tables: 0..4 GiB identity (2 MiB pages), and the same 4 GiB again at the
;      direct map's base (PHYS_MAP_BASE, kernel/arch/paging.h), through a second PDPT;
;   2. long mode, at the physical address of reloc64 (identity);
;   3. a jump to reloc64's direct-map alias, which no later change of the low half touches;
;   4. when delta is not 0, the first 8 MiB of the low half re-pointed through 4 KiB pages:
;      the kernel's link range to where it was loaded, the rest identity;
;   5. a jump to _start64 at its link address: from here the kernel runs where it was linked.
; The hot paths are the same instructions at the same virtual addresses either way; the C
; side's page tables (kernel/arch/paging.c) keep the kernel's range mapped so, from
; kernel_load_delta.
;
; An NMI can come at any moment (a BMC's, a front panel's, an emulator monitor's): from the
; first instructions on an IDT of our own answers vector 2 with a bare IRET (kmain's first
; step loads the real one), in 32-bit mode and again in 64-bit mode, so that none lands on
; a loader's IDT or on none.

PHYS_MAP_BASE  equ 0xFFFF800000000000   ; kernel/arch/paging.h
PML4_HI_SLOT   equ (PHYS_MAP_BASE >> 39) & 511
WINDOW_END     equ 0x800000             ; the kernel fits below 8 MiB (linker.ld asserts it)
extern __kernel_start, __kernel_end

global _start32
_start32:
    cli
    cld
    mov edi, eax                        ; kept for kmain (EDI/ESI survive the switch)
    mov esi, ebx
    ; Multiboot leaves ESP undefined, and finding where we are takes one CALL: its push goes
    ; to the one place known to be ours, the loader's information block, whose first dword
    ; is put back after (Xen's relocatable entry does the same).
    mov edx, [ebx]
    lea esp, [ebx + 4]
    call .here
.here:
    pop ebp
    mov [ebx], edx
    sub ebp, .here                      ; EBP = delta: every address below is [ebp + link]
    lea esp, [ebp + boot_stack_top]
    mov [ebp + early_magic], edi

    ; Our GDT first (its base patched to where it is): then a 32-bit code selector of our
    ; own (0x18) that the early IDT's gate can name, whatever the loader's GDT was.
    lea eax, [ebp + early_gdt]
    mov [ebp + early_gdt_ptr + 2], eax
    lgdt [ebp + early_gdt_ptr]
    lea eax, [ebp + .flat]
    push dword 0x18
    push eax
    retf
.flat:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    lea eax, [ebp + nmi_iret32]         ; the early IDT's vector 2 (an interrupt gate)
    mov [ebp + early_idt32 + 16], ax
    mov word [ebp + early_idt32 + 18], 0x18
    mov word [ebp + early_idt32 + 20], 0x8E00
    shr eax, 16
    mov [ebp + early_idt32 + 22], ax
    lea eax, [ebp + early_idt32]
    mov [ebp + early_idt32_ptr + 2], eax
    lidt [ebp + early_idt32_ptr]

    ; A CPU without CPUID (EFLAGS.ID cannot be toggled: a 386 or early 486) has no long mode.
    pushfd
    pop eax
    mov ecx, eax
    xor eax, 1 << 21
    push eax
    popfd
    pushfd
    pop eax
    push ecx
    popfd
    xor eax, ecx
    test eax, 1 << 21
    jz .no_long_mode
    mov byte [ebp + early_has_cpuid], 1

    ; No long mode (CPUID 0x80000001 EDX bit 29): say so on COM1 and stop.
    push edi
    push esi
    mov eax, 0x80000000
    cpuid
    cmp eax, 0x80000001
    jb .no_long_mode
    mov eax, 0x80000001
    cpuid
    test edx, 1 << 29
    jz .no_long_mode
    pop esi
    pop edi

    ; PML4[0] -> the low PDPT, PML4[PHYS_MAP_BASE] -> the high one; each PDPT's first four
    ; entries -> the four identity page directories (2 MiB pages): 0..4 GiB in both halves.
    lea eax, [ebp + early_pdpt]
    or eax, 3
    mov [ebp + early_pml4], eax
    lea eax, [ebp + early_pdpt_hi]
    or eax, 3
    mov [ebp + early_pml4 + PML4_HI_SLOT * 8], eax
    xor ecx, ecx
.fill_pdpt:
    mov eax, ecx
    shl eax, 12
    lea eax, [eax + ebp + early_pd]
    or eax, 3
    mov [ebp + early_pdpt + ecx * 8], eax
    mov [ebp + early_pdpt_hi + ecx * 8], eax
    inc ecx
    cmp ecx, 4
    jb .fill_pdpt
    xor ecx, ecx
.fill_pd:
    mov eax, ecx
    shl eax, 21                         ; ecx * 2 MiB (wraps to 0 at 4 GiB, never reached)
    or eax, 0x83                        ; present, writable, 2 MiB page
    mov [ebp + early_pd + ecx * 8], eax
    mov eax, ecx
    shr eax, 11                         ; high dword of the address: 0 below 4 GiB
    mov [ebp + early_pd + ecx * 8 + 4], eax
    inc ecx
    cmp ecx, 2048
    jb .fill_pd

    lea eax, [ebp + early_pml4]
    mov cr3, eax
    mov eax, cr4
    or eax, 1 << 5                      ; PAE
    mov cr4, eax
    mov ecx, 0xC0000080                 ; IA32_EFER
    rdmsr
    or eax, (1 << 8)                    ; LME (NXE is set later, only if CPUID has it)
    wrmsr
    mov eax, cr0
    or eax, (1 << 31) | (1 << 16) | 1   ; PG, WP, PE
    mov cr0, eax
    lea eax, [ebp + reloc64_from32]     ; 64-bit code at its physical address (identity)
    push dword 0x08
    push eax
    retf

.no_long_mode:
    lea esi, [ebp + no_lm_msg]
    lea edi, [ebp + no_lm_boot1]
    cmp dword [ebp + early_magic], MB1_BOOT_MAGIC
    je .nolm_go
    lea edi, [ebp + no_lm_boot2]
.nolm_go:
    lea ecx, [ebp + no_lm_rest]
    call early_stop32
    ; not reached

nmi_iret32:
    iretd

; The kernel's data selector in DS, ES and SS; FS and GS null (both 64-bit entries).
%macro LOAD_DATA_SEGMENTS 0
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    xor ax, ax
    mov fs, ax
    mov gs, ax
%endmacro

bits 64
; The early IDT's vector 2 at RAX, loaded (RDX: where the IDT is, as it is addressed now).
set_idt64:
    mov [rdx + 32], ax                  ; gate 2: offset 15:0
    mov word [rdx + 34], 0x08
    mov word [rdx + 36], 0x8E00         ; present, DPL 0, 64-bit interrupt gate
    shr rax, 16
    mov [rdx + 38], ax                  ; offset 31:16
    shr rax, 16
    mov [rdx + 40], eax                 ; offset 63:32
    mov dword [rdx + 44], 0
    lea rax, [rel early_idt64_ptr]
    mov [rax + 2], rdx
    lidt [rax]
    ret

reloc64_from32:
    LOAD_DATA_SEGMENTS
    mov edi, edi                        ; magic, info, delta: zero-extended (the upper halves
    mov esi, esi                        ; are undefined after compatibility mode)
    mov ebp, ebp
    lea rsp, [rbp + boot_stack_top]
; RBP = delta, RDI = magic, RSI = info, on the early tables (identity and the high alias).
reloc64:
    lea rax, [rel nmi_iretq]
    lea rdx, [rel early_idt64]
    call set_idt64
    mov rcx, PHYS_MAP_BASE
    lea rax, [rel .high]
    add rax, rcx
    jmp rax
.high:                                  ; at the high alias: RIP-relative addresses are its
    add rsp, rcx
    lea rax, [rel nmi_iretq]
    lea rdx, [rel early_idt64]
    call set_idt64
    ; the GDT by its alias too: its physical address may be in the range re-pointed below
    lea rax, [rel early_gdt]
    lea rdx, [rel early_gdt_ptr64]
    mov [rdx + 2], rax
    lgdt [rdx]
    test rbp, rbp
    jz .linked                          ; where it was linked: the identity is the window
    ; PD 0's replacement: entries 0..3 -> four page tables (0..8 MiB in 4 KiB pages), the
    ; rest the identity's 2 MiB pages.
    lea rbx, [rel early_pd0_win]
    lea r8, [rel early_pt]
    xor ecx, ecx
.win_pd:
    mov rax, rcx
    shl rax, 21
    or rax, 0x83
    cmp ecx, WINDOW_END >> 21
    jae .win_pd_put
    mov rax, rcx
    shl rax, 12
    add rax, r8
    mov r9, PHYS_MAP_BASE
    sub rax, r9                         ; the page table's physical address
    or rax, 3
.win_pd_put:
    mov [rbx + rcx * 8], rax
    inc ecx
    cmp ecx, 512
    jb .win_pd
    ; the page tables: the link range -> + delta, everything else identity
    mov r10, __kernel_start
    mov r11, __kernel_end
    xor ecx, ecx
.win_pt:
    mov rax, rcx
    shl rax, 12                         ; the virtual address of page rcx
    cmp rax, r10
    jb .win_pt_put
    cmp rax, r11
    jae .win_pt_put
    add rax, rbp
.win_pt_put:
    or rax, 3
    mov [r8 + rcx * 8], rax
    inc ecx
    cmp ecx, WINDOW_END >> 12
    jb .win_pt
    mov rax, rbx
    mov r9, PHYS_MAP_BASE
    sub rax, r9
    or rax, 3
    lea rdx, [rel early_pdpt]
    mov [rdx], rax                      ; the low half's first GiB through the window PD
    mov rax, cr3
    mov cr3, rax
.linked:
    mov rax, _start64                   ; the link address: through the window now
    jmp rax

_start64:
    LOAD_DATA_SEGMENTS
    mov rsp, boot_stack_top
    mov [rel kernel_load_delta], rbp
    xor ebp, ebp
    mov edi, edi
    mov esi, esi
    call kmain
.hang:
    cli
    hlt
    jmp .hang

nmi_iretq:
    iretq

; From the EFI application, in long mode, at whatever physical address the firmware gave the
; image (boot/efi/kernel.c), on the firmware's identity-mapped page tables. The firmware's
; GDT and page tables may lie in memory the kernel will reuse, and its page tables may mark
; our pages NX or read-only: our own GDT and early tables, then the common path above.
; 5-level paging (CR4.LA57) cannot be turned off in long mode; our tables are 4-level, so a
; firmware that enabled it is refused with a message on COM1.
global _start_efi64
_start_efi64:
    cli
    cld
    mov r12d, edi                       ; magic
    mov r13d, esi                       ; info block (below 4 GiB)
    lea rbp, [rel _start_efi64]
    mov rax, _start_efi64
    sub rbp, rax                        ; delta
    lea rsp, [rel boot_stack_top]
    lea rax, [rel nmi_iretq]
    lea rdx, [rel early_idt64]
    call set_idt64
    mov rax, cr4
    test eax, 1 << 12                   ; LA57
    jnz .la57
    lea rax, [rel early_gdt]
    lea rdx, [rel early_gdt_ptr64]
    mov [rdx + 2], rax
    lgdt [rdx]
    push 0x08
    lea rax, [rel .reload_cs]
    push rax
    retfq
.reload_cs:
    LOAD_DATA_SEGMENTS

    ; The same tables as the 32-bit path. .boot.bss was zeroed by the application, which
    ; loads the image's whole memory size.
    lea rbx, [rel early_pml4]
    lea rax, [rel early_pdpt]
    or rax, 3
    mov [rbx], rax
    lea rax, [rel early_pdpt_hi]
    or rax, 3
    mov [rbx + PML4_HI_SLOT * 8], rax
    lea r8, [rel early_pd]
    xor ecx, ecx
.fill_pdpt:
    mov rax, rcx
    shl rax, 12
    add rax, r8
    or rax, 3
    lea rdx, [rel early_pdpt]
    mov [rdx + rcx * 8], rax
    lea rdx, [rel early_pdpt_hi]
    mov [rdx + rcx * 8], rax
    inc ecx
    cmp ecx, 4
    jb .fill_pdpt
    xor ecx, ecx
.fill_pd:
    mov rax, rcx
    shl rax, 21
    or rax, 0x83                        ; present, writable, 2 MiB page
    mov [r8 + rcx * 8], rax
    inc ecx
    cmp ecx, 2048
    jb .fill_pd
    mov cr3, rbx
    mov rax, cr0
    or eax, 1 << 16                     ; WP, as on the 32-bit path
    mov cr0, rax
    mov edi, r12d
    mov esi, r13d
    jmp reloc64

.la57:
    lea rsi, [rel la57_msg]
    lea rdi, [rel la57_boot]
    lea rcx, [rel la57_rest]
    call early_stop64
    ; not reached


; ---- stopping before kmain -----------------------------------------------------------------
; When the CPU cannot run the kernel at all (no long mode, or firmware left 5-level paging
; on), say so as a person and as a run: a line of text, then three records (boot, error,
; end) in the kernel's own framing, "TLR <crc32 of the JSON> <JSON>", so that a capture
; reads an ended, failed run with its reason instead of silence. The CRC is computed here
; (IEEE, reflected, as lib/crc32.c); COM1 is set to 115200 8N1 first, as the kernel would.
; Under QEMU (CPUID hypervisor bit and a TCG or KVM signature) the run ends through the
; isa-debug-exit port with status 35, as stop.c would; on a PC the CPU halts.
; In: ESI = the text, EDI = the boot record's JSON, ECX = the error and end records' JSON,
; one after the other, each NUL-terminated, all where they are now; EBP = delta (load - link),
; for the macro's own variables. Assembled twice, for 32-bit and 64-bit code; every address
; is below 4 GiB, so the same instructions serve both.
%macro EARLY_STOP 1                     ; %1 = 1: CPUID exists and EFLAGS.ID was checked
    mov [ebp + early_s1], edi
    mov [ebp + early_s2], ecx
    mov dx, 0x3FB                       ; LCR: divisor latch on
    mov al, 0x80
    out dx, al
    mov dx, 0x3F8                       ; divisor 1: 115200 baud
    mov al, 1
    out dx, al
    mov dx, 0x3F9
    xor al, al
    out dx, al
    mov dx, 0x3FB                       ; 8 data bits, no parity, 1 stop bit
    mov al, 3
    out dx, al
    mov dx, 0x3FA                       ; FIFOs on and cleared
    mov al, 0xC7
    out dx, al
    mov dx, 0x3FC                       ; DTR, RTS
    mov al, 3
    out dx, al
    call %%puts
    mov esi, [ebp + early_s1]
    call %%record
    mov esi, [ebp + early_s2]
    call %%record
    call %%record
    cmp byte [ebp + early_has_cpuid], 0
    je %%halt
    mov eax, 1
    cpuid
    test ecx, 1 << 31                   ; a hypervisor says it is there
    jz %%halt
    mov eax, 0x40000000
    cpuid
    cmp ebx, 'TCGT'
    je %%qemu
    cmp ebx, 'KVMK'
    jne %%halt
%%qemu:
    mov dx, 0xF4                        ; -device isa-debug-exit,iobase=0xf4: exit 35
    mov al, 0x11
    out dx, al
%%halt:
    cli
    hlt
    jmp %%halt

; ESI -> NUL-terminated text, sent as it is; ESI ends past the NUL.
%%puts:
    lodsb
    test al, al
    jz %%puts_end
    call %%putc
    jmp %%puts
%%puts_end:
    ret

; ESI -> NUL-terminated JSON: "TLR xxxxxxxx JSON\r\n"; ESI ends past the NUL.
%%record:
    mov edi, esi
    mov ecx, 0xFFFFFFFF
%%crc_byte:
    movzx eax, byte [edi]
    test eax, eax
    jz %%crc_done
    inc edi
    xor ecx, eax
    mov ebx, 8
%%crc_bit:
    shr ecx, 1
    jnc %%crc_next
    xor ecx, 0xEDB88320
%%crc_next:
    dec ebx
    jnz %%crc_bit
    jmp %%crc_byte
%%crc_done:
    not ecx
    mov al, 'T'
    call %%putc
    mov al, 'L'
    call %%putc
    mov al, 'R'
    call %%putc
    mov al, ' '
    call %%putc
    mov ebx, 8
%%hex:
    rol ecx, 4
    mov eax, ecx
    and eax, 15
    add al, '0'
    cmp al, '9'
    jbe %%hex_digit
    add al, 'a' - '9' - 1
%%hex_digit:
    call %%putc
    dec ebx
    jnz %%hex
    mov al, ' '
    call %%putc
    call %%puts
    mov al, 13
    call %%putc
    mov al, 10
    call %%putc
    ret

; AL -> COM1. The wait for room is bounded by a count of status reads (about 1 us each on
; a PC's I/O bus, so about a second at most); no clock is set up yet to bound it by.
; An absent UART reads 0xFF, which says there is room.
%%putc:
    mov ah, al
    mov edi, 1000000
%%putc_wait:
    mov dx, 0x3FD                       ; LSR
    in al, dx
    test al, 0x20                       ; THR empty
    jnz %%putc_send
    dec edi
    jnz %%putc_wait
%%putc_send:
    mov al, ah
    mov dx, 0x3F8
    out dx, al
    ret
%endmacro

bits 32
early_stop32:
    EARLY_STOP 1
bits 64
early_stop64:
    EARLY_STOP 1

section .boot.rodata progbits alloc noexec nowrite align=16
no_lm_msg: db "ticklab: this CPU has no long mode (x86-64); stopping", 13, 10, 0
%define BOOT_HEAD '{"type":"boot","version":"', TICKLAB_VERSION, '","git":"', TICKLAB_GIT, '"'
no_lm_boot1: db BOOT_HEAD, ',"boot":"multiboot1","long_mode":false}', 0
no_lm_boot2: db BOOT_HEAD, ',"boot":"multiboot2","long_mode":false}', 0
no_lm_rest:
    db '{"type":"error","what":"cpu","detail":"this CPU has no long mode (x86-64); ticklab runs only in 64-bit mode"}', 0
    db '{"type":"end","records":2,"status":"failed","reason":"no long mode"}', 0
align 16
early_gdt:
    dq 0
    dq 0x00AF9A000000FFFF                ; 0x08: 64-bit code
    dq 0x00CF92000000FFFF                ; 0x10: data
    dq 0x00CF9A000000FFFF                ; 0x18: 32-bit code (the early IDT's gate)
early_gdt_end:
la57_msg: db "ticklab: the firmware left 5-level paging on; this kernel needs 4-level; stopping", 13, 10, 0
la57_boot: db BOOT_HEAD, ',"boot":"efi","firmware":"uefi"}', 0
la57_rest:
    db '{"type":"error","what":"paging","detail":"the firmware left 5-level paging (CR4.LA57) on, which cannot be turned off in long mode; ticklab builds 4-level page tables"}', 0
    db '{"type":"end","records":2,"status":"failed","reason":"5-level paging left on"}', 0

section .boot.data progbits alloc noexec write align=16
; Pointers whose base is written at run time (where the image is).
early_gdt_ptr:
    dw early_gdt_end - early_gdt - 1
    dd 0
align 16
early_gdt_ptr64:                        ; lgdt in long mode reads a 64-bit base
    dw early_gdt_end - early_gdt - 1
    dq 0
align 16
early_idt32_ptr:
    dw 3 * 8 - 1                        ; vectors 0..2: only the NMI's gate is present
    dd 0
align 16
early_idt64_ptr:
    dw 3 * 16 - 1
    dq 0
align 16
early_idt32: times 3 dq 0
align 16
early_idt64: times 3 * 2 dq 0
align 8
global kernel_load_delta
kernel_load_delta: dq 0                 ; load - link: kernel/arch/paging.c
early_magic: dd 0
early_s1: dd 0
early_s2: dd 0
early_has_cpuid: db 0

section .boot.bss nobits alloc noexec write align=4096
early_pml4: resb 4096
early_pdpt: resb 4096
early_pdpt_hi: resb 4096
early_pd:   resb 4096 * 4
early_pd0_win: resb 4096                ; the low half's first GiB when delta is not 0
early_pt:   resb 4096 * (WINDOW_END >> 21)
