/* boot/efi/kernel_image.S - the kernel ELF, whole, inside ticklab.efi (boot/efi/kernel.c
 * reads it). KERNEL_ELF is the path of the stripped copy the Makefile makes. */
    .section .rodata.kernel, "a"
    .balign 4096
    .globl ticklab_kernel_elf, ticklab_kernel_elf_end
ticklab_kernel_elf:
    .incbin KERNEL_ELF
ticklab_kernel_elf_end:
    .section .note.GNU-stack, "", @progbits
