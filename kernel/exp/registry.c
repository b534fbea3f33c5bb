/* kernel/exp/registry.c - the experiments ticklab knows, in the order they run.
 * No experiment is registered yet: exp= accepts only `none` and `all` until the first one
 * lands (they come with the clock-event and hrtimer layers). */
#include "kernel/exp/experiment.h"

#include <stddef.h>

static const struct experiment *const registry[] = {
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
    return "none, all, or a comma list of experiment names (none registered yet)";
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
