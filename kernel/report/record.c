/* kernel/report/record.c - see record.h. */
#include "kernel/report/record.h"

#include "kernel/report/console.h"
#include "kernel/report/klog.h"
#include "kernel/report/recstore.h"
#include "ticklab/crc32.h"
#include "ticklab/fmt.h"
#include "ticklab/kstring.h"

static uint32_t sent;

void rec_begin(struct rec *r, const char *type)
{
    json_begin(&r->j, r->buf, sizeof(r->buf));
    json_str(&r->j, "type", type);
}

/* One line, whole: the log takes it as one unit (no other text lands inside it) and the
 * count matches what was given to it. */
static void send_line(const char *json, size_t len)
{
    char head[16];
    uint32_t crc = crc32_update(0, json, len);
    int n = fmt_snprintf(head, sizeof(head), "TLR %08x ", crc);
    const char *piece[3] = { head, json, "\n" };
    size_t bytes[3] = { (size_t)n, len, 1 };
    __atomic_add_fetch(&sent, 1, __ATOMIC_RELAXED);
    recstore_add(piece, bytes, 3);       /* the copy the last screen's QR codes carry */
    klog_write(KLOG_SERIAL, piece, bytes, 3, true);
}

void rec_emit(struct rec *r)
{
    char type[32];
    int len = json_finish(&r->j);
    if (len >= 0) {
        send_line(r->buf, (size_t)len);
        return;
    }
    /* The type is the first member: recover it for the error record. */
    const char *t = r->buf + k_strlen("{\"type\":\"");
    size_t n = 0;
    while (n < sizeof(type) - 1 && t[n] && t[n] != '"')
        n++;
    memcpy(type, t, n);
    type[n] = 0;
    struct rec e;
    rec_begin(&e, "error");
    json_str(&e.j, "what", "record_too_long");
    json_str(&e.j, "record_type", type);
    json_u64(&e.j, "limit_bytes", REC_MAX);
    len = json_finish(&e.j);
    send_line(e.buf, (size_t)len);
}

uint32_t rec_sent(void)
{
    return sent;
}

void rec_error(const char *what, const char *detail)
{
    struct rec r;
    rec_begin(&r, "error");
    json_str(&r.j, "what", what);
    json_str(&r.j, "detail", detail);
    rec_emit(&r);
    kprintf("error: %s: %s\n", what, detail);
}
