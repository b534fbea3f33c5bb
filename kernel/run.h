/* kernel/run.h - how a run ends when it ends normally: marked failed or not along the way,
 * then the summary screen and kernel/report/stop.h's `end` record and exit. */
#ifndef TICKLAB_RUN_H
#define TICKLAB_RUN_H
#include <stdbool.h>

/* Marks the run failed (it goes on; the end record will say "failed"). */
void run_mark_failed(const char *why);
/* The summary screen, then stop_run(). Never returns. */
__attribute__((noreturn)) void run_finish(void);

#endif
