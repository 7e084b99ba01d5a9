/* SPDX-License-Identifier: MIT */
/* The error codes and the version as a program sees them: ll_err_name and
 * ll_strerror for the library's codes (the header's LL_ERRNO_MAP), -errno
 * and unknown values, from several threads at once; the LL_E* constants in
 * #if; the LL_VERSION_* macros against ll_version. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "libloop.h"
#include "check.h"
#include "loop_checks.h"

/* A healthy loop, to show that the string calls leave it working. */
static ll_loop good;

static void test_strerror_and_names(void) {
    static const struct {
        int code;
        const char *name;
    } named[] = {
        {LL_EINVAL, "LL_EINVAL"},
        {LL_EBADHANDLE, "LL_EBADHANDLE"},
        {LL_ECLOSED, "LL_ECLOSED"},
        {LL_ERUNNING, "LL_ERUNNING"},
        {LL_ESTATE, "LL_ESTATE"},
        {LL_ECANCELLED, "LL_ECANCELLED"},
        {LL_EWRONGTHREAD, "LL_EWRONGTHREAD"},
        {LL_ESTOPPED, "LL_ESTOPPED"},
        {LL_ETIMEDOUT, "LL_ETIMEDOUT"},
        {LL_ENOMEM, "LL_ENOMEM"},
        {-EBADF, "EBADF"},
        {-EPERM, "EPERM"},
        {-ENOENT, "ENOENT"},
        {-10050, "UNKNOWN"},
        {-9999, "UNKNOWN"},
        {INT_MIN, "UNKNOWN"},
        {12345, "UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
        CHECK_EQ_STR(ll_err_name(named[i].code), named[i].name);
        const char *msg = ll_strerror(named[i].code);
        CHECK(msg != NULL && msg[0] != '\0');
        /* Static storage: the same pointer every time. */
        CHECK(ll_strerror(named[i].code) == msg);
    }
    /* Library codes have distinct descriptions. */
    for (int a = LL_ENOMEM; a <= LL_EINVAL; a++)
        for (int b = a + 1; b <= LL_EINVAL; b++)
            CHECK(strcmp(ll_strerror(a), ll_strerror(b)) != 0);

    /* Never NULL, whatever the code. */
    const int odd[] = {0, 1, -1, 4095, -4095, -4096, 4096, -10000 - 9, -10010, -20000, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        const char *m = ll_strerror(odd[i]), *n = ll_err_name(odd[i]);
        CHECK(m != NULL && m[0] != '\0');
        CHECK(n != NULL && n[0] != '\0');
    }
    STILL_RUNS(good);
}

/* The header's constants are usable in #if, and equal their map entries
 * (capi/strings.c asserts the same when the library is built). */
#if LL_EINVAL != -10000 || LL_EFORKED != -10019 || LL_ENEEDASYNC != -10020
#error "the first and last library codes moved: the ABI changed"
#endif
#define SAME_AS_MAP(name, value, message) \
    _Static_assert(LL_##name == (value), "LL_" #name " differs from LL_ERRNO_MAP");
LL_ERRNO_MAP(SAME_AS_MAP)
#undef SAME_AS_MAP

/* The library's strings for its codes are the header map's. */
static void test_errno_map(void) {
#define ROW(name, value, message) {value, "LL_" #name, message},
    static const struct {
        int code;
        const char *name, *message;
    } map[] = {LL_ERRNO_MAP(ROW)};
#undef ROW
    size_t n = sizeof map / sizeof map[0];
    CHECK(n >= 20);
    for (size_t i = 0; i < n; i++) {
        CHECK(map[i].code <= LL_EINVAL);
        CHECK_EQ_STR(ll_err_name(map[i].code), map[i].name);
        CHECK_EQ_STR(ll_strerror(map[i].code), map[i].message);
    }
}

static void *strerror_thread(void *arg) {
    int *bad = arg;
    for (int i = 0; i < 2000; i++) {
        int code = (i % 2) ? LL_EINVAL - (i % 10) : -(i % 130);
        const char *m = ll_strerror(code), *n = ll_err_name(code);
        if (m == NULL || n == NULL || m[0] == '\0' || n[0] == '\0')
            (*bad)++;
    }
    return NULL;
}

static void test_strerror_threads(void) {
    pthread_t th[4];
    int bad[4] = {0};
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, strerror_thread, &bad[i]), 0);
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(bad[i], 0);
    }
}

static void test_version(void) {
    CHECK_EQ_INT(ll_version(), LL_VERSION);
    CHECK_EQ_INT(LL_VERSION, LL_VERSION_MAJOR * 10000 + LL_VERSION_MINOR * 100 + LL_VERSION_PATCH);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", LL_VERSION_MAJOR, LL_VERSION_MINOR, LL_VERSION_PATCH);
    CHECK_EQ_STR(ll_version_string(), want);
}

int main(void) {
    if (ll_loop_new(&good) != 0) {
        fprintf(stderr, "cannot create a loop\n");
        return 1;
    }
    RUN_TEST(test_strerror_and_names);
    RUN_TEST(test_strerror_threads);
    RUN_TEST(test_errno_map);
    RUN_TEST(test_version);
    CHECK_EQ_INT(ll_release(good), 0);
    return CHECK_REPORT();
}
