/* tests/host/fake/cpuid.c - the CPUID table of the fake CPU. See fake.h.
 *
 * The default describes a plausible Intel part that QEMU's TCG would also show: vendor
 * GenuineIntel, family 6, TSC with RDTSCP and the invariant-TSC bit, an xAPIC, ARAT; no
 * TSC-deadline, no x2APIC, no leaves 0x15/0x16 (so a TSC driver has to calibrate). The brand
 * string says it is the fake, so a log never passes it off as real hardware.
 * Simplified: a leaf above the maximum reads zeros (a real Intel CPU repeats the highest
 * basic leaf); leaf 1 EBX reports APIC ID 0 even if the LAPIC model's ID is changed. */
#include "fake.h"

#include <string.h>

#define MAX_ENTRIES 48

struct entry {
    uint32_t leaf, subleaf;
    struct cpuid_regs r;
};

static struct entry table[MAX_ENTRIES];
static int nentries;

static struct entry *find(uint32_t leaf, uint32_t subleaf)
{
    for (int i = 0; i < nentries; i++)
        if (table[i].leaf == leaf && table[i].subleaf == subleaf)
            return &table[i];
    return NULL;
}

static void put(uint32_t leaf, uint32_t subleaf, struct cpuid_regs r)
{
    struct entry *e = find(leaf, subleaf);

    if (!e) {
        if (nentries == MAX_ENTRIES) {
            fake_fault("CPUID table full");
            return;
        }
        e = &table[nentries++];
    }
    *e = (struct entry){ leaf, subleaf, r };
}

/* Raises leaf 0 / 0x80000000 EAX so a driver that checks the maximum sees the new leaf. */
static void raise_max(uint32_t leaf)
{
    uint32_t range = leaf & 0xF0000000u;
    struct entry *max = find(range, FAKE_CPUID_ANY);

    if (range != 0 && range != 0x80000000u && range != 0x40000000u)
        return;
    if (!max) {
        put(range, FAKE_CPUID_ANY, (struct cpuid_regs){ leaf, 0, 0, 0 });
        return;
    }
    if (max->r.eax < leaf)
        max->r.eax = leaf;
}

static void put_brand(const char *s)
{
    uint32_t w[12] = { 0 };

    memcpy(w, s, strlen(s) < 47 ? strlen(s) : 47);
    for (int i = 0; i < 3; i++)
        put(0x80000002u + i, FAKE_CPUID_ANY,
            (struct cpuid_regs){ w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3] });
}

/* ---- MSR 0x8B: the microcode revision -------------------------------------------------- */

static struct {
    enum fake_ucode kind;
    uint32_t revision;
    uint64_t msr;            /* what a read returns now */
} ucode;

static int ucode_read(void *ctx, uint32_t msr, uint64_t *v)
{
    (void)ctx, (void)msr;
    if (ucode.kind == FAKE_UCODE_ABSENT)
        return -1;
    *v = ucode.kind == FAKE_UCODE_AMD ? ucode.revision : ucode.msr;
    return 0;
}

static int ucode_write(void *ctx, uint32_t msr, uint64_t v)
{
    (void)ctx, (void)msr;
    if (ucode.kind != FAKE_UCODE_INTEL)
        return -1;
    ucode.msr = v;
    return 0;
}

static const struct fake_msr_ops ucode_ops = { ucode_read, ucode_write };

void fake_cpuid_set_microcode(enum fake_ucode kind, uint32_t revision)
{
    ucode.kind = kind;
    ucode.revision = revision;
    ucode.msr = 0x5A5A5A5Aull;   /* firmware's leftover: not the revision */
}

void fake_cpuid_executed(uint32_t leaf)
{
    if (leaf == 1 && ucode.kind == FAKE_UCODE_INTEL)
        ucode.msr = (uint64_t)ucode.revision << 32;
}

void fake_cpuid_reset(void)
{
    fake_cpuid_set_microcode(FAKE_UCODE_INTEL, 0x1f);
    fake_msr_register(0x8B, 1, &ucode_ops, NULL);
    nentries = 0;
    /* "GenuineIntel" is EBX, EDX, ECX */
    put(0x0, FAKE_CPUID_ANY, (struct cpuid_regs){ 0xD, 0x756e6547, 0x6c65746e, 0x49656e69 });
    /* family 6 model 0x2C stepping 2; CLFLUSH line 8 qwords, 1 logical CPU, APIC ID 0;
     * ECX: SSE3, SSSE3, CX16, SSE4.1, SSE4.2, POPCNT; EDX: FPU..SSE2 incl. TSC, MSR, APIC */
    put(0x1, FAKE_CPUID_ANY,
        (struct cpuid_regs){ 0x000206C2, 0x00010800, 0x00982201, 0x078BFBFF });
    put(0x6, FAKE_CPUID_ANY, (struct cpuid_regs){ 1u << FAKE_CPUID6_EAX_ARAT, 0, 0, 0 });
    put(0x80000000u, FAKE_CPUID_ANY, (struct cpuid_regs){ 0x80000008u, 0, 0, 0 });
    /* LAHF; SYSCALL, NX, RDTSCP, LM */
    put(0x80000001u, FAKE_CPUID_ANY,
        (struct cpuid_regs){ 0, 0, 0x1,
                             (1u << 11) | (1u << 20) | (1u << FAKE_CPUID80000001_EDX_RDTSCP) |
                                 (1u << 29) });
    put_brand("ticklab fake Intel-like CPU @ 2.10GHz");
    put(0x80000007u, FAKE_CPUID_ANY,
        (struct cpuid_regs){ 0, 0, 0, 1u << FAKE_CPUID80000007_EDX_INVTSC });
    put(0x80000008u, FAKE_CPUID_ANY, (struct cpuid_regs){ 0x3028, 0, 0, 0 });   /* 40/48 bits */
}

void fake_cpuid_set(uint32_t leaf, uint32_t subleaf, struct cpuid_regs regs)
{
    put(leaf, subleaf, regs);
    if ((leaf & 0x0FFFFFFFu) != 0)
        raise_max(leaf);
}

void fake_cpuid_remove(uint32_t leaf, uint32_t subleaf)
{
    struct entry *e = find(leaf, subleaf);

    if (e)
        *e = table[--nentries];
}

void fake_cpuid_set_bit(uint32_t leaf, enum fake_cpuid_reg reg, unsigned bit, bool on)
{
    struct entry *e = find(leaf, FAKE_CPUID_ANY);
    struct cpuid_regs r = e ? e->r : (struct cpuid_regs){ 0, 0, 0, 0 };
    uint32_t *w = reg == FAKE_EAX ? &r.eax : reg == FAKE_EBX ? &r.ebx
                : reg == FAKE_ECX ? &r.ecx : &r.edx;

    if (on)
        *w |= 1u << bit;
    else
        *w &= ~(1u << bit);
    fake_cpuid_set(leaf, FAKE_CPUID_ANY, r);
}

struct cpuid_regs fake_cpuid_lookup(uint32_t leaf, uint32_t subleaf)
{
    struct entry *e = find(leaf, subleaf);

    if (!e)
        e = find(leaf, FAKE_CPUID_ANY);
    return e ? e->r : (struct cpuid_regs){ 0, 0, 0, 0 };
}
