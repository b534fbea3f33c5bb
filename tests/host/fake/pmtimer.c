/* tests/host/fake/pmtimer.c - see pmtimer.h. */
#include "fake.h"

static const struct vrate pm_rate = { FAKE_PMTIMER_HZ, 1000000000u };

static struct {
    bool present, wide, stuck;
    uint16_t port;
    uint64_t base, base_ns;   /* the counter read base at base_ns */
} pm;

uint32_t fake_pmtimer_value(void)
{
    uint64_t v = pm.base;

    if (!pm.stuck)
        v += vrate_ticks(pm_rate, vclock_now_ns() - pm.base_ns);
    return (uint32_t)(pm.wide ? v : v & 0xFFFFFF);
}

static void rebase(uint32_t value)
{
    pm.base = value;
    pm.base_ns = vclock_now_ns();
}

static uint64_t pm_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    (void)size;
    return fake_pmtimer_value() >> (8 * off);
}

static void pm_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)off, (void)size, (void)v;   /* read-only register */
}

static const struct fake_io_ops pm_ops = { pm_read, pm_write };

void fake_pmtimer_set_port(uint16_t port)
{
    if (pm.present)
        fake_port_unregister(pm.port);
    pm.port = port;
    pm.present = fake_port_register(port, 4, &pm_ops, NULL) == 0;
}

void fake_pmtimer_remove(void)
{
    if (pm.present)
        fake_port_unregister(pm.port);
    pm.present = false;
}

void fake_pmtimer_set_32bit(bool on)
{
    uint32_t now = fake_pmtimer_value();

    pm.wide = on;
    rebase(now);
}

void fake_pmtimer_set_value(uint32_t value)
{
    rebase(value);
}

void fake_pmtimer_set_stuck(bool stuck)
{
    uint32_t now = fake_pmtimer_value();

    pm.stuck = stuck;
    rebase(now);
}

void fake_pmtimer_reset(void)
{
    pm.present = pm.wide = pm.stuck = false;
    pm.base = pm.base_ns = 0;
    fake_pmtimer_set_port(FAKE_PMTIMER_PORT);
}
