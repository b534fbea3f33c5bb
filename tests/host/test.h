/* tests/host/test.h - the host test harness: self-registering tests and checks that report
 * and go on.
 *
 *     TEST(crc32_check_value) { CHECK_EQ_U64(crc32_update(0, "123456789", 9), 0xcbf43926); }
 *
 * TEST registers the function from a constructor, so a test file needs no list to keep in
 * step. A failed check prints file:line and both values, marks the test failed and carries
 * on, so one run shows every broken case; REQUIRE returns from the test instead, for when
 * going on would only crash. */
#ifndef TICKLAB_TESTS_HOST_TEST_H
#define TICKLAB_TESTS_HOST_TEST_H
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TEST_MAX 1024

struct test_case {
    const char *name;
    void (*fn)(void);
};

extern struct test_case test_cases[TEST_MAX];
extern int test_count;
extern bool test_failed;   /* set by a failing check in the running test */

void test_register(const char *name, void (*fn)(void));
/* Prints one failure line; returns false so checks can be used as conditions. */
bool test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define TEST(name)                                                                      \
    static void test_fn_##name(void);                                                   \
    __attribute__((constructor)) static void test_reg_##name(void)                      \
    {                                                                                   \
        test_register(#name, test_fn_##name);                                           \
    }                                                                                   \
    static void test_fn_##name(void)

#define CHECK(cond)                                                                     \
    ((cond) ? true : test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond))

#define REQUIRE(cond)                                                                   \
    do {                                                                                \
        if (!CHECK(cond))                                                               \
            return;                                                                     \
    } while (0)

#define CHECK_EQ_U64(a, b)                                                              \
    __extension__({                                                                     \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                \
        a_ == b_ ? true                                                                 \
                 : test_fail(__FILE__, __LINE__,                                        \
                             "%s == %s: 0x%" PRIx64 " (%" PRIu64 ") != 0x%" PRIx64      \
                             " (%" PRIu64 ")", #a, #b, a_, a_, b_, b_);                 \
    })

#define CHECK_EQ_I64(a, b)                                                              \
    __extension__({                                                                     \
        int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                                   \
        a_ == b_ ? true                                                                 \
                 : test_fail(__FILE__, __LINE__, "%s == %s: %" PRId64 " != %" PRId64,   \
                             #a, #b, a_, b_);                                           \
    })

/* NULL compares equal only to NULL. */
#define CHECK_EQ_STR(a, b)                                                              \
    __extension__({                                                                     \
        const char *a_ = (a), *b_ = (b);                                                \
        (a_ && b_ ? strcmp(a_, b_) == 0 : a_ == b_)                                     \
            ? true                                                                      \
            : test_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,       \
                        a_ ? a_ : "(NULL)", b_ ? b_ : "(NULL)");                        \
    })

/* n bytes, shown escaped on failure; for buffers that are not C strings. */
#define CHECK_EQ_MEM(a, b, n)                                                           \
    __extension__({                                                                     \
        const void *a_ = (a), *b_ = (b);                                                \
        size_t n_ = (n);                                                                \
        memcmp(a_, b_, n_) == 0 ? true : test_fail_mem(__FILE__, __LINE__, #a, #b,      \
                                                       a_, b_, n_);                     \
    })

bool test_fail_mem(const char *file, int line, const char *a_expr, const char *b_expr,
                   const void *a, const void *b, size_t n);

#endif
