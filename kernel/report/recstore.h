/* kernel/report/recstore.h - a copy of every record line, byte for byte as sent (`TLR <crc>
 * <json>\n`), kept for the QR codes of the last screen (kernel/report/qrscreen.h): the
 * serial log (klog) is drained and overwritten, so the screen needs its own copy.
 *
 * The store lives in RAM above the kernel image (the kernel must stay below 8 MiB), a range
 * the caller found in the memory map. It never truncates a record: one that does not fit is
 * dropped whole and counted, and the last RECSTORE_RESERVE bytes are kept for the run's
 * closing records (qr_store, end) once recstore_closing() is called, so the codes always
 * carry the end and say that records are missing (the host tool's check then reports the
 * count mismatch). Records from several CPUs are stored in the order they took the store's
 * lock, which on one CPU is the serial order. */
#ifndef TICKLAB_REPORT_RECSTORE_H
#define TICKLAB_REPORT_RECSTORE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECSTORE_RESERVE 8192u   /* for the closing records: two at most REC_MAX + 16 each */

struct recstore_info {
    const uint8_t *data;
    size_t bytes, cap;           /* bytes held, room in all (0: no store) */
    uint32_t records, dropped;   /* lines held, lines that did not fit */
    const char *off_reason;      /* why there is no store, or NULL */
};

/* buf: cap bytes; or cap 0 with why (no memory found). */
void recstore_init(uint8_t *buf, size_t cap, const char *why);
/* One record line in pieces (as record.c builds it); dropped whole when it does not fit. */
void recstore_add(const char *const *piece, const size_t *len, unsigned n);
/* From here on the reserve may be used (the run's closing records). */
void recstore_closing(void);
void recstore_get(struct recstore_info *out);

#endif
