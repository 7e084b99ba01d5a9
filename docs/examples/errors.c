/* SPDX-License-Identifier: MIT */
/* errors.c — what a failed call returns, the strings for it, and a table of
 * the program's own built from the header's LL_ERRNO_MAP. */
#include <errno.h>
#include <string.h>

#include "must.h"

/* One row per library code, from the header: no copy of the list to keep. */
#define ROW(name, value, message) {value, "LL_" #name, message},
static const struct {
    int code;
    const char *name, *message;
} codes[] = {LL_ERRNO_MAP(ROW)};
#undef ROW

static void nothing(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    int rc = ll_call_soon(loop, NULL, NULL, NULL); /* no callback: refused, nothing queued */
    EXPECT(rc == LL_EINVAL);
    printf("errors: ll_call_soon(NULL) = %s (%d): %s\n", ll_err_name(rc), rc, ll_strerror(rc));

    /* The library's strings are the map's. */
    size_t n = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < n; i++) {
        EXPECT(codes[i].code <= -10000);
        EXPECT(strcmp(ll_err_name(codes[i].code), codes[i].name) == 0);
        EXPECT(strcmp(ll_strerror(codes[i].code), codes[i].message) == 0);
    }
    /* System failures are -errno, named as errno names them. */
    EXPECT(strcmp(ll_err_name(-EBADF), "EBADF") == 0);
    EXPECT(strcmp(ll_err_name(-10999), "UNKNOWN") == 0);

    MUST(ll_loop_close(loop));
    EXPECT(ll_call_soon(loop, nothing, NULL, NULL) == LL_ECLOSED);
    MUST(ll_release(loop));
    printf("errors: %zu library codes, each described by ll_strerror and ll_err_name\n", n);
    return 0;
}
