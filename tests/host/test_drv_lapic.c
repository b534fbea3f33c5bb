/* tests/host/test_drv_lapic.c - drivers/lapic.c on the LAPIC model (SDM vol. 3A ch. 11:
 * xAPIC MMIO and x2APIC MSRs 0x800 + offset / 16, the ID register's two layouts, EOI, ESR) and
 * drivers/ioapic.c on a small I/O APIC model defined here (82093AA data sheet: IOREGSEL at
 * +0x00 selects a register, IOWIN at +0x10 reads or writes it; ID bits 27:24, version
 * register with the maximum redirection entry in bits 23:16, 64-bit redirection entries as
 * two 32-bit registers 0x10 + 2 * pin and + 1, reset masked). */
#include "ticklab/ioapic.h"
#include "ticklab/lapic.h"
#include "fake/fake.h"
#include "ticklab/errno.h"
#include "test.h"

/* The drivers' state, as the kernel keeps it. */
static struct lapic the_apic;

#define VEC 0x40
#define SPURIOUS 0xFF
#define ERRVEC 0xFE

static struct fake_irq_log irqs;
static struct lapic_info li;

static void machine(bool x2apic_cpu)
{
    fake_reset();
    memset(&irqs, 0, sizeof(irqs));
    fake_set_irq_handler(fake_irq_log_handler, &irqs);
    if (x2apic_cpu)
        fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_X2APIC, true);
}

/* ---- LAPIC ------------------------------------------------------------------------------- */

/* xAPIC: the ID lives in bits 31:24 of the ID register; version 0x14 with max LVT entry 5
 * (6 entries); the base from IA32_APIC_BASE; software-enabled with the spurious vector. */
TEST(drv_lapic_xapic_init_and_id_layout)
{
    machine(false);
    fake_lapic_set_id(5);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, false, SPURIOUS, ERRVEC, &li) == 0);
    CHECK(!li.x2apic);
    CHECK_EQ_U64(li.id, 5);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_ID), 5u << 24);
    CHECK_EQ_U64(li.base_phys, FAKE_LAPIC_BASE);
    CHECK_EQ_U64(li.version, 0x14);
    CHECK_EQ_U64(li.max_lvt, 6);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_SVR), SVR_ENABLE | SPURIOUS);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_LVT_TIMER), LVT_MASKED);
    /* regression (lapic_init wrote the LVTs before enabling in SVR): the error LVT must
     * come out unmasked */
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_LVT_ERROR), ERRVEC);
}

/* What a PC's firmware leaves: the APIC enabled, LINT0 as ExtINT, LINT1 as NMI, the thermal
 * and performance-counter entries armed at vectors ticklab never installs, and two interrupts
 * it took and never ended. lapic_init() records every entry, masks every one, ends both
 * in-service vectors with an EOI each (left in service, 0x3f would block the PIT's 0x30 and
 * the RTC's 0x38 for the whole run) and counts the request still waiting. */
TEST(lapic_init_masks_every_lvt_and_ends_stale_in_service_interrupts)
{
    machine(false);
    const uint32_t fw[6] = { 0x20030, 0xFA, 0x400, 0x8700, 0x8400, 0xFE };
    const unsigned isr[] = { 0x3F, 0x51, 0 }, irr[] = { 0x61, 0 };
    fake_lapic_firmware_left(0x1FF, fw, isr, irr);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, false, SPURIOUS, ERRVEC, &li) == 0);
    CHECK_EQ_U64(li.firmware_svr, 0x1FF);
    CHECK_EQ_U64(li.firmware_lvt[LVT_THERMAL_E], 0xFA);
    CHECK_EQ_U64(li.firmware_lvt[LVT_PERF_E], 0x400);
    CHECK_EQ_U64(li.firmware_lvt[LVT_LINT1_E], 0x8400);
    CHECK(!li.lvt_present[LVT_CMCI_E]);          /* 6 entries: no CMCI register to touch */
    for (unsigned i = 0; i < 5; i++)             /* timer, thermal, perf, LINT0, LINT1 */
        CHECK_EQ_U64(fake_lapic_lvt(i) & LVT_MASKED, LVT_MASKED);
    CHECK_EQ_U64(fake_lapic_lvt(5), ERRVEC);     /* the error entry, at its own vector */
    CHECK_EQ_U64(li.stale_in_service, 2);
    CHECK(li.stale_drained);
    CHECK_EQ_U64(fake_lapic_highest_in_service(), (uint64_t)-1);
    CHECK_EQ_U64(li.stale_requested, 1);
    CHECK_EQ_U64(li.stale_irr[0x61 / 32], 1u << (0x61 % 32));
    CHECK_EQ_U64(fake_stats.faults, 0);
}

/* x2APIC: the ID is the whole 32-bit register (IDs above 255 exist), every register is an
 * MSR at 0x800 + offset / 16, and the MMIO page is gone. */
TEST(drv_lapic_x2apic_registers_are_msrs_and_id_is_32_bits)
{
    machine(true);
    fake_lapic_set_id(0x12345);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, true, SPURIOUS, ERRVEC, &li) == 0);
    CHECK(li.x2apic);
    CHECK_EQ_U64(li.id, 0x12345);
    CHECK_EQ_U64(rdmsr(0x802), 0x12345);             /* 0x800 + 0x020 / 16 */
    uint64_t msr_reads = fake_stats.msr_reads, mmio_reads = fake_stats.mmio_reads;
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_VERSION), 0x00050014u);
    CHECK_EQ_U64(fake_stats.msr_reads - msr_reads, 1);
    CHECK_EQ_U64(fake_stats.mmio_reads, mmio_reads);
    CHECK_EQ_U64(rdmsr(0x80F), SVR_ENABLE | SPURIOUS);   /* SVR 0x0F0 -> 0x80F */
    CHECK_EQ_U64(mmio_read32(FAKE_LAPIC_BASE + LAPIC_VERSION), 0xFFFFFFFFu);
    uint64_t writes = fake_stats.msr_writes;
    lapic_write(&the_apic, LAPIC_TPR, 0x20);
    CHECK_EQ_U64(fake_stats.msr_writes - writes, 1);
    CHECK_EQ_U64(rdmsr(0x808), 0x20);                /* TPR 0x080 -> 0x808 */
}

/* EOI clears the highest in-service vector (SDM 11.8.5); in x2APIC mode the EOI MSR only
 * takes 0 (anything else #GPs, which the model makes a test failure). */
static void check_eoi(bool x2apic)
{
    machine(x2apic);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, x2apic, SPURIOUS, ERRVEC, &li) == 0);
    lapic_write(&the_apic, LAPIC_TIMER_DIV, 0xB);               /* divide 1 */
    lapic_write(&the_apic, LAPIC_LVT_TIMER, VEC);
    lapic_write(&the_apic, LAPIC_TIMER_INIT, 1000);
    irq_enable();
    fake_run_for_ns(2000);
    REQUIRE(irqs.n == 1);
    CHECK(lapic_in_service(&the_apic, VEC));
    CHECK(fake_lapic_in_service(VEC));
    lapic_eoi(&the_apic);
    CHECK(!lapic_in_service(&the_apic, VEC));
    CHECK_EQ_U64(fake_lapic_stats()->eois, 1);
    CHECK_EQ_U64(fake_lapic_stats()->eoi_without_isr, 0);
}

TEST(drv_lapic_eoi_xapic)
{
    check_eoi(false);
}

TEST(drv_lapic_eoi_x2apic)
{
    check_eoi(true);
}

/* ESR: a write latches the errors collected since the last write; an LVT vector below 16 is
 * "received illegal vector" (bit 6). */
TEST(drv_lapic_error_status_latched_by_write)
{
    machine(false);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, false, SPURIOUS, ERRVEC, &li) == 0);
    CHECK_EQ_U64(lapic_error_status(&the_apic), 0);
    lapic_write(&the_apic, LAPIC_TIMER_DIV, 0xB);
    lapic_write(&the_apic, LAPIC_LVT_TIMER, 5);
    lapic_write(&the_apic, LAPIC_TIMER_INIT, 100);
    fake_run_for_ns(1000);
    CHECK_EQ_U64(lapic_error_status(&the_apic), 0x40);
    CHECK_EQ_U64(lapic_error_status(&the_apic), 0);
}

/* MADT LAPIC NMI entry: NMI delivery on the LINT pin, active low for INTI polarity 11. */
TEST(drv_lapic_set_nmi_polarity)
{
    machine(false);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, false, SPURIOUS, ERRVEC, &li) == 0);
    lapic_set_nmi(&the_apic, 1, 0x3);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_LVT_LINT1), LVT_NMI | LVT_ACTIVE_LOW);
    lapic_set_nmi(&the_apic, 0, 0x1);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_LVT_LINT0), LVT_NMI);
}

/* xAPIC self IPI goes through the ICR with the "self" shorthand (the model stores it). */
TEST(drv_lapic_self_ipi_xapic_uses_icr_shorthand)
{
    machine(false);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, false, SPURIOUS, ERRVEC, &li) == 0);
    lapic_self_ipi(&the_apic, 0x50);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_ICR_LO), ICR_SELF | 0x50);
    CHECK_EQ_U64(lapic_read(&the_apic, LAPIC_ICR_HI), 0);
}

/* x2APIC: the ICR is an MSR, and an MSR write is not serialising on Intel, so the stores
 * before an IPI (what it announces) could still be in flight when it lands: a fence comes
 * first, for every IPI, the self IPI included (SDM 11.12.3). */
TEST(drv_lapic_x2apic_ipi_is_fenced)
{
    machine(true);
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, true, SPURIOUS, ERRVEC, &li) == 0);
    uint64_t fences = fake_stats.fences, writes = fake_stats.msr_writes;
    lapic_self_ipi(&the_apic, 0x50);
    CHECK_EQ_U64(fake_stats.fences - fences, 1);
    CHECK_EQ_U64(fake_stats.msr_writes - writes, 1);
    machine(false);                               /* xAPIC: MMIO stores stay in order */
    REQUIRE(lapic_init(&the_apic, FAKE_LAPIC_BASE, false, SPURIOUS, ERRVEC, &li) == 0);
    fences = fake_stats.fences;
    lapic_self_ipi(&the_apic, 0x50);
    CHECK_EQ_U64(fake_stats.fences - fences, 0);
}

/* ---- a small I/O APIC model --------------------------------------------------------------- */

#define IOAPIC_BASE 0xFEC00000ull
#define IOAPIC_PINS 24
#define SNAP_MAX    64

static struct {
    uint32_t sel, id, ver;
    uint64_t redir[IOAPIC_PINS];
    unsigned watch_pin;               /* every write to this pin's entry is snapshotted */
    unsigned nsnap;
    uint64_t snap[SNAP_MAX];
} io;

static uint32_t ioapic_reg_read(uint32_t reg)
{
    if (reg == 0x00)
        return io.id;
    if (reg == 0x01)
        return io.ver;
    if (reg >= 0x10 && reg < 0x10 + 2 * IOAPIC_PINS) {
        uint64_t e = io.redir[(reg - 0x10) / 2];
        return (uint32_t)(reg & 1 ? e >> 32 : e);
    }
    return 0;
}

static void ioapic_reg_write(uint32_t reg, uint32_t v)
{
    if (reg == 0x00) {
        io.id = v & 0x0F000000u;
        return;
    }
    if (reg < 0x10 || reg >= 0x10 + 2 * IOAPIC_PINS)
        return;                                       /* version, arbitration: read-only */
    unsigned pin = (reg - 0x10) / 2;
    uint64_t e = io.redir[pin];
    if (reg & 1)
        e = (e & 0xFFFFFFFFull) | (uint64_t)(v & 0xFF000000u) << 32;
    else
        e = (e & ~0xFFFFFFFFull) | (v & ~(1u << 12 | 1u << 14));   /* status bits are RO */
    io.redir[pin] = e;
    if (pin == io.watch_pin && io.nsnap < SNAP_MAX)
        io.snap[io.nsnap++] = e;
}

static uint64_t ioapic_mmio_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    if (size != 4)
        fake_fault("IOAPIC: %u-byte read (32-bit only)", size);
    if (off == 0x00)
        return io.sel;
    if (off == 0x10)
        return ioapic_reg_read(io.sel);
    return 0;
}

static void ioapic_mmio_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    if (size != 4)
        fake_fault("IOAPIC: %u-byte write (32-bit only)", size);
    if (off == 0x00)
        io.sel = (uint32_t)v & 0xFF;
    else if (off == 0x10)
        ioapic_reg_write(io.sel, (uint32_t)v);
}

static const struct fake_io_ops ioapic_ops = { ioapic_mmio_read, ioapic_mmio_write };

/* Power-on: every entry masked (bit 16); version 0x20, 24 entries; ID 2. */
static void ioapic_machine(unsigned entries)
{
    fake_reset();
    memset(&io, 0, sizeof(io));
    io.id = 2u << 24;
    io.ver = (entries - 1) << 16 | 0x20;
    io.watch_pin = UINT32_MAX;
    for (unsigned i = 0; i < IOAPIC_PINS; i++)
        io.redir[i] = 1ull << 16;
    fake_mmio_register(IOAPIC_BASE, 0x20, &ioapic_ops, NULL);
}

static struct ioapic ioa;

TEST(drv_ioapic_init_reads_id_version_and_masks_every_pin)
{
    ioapic_machine(IOAPIC_PINS);
    io.redir[9] = 0x31;                              /* firmware left pin 9 live */
    REQUIRE(ioapic_init(&ioa, IOAPIC_BASE, 0) == 0);
    CHECK_EQ_U64(ioa.pins, 24);
    CHECK_EQ_U64(ioa.version, 0x20);
    CHECK_EQ_U64(ioa.id, 2);
    CHECK_EQ_U64(ioa.gsi_base, 0);
    for (unsigned pin = 0; pin < IOAPIC_PINS; pin++)
        CHECK(io.redir[pin] & (1ull << 16));
    CHECK_EQ_U64(io.redir[9] & 0xFF, 0x31);          /* masked, otherwise untouched */
}

/* Nothing at the address: the window reads all ones. A version register claiming fewer than
 * 16 entries is no PC I/O APIC either. */
TEST(drv_ioapic_absent_or_implausible_is_enodev)
{
    fake_reset();
    CHECK_EQ_I64(ioapic_init(&ioa, IOAPIC_BASE, 0), -ENODEV);
    ioapic_machine(4);
    CHECK_EQ_I64(ioapic_init(&ioa, IOAPIC_BASE, 0), -ENODEV);
}

/* Redirection entry (82093AA 3.2.4): vector 7:0, polarity 13 (1 = low), trigger 15
 * (1 = level), mask 16, destination 63:56. Routed masked; unmask clears only bit 16. */
TEST(drv_ioapic_route_mask_unmask)
{
    ioapic_machine(IOAPIC_PINS);
    REQUIRE(ioapic_init(&ioa, IOAPIC_BASE, 0) == 0);
    REQUIRE(ioapic_route(&ioa, 2, 0x30, 0, TRIGGER_EDGE, POLARITY_HIGH) == 0);
    CHECK_EQ_U64(io.redir[2], 0x30 | 1ull << 16);
    REQUIRE(ioapic_route(&ioa, 11, 0x3B, 3, TRIGGER_LEVEL, POLARITY_LOW) == 0);
    CHECK_EQ_U64(io.redir[11], 0x3B | 1ull << 13 | 1ull << 15 | 1ull << 16 | 3ull << 56);
    CHECK_EQ_U64(ioapic_read_entry(&ioa, 11), io.redir[11]);
    ioapic_unmask(&ioa, 11);
    CHECK_EQ_U64(io.redir[11], 0x3B | 1ull << 13 | 1ull << 15 | 3ull << 56);
    ioapic_mask(&ioa, 11);
    CHECK_EQ_U64(io.redir[11], 0x3B | 1ull << 13 | 1ull << 15 | 1ull << 16 | 3ull << 56);
}

TEST(drv_ioapic_route_refuses_bad_pin_or_vector)
{
    ioapic_machine(IOAPIC_PINS);
    REQUIRE(ioapic_init(&ioa, IOAPIC_BASE, 0) == 0);
    CHECK_EQ_I64(ioapic_route(&ioa, 24, 0x30, 0, TRIGGER_EDGE, POLARITY_HIGH), -EINVAL);
    CHECK_EQ_I64(ioapic_route(&ioa, 0, 0x1F, 0, TRIGGER_EDGE, POLARITY_HIGH), -EINVAL);
}

/* Re-routing a live pin writes the entry as two halves; at no point may it be unmasked with
 * one half old and one half new (an interrupt would go to a wrong vector or CPU). */
TEST(drv_ioapic_reroute_never_live_half_written)
{
    const uint64_t old = 0x31 | 1ull << 56, new_low = 0x45, new_dest = 7;

    ioapic_machine(IOAPIC_PINS);
    REQUIRE(ioapic_init(&ioa, IOAPIC_BASE, 0) == 0);
    io.redir[5] = old;                               /* live: unmasked */
    io.watch_pin = 5;
    REQUIRE(ioapic_route(&ioa, 5, new_low, new_dest, TRIGGER_EDGE, POLARITY_HIGH) == 0);
    ioapic_unmask(&ioa, 5);
    REQUIRE(io.nsnap >= 2);
    for (unsigned i = 0; i < io.nsnap; i++) {
        uint64_t e = io.snap[i];
        if (e & (1ull << 16))
            continue;
        CHECK_EQ_U64(e, new_low | new_dest << 56);   /* live only when whole */
    }
    CHECK_EQ_U64(io.redir[5], new_low | new_dest << 56);
}
