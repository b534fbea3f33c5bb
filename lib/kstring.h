/* lib/kstring.h - the string functions the library uses (k_str*, in the archive)
 * and the four memory functions it needs from its host (the porting layer, docs/library.md:
 * the compiler may emit calls to them on its own, so they keep their standard names; the
 * ticklab kernel's are in kernel/arch/mem.c, host tests use the C library's). */
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
