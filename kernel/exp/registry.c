/* kernel/exp/registry.c - the experiments ticklab knows, in the order they run. */
#include "kernel/exp/experiment.h"

#include <stddef.h>

extern const struct experiment exp_period_compare;

static const struct experiment *const registry[] = {
    &exp_period_compare,
    NULL,
};

static const char *names[sizeof(registry) / sizeof(registry[0])];

const char *const *experiment_names(void)
{
    for (size_t i = 0; registry[i]; i++)
        names[i] = registry[i]->name;
    return names;
}

const char *experiment_names_text(void)
{
    return "none, all, or a comma list of: period-compare";
}

unsigned experiments_run(uint64_t mask)
{
    unsigned ran = 0;
    for (size_t i = 0; registry[i]; i++) {
        if (mask & (1ull << i)) {
            registry[i]->run();
            ran++;
        }
    }
    return ran;
}
