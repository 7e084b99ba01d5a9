/* SPDX-License-Identifier: MIT */
/*
 * check.h — a tiny assertion helper for libloop's C tests.
 *
 *   CHECK(cond)            fails (and goes on) when cond is false
 *   CHECK_EQ_INT(a, b)     fails when (long long)a != (long long)b, printing both
 *   CHECK_EQ_STR(a, b)     fails when the strings differ (NULL counts as different)
 *   RUN_TEST(fn)           runs void fn(void), naming it in failure messages
 *   CHECK_REPORT()         prints "N passed, N failed" and returns main's status
 *
 * A failure prints "file:line: ..." to stderr and the test goes on, so one run
 * shows every broken expectation. main() ends with `return CHECK_REPORT();`,
 * which is nonzero when anything failed (or when no check ran at all).
 */
#ifndef LIBLOOP_TEST_CHECK_H
#define LIBLOOP_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_passed;
static int check_failed;
static const char *check_current = "(none)";

#define CHECK_FAIL_AT(file, line, ...)                                            \
    do {                                                                          \
        fprintf(stderr, "%s:%d: [%s] ", (file), (line), check_current);           \
        fprintf(stderr, __VA_ARGS__);                                             \
        fputc('\n', stderr);                                                      \
        check_failed++;                                                           \
    } while (0)

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (cond)                                                                 \
            check_passed++;                                                       \
        else                                                                      \
            CHECK_FAIL_AT(__FILE__, __LINE__, "CHECK(%s) failed", #cond);         \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                        \
    do {                                                                          \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);           \
        if (check_a_ == check_b_)                                                 \
            check_passed++;                                                       \
        else                                                                      \
            CHECK_FAIL_AT(__FILE__, __LINE__, "CHECK_EQ_INT(%s, %s) failed: %lld != %lld", \
                          #a, #b, check_a_, check_b_);                            \
    } while (0)

#define CHECK_EQ_STR(a, b)                                                        \
    do {                                                                          \
        const char *check_a_ = (a), *check_b_ = (b);                              \
        if (check_a_ != NULL && check_b_ != NULL && strcmp(check_a_, check_b_) == 0) \
            check_passed++;                                                       \
        else                                                                      \
            CHECK_FAIL_AT(__FILE__, __LINE__, "CHECK_EQ_STR(%s, %s) failed: \"%s\" != \"%s\"", \
                          #a, #b, check_a_ ? check_a_ : "(null)",                 \
                          check_b_ ? check_b_ : "(null)");                        \
    } while (0)

#define RUN_TEST(fn)                                                              \
    do {                                                                          \
        check_current = #fn;                                                      \
        int check_before_ = check_failed;                                         \
        fn();                                                                     \
        if (check_failed != check_before_)                                        \
            fprintf(stderr, "FAIL %s\n", #fn);                                    \
        check_current = "(none)";                                                 \
    } while (0)

/* Prints the summary line and returns the process exit status. */
static inline int check_report(const char *prog) {
    printf("%s: %d passed, %d failed\n", prog, check_passed, check_failed);
    fflush(stdout);
    return (check_failed == 0 && check_passed > 0) ? 0 : 1;
}

#define CHECK_REPORT() check_report(__FILE__)

#endif /* LIBLOOP_TEST_CHECK_H */
