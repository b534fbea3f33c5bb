/* lib/json.c - the record writer behind every `TLR <crc32> <json>` line.
 *
 * Each piece is written whole or not at all, and after the first piece that does not fit
 * nothing more is written: the buffer then holds a clean prefix, and json_finish() says -1.
 * A misuse (a member with no open container, closing the wrong kind, nesting too deep,
 * decimals > 9) is reported the same way, because a record we cannot vouch for must not
 * leave the machine looking valid. Inside an array a member's key is ignored. */
#include "ticklab/json.h"

#include "ticklab/errno.h"
#include "ticklab/kstring.h"
#include "ticklab/stats.h"

static void put(struct json *j, const char *s, size_t n)
{
    if (j->overflow)
        return;
    /* One byte of cap is always kept for json_finish()'s NUL. */
    if (j->cap == 0 || n > j->cap - 1 - j->len) {
        j->overflow = true;
        return;
    }
    for (size_t i = 0; i < n; i++)
        j->buf[j->len + i] = s[i];
    j->len += n;
}

static void put_char(struct json *j, char c)
{
    put(j, &c, 1);
}

static bool in_array(const struct json *j)
{
    return (j->array_bits >> (j->depth - 1)) & 1u;
}

/* ---- strings ---------------------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at p (2..4), or 0 when it is ill-formed; then
 * *bad_len is the length of its longest well-formed prefix (at least 1), which becomes one
 * U+FFFD. That is Unicode's "maximal subpart" rule, which Python's decode(errors="replace")
 * also follows, so the host tests can compare against it. Ranges are Unicode table 3-7:
 * they exclude overlong forms, surrogates and code points above U+10FFFF. */
static size_t utf8_seq_len(const uint8_t *p, size_t n, size_t *bad_len)
{
    uint8_t lo = 0x80, hi = 0xbf;
    size_t need;

    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        need = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        need = 3;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        need = 4;
    else
        need = 0;
    if (p[0] == 0xe0)
        lo = 0xa0;
    else if (p[0] == 0xed)
        hi = 0x9f;
    else if (p[0] == 0xf0)
        lo = 0x90;
    else if (p[0] == 0xf4)
        hi = 0x8f;

    for (size_t i = 1; i < need; i++) {
        if (i >= n || p[i] < lo || p[i] > hi) {
            *bad_len = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xbf;
    }
    *bad_len = 1;
    return need;
}

static void put_escaped_ascii(struct json *j, uint8_t c)
{
    static const char hex[] = "0123456789abcdef";
    char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf] };

    switch (c) {
    case '"': put(j, "\\\"", 2); return;
    case '\\': put(j, "\\\\", 2); return;
    case '\n': put(j, "\\n", 2); return;
    case '\r': put(j, "\\r", 2); return;
    case '\t': put(j, "\\t", 2); return;
    case '\b': put(j, "\\b", 2); return;
    case '\f': put(j, "\\f", 2); return;
    default: break;
    }
    /* DEL is legal raw JSON but is escaped too: records are also read on terminals. */
    if (c < 0x20 || c == 0x7f)
        put(j, u, sizeof(u));
    else
        put_char(j, (char)c);
}

static void put_string(struct json *j, const char *s, size_t n)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0;

    put_char(j, '"');
    while (i < n) {
        size_t seq, bad;

        if (p[i] < 0x80) {
            put_escaped_ascii(j, p[i++]);
            continue;
        }
        seq = utf8_seq_len(p + i, n - i, &bad);
        if (seq) {
            put(j, s + i, seq);
            i += seq;
        } else {
            put(j, "\\ufffd", 6);
            i += bad;
        }
    }
    put_char(j, '"');
}

/* The escaped width of one ASCII byte, as put_escaped_ascii writes it. */
static size_t escaped_ascii_len(uint8_t c)
{
    switch (c) {
    case '"': case '\\': case '\n': case '\r': case '\t': case '\b': case '\f':
        return 2;
    default:
        return c < 0x20 || c == 0x7f ? 6 : 1;
    }
}

size_t json_escaped_prefix(const char *s, size_t n, size_t max_out)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0, out = 0;

    while (i < n) {
        size_t step, width, bad;
        if (p[i] < 0x80) {
            step = 1;
            width = escaped_ascii_len(p[i]);
        } else {
            step = utf8_seq_len(p + i, n - i, &bad);
            width = step;
            if (!step) {
                step = bad;
                width = 6;
            }
        }
        if (out + width > max_out)
            break;
        out += width;
        i += step;
    }
    return i;
}

/* ---- numbers ---------------------------------------------------------------------------- */

/* Decimal digits of v, at least min_digits of them (zero-padded), into tmp; returns the
 * start. tmp must hold 20 digits. */
static const char *dec_digits(char tmp[20], uint64_t v, unsigned min_digits, size_t *n)
{
    char *p = tmp + 20;

    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while ((size_t)(tmp + 20 - p) < min_digits)
        *--p = '0';
    *n = (size_t)(tmp + 20 - p);
    return p;
}

static void put_u64(struct json *j, uint64_t v, unsigned min_digits)
{
    char tmp[20];
    size_t n;
    const char *d = dec_digits(tmp, v, min_digits, &n);

    put(j, d, n);
}

/* |v| without overflow, also for INT64_MIN. */
static uint64_t magnitude(int64_t v)
{
    return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

/* ---- structure -------------------------------------------------------------------------- */

/* Writes the comma and, inside an object, the key and colon. Returns false on misuse. */
static bool begin_member(struct json *j, const char *key)
{
    int lvl = j->depth - 1;

    if (j->depth <= 0 || j->depth > JSON_MAX_DEPTH) {
        j->overflow = true;
        return false;
    }
    if (!j->first[lvl])
        put_char(j, ',');
    j->first[lvl] = false;
    if (in_array(j))
        return true;
    if (!key) {
        j->overflow = true;
        return false;
    }
    put_string(j, key, k_strlen(key));
    put_char(j, ':');
    return true;
}

static void open_container(struct json *j, const char *key, bool array)
{
    if (j->depth >= JSON_MAX_DEPTH) {
        j->overflow = true;
        return;
    }
    if (j->depth > 0 && !begin_member(j, key))
        return;
    put_char(j, array ? '[' : '{');
    j->first[j->depth] = true;
    if (array)
        j->array_bits |= 1u << j->depth;
    else
        j->array_bits &= ~(1u << j->depth);
    j->depth++;
}

/* The top-level object is closed only by json_finish(). */
static void close_container(struct json *j, bool array)
{
    if (j->depth <= 1 || j->depth > JSON_MAX_DEPTH || in_array(j) != array) {
        j->overflow = true;
        return;
    }
    put_char(j, array ? ']' : '}');
    j->depth--;
}

void json_begin(struct json *j, char *buf, size_t cap)
{
    *j = (struct json){ .buf = buf, .cap = buf ? cap : 0 };
    open_container(j, NULL, false);
}

int json_finish(struct json *j)
{
    for (; j->depth > 0 && j->depth <= JSON_MAX_DEPTH; j->depth--)
        put_char(j, in_array(j) ? ']' : '}');
    j->depth = 0;
    if (j->cap)
        j->buf[j->len] = '\0';   /* put() never lets len reach cap */
    if (j->overflow || j->len > (size_t)(~0u >> 1))
        return -ENOSPC;
    return (int)j->len;
}

void json_obj_open(struct json *j, const char *key) { open_container(j, key, false); }
void json_obj_close(struct json *j) { close_container(j, false); }
void json_arr_open(struct json *j, const char *key) { open_container(j, key, true); }
void json_arr_close(struct json *j) { close_container(j, true); }

/* ---- members ---------------------------------------------------------------------------- */

void json_strn(struct json *j, const char *key, const char *val, size_t n)
{
    if (!begin_member(j, key))
        return;
    if (val)
        put_string(j, val, n);
    else
        put(j, "null", 4);
}

void json_str(struct json *j, const char *key, const char *val)
{
    json_strn(j, key, val, val ? k_strlen(val) : 0);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
    if (begin_member(j, key))
        put_u64(j, val, 1);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
    if (!begin_member(j, key))
        return;
    if (val < 0)
        put_char(j, '-');
    put_u64(j, magnitude(val), 1);
}

void json_hex(struct json *j, const char *key, uint64_t val)
{
    static const char hex[] = "0123456789abcdef";
    char tmp[16];
    char *p = tmp + sizeof(tmp);

    if (!begin_member(j, key))
        return;
    do {
        *--p = hex[val & 0xf];
        val >>= 4;
    } while (val);
    put(j, "\"0x", 3);
    put(j, p, (size_t)(tmp + sizeof(tmp) - p));
    put_char(j, '"');
}

void json_bool(struct json *j, const char *key, bool val)
{
    if (!begin_member(j, key))
        return;
    if (val)
        put(j, "true", 4);
    else
        put(j, "false", 5);
}

void json_null(struct json *j, const char *key)
{
    if (begin_member(j, key))
        put(j, "null", 4);
}

void json_fixed(struct json *j, const char *key, int64_t val, unsigned decimals)
{
    uint64_t scale = 1, mag = magnitude(val);

    if (decimals > 9) {
        j->overflow = true;
        return;
    }
    if (!begin_member(j, key))
        return;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    /* The sign is written even when the integer part is 0: -5 at 3 decimals is -0.005. */
    if (val < 0)
        put_char(j, '-');
    put_u64(j, mag / scale, 1);
    if (decimals) {
        put_char(j, '.');
        put_u64(j, mag % scale, decimals);
    }
}

void json_elem_u64(struct json *j, uint64_t val) { json_u64(j, NULL, val); }
void json_elem_i64(struct json *j, int64_t val) { json_i64(j, NULL, val); }
void json_elem_str(struct json *j, const char *val) { json_str(j, NULL, val); }

/* The value of one statistics word of st; false for a word that names none. */
static bool stats_field(const struct stats *st, const char *w, size_t n, int64_t *v,
                        bool *is_unsigned)
{
    static const struct {
        const char *word;
        size_t offset;
    } fields[] = {
        { "min", offsetof(struct stats, min) },       { "max", offsetof(struct stats, max) },
        { "median", offsetof(struct stats, median) }, { "p50", offsetof(struct stats, median) },
        { "p90", offsetof(struct stats, p90) },       { "p99", offsetof(struct stats, p99) },
        { "p999", offsetof(struct stats, p999) },     { "mean", offsetof(struct stats, mean) },
    };
    *is_unsigned = n == 6 && !k_strncmp(w, "stddev", 6);
    if (*is_unsigned) {
        *v = (int64_t)st->stddev;
        return true;
    }
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (k_strlen(fields[i].word) == n && !k_strncmp(fields[i].word, w, n)) {
            *v = *(const int64_t *)(const void *)((const char *)st + fields[i].offset);
            return true;
        }
    return false;
}

void json_stats(struct json *j, const char *key_fmt, const char *fields,
                const struct stats *st)
{
    const char *hole = key_fmt;
    while (*hole && !(hole[0] == '%' && hole[1] == 's'))
        hole++;
    size_t pre = (size_t)(hole - key_fmt), post = *hole ? k_strlen(hole + 2) : 0;
    for (const char *w = fields; *w;) {
        while (*w == ' ')
            w++;
        size_t n = 0;
        while (w[n] && w[n] != ' ')
            n++;
        if (!n)
            break;
        char key[48];
        int64_t v;
        bool is_unsigned;
        if (!*hole || pre + n + post >= sizeof(key) || !stats_field(st, w, n, &v, &is_unsigned)) {
            j->overflow = true;
            return;
        }
        memcpy(key, key_fmt, pre);
        memcpy(key + pre, w, n);
        memcpy(key + pre + n, hole + 2, post + 1);
        if (is_unsigned)
            json_u64(j, key, (uint64_t)v);
        else
            json_i64(j, key, v);
        w += n;
    }
}
