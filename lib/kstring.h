/* lib/kstring.h - the handful of string and memory functions a freestanding kernel needs.
 * The compiler may emit calls to memcpy/memset/memmove/memcmp on its own, so those keep their
 * standard names; the rest are prefixed. In host tests the C library provides the standard
 * four and this file's definitions of them are compiled out (TICKLAB_HOSTED). */
#ifndef TICKLAB_LIB_KSTRING_H
#define TICKLAB_LIB_KSTRING_H
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

size_t k_strlen(const char *s);
size_t k_strnlen(const char *s, size_t max);
int k_strcmp(const char *a, const char *b);
int k_strncmp(const char *a, const char *b, size_t n);
/* Copies at most size-1 bytes and always NUL-terminates (size > 0). Returns strlen(src). */
size_t k_strlcpy(char *dst, const char *src, size_t size);

#endif
