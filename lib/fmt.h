/* lib/fmt.h - a small freestanding snprintf for the kernel (no floating point).
 *
 * Supported: %d %i %u %x %X %o %c %s %p %% with flags '-', '0', '+', ' ', '#', a width and a
 * precision (numbers or '*'), and the length modifiers hh h l ll z t j. Unknown conversions
 * are copied through literally, %n among them (it would write through an argument). %s of
 * NULL prints "(null)", cut by a precision; %p prints like %#lx and NULL as "(nil)", as glibc
 * does, so host tests compare the two byte for byte. */
#ifndef TICKLAB_LIB_FMT_H
#define TICKLAB_LIB_FMT_H
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Like C99 vsnprintf: writes at most size bytes including the terminating NUL (nothing when
 * size is 0; buf may then be NULL) and returns the length the whole output would have had,
 * or -1 if that exceeds INT_MAX. Padding that does not fit is counted, not looped over. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A fixed-point number val / 10^decimals (decimals 0..9) with its sign kept whatever the
 * whole part: fmt_fixed(b, n, -43, 4, true) is "-0.0043", 43 gives "+0.0043" (plus) or
 * "0.0043". Returns buf, for use as a %s argument. */
const char *fmt_fixed(char *buf, size_t size, int64_t val, unsigned decimals, bool plus);

#endif
