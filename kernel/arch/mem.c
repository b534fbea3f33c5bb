/* kernel/arch/mem.c - memcpy, memmove, memset, memcmp for the ticklab kernel. They are part of the
 * library's porting layer (docs/library.md): libticklab.a calls them but does not define
 * them, so a kernel that links it keeps its own; this file is the ticklab kernel's.
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

#ifndef TICKLAB_HOSTED
NO_LIBCALL_REWRITE
void *memcpy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    while (n--)
        *d++ = *s++;
    return dst;
}

NO_LIBCALL_REWRITE
void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    /* Compared as integers: relational operators on pointers into different objects are
     * undefined in C, and the caller may well pass unrelated buffers. */
    if ((uintptr_t)d <= (uintptr_t)s || (uintptr_t)d >= (uintptr_t)s + n) {
        while (n--)
            *d++ = *s++;
    } else {
        /* dst overlaps the tail of src: copy backwards so no source byte is overwritten
         * before it is read. */
        while (n--)
            d[n] = s[n];
    }
    return dst;
}

NO_LIBCALL_REWRITE
void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;

    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

NO_LIBCALL_REWRITE
int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;

    for (; n; n--, p++, q++) {
        if (*p != *q)
            return *p < *q ? -1 : 1;
    }
    return 0;
}
#endif /* !TICKLAB_HOSTED */
