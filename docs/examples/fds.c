/* SPDX-License-Identifier: MIT */
/* fds.c — watch a pipe for reading (level-triggered: the callback runs every
 * iteration while data is unread). */
#include <errno.h>
#include <unistd.h>

#include "must.h"

static int reads;

static void on_readable(ll_loop loop, int fd, void *arg) {
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    reads++;
    if (n > 0) {
        printf("fds: read %.*s\n", (int)n, buf);
        return;
    }
    /* n == 0: the writer closed; stop watching before the fd is closed. */
    EXPECT(ll_remove_reader(loop, fd) == 1);
    MUST(ll_loop_stop(loop));
    (void)arg;
}

static void write_and_close(ll_loop loop, void *arg) {
    (void)loop;
    int fd = *(int *)arg;
    EXPECT(write(fd, "hello", 5) == 5);
    close(fd);
}

int main(void) {
    ll_loop loop;
    int p[2];
    MUST(ll_loop_new(&loop));
    EXPECT(pipe(p) == 0);
    MUST(ll_add_reader(loop, p[0], on_readable, NULL));
    MUST(ll_call_later(loop, 0.01, write_and_close, &p[1], NULL));
    MUST(ll_loop_run_forever(loop));
    EXPECT(reads == 2);                               /* the data, then EOF */
    EXPECT(ll_remove_reader(loop, p[0]) == 0);        /* none left */
    EXPECT(ll_add_reader(loop, -1, on_readable, NULL) == -EBADF);
    close(p[0]);
    MUST(ll_release(loop));
    return 0;
}
