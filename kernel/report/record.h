/* kernel/report/record.h - machine-readable records: one line `TLR <crc32> <json>` each
 * (docs/report-format.md). Build one with rec_begin(), add members through the json_*
 * writer on rec.j, send it with rec_emit(). The count of records sent is what the final
 * `end` record reports, so a reader can tell that none was lost. */
#ifndef TICKLAB_REPORT_RECORD_H
#define TICKLAB_REPORT_RECORD_H
#include <stdint.h>

#include "ticklab/json.h"

#define REC_MAX 2048     /* bytes of JSON in one record */

struct rec {
    struct json j;
    char buf[REC_MAX];
};

void rec_begin(struct rec *r, const char *type);
/* Sends the record. One that overflowed REC_MAX is replaced by an `error` record that says
 * so (type and size), never sent truncated. The line goes out whole (console lock, see
 * console.h), from any CPU; not from interrupt handlers, by rule (they count what happened
 * and thread context reports it), except the fault handler's last words. */
void rec_emit(struct rec *r);
uint32_t rec_sent(void);

/* An `error` record: what (a short stable identifier), detail (human text). */
void rec_error(const char *what, const char *detail);

#endif
