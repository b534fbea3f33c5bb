/* tests/host/test_models_core.c - the fake machine's core: the virtual clock, access costs,
 * the empty bus, MSRs, CPUID, interrupt delivery points and cpu_halt(). */
#include "fake/fake.h"
#include "test.h"

static struct fake_irq_log irqlog;

static void reset_with_log(void)
{
    fake_reset();
    memset(&irqlog, 0, sizeof(irqlog));
    fake_set_irq_handler(fake_irq_log_handler, &irqlog);
}

/* A test event: raises line `line` (if >= 0) and notes when it fired. */
struct probe {
    struct vclock_event ev;
    int line;
    uint64_t fired_ns[8];
    unsigned fired;
    int *order, *norder, id;
};

static void probe_fire(void *ctx)
{
    struct probe *p = ctx;

    if (p->fired < 8)
        p->fired_ns[p->fired] = vclock_now_ns();
    p->fired++;
    if (p->order)
        p->order[(*p->norder)++] = p->id;
    if (p->line >= 0)
        fake_irq_raise(p->line);
}

static void probe_init(struct probe *p, int line)
{
    *p = (struct probe){ .line = line };
    vclock_event_init(&p->ev, "probe", probe_fire, p);
}

TEST(models_vclock_fires_events_in_time_order)
{
    static struct probe p[4];
    int order[4], norder = 0;

    fake_reset();
    for (int i = 0; i < 4; i++) {
        probe_init(&p[i], -1);
        p[i].order = order;
        p[i].norder = &norder;
        p[i].id = i;
    }
    vclock_event_arm(&p[0].ev, 300);
    vclock_event_arm(&p[1].ev, 100);
    vclock_event_arm(&p[2].ev, 200);
    vclock_event_arm(&p[3].ev, 200);   /* same time, armed later: fires after p[2] */
    CHECK_EQ_U64(vclock_next_due_ns(), 100);
    vclock_advance_ns(250);
    CHECK_EQ_U64(vclock_now_ns(), 250);
    CHECK_EQ_I64(norder, 3);
    vclock_advance_ns(1000);
    REQUIRE(norder == 4);
    CHECK_EQ_I64(order[0], 1);
    CHECK_EQ_I64(order[1], 2);
    CHECK_EQ_I64(order[2], 3);
    CHECK_EQ_I64(order[3], 0);
    CHECK_EQ_U64(p[0].fired_ns[0], 300);
    CHECK_EQ_U64(p[3].fired_ns[0], 200);
    CHECK_EQ_U64(vclock_next_due_ns(), VCLOCK_NEVER);
}

TEST(models_vrate_is_exact_over_long_spans)
{
    struct vrate pit = vrate_hz(1193182);

    /* 1000 periods of 1193 clocks: 1,193,000 / 1,193,182 s = 999,847,466.69 ns */
    CHECK_EQ_U64(vrate_ns_for(pit, 1193000), 999847467);
    CHECK_EQ_U64(vrate_ticks(pit, 999847467), 1193000);
    CHECK_EQ_U64(vrate_ticks(pit, 999847466), 1192999);
    CHECK_EQ_U64(vrate_ticks((struct vrate){ 1000000, 10000000 }, 1000000000), 100000000);
}

TEST(models_each_access_costs_virtual_time)
{
    fake_reset();
    (void)inb(0x80);
    CHECK_EQ_U64(vclock_now_ns(), 1000);
    (void)mmio_read32(0xFED000F0);
    CHECK_EQ_U64(vclock_now_ns(), 1100);
    (void)rdtsc();
    CHECK_EQ_U64(vclock_now_ns(), 1120);
    cpu_relax();
    CHECK_EQ_U64(vclock_now_ns(), 1130);
    (void)rdmsr(0x10);
    CHECK_EQ_U64(vclock_now_ns(), 1230);
    (void)cpuid(0, 0);
    CHECK_EQ_U64(vclock_now_ns(), 1330);
    fake_cost.port_ns = 500;
    outb(0x80, 0);
    CHECK_EQ_U64(vclock_now_ns(), 1830);
    CHECK_EQ_U64(fake_stats.port_reads, 1);
    CHECK_EQ_U64(fake_stats.port_writes, 1);
    CHECK_EQ_U64(fake_stats.rdtsc_calls, 1);
}

/* STYLE rule 5: a wait bounded by the TSC ends even if nothing else happens. */
TEST(models_tsc_bounded_poll_terminates)
{
    uint64_t end;
    long spins = 0;

    fake_reset();
    end = rdtsc() + 2100000;   /* 1 ms at 2.1 GHz */
    while (rdtsc() < end)
        cpu_relax(), spins++;
    CHECK(vclock_now_ns() >= 1000000 && vclock_now_ns() < 1000100);
    CHECK_EQ_I64(spins, 1000000 / 30);
}

TEST(models_unknown_port_reads_like_an_empty_bus)
{
    fake_reset();
    CHECK_EQ_U64(inb(0x1234), 0xFF);
    CHECK_EQ_U64(inw(0x1234), 0xFFFF);
    CHECK_EQ_U64(inl(0x1234), 0xFFFFFFFFu);
    outb(0x1234, 1);
    CHECK_EQ_U64(fake_stats.unknown_port_reads, 3);
    CHECK_EQ_U64(fake_stats.unknown_port_writes, 1);
    CHECK_EQ_U64(fake_stats.faults, 0);
}

TEST(models_unknown_mmio_reads_all_ones)
{
    fake_reset();
    CHECK_EQ_U64(mmio_read32(0x10000000), 0xFFFFFFFFu);
    CHECK_EQ_U64(mmio_read64(0x10000008), UINT64_MAX);
    mmio_write32(0x10000000, 0);
    CHECK_EQ_U64(fake_stats.unknown_mmio_reads, 2);
    CHECK_EQ_U64(fake_stats.unknown_mmio_writes, 1);
}

TEST(models_unknown_msr_is_a_gp)
{
    uint64_t v = 7;

    fake_reset();
    CHECK_EQ_I64(rdmsr_safe(0xCE, &v), -1);
    CHECK_EQ_U64(v, 7);
    CHECK_EQ_U64(fake_stats.faults, 0);   /* rdmsr_safe is the sanctioned probe */
    fake_faults_fatal(false);
    CHECK_EQ_U64(rdmsr(0xCE), 0);
    CHECK_EQ_U64(fake_stats.faults, 1);
    CHECK(strstr(fake_last_fault(), "0xce") != NULL);
    wrmsr(0xCE, 1);
    CHECK_EQ_U64(fake_stats.faults, 2);
    fake_msr_set_plain(0xCE, 0x1600);
    CHECK_EQ_I64(rdmsr_safe(0xCE, &v), 0);
    CHECK_EQ_U64(v, 0x1600);
}

TEST(models_cpuid_default_and_toggled_features)
{
    struct cpuid_regs r;

    fake_reset();
    r = cpuid(0, 0);
    CHECK_EQ_U64(r.ebx, 0x756e6547);   /* "Genu" */
    CHECK_EQ_U64(r.eax, 0xD);
    r = cpuid(1, 0);
    CHECK(r.edx & (1u << FAKE_CPUID1_EDX_TSC));
    CHECK(!(r.ecx & (1u << FAKE_CPUID1_ECX_TSC_DEADLINE)));
    CHECK(!(r.ecx & (1u << FAKE_CPUID1_ECX_X2APIC)));
    CHECK(cpuid(0x80000007u, 0).edx & (1u << FAKE_CPUID80000007_EDX_INVTSC));
    CHECK_EQ_U64(cpuid(0x15, 0).ebx, 0);
    fake_cpuid_set_bit(1, FAKE_ECX, FAKE_CPUID1_ECX_TSC_DEADLINE, true);
    CHECK(cpuid(1, 0).ecx & (1u << FAKE_CPUID1_ECX_TSC_DEADLINE));
    CHECK(cpuid(1, 0).edx & (1u << FAKE_CPUID1_EDX_TSC));   /* other bits kept */
    fake_cpuid_set(0x15, 0, (struct cpuid_regs){ 2, 168, 25000000, 0 });
    CHECK_EQ_U64(cpuid(0, 0).eax, 0x15);
    CHECK_EQ_U64(cpuid(0x15, 0).ebx, 168);
    CHECK_EQ_U64(cpuid(0x15, 1).ebx, 0);   /* exact subleaf only */
}

TEST(models_irq_delivered_only_when_enabled)
{
    reset_with_log();
    fake_irq_raise(5);
    fake_run_for_ns(1000);
    CHECK_EQ_U64(irqlog.total, 0);
    CHECK(fake_irq_pending(5));
    irq_enable();
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK_EQ_I64(irqlog.e[0].line, 5);
    CHECK_EQ_I64(irqlog.e[0].vector, -1);
    CHECK(!fake_irq_pending(5));
    CHECK(fake_irq_enabled());   /* IRET set IF again */
    CHECK_EQ_U64(fake_irq_stats(5)->delivered, 1);
    fake_irq_raise(5);   /* IF=1 but no delivery point reached yet */
    CHECK_EQ_U64(irqlog.total, 1);
    fake_run_for_ns(0);
    CHECK_EQ_U64(irqlog.total, 2);
}

TEST(models_irq_second_raise_while_pending_is_coalesced)
{
    reset_with_log();
    fake_irq_raise(3);
    fake_irq_raise(3);
    irq_enable();
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK_EQ_U64(fake_irq_stats(3)->raised, 2);
    CHECK_EQ_U64(fake_irq_stats(3)->coalesced, 1);
    CHECK_EQ_U64(fake_irq_stats(3)->delivered, 1);
}

static bool if_seen_in_handler = true;

static void note_if(int line, void *ctx)
{
    (void)line, (void)ctx;
    if_seen_in_handler = fake_irq_enabled();
}

TEST(models_irq_handler_runs_with_interrupts_disabled)
{
    fake_reset();
    fake_set_irq_handler(note_if, NULL);
    fake_irq_raise(1);
    irq_enable();
    CHECK(!if_seen_in_handler);
    CHECK(fake_irq_enabled());
}

TEST(models_irq_restore_is_a_delivery_point)
{
    unsigned long flags;

    reset_with_log();
    irq_enable();
    flags = irq_save();
    CHECK(!fake_irq_enabled());
    fake_irq_raise(4);
    fake_run_for_ns(100);
    CHECK_EQ_U64(irqlog.total, 0);
    irq_restore(flags);
    CHECK_EQ_U64(irqlog.total, 1);
    irq_disable();
    flags = irq_save();
    fake_irq_raise(4);
    irq_restore(flags);   /* flags had IF clear: stays disabled */
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK(!fake_irq_enabled());
}

TEST(models_irq_masked_line_stays_pending)
{
    reset_with_log();
    fake_irq_mask(9, true);
    fake_irq_raise(9);
    irq_enable();
    fake_run_for_ns(1000);
    CHECK_EQ_U64(irqlog.total, 0);
    fake_irq_mask(9, false);
    fake_run_for_ns(0);
    CHECK_EQ_U64(irqlog.total, 1);
}

TEST(models_cpu_halt_advances_to_the_next_event)
{
    static struct probe p;

    reset_with_log();
    probe_init(&p, 3);
    vclock_event_arm(&p.ev, 5000000);
    irq_enable();
    cpu_halt();
    CHECK_EQ_U64(vclock_now_ns(), 5000000);
    CHECK_EQ_U64(irqlog.total, 1);
    CHECK_EQ_U64(irqlog.e[0].t_ns, 5000000);
    CHECK_EQ_U64(fake_stats.halt_stuck, 0);
}

TEST(models_cpu_halt_with_nothing_pending_is_bounded)
{
    fake_reset();
    fake_faults_fatal(false);
    irq_enable();
    cpu_halt();
    CHECK_EQ_U64(fake_stats.halt_stuck, 1);
    CHECK_EQ_U64(fake_stats.faults, 1);
    CHECK_EQ_U64(vclock_now_ns(), fake_cost.halt_max_ns);
    irq_disable();
    fake_irq_raise(2);
    cpu_halt();   /* IF=0: HLT would never wake, pending or not */
    CHECK_EQ_U64(fake_stats.halt_stuck, 2);
    CHECK_EQ_U64(fake_stats.faults, 2);
}

TEST(models_run_until_delivers_each_event_at_its_time)
{
    static struct probe a, b;

    reset_with_log();
    probe_init(&a, 3);
    probe_init(&b, 7);
    vclock_event_arm(&a.ev, 1000000);
    vclock_event_arm(&b.ev, 2000000);
    irq_enable();
    fake_run_until_ns(3000000);
    REQUIRE(irqlog.n == 2);
    CHECK_EQ_U64(irqlog.e[0].t_ns, 1000000);
    CHECK_EQ_I64(irqlog.e[0].line, 3);
    CHECK_EQ_U64(irqlog.e[1].t_ns, 2000000);
    CHECK_EQ_I64(irqlog.e[1].line, 7);
    CHECK_EQ_U64(vclock_now_ns(), 3000000);
}

TEST(models_async_mode_delivers_inside_a_poll_loop)
{
    static struct probe p;
    int spins = 0;

    reset_with_log();
    probe_init(&p, 3);
    vclock_event_arm(&p.ev, 1000);
    irq_enable();
    while (irqlog.total == 0 && spins < 1000)
        cpu_relax(), spins++;
    CHECK_EQ_I64(spins, 1000);   /* by default a PAUSE is not a delivery point */
    fake_irq_set_async(true);
    cpu_relax();
    CHECK_EQ_U64(irqlog.total, 1);
}

TEST(models_overlapping_registration_is_a_fault)
{
    static const struct fake_io_ops none = { NULL, NULL };

    fake_reset();
    fake_faults_fatal(false);
    CHECK_EQ_I64(fake_port_register(0x42, 2, &none, NULL), -1);   /* the PIT's */
    CHECK_EQ_U64(fake_stats.faults, 1);
    CHECK_EQ_I64(fake_port_register(0x300, 8, &none, NULL), 0);
}

static struct vclock_event selfish;

static void rearm_now(void *ctx)
{
    (void)ctx;
    vclock_event_arm(&selfish, vclock_now_ns());
}

/* A model bug that would spin forever at one instant is stopped and reported. */
TEST(models_vclock_event_that_never_lets_time_move_is_a_fault)
{
    fake_reset();
    fake_faults_fatal(false);
    vclock_event_init(&selfish, "selfish", rearm_now, NULL);
    vclock_event_arm(&selfish, 100);
    vclock_advance_ns(1000);
    CHECK_EQ_U64(fake_stats.faults, 1);
    CHECK(strstr(fake_last_fault(), "selfish") != NULL);
    CHECK_EQ_U64(vclock_now_ns(), 1000);
}
