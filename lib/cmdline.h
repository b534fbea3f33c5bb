/* lib/cmdline.h - the kernel command line: space-separated `key=value` words.
 *
 * The line comes from GRUB, QEMU -append or EFI load options and is untrusted: any length, any
 * bytes. Parsing never fails as a whole. Each word is checked against a table of options; a
 * word that is malformed (no '=', empty key, empty value), names an unknown key, or carries a
 * value outside what the option accepts produces one call of the error callback naming the
 * word and what is accepted, and that option keeps its default. Later words override earlier
 * ones. Words longer than CMDLINE_MAX_WORD bytes are reported and skipped. The parser
 * writes only into the destinations the table names and never reads past the NUL.
 *
 * Details the tests pin: separators are space, tab, CR, LF, VT and FF. A word is split at its
 * first '='. Keys and values match case-sensitively. A value with any byte outside printable
 * ASCII is a "bad character" for every type; a key with one is simply an "unknown key". A
 * UINT that does not fit in 64 bits is "out of range" (it is a number), "0x" alone, signs and
 * exponents are "not a number". A LIST word replaces the whole set; an empty item ("a,,b")
 * is an "empty value". A STR value too long for its buffer is "out of range". An invalid
 * word stores nothing, so an earlier valid word for the same key still holds. A word cut by
 * CMDLINE_MAX_LINE is not parsed (it could read as a different valid value); the one "line
 * too long" report names it, or else the first word after the limit. `seen` is only ever
 * set, never cleared. */
#ifndef TICKLAB_LIB_CMDLINE_H
#define TICKLAB_LIB_CMDLINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMDLINE_MAX_WORD 256
#define CMDLINE_MAX_LINE 4096   /* bytes looked at; the rest is reported once and ignored */

enum cmdline_type {
    CMDLINE_UINT,    /* decimal, or 0x hex; min..max inclusive; into uint64_t *dest */
    CMDLINE_BOOL,    /* 0/1, on/off, yes/no, true/false; into bool *dest */
    CMDLINE_ENUM,    /* one of choices[] (NULL-terminated); index into unsigned *dest */
    CMDLINE_LIST,    /* comma list, each item one of choices[]; bit i set in uint64_t *dest
                        for choices[i] (at most 64 choices); "all" sets every bit, "none"
                        clears them; one bad item rejects the whole word */
    CMDLINE_STR,     /* copied into char dest[max] (max = buffer size, so value length must
                        be < max); characters outside printable ASCII are rejected */
};

struct cmdline_opt {
    const char *key;
    enum cmdline_type type;
    void *dest;
    uint64_t min, max;                 /* UINT range; STR buffer size */
    const char *const *choices;        /* ENUM and LIST */
    const char *accepted;              /* human text for error messages, e.g. "100..10000" */
    bool seen;                         /* set by the parser when a valid value was stored */
};

/* word/word_len: the offending word as it appears (not NUL-terminated, possibly truncated
 * to CMDLINE_MAX_WORD); reason: short fixed text ("unknown key", "not a number", "out of
 * range", "missing '='", "empty key", "empty value", "word too long", "not one of the
 * choices", "bad character", "line too long"); accepted: the option's accepted text or
 * NULL. */
typedef void (*cmdline_error_fn)(void *ctx, const char *word, size_t word_len,
                                 const char *reason, const char *accepted);

/* Returns the number of errors reported. line may be NULL (treated as empty). */
int cmdline_parse(const char *line, struct cmdline_opt *opts, size_t n_opts,
                  cmdline_error_fn on_error, void *ctx);
/* The same for a line that was cut before it came here (cut: a loader's or the boot
 * information's buffer was full): the word at its end is refused as "line too long" (named
 * in the report; an empty word when the line ends in a separator), since it may be a piece
 * of a longer word. */
int cmdline_parse_cut(const char *line, bool cut, struct cmdline_opt *opts, size_t n_opts,
                      cmdline_error_fn on_error, void *ctx);

#endif
