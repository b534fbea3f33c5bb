/* kernel/arch/fault.c - see fault.h. */
#include "kernel/arch/fault.h"

#include "kernel/arch/cr.h"
#include "kernel/arch/mce.h"
#include "kernel/arch/paging.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/report/stop.h"

#define VEC_DF  8
#define VEC_MC  18
#define VEC_GP  13
#define VEC_PF  14

extern char rdmsr_safe_insn[], rdmsr_safe_fail[], wrmsr_safe_insn[], wrmsr_safe_fail[];

static const char *const names[32] = {
    "divide_error", "debug", "nmi", "breakpoint", "overflow", "bound_range",
    "invalid_opcode", "device_not_available", "double_fault", "coprocessor_overrun",
    "invalid_tss", "segment_not_present", "stack_fault", "general_protection", "page_fault",
    "reserved_15", "x87_fp", "alignment_check", "machine_check", "simd_fp", "virtualization",
    "control_protection", "reserved_22", "reserved_23", "reserved_24", "reserved_25",
    "reserved_26", "reserved_27", "hypervisor_injection", "vmm_communication", "security",
    "reserved_31",
};

static void put_regs(struct json *j, const struct trap_frame *tf)
{
    json_obj_open(j, "regs");
    json_hex(j, "rax", tf->rax);
    json_hex(j, "rbx", tf->rbx);
    json_hex(j, "rcx", tf->rcx);
    json_hex(j, "rdx", tf->rdx);
    json_hex(j, "rsi", tf->rsi);
    json_hex(j, "rdi", tf->rdi);
    json_hex(j, "rbp", tf->rbp);
    json_hex(j, "r8", tf->r8);
    json_hex(j, "r9", tf->r9);
    json_hex(j, "r10", tf->r10);
    json_hex(j, "r11", tf->r11);
    json_hex(j, "r12", tf->r12);
    json_hex(j, "r13", tf->r13);
    json_hex(j, "r14", tf->r14);
    json_hex(j, "r15", tf->r15);
    json_hex(j, "rflags", tf->rflags);
    json_hex(j, "cs", tf->cs);
    json_obj_close(j);
}

void fault_handle(struct trap_frame *tf)
{
    unsigned v = (unsigned)tf->vector;
    if (v == VEC_GP && tf->rip == (uint64_t)(uintptr_t)rdmsr_safe_insn) {
        tf->rip = (uint64_t)(uintptr_t)rdmsr_safe_fail;
        return;
    }
    if (v == VEC_GP && tf->rip == (uint64_t)(uintptr_t)wrmsr_safe_insn) {
        tf->rip = (uint64_t)(uintptr_t)wrmsr_safe_fail;
        return;
    }

    static int depth;
    if (++depth > 1) {
        /* A fault while reporting a fault: say nothing more, just stop. */
        stop_run(true, "fault while reporting a fault");
    }
    klog_panic();                 /* the log's backlog, then this, at once */
    uint64_t cr2 = read_cr2();
    const char *guard = (v == VEC_PF || v == VEC_DF) ? paging_guard_name(cr2) : 0;
    const char *cause = guard ? "stack_overflow" : v == VEC_MC ? "machine_check" : "exception";

    struct rec r;
    rec_begin(&r, "fault");
    json_u64(&r.j, "vector", v);
    json_str(&r.j, "name", v < 32 ? names[v] : "irq");
    json_str(&r.j, "cause", cause);
    if (guard)
        json_str(&r.j, "guard", guard);
    json_hex(&r.j, "error_code", tf->error_code);
    json_hex(&r.j, "rip", tf->rip);
    json_hex(&r.j, "rsp", tf->rsp);
    json_hex(&r.j, "cr2", cr2);
    if (v == VEC_MC)
        mce_fault_members(&r.j);
    put_regs(&r.j, tf);
    rec_emit(&r);
    kprintf("\n*** fault: vector %u (%s) at rip=%#llx cr2=%#llx%s%s\n", v,
            v < 32 ? names[v] : "irq", (unsigned long long)tf->rip,
            (unsigned long long)cr2, guard ? ": stack overflow into the guard page of stack " : "",
            guard ? guard : "");
    stop_run(true, guard ? "stack overflow"
                   : v == VEC_MC ? "uncorrected machine check (the fault record names the bank)"
                                 : "CPU exception");
}
