/* kernel/exp/experiment.h - the registry of experiments, chosen with exp= (docs/). */
#ifndef TICKLAB_EXP_EXPERIMENT_H
#define TICKLAB_EXP_EXPERIMENT_H
#include <stdint.h>

struct experiment {
    const char *name;       /* stable: exp= word and the "exp" key of its records */
    const char *summary;
    void (*run)(void);
};

/* NULL-terminated list of names, in registry order (bit i of cfg.exp_mask = entry i). */
const char *const *experiment_names(void);
/* "none, all" followed by the names, for error messages. */
const char *experiment_names_text(void);
/* Runs the selected experiments in registry order; returns how many ran. */
unsigned experiments_run(uint64_t mask);

#endif
