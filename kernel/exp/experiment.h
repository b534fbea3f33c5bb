/* kernel/exp/experiment.h - the registry of experiments, chosen with exp= (docs/). */
#ifndef TICKLAB_EXP_EXPERIMENT_H
#define TICKLAB_EXP_EXPERIMENT_H
#include <stdint.h>

struct experiment {
    const char *name;       /* stable: exp= word and the "exp" key of its records */
    const char *summary;
    void (*run)(void);
    /* The most it may take, in seconds of TSC time, per profile (quick, full, soak): the
     * harness ends it there (kernel/exp/harness.h). Sized for the slowest machine ticklab
     * runs on (nested KVM, every VM exit ~50 us), with room: a run that takes longer is a
     * wait that does not end, not a slow machine. The budgets of all experiments add up to
     * 270 s (quick) and 1670 s (full), so that with boot and calibration a whole run ends
     * within 5 and 30 minutes even when every experiment is cut at its budget;
     * scripts/check-budgets.py (in make test) keeps the sums there. */
    unsigned budget_s[3];
};

/* NULL-terminated list of names, in registry order (bit i of cfg.exp_mask = entry i). */
const char *const *experiment_names(void);
/* "none, all" followed by the names, for error messages. */
const char *experiment_names_text(void);
/* Runs the selected experiments in registry order; returns how many ran. */
unsigned experiments_run(uint64_t mask);
/* Why none ran when no calibration of the TSC succeeded (its error record; the run fails
 * with it when experiments were asked for). */
#define EXPERIMENTS_NEED_TSC "no calibration of the TSC succeeded (its record says why): no " \
                             "experiment can be bounded or timed; none ran"

#endif
