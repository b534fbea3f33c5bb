/* tests/host/main.c - runs the registered host tests.
 *
 * Usage: tests [substring]  runs the tests whose name contains substring (all without one).
 * One line per test, PASS or FAIL (with the test's first failed check on the same line, so
 * that a summary of FAIL lines says why), and last a summary line that scripts and CI read:
 * "host: N passed, N failed". The exit status is 0 only if nothing failed. */
#include <stdarg.h>
#include <stdlib.h>

#include "test.h"

struct test_case test_cases[TEST_MAX];
int test_count;
bool test_failed;
static char first_failure[200];      /* "file:line: what" of the running test's first */

void test_register(const char *name, void (*fn)(void))
{
    if (test_count == TEST_MAX) {
        fprintf(stderr, "test.h: more than %d tests, raise TEST_MAX\n", TEST_MAX);
        exit(2);
    }
    test_cases[test_count++] = (struct test_case){ name, fn };
}

bool test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;

    printf("  %s:%d: ", file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (!test_failed) {
        int n = snprintf(first_failure, sizeof(first_failure), "%s:%d: ", file, line);
        va_start(ap, fmt);
        if (n > 0 && (size_t)n < sizeof(first_failure))
            vsnprintf(first_failure + n, sizeof(first_failure) - (size_t)n, fmt, ap);
        va_end(ap);
    }
    test_failed = true;
    return false;
}

static void print_escaped(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
            putchar(p[i]);
        else
            printf("\\x%02x", p[i]);
    }
}

bool test_fail_mem(const char *file, int line, const char *a_expr, const char *b_expr,
                   const void *a, const void *b, size_t n)
{
    test_fail(file, line, "%s == %s over %zu bytes:", a_expr, b_expr, n);
    printf("    ");
    print_escaped(a, n);
    printf("\n    ");
    print_escaped(b, n);
    printf("\n");
    return false;
}

/* Constructors run in link order, which is arbitrary: sort so the output is stable. */
static int by_name(const void *a, const void *b)
{
    return strcmp(((const struct test_case *)a)->name, ((const struct test_case *)b)->name);
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : "";
    int passed = 0, failed = 0;

    qsort(test_cases, (size_t)test_count, sizeof(test_cases[0]), by_name);
    for (int i = 0; i < test_count; i++) {
        if (!strstr(test_cases[i].name, filter))
            continue;
        test_failed = false;
        fflush(stdout);
        test_cases[i].fn();
        if (test_failed)
            printf("FAIL %s  %s\n", test_cases[i].name, first_failure);
        else
            printf("PASS %s\n", test_cases[i].name);
        if (test_failed)
            failed++;
        else
            passed++;
    }
    printf("host: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
