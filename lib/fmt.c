/* lib/fmt.c - the kernel's snprintf.
 *
 * It follows C99 printf for everything lib/fmt.h lists, and matches glibc where C leaves
 * the choice to the implementation (%p prints 0x... or "(nil)"), so the host tests can
 * compare it byte for byte against the host's snprintf. Numbers are converted with 64-bit
 * division by 8, 10 or 16 only: nothing here needs libgcc or the FPU. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/fmt.h"
#include "ticklab/kstring.h"

_Static_assert(sizeof(uintmax_t) == sizeof(uint64_t), "numbers are converted as uint64_t");
_Static_assert(sizeof(ptrdiff_t) == sizeof(size_t), "%zd reads size_t's signed twin");

#define FMT_INT_MAX ((int)(~0u >> 1))

enum {
    F_LEFT = 1u << 0,   /* '-' */
    F_ZERO = 1u << 1,   /* '0' */
    F_PLUS = 1u << 2,   /* '+' */
    F_SPACE = 1u << 3,  /* ' ' */
    F_ALT = 1u << 4,    /* '#' */
};

enum len_mod { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_T, LEN_J };

/* Width and precision saturate just above INT_MAX: such an output is too long for an int
 * result anyway, and fmt_vsnprintf then returns -1 instead of a wrong length. */
#define FMT_TOO_BIG ((size_t)FMT_INT_MAX + 1)

struct spec {
    unsigned flags;
    size_t width;       /* 0 when none */
    bool has_prec;
    size_t prec;
    enum len_mod len;
    char conv;
};

/* The output keeps counting after the buffer is full, because the return value is the
 * length the whole output would have had. */
struct out {
    char *buf;
    size_t size;
    size_t len;
};

static size_t room(const struct out *o)
{
    if (o->size == 0 || o->len >= o->size - 1)
        return 0;
    return o->size - 1 - o->len;
}

static void put_bytes(struct out *o, const char *s, size_t n)
{
    size_t fit = room(o);

    if (fit > n)
        fit = n;
    for (size_t i = 0; i < fit; i++)
        o->buf[o->len + i] = s[i];
    o->len += n;
}

/* Padding beyond the buffer is only counted, so a width like 2000000000 costs no time. */
static void put_rep(struct out *o, char c, size_t n)
{
    size_t fit = room(o);

    if (fit > n)
        fit = n;
    for (size_t i = 0; i < fit; i++)
        o->buf[o->len + i] = c;
    o->len += n;
}

static size_t parse_num(const char **pp)
{
    const char *p = *pp;
    size_t n = 0;

    for (; *p >= '0' && *p <= '9'; p++) {
        n = n * 10 + (size_t)(*p - '0');
        if (n > FMT_TOO_BIG)
            n = FMT_TOO_BIG;
    }
    *pp = p;
    return n;
}

static unsigned parse_flags(const char **pp)
{
    unsigned flags = 0;

    for (;; (*pp)++) {
        switch (**pp) {
        case '-': flags |= F_LEFT; break;
        case '0': flags |= F_ZERO; break;
        case '+': flags |= F_PLUS; break;
        case ' ': flags |= F_SPACE; break;
        case '#': flags |= F_ALT; break;
        default: return flags;
        }
    }
}

static enum len_mod parse_len(const char **pp)
{
    const char *p = *pp;
    enum len_mod len = LEN_NONE;

    switch (*p) {
    case 'h': len = p[1] == 'h' ? LEN_HH : LEN_H; break;
    case 'l': len = p[1] == 'l' ? LEN_LL : LEN_L; break;
    case 'z': len = LEN_Z; break;
    case 't': len = LEN_T; break;
    case 'j': len = LEN_J; break;
    default: return LEN_NONE;
    }
    *pp = p + (len == LEN_HH || len == LEN_LL ? 2 : 1);
    return len;
}

/* Reads everything between '%' and the conversion character; *pp ends on the conversion
 * character (which may be the terminating NUL of a format that ends early). */
static void parse_spec(const char **pp, struct spec *sp, va_list *ap)
{
    sp->flags = parse_flags(pp);
    if (**pp == '*') {
        int w = va_arg(*ap, int);
        (*pp)++;
        /* C: a negative '*' width is a '-' flag and a positive width. Negated as unsigned
         * so that INT_MIN does not overflow. */
        if (w < 0)
            sp->flags |= F_LEFT;
        sp->width = w < 0 ? 0u - (unsigned)w : (unsigned)w;
    } else {
        sp->width = parse_num(pp);
    }
    sp->has_prec = false;
    sp->prec = 0;
    if (**pp == '.') {
        (*pp)++;
        sp->has_prec = true;
        if (**pp == '*') {
            int p = va_arg(*ap, int);
            (*pp)++;
            sp->has_prec = p >= 0;   /* negative means "as if omitted" */
            sp->prec = p >= 0 ? (size_t)p : 0;
        } else {
            sp->prec = parse_num(pp);
        }
    }
    sp->len = parse_len(pp);
    sp->conv = **pp;
}

static uint64_t arg_unsigned(enum len_mod len, va_list *ap)
{
    switch (len) {
    case LEN_HH: return (unsigned char)va_arg(*ap, unsigned);
    case LEN_H: return (unsigned short)va_arg(*ap, unsigned);
    case LEN_L: return va_arg(*ap, unsigned long);
    case LEN_LL: return va_arg(*ap, unsigned long long);
    case LEN_Z: return va_arg(*ap, size_t);
    case LEN_T: return va_arg(*ap, size_t);
    case LEN_J: return va_arg(*ap, uintmax_t);
    default: return va_arg(*ap, unsigned);
    }
}

static int64_t arg_signed(enum len_mod len, va_list *ap)
{
    switch (len) {
    case LEN_HH: return (signed char)va_arg(*ap, int);
    case LEN_H: return (short)va_arg(*ap, int);
    case LEN_L: return va_arg(*ap, long);
    case LEN_LL: return va_arg(*ap, long long);
    case LEN_Z: return va_arg(*ap, ptrdiff_t);
    case LEN_T: return va_arg(*ap, ptrdiff_t);
    case LEN_J: return va_arg(*ap, intmax_t);
    default: return va_arg(*ap, int);
    }
}

/* Writes the digits of v right-aligned ending at end; returns how many. */
static size_t to_digits(char *end, uint64_t v, unsigned base, bool upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    size_t n = 0;

    do {
        *--end = digits[v % base];
        v /= base;
        n++;
    } while (v);
    return n;
}

/* Lays out [spaces][prefix][zeros][digits][spaces] as the flags, width and precision say. */
static void put_number(struct out *o, const struct spec *sp, const char *prefix,
                       const char *digits, size_t n_digits, size_t n_zeros)
{
    size_t n_prefix = k_strlen(prefix);
    size_t body = n_prefix + n_zeros + n_digits;
    size_t pad = sp->width > body ? sp->width - body : 0;
    /* '0' pads between the sign or 0x and the digits; '-' or a precision turns it off. */
    bool zero_pad = (sp->flags & F_ZERO) && !(sp->flags & F_LEFT) && !sp->has_prec;

    if (!(sp->flags & F_LEFT) && !zero_pad)
        put_rep(o, ' ', pad);
    put_bytes(o, prefix, n_prefix);
    put_rep(o, '0', zero_pad ? pad : 0);
    put_rep(o, '0', n_zeros);
    put_bytes(o, digits, n_digits);
    if (sp->flags & F_LEFT)
        put_rep(o, ' ', pad);
}

static const char *sign_prefix(const struct spec *sp, bool negative)
{
    if (negative)
        return "-";
    if (sp->flags & F_PLUS)
        return "+";
    if (sp->flags & F_SPACE)
        return " ";
    return "";
}

static void fmt_integer(struct out *o, const struct spec *sp, uint64_t mag, bool negative,
                        bool is_signed)
{
    char tmp[24];   /* 22 octal digits cover 64 bits */
    unsigned base = 10;
    const char *prefix = "";
    size_t n_digits, n_zeros;

    if (sp->conv == 'o')
        base = 8;
    else if (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p')
        base = 16;
    n_digits = to_digits(tmp + sizeof(tmp), mag, base, sp->conv == 'X');
    if (sp->has_prec && sp->prec == 0 && mag == 0)
        n_digits = 0;   /* C99: "%.0d" of 0 prints no digits at all */
    n_zeros = sp->prec > n_digits ? sp->prec - n_digits : 0;

    if (is_signed)
        prefix = sign_prefix(sp, negative);
    else if (sp->conv == 'p' || ((sp->flags & F_ALT) && mag != 0 && base == 16))
        prefix = sp->conv == 'X' ? "0X" : "0x";
    /* '#o' raises the precision just enough that the first digit is a 0. */
    if ((sp->flags & F_ALT) && base == 8 && n_zeros == 0 && (mag != 0 || n_digits == 0))
        n_zeros = 1;
    put_number(o, sp, prefix, tmp + sizeof(tmp) - n_digits, n_digits, n_zeros);
}

static void fmt_text(struct out *o, const struct spec *sp, const char *s, size_t n)
{
    size_t pad = sp->width > n ? sp->width - n : 0;

    if (!(sp->flags & F_LEFT))
        put_rep(o, ' ', pad);
    put_bytes(o, s, n);
    if (sp->flags & F_LEFT)
        put_rep(o, ' ', pad);
}

static void fmt_string(struct out *o, const struct spec *sp, const char *s)
{
    if (!s)
        s = "(null)";
    /* With a precision the argument need not be NUL-terminated: read no further. */
    fmt_text(o, sp, s, sp->has_prec ? k_strnlen(s, sp->prec) : k_strlen(s));
}

static void fmt_pointer(struct out *o, struct spec *sp, const void *ptr)
{
    if (!ptr) {
        fmt_text(o, sp, "(nil)", 5);
        return;
    }
    fmt_integer(o, sp, (uintptr_t)ptr, false, false);
}

/* Returns false for a conversion this formatter does not know. */
static bool fmt_conversion(struct out *o, struct spec *sp, va_list *ap)
{
    int64_t v;
    char c;

    switch (sp->conv) {
    case 'd':
    case 'i':
        v = arg_signed(sp->len, ap);
        fmt_integer(o, sp, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0, true);
        return true;
    case 'u':
    case 'x':
    case 'X':
    case 'o':
        fmt_integer(o, sp, arg_unsigned(sp->len, ap), false, false);
        return true;
    case 'c':
        c = (char)va_arg(*ap, int);
        fmt_text(o, sp, &c, 1);
        return true;
    case 's':
        fmt_string(o, sp, va_arg(*ap, const char *));
        return true;
    case 'p':
        fmt_pointer(o, sp, va_arg(*ap, const void *));
        return true;
    case '%':
        put_bytes(o, "%", 1);
        return true;
    default:
        return false;
    }
}

int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = { .buf = buf, .size = size, .len = 0 };
    const char *p = fmt;
    va_list args;

    /* A copy, so that helpers can take its address: on x86-64 va_list is an array type and
     * &ap of a parameter would not have type va_list *. */
    va_copy(args, ap);
    while (*p) {
        const char *start = p;
        struct spec sp;

        if (*p != '%') {
            put_bytes(&o, p++, 1);
            continue;
        }
        p++;
        parse_spec(&p, &sp, &args);
        if (!*p) {
            put_bytes(&o, start, (size_t)(p - start));
            break;
        }
        p++;
        if (!fmt_conversion(&o, &sp, &args))
            put_bytes(&o, start, (size_t)(p - start));   /* copied through, as documented */
    }
    va_end(args);

    if (size)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return o.len > (size_t)FMT_INT_MAX ? -1 : (int)o.len;
}

int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

const char *fmt_fixed(char *buf, size_t size, int64_t val, unsigned decimals, bool plus)
{
    uint64_t scale = 1;
    if (decimals > 9)
        decimals = 9;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    /* the magnitude as unsigned, so INT64_MIN has one too */
    uint64_t mag = val < 0 ? 0 - (uint64_t)val : (uint64_t)val;
    const char *sign = val < 0 ? "-" : plus ? "+" : "";
    if (decimals)
        fmt_snprintf(buf, size, "%s%llu.%0*llu", sign, (unsigned long long)(mag / scale),
                     (int)decimals, (unsigned long long)(mag % scale));
    else
        fmt_snprintf(buf, size, "%s%llu", sign, (unsigned long long)mag);
    return buf;
}

const char *fmt_ns_in(char *buf, size_t size, int64_t ns, int64_t ref, bool unit)
{
    static const struct { uint64_t scale; const char *name; } units[] = {
        { 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "us" }, { 1ull, "ns" },
    };
    uint64_t rmag = ref < 0 ? 0 - (uint64_t)ref : (uint64_t)ref;
    unsigned u = 0;
    while (u < 3 && rmag < units[u].scale)
        u++;
    uint64_t scale = units[u].scale;
    /* three significant figures of ref: 2 decimals below 10 units, 1 below 100, then 0 */
    unsigned decimals = scale == 1 ? 0 : rmag < 10 * scale ? 2 : rmag < 100 * scale ? 1 : 0;
    uint64_t pow = decimals == 2 ? 100 : decimals == 1 ? 10 : 1;
    uint64_t mag = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    /* rounded to the last decimal shown; mag * pow stays far below 2^64 for any duration
     * a run can hold (2^64 / 100 ns is 5.8 years) */
    uint64_t q = scale / pow;
    uint64_t v = mag / q + (mag % q >= (q + 1) / 2 && q > 1 ? 1 : 0);
    char num[32];
    fmt_fixed(num, sizeof(num), ns < 0 ? -(int64_t)v : (int64_t)v, decimals, false);
    if (unit)
        fmt_snprintf(buf, size, "%s %s", num, units[u].name);
    else
        fmt_snprintf(buf, size, "%s", num);
    return buf;
}

const char *fmt_ns(char *buf, size_t size, int64_t ns)
{
    return fmt_ns_in(buf, size, ns, ns, true);
}
