/* tests/host/fake/tsc.c - see tsc.h. The counter is base + ticks since base_ns; every rate
 * or value change rebases, so the value never jumps except where the test sets it. */
#include "fake.h"

#include "ticklab/cpuid.h"
#include "ticklab/tsc.h"

#define MSR_TSC     0x10
#define MSR_TSC_AUX 0xC0000103u
#define PPB_ONE     1000000000ll

static struct {
    uint64_t hz;
    int64_t err_ppb;
    uint64_t base, base_ns;
    uint32_t aux;
} tsc;

/* ticks per ns = hz * (1e9 + err_ppb) / 1e18 */
static struct vrate rate(void)
{
    return (struct vrate){ tsc.hz * (uint64_t)(PPB_ONE + tsc.err_ppb),
                           (uint64_t)PPB_ONE * (uint64_t)PPB_ONE };
}

uint64_t fake_tsc_read(void)
{
    return tsc.base + vrate_ticks(rate(), vclock_now_ns() - tsc.base_ns);
}

uint64_t fake_tsc_time_of(uint64_t value)
{
    uint64_t dt;

    if (value <= fake_tsc_read())
        return vclock_now_ns();
    dt = vrate_ns_for(rate(), value - tsc.base);
    return vclock_add_sat(tsc.base_ns, dt);
}

static void rebase(uint64_t value)
{
    tsc.base = value;
    tsc.base_ns = vclock_now_ns();
    fake_lapic_tsc_changed();
}

void fake_tsc_set_value(uint64_t value)
{
    rebase(value);
}

void fake_tsc_set_hz(uint64_t hz)
{
    uint64_t now = fake_tsc_read();

    if (hz == 0 || hz > 10000000000ull) {
        fake_fault("fake TSC: %" PRIu64 " Hz is outside 1 Hz..10 GHz", hz);
        return;
    }
    tsc.hz = hz;
    rebase(now);
}

void fake_tsc_set_error_ppb(int64_t err_ppb)
{
    uint64_t now = fake_tsc_read();

    if (err_ppb <= -100000000 || err_ppb >= 100000000) {
        fake_fault("fake TSC: error %" PRId64 " ppb is outside +-10%%", err_ppb);
        return;
    }
    tsc.err_ppb = err_ppb;
    rebase(now);
}

uint64_t fake_tsc_hz(void)
{
    return tsc.hz;
}

void fake_tsc_set_aux(uint32_t aux)
{
    tsc.aux = aux;
}

uint32_t fake_tsc_aux(void)
{
    return tsc.aux;
}

static int msr_read(void *ctx, uint32_t msr, uint64_t *v)
{
    (void)ctx;
    *v = msr == MSR_TSC ? fake_tsc_read() : tsc.aux;
    return 0;
}

static int msr_write(void *ctx, uint32_t msr, uint64_t v)
{
    (void)ctx;
    if (msr == MSR_TSC) {
        rebase(v);
    } else {
        if (v >> 32)
            return -1;   /* IA32_TSC_AUX bits 63:32 are reserved */
        tsc.aux = (uint32_t)v;
    }
    return 0;
}

static const struct fake_msr_ops tsc_msr_ops = { msr_read, msr_write };

void fake_tsc_reset(void)
{
    tsc.hz = FAKE_TSC_DEFAULT_HZ;
    tsc.err_ppb = 0;
    tsc.base = 0;
    tsc.base_ns = 0;
    tsc.aux = 0;
    fake_msr_register(MSR_TSC, 1, &tsc_msr_ops, NULL);
    fake_msr_register(MSR_TSC_AUX, 1, &tsc_msr_ops, NULL);
}

struct clocksource *fake_tsc_clocksource(void)
{
    static struct tsc t;
    const struct cpu_info ci = { .tsc = true, .invariant_tsc = true };
    return tsc_clocksource_init(&t, &ci);
}
