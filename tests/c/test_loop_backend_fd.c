/* SPDX-License-Identifier: MIT */
/* ll_loop_backend_fd (libuv's uv_backend_fd): the selector's fd is
 * readable exactly while a watched fd is ready or a wakeup is pending, a
 * poll of it consumes nothing (the loop still delivers the event), and bad
 * ids and closed loops get error codes. */
#include <poll.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"

static int readable(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void on_read(ll_loop loop, int fd, void *arg) {
    char c;
    CHECK_EQ_INT(read(fd, &c, 1), 1);
    ++*(int *)arg;
    ll_loop_stop(loop);
}

static void test_readiness(void) {
    ll_loop loop = 0;
    CHECK_EQ_INT(ll_loop_new(&loop), 0);
    int bfd = ll_loop_backend_fd(loop);
    CHECK(bfd >= 0);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    int reads = 0;
    CHECK_EQ_INT(ll_add_reader(loop, p[0], on_read, &reads), 0);
    CHECK(!readable(bfd)); /* idle: nothing ready */
    CHECK_EQ_INT(write(p[1], "x", 1), 1);
    CHECK(readable(bfd));
    CHECK(readable(bfd)); /* polling it consumed nothing */
    CHECK_EQ_INT(ll_loop_run_forever(loop), 0);
    CHECK_EQ_INT(reads, 1); /* the loop still saw the event */
    CHECK(!readable(bfd));  /* drained */
    CHECK_EQ_INT(ll_loop_wakeup(loop), 0);
    CHECK(readable(bfd)); /* a pending wakeup */
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK(!readable(bfd));
    CHECK_EQ_INT(ll_remove_reader(loop, p[0]), 1);
    CHECK_EQ_INT(write(p[1], "y", 1), 1);
    CHECK(!readable(bfd)); /* an fd no longer watched */
    CHECK_EQ_INT(ll_loop_backend_fd(loop), bfd); /* stable */
    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_loop_backend_fd(loop), LL_ECLOSED);
    CHECK_EQ_INT(ll_release(loop), 0);
    CHECK_EQ_INT(ll_loop_backend_fd(loop), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_loop_backend_fd(0), LL_EBADHANDLE);
    close(p[0]);
    close(p[1]);
}

int main(void) {
    RUN_TEST(test_readiness);
    return CHECK_REPORT();
}
