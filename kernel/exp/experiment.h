/* kernel/exp/experiment.h - an experiment as one object: everything about it is declared in
 * its own file (kernel/exp/NAME.c), and the registry (registry.c) lists the objects in the
 * order they run, chosen with exp= (docs/command-line.md). */
#ifndef TICKLAB_EXP_EXPERIMENT_H
#define TICKLAB_EXP_EXPERIMENT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/config.h"
#include "ticklab/cmdline.h"

struct hrtimer_base;
struct clock_facts;
struct verdict_input;

/* What an experiment's run() is given: the run's settings and the timers it may use. The
 * tick and the wheel it reaches through kernel/timers/timers.h, the waits, phases and rows
 * through kernel/exp/harness.h. */
struct exp_env {
    enum profile profile;              /* the run's size (exp_size() picks by it) */
    struct hrtimer_base *base;         /* the boot CPU's main hrtimer base, or NULL */
    const struct clock_facts *clocks;  /* the calibrated clocks: the TSC's rate, virtual
                                          time, ... (kernel/timers/clocks.h) */
};

struct experiment {
    const char *name;       /* stable: exp= word and the "exp" key of its records */
    const char *summary;
    /* The keys whose values name one of its `result` rows (space-separated; the host
     * module's row keys, which tools/tests/test_schema.py holds to them). */
    const char *rows;
    /* Its command-line words, parsed with the kernel's own (config_parse): their defaults
     * are the initial values of the variables they write. */
    struct cmdline_opt *options;
    size_t n_options;
    void (*run)(const struct exp_env *env);
    /* What it gives the verdict (verdict.h), from what it measured in this run; NULL:
     * nothing. Called once after every experiment chosen has run, whether this one ran or
     * not: it names itself as the source of its part either way. */
    void (*summarize)(struct verdict_input *v);
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
/* Every experiment's command-line words, in registry order, for config_parse; *n their
 * count. */
struct cmdline_opt *experiment_options(size_t *n);
/* Which experiments run, and the words of the command line around them. */
struct exp_plan {
    uint64_t mask;                   /* bit i: registry entry i */
    bool tick_oneshot;               /* tickmode=oneshot: kept when they change the tick */
    const char *mask_irq;            /* test aid: this device's line masked first ("": none) */
    const char *clocksource_asked;   /* clocksource= ("": none), for the verdict's words */
};
/* Runs the selected experiments in registry order, then the verdict on what they found;
 * returns how many ran. */
unsigned experiments_run(const struct exp_plan *plan, const struct exp_env *env);
/* Why none ran when no calibration of the TSC succeeded (its error record; the run fails
 * with it when experiments were asked for). */
#define EXPERIMENTS_NEED_TSC "no calibration of the TSC succeeded (its record says why): no " \
                             "experiment can be bounded or timed; none ran"

#endif
