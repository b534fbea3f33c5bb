/* lib/kstring.c - string primitives for a kernel without a C library (the memory four are
 * the porting layer's: kernel/arch/mem.c is ticklab's own).
 *
 * Plain byte loops: the kernel copies records and small structs, not bulk data, and byte
 * access needs no alignment or aliasing care. */
#include "ticklab/kstring.h"

/* GCC recognises a byte-copy or byte-fill loop and replaces it with a call to memcpy or
 * memset (GCC 12 does it whenever -ffreestanding and -fno-builtin are both missing); inside
 * memset itself that is endless recursion. The attribute keeps these functions safe whatever
 * flags a kernel that links libticklab.a uses. Clang does not rewrite under -ffreestanding. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_LIBCALL_REWRITE __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_LIBCALL_REWRITE
#endif


NO_LIBCALL_REWRITE
size_t k_strlen(const char *s)
{
    size_t n = 0;

    while (s[n])
        n++;
    return n;
}

NO_LIBCALL_REWRITE
size_t k_strnlen(const char *s, size_t max)
{
    size_t n = 0;

    while (n < max && s[n])
        n++;
    return n;
}

/* Bytes compare as unsigned char, as the C library's strcmp does, so that the order does not
 * depend on whether plain char is signed. */
int k_strcmp(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;

    while (*p && *p == *q) {
        p++;
        q++;
    }
    return (*p > *q) - (*p < *q);
}

int k_strncmp(const char *a, const char *b, size_t n)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;

    for (; n; n--, p++, q++) {
        if (*p != *q || !*p)
            return (*p > *q) - (*p < *q);
    }
    return 0;
}

NO_LIBCALL_REWRITE
size_t k_strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = k_strlen(src);
    size_t n = len;

    if (size == 0)
        return len;
    if (n > size - 1)
        n = size - 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i];
    dst[n] = '\0';
    return len;
}
