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

/* A duration of ns nanoseconds as people read it: three significant figures in the unit its
 * reference's magnitude calls for (ns below 1 us, then us, ms, s). fmt_ns_in(b, n, v, ref,
 * unit) writes v in ref's unit with ref's decimals, the unit's name after it when unit is
 * true, so an interval's ends read in its figure's unit: "878 us [812, 903]". fmt_ns(b, n,
 * v) is fmt_ns_in(b, n, v, v, true): 281 is "281 ns", 877719 "878 us", 2924872 "2.92 ms".
 * Returns buf. */
const char *fmt_ns_in(char *buf, size_t size, int64_t ns, int64_t ref, bool unit);
const char *fmt_ns(char *buf, size_t size, int64_t ns);

#endif
