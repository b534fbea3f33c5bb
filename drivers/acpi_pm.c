/* drivers/acpi_pm.c - see acpi_pm.h. */
#include "ticklab/acpi_pm.h"

#include "ticklab/io.h"
#include "ticklab/errno.h"

static const struct acpi_pm *of_cs(const struct clocksource *cs)
{
    return clocksource_container(cs, struct acpi_pm, cs);
}

uint64_t acpi_pm_read(const struct acpi_pm *pm)
{
    return inl(pm->port) & pm->cs.mask;
}

uint64_t acpi_pm_read_verified(const struct acpi_pm *pm)
{
    uint64_t a, b = 0, c;

    for (unsigned i = 0; i < ACPI_PM_VERIFY_TRIES; i++) {
        a = acpi_pm_read(pm);
        b = acpi_pm_read(pm);
        c = acpi_pm_read(pm);
        /* b is on the forward arc from a to c: a glitch in b almost never lands on that
         * arc (a few ticks long), and a glitch in a or c is not what we return. */
        if (cs_delta(&pm->cs, b, a) <= cs_delta(&pm->cs, c, a))
            return b;
    }
    return b;
}

static uint64_t pm_cs_read(const struct clocksource *cs)
{
    return acpi_pm_read(of_cs(cs));
}

static uint64_t pm_cs_read_verified(const struct clocksource *cs)
{
    return acpi_pm_read_verified(of_cs(cs));
}

static int absent(const char *why, const char **reason)
{
    if (reason)
        *reason = why;
    return -ENODEV;
}

int acpi_pm_init(struct acpi_pm *pm, uint16_t port, bool counter_32bit, const char **reason)
{
    *pm = (struct acpi_pm){ 0 };
    if (port == 0)
        return absent("no PM timer port", reason);
    if (inl(port) == UINT32_MAX && inl(port) == UINT32_MAX)
        return absent("port reads all ones: nothing there", reason);
    pm->port = port;
    pm->present = true;
    /* The rate is stated by the ACPI spec, not guessed: usable before calibration. */
    pm->cs = (struct clocksource){
        .name = "acpi_pm", .read = pm_cs_read, .rating = ACPI_PM_RATING,
        .mask = counter_32bit ? CLOCKSOURCE_MASK(32) : CLOCKSOURCE_MASK(24),
        .nominal_hz = ACPI_PM_HZ, .freq_hz = ACPI_PM_HZ, .usable = true,
    };
    if (reason)
        *reason = NULL;
    return 0;
}

bool acpi_pm_counting(struct acpi_pm *pm, uint64_t probe_cyc)
{
    if (!pm->present)
        return false;
    uint64_t first = acpi_pm_read(pm), t0 = rdtsc();
    while (rdtsc() - t0 < probe_cyc)
        if (acpi_pm_read(pm) != first)
            return true;
    pm->cs.usable = false;
    pm->cs.unusable_reason = "counter does not count";
    return false;
}

bool acpi_pm_check_monotonic(struct acpi_pm *pm, unsigned reads)
{
    if (!pm->present)
        return false;
    uint64_t last = acpi_pm_read(pm);
    for (unsigned i = 0; i < reads; i++) {
        uint64_t now = acpi_pm_read(pm);
        if (cs_delta(&pm->cs, now, last) > pm->cs.mask / 2) {
            pm->verified = true;
            pm->cs.read = pm_cs_read_verified;
            return false;
        }
        last = now;
    }
    return true;
}

struct clocksource *acpi_pm_clocksource(struct acpi_pm *pm)
{
    return pm->present ? &pm->cs : NULL;
}
