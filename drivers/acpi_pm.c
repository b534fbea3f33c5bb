/* drivers/acpi_pm.c - see acpi_pm.h. */
#include "ticklab/acpi_pm.h"

#include "ticklab/io.h"
#include "ticklab/errno.h"

static struct {
    bool present, verified;
    uint16_t port;
    uint64_t mask;
} pm;

static struct clocksource pm_cs = {
    .name = "acpi_pm",
    .read = acpi_pm_read,
    .rating = ACPI_PM_RATING,
};

uint64_t acpi_pm_read(void)
{
    return inl(pm.port) & pm.mask;
}

uint64_t acpi_pm_read_verified(void)
{
    uint64_t a, b = 0, c;

    for (unsigned i = 0; i < ACPI_PM_VERIFY_TRIES; i++) {
        a = acpi_pm_read();
        b = acpi_pm_read();
        c = acpi_pm_read();
        /* b is on the forward arc from a to c: a glitch in b almost never lands on that
         * arc (a few ticks long), and a glitch in a or c is not what we return. */
        if (((b - a) & pm.mask) <= ((c - a) & pm.mask))
            return b;
    }
    return b;
}

static int absent(const char *why, const char **reason)
{
    if (reason)
        *reason = why;
    return -ENODEV;
}

int acpi_pm_init(uint16_t port, bool counter_32bit, const char **reason)
{
    pm.present = pm.verified = false;
    if (port == 0)
        return absent("no PM timer port", reason);
    if (inl(port) == UINT32_MAX && inl(port) == UINT32_MAX)
        return absent("port reads all ones: nothing there", reason);
    pm.port = port;
    pm.mask = counter_32bit ? CLOCKSOURCE_MASK(32) : CLOCKSOURCE_MASK(24);
    pm.present = true;
    pm_cs.read = acpi_pm_read;
    pm_cs.mask = pm.mask;
    /* The rate is stated by the ACPI spec, not guessed: usable before calibration. */
    pm_cs.nominal_hz = pm_cs.freq_hz = ACPI_PM_HZ;
    pm_cs.usable = true;
    pm_cs.unusable_reason = NULL;
    if (reason)
        *reason = NULL;
    return 0;
}

bool acpi_pm_counting(uint64_t probe_cyc)
{
    if (!pm.present)
        return false;
    uint64_t first = acpi_pm_read(), t0 = rdtsc();
    while (rdtsc() - t0 < probe_cyc)
        if (acpi_pm_read() != first)
            return true;
    pm_cs.usable = false;
    pm_cs.unusable_reason = "counter does not count";
    return false;
}

bool acpi_pm_check_monotonic(unsigned reads)
{
    if (!pm.present)
        return false;
    uint64_t last = acpi_pm_read();
    for (unsigned i = 0; i < reads; i++) {
        uint64_t now = acpi_pm_read();
        if (((now - last) & pm.mask) > pm.mask / 2) {
            pm.verified = true;
            pm_cs.read = acpi_pm_read_verified;
            return false;
        }
        last = now;
    }
    return true;
}

bool acpi_pm_uses_verified_read(void)
{
    return pm.verified;
}

struct clocksource *acpi_pm_clocksource(void)
{
    return pm.present ? &pm_cs : NULL;
}
