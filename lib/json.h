/* lib/json.h - a JSON object writer into a caller's fixed buffer, for the record lines.
 *
 * No allocation, no floating point: fractions are written from scaled integers
 * (json_fixed). Strings are escaped per RFC 8259 (quote, backslash, control characters as
 * \uXXXX; bytes >= 0x80 that are not valid UTF-8 become \uFFFD so the output is always valid
 * UTF-8 JSON). If the buffer is too small the writer stops writing, sets `overflow`, and
 * json_finish() returns -ENOSPC: a truncated object is never handed out as valid. */
#ifndef TICKLAB_LIB_JSON_H
#define TICKLAB_LIB_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH 8

struct json {
    char *buf;
    size_t cap;        /* bytes in buf, including room for the final NUL */
    size_t len;        /* bytes written so far, excluding the NUL */
    bool overflow;     /* set once anything did not fit */
    int depth;         /* open objects/arrays */
    bool first[JSON_MAX_DEPTH]; /* no member written yet at this depth */
    bool after_key;    /* a key was written; the next value needs no comma */
    uint32_t array_bits; /* bit d set: the container open at depth d is an array, so
                            json_finish() knows which bracket closes it */
};

/* Starts the top-level object: writes "{". */
void json_begin(struct json *j, char *buf, size_t cap);
/* Closes every open array/object, NUL-terminates. Returns the length, or -ENOSPC when the
 * buffer overflowed (the text is then cut). */
int json_finish(struct json *j);

/* Members of the current object. key is a NUL-terminated ASCII string (escaped anyway). */
void json_str(struct json *j, const char *key, const char *val);         /* NULL -> null */
void json_strn(struct json *j, const char *key, const char *val, size_t n);
/* How many of s's first n bytes can be written as a string whose escaped text (quotes
 * not counted) takes at most max_out bytes, never cutting an escape or a UTF-8 sequence:
 * for carrying untrusted text in pieces that each fit a record (json_strn of that many). */
size_t json_escaped_prefix(const char *s, size_t n, size_t max_out);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_i64(struct json *j, const char *key, int64_t val);
void json_hex(struct json *j, const char *key, uint64_t val);  /* "0x1f" as a string */
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
/* val / 10^decimals as a JSON number with exactly `decimals` digits after the point
 * (decimals 0..9): json_fixed(j,"ppm",-12345,3) writes "ppm":-12.345. decimals > 9 is a
 * caller's bug and sets overflow, so the record is dropped rather than written wrong. */
void json_fixed(struct json *j, const char *key, int64_t val, unsigned decimals);
/* A block of order statistics as members, one per word of `fields` in its order: min,
 * median (also written p50), p90, p99, p999, max, mean (signed) and stddev (unsigned). Each
 * key is key_fmt with its one "%s" replaced by the word: json_stats(j, "late_%s_ns",
 * "min p50 max", &st) writes "late_min_ns", "late_p50_ns", "late_max_ns". A word outside
 * that list, a format without "%s" or a key over 47 bytes sets overflow (the record is
 * dropped rather than written wrong). */
struct stats;
void json_stats(struct json *j, const char *key_fmt, const char *fields,
                const struct stats *st);

/* Nesting: key may be NULL inside arrays (a key given there is ignored); inside an object a
 * NULL key sets overflow. Depth beyond JSON_MAX_DEPTH open containers (the top-level object
 * counts) sets overflow, and so does closing the wrong kind or the top-level object. */
void json_obj_open(struct json *j, const char *key);
void json_obj_close(struct json *j);
void json_arr_open(struct json *j, const char *key);
void json_arr_close(struct json *j);
/* Array elements (the key-less forms). */
void json_elem_u64(struct json *j, uint64_t val);
void json_elem_i64(struct json *j, int64_t val);
void json_elem_str(struct json *j, const char *val);

#endif
