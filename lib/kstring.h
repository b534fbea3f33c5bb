/* lib/kstring.h - the string functions the library uses (k_str*, in the archive), and the
 * memory functions its host supplies (lib/port/port.h). */
#ifndef TICKLAB_LIB_KSTRING_H
#define TICKLAB_LIB_KSTRING_H
#include <stddef.h>
#include <stdint.h>

#include "ticklab/port.h"

size_t k_strlen(const char *s);
size_t k_strnlen(const char *s, size_t max);
int k_strcmp(const char *a, const char *b);
int k_strncmp(const char *a, const char *b, size_t n);
/* Copies at most size-1 bytes and always NUL-terminates (size > 0). Returns strlen(src). */
size_t k_strlcpy(char *dst, const char *src, size_t size);

#endif
